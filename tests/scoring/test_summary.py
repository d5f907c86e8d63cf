"""The summary's figures, each pinned on a small run whose every number is worked out by hand.

A metric that regresses (a counter swapped, a mismatched pair counted right, a multiset read as
a set) changes one of these numbers; the golden cases pin verdicts, this pins the counting.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolscore import parse_case, parse_output, parse_specs, score
from toolscore.core.model import Case, CaseResult, Trajectory
from toolscore.errors import CaseError, OutputError
from toolscore.inputs.join import join, join_groups_by_id, one_each
from toolscore.scoring import tallies
from toolscore.scoring.case import (
    exact_baseline,
    exact_difference,
    outcome_passed,
    score_case,
    with_state,
)
from toolscore.scoring.summary import Summary, SummaryBuilder
from toolscore.scoring.tallies import BaselineTally
from toolscore.specs.loading import SpecSet
from toolscore.state import load_environment
from toolscore.stats.intervals import Rate


def _specs() -> SpecSet:
    tools = {
        "refund": {"args": {"order_id": "exact", "amount": {"kind": "number", "tol": 0.005}}},
        "notify": {"args": {"user": "exact", "text": "text"}},
        "get_order": {"args": {"order_id": "exact"}},
        "visit": {"args": {"day": "date"}},
    }
    specs, problems = parse_specs({"tools": tools}, "tools.yaml")
    assert specs is not None, problems
    return specs


SPECS = _specs()


def refund(order_id: str, amount: float) -> dict[str, Any]:
    return {"name": "refund", "args": {"order_id": order_id, "amount": amount}}


def notify(user: str, text: str = "hi") -> dict[str, Any]:
    return {"name": "notify", "args": {"user": user, "text": text}}


def get_order(order_id: str) -> dict[str, Any]:
    return {"name": "get_order", "args": {"order_id": order_id}}


# id: (plans, produced calls, or None for a case with no output line)
RUN: dict[str, tuple[list[list[dict[str, Any]]], list[dict[str, Any]] | None]] = {
    # rules, exact and lowercase all pass
    "same": ([[refund("o-1", 12.5)]], [refund("o-1", 12.5)]),
    # within the tolerance: the rules pass, exact does not
    "tolerance": ([[refund("o-1", 12.5)]], [refund("o-1", 12.504)]),
    # in parallel, in another order: the rules pass, exact (by position) does not
    "reordered": (
        [[refund("o-1", 1), notify("ann")]],
        [notify("ann", "other words"), refund("o-1", 1)],
    ),
    # an identifier in another case: the rules fail, lowercase passes
    "case-of-id": ([[refund("o-1", 12.5)]], [refund("O-1", 12.5)]),
    # one of two paired calls has a wrong argument: 1 of 2 argument-accurate
    "wrong-amount": ([[refund("o-1", 1), notify("ann")]], [refund("o-1", 99), notify("ann")]),
    # an impossible date written the same on both sides: exact passes, the rules do not
    "bad-date": (
        [[{"name": "visit", "args": {"day": "2026-02-30"}}]],
        [{"name": "visit", "args": {"day": "2026-02-30"}}],
    ),
    # abstentions: one right, one not
    "thanks": ([], []),
    "chatty": ([], [get_order("o-1")]),
    # no output line: a failure (missing_output), not a missed call
    "silent": ([[get_order("o-1")]], None),
    # the same tools in other counts: names wrong
    "counts": (
        [[refund("o-1", 1), refund("o-2", 2), notify("ann")]],
        [refund("o-1", 1), notify("ann"), notify("ann")],
    ),
}


def _run() -> Summary:
    cases = [parse_case({"id": k, "plans": plans}, SPECS) for k, (plans, _) in RUN.items()]
    outputs = [
        parse_output({"id": k, "calls": calls})
        for k, (_, calls) in RUN.items()
        if calls is not None
    ]
    outputs.append(parse_output({"id": "stray", "calls": []}))
    run = score(SPECS, cases, outputs)
    summary = run.summary()
    assert run.unmatched_output_ids == ["stray"]
    assert summary.unmatched_outputs == summary.to_dict()["unmatched_outputs"] == 1
    return summary


def test_the_summary_counts_every_metric_by_hand() -> None:
    summary = _run().to_dict()
    assert (summary["cases"], summary["passed"]) == (10, 4)
    assert summary["accuracy"] == 0.4
    assert summary["accuracy_ci95"] == [0.1682, 0.6873]  # Wilson, 4 of 10
    assert "accuracy_clustered" not in summary  # only with cluster_by
    # tool cases: all but the two abstentions; names right in all but "silent" and "counts"
    assert summary["name_accuracy"] == {
        "value": 0.75,
        "n": 8,
        "passed": 6,
        "ci95": [0.4093, 0.9285],
    }
    # pairs: same 1, tolerance 1, reordered 2, case-of-id 1 (wrong), wrong-amount 2 (one wrong),
    # bad-date 1 (wrong), counts 2 (both right; the third plan call found no partner)
    assert summary["argument_accuracy"] == {
        "value": 0.7,
        "n": 10,
        "passed": 7,
        "ci95": [0.3968, 0.8922],
    }
    assert summary["abstention_accuracy"] == {
        "value": 0.5,
        "n": 2,
        "passed": 1,
        "ci95": [0.0945, 0.9055],
    }
    assert summary["missed_calls"] == 0  # "silent" has no output: not a missed call
    assert summary["missing_outputs"] == 1
    assert summary["missing_output_ids"] == ["silent"]
    assert summary["missing_policy"] == "fail"
    assert summary["unmatched_output_ids"] == ["stray"]
    assert summary["codes"] == {"value_mismatch": 3, "extra_call": 1, "missing_output": 1,
                                "wrong_tool": 1}  # fmt: skip


def test_baseline_disagreements_are_counted_on_the_right_side() -> None:
    baselines = _run().to_dict()["baselines"]
    exact = baselines["exact"]
    assert (exact["passed"], exact["accuracy"]) == (3, 0.3)  # same, bad-date, thanks
    assert exact["only_rules_pass"] == 2  # tolerance, reordered
    assert exact["only_baseline_passes"] == 1  # bad-date
    assert exact["disagreements"] == 3
    assert exact["disagreement_ids"] == ["tolerance", "reordered", "bad-date"]
    assert exact["disagreement_ids_truncated"] is False
    lowercase = baselines["lowercase"]
    assert lowercase["passed"] == 5  # the four rule passes and case-of-id
    assert (lowercase["only_rules_pass"], lowercase["only_baseline_passes"]) == (0, 1)
    assert lowercase["disagreement_ids"] == ["case-of-id"]


def test_per_tool_and_per_argument_tallies() -> None:
    summary = _run().to_dict()
    per_tool = summary["per_tool"]
    # passed: same, tolerance, reordered, counts (o-1); failed: case-of-id, wrong-amount and the
    # refund of counts that a notify stood in for
    assert per_tool["refund"] == {
        "passed": 4,
        "failed": 3,
        "top_codes": [["value_mismatch", 2], ["wrong_tool", 1]],
        "ci95": [0.2505, 0.8418],
    }
    # reordered, wrong-amount, counts; the extra is the notify of counts in a refund's place
    assert per_tool["notify"] == {
        "passed": 3,
        "failed": 0,
        "extra": 1,
        "top_codes": [],
        "ci95": [0.4385, 1.0],
    }
    # chatty's extra call; silent has no output, which says nothing about any tool
    assert per_tool["get_order"] == {
        "passed": 0,
        "failed": 0,
        "extra": 1,
        "top_codes": [["extra_call", 1]],
        "ci95": None,
    }
    assert per_tool["visit"] == {
        "passed": 0,
        "failed": 1,
        "top_codes": [["value_mismatch", 1]],
        "ci95": [0.0, 0.7935],
    }
    per_argument = summary["per_argument"]
    assert per_argument["refund.order_id"] == {
        "passed": 5,
        "failed": 1,
        "top_codes": [["value_mismatch", 1]],
        "ci95": [0.4365, 0.9699],
    }
    assert per_argument["refund.amount"] == {
        "passed": 5,
        "failed": 1,
        "top_codes": [["value_mismatch", 1]],
        "ci95": [0.4365, 0.9699],
    }
    assert per_argument["notify.user"] == {
        "passed": 3,
        "failed": 0,
        "top_codes": [],
        "ci95": [0.4385, 1.0],
    }
    assert "notify.text" not in per_argument  # free text is never compared
    assert per_argument["visit.day"]["failed"] == 1


def test_to_json_is_a_deprecated_alias_of_to_dict() -> None:
    """`to_json` returned a dict, never JSON text: `to_dict` says so, and the old name warns."""
    summary = _run()
    with pytest.warns(DeprecationWarning, match=r"Summary\.to_dict\(\)"):
        old = summary.to_json()
    assert old == summary.to_dict()
    assert isinstance(old, dict)


def test_an_empty_run_has_no_rates() -> None:
    summary = score(SPECS, [], []).summary().to_dict()
    assert summary["accuracy"] is None
    assert summary["name_accuracy"] == {"value": None, "n": 0, "passed": 0, "ci95": None}
    assert summary["accuracy_ci95"] is None
    assert summary["baselines"]["exact"]["accuracy"] is None
    assert summary["baselines"]["exact"]["accuracy_ci95"] is None
    assert summary["per_tool"] == {}


# --- outcomes: a case without a goal state is judged on its calls ------------------------


def _env(tmp_path: Path) -> Any:
    (tmp_path / "store.sql").write_text("CREATE TABLE log (entry TEXT);\n", encoding="utf-8")
    (tmp_path / "tools.py").write_text(
        "def get_order(db, order_id):\n    return {'order_id': order_id}\n", encoding="utf-8"
    )
    return load_environment({"database": "store.sql", "tools": "tools.py"}, tmp_path, "t.yaml")


def _with_state(tmp_path: Path, line: dict[str, Any], order_id: str) -> tuple[Case, Any]:
    case = parse_case({"id": "c", "plans": [[get_order("o-1")]], **line}, SPECS)
    made: Trajectory = parse_output({"id": "c", "calls": [get_order(order_id)]})
    result = score_case(SPECS, case, made)
    return case, with_state(_env(tmp_path), case, made, result, "cases.jsonl")


def test_a_case_without_goal_state_passes_or_fails_on_its_calls_alone(tmp_path: Path) -> None:
    _, right = _with_state(tmp_path, {}, "o-1")
    assert right.state is not None
    assert right.state.passed is None
    assert right.state.outcome_passed is None
    assert outcome_passed(right) is True
    _, wrong = _with_state(tmp_path, {}, "o-2")
    assert outcome_passed(wrong) is False


def test_outcome_needs_calls_state_and_outputs_to_pass(tmp_path: Path) -> None:
    _, unchanged = _with_state(tmp_path, {"tags": [], "goal_state": {"log": []}}, "o-1")
    assert unchanged.state.passed is True
    assert outcome_passed(unchanged) is True
    _, unanswered = _with_state(tmp_path, {"tags": [], "required_outputs": ["refunded"]}, "o-1")
    assert unanswered.state.passed is None
    assert unanswered.state.outputs_passed is False
    assert outcome_passed(unanswered) is False
    _, wrong = _with_state(tmp_path, {"tags": [], "goal_state": {"log": []}}, "o-2")
    assert wrong.state.passed is True
    assert outcome_passed(wrong) is False


def _results() -> list[tuple[Case, CaseResult]]:
    found = []
    for key, (plans, calls) in RUN.items():
        case = parse_case({"id": key, "plans": plans}, SPECS)
        made = (
            Trajectory(key, (), missing=True)
            if calls is None
            else parse_output({"id": key, "calls": calls})
        )
        found.append((case, score_case(SPECS, case, made)))
    return found


@pytest.mark.parametrize("cut", [0, 3, 7, 10])
def test_summaries_of_parts_merge_into_the_summary_of_the_whole(cut: int) -> None:
    results = _results()
    whole, first, second = SummaryBuilder(SPECS), SummaryBuilder(SPECS), SummaryBuilder(SPECS)
    for case, result in results:
        whole.add(case, result)
    for case, result in results[:cut]:
        first.add(case, result)
    for case, result in results[cut:]:
        second.add(case, result)
    first.merge(second)
    assert first.finish().to_dict() == whole.finish().to_dict()
    whole.set_unmatched(["stray"])  # the stray output line of `_run`
    assert whole.finish().to_dict() == _run().to_dict()


def test_merging_keeps_the_first_disagreement_ids_up_to_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tallies, "DISAGREEMENT_IDS_KEPT", 2)
    first, second = BaselineTally(), BaselineTally()
    first.add("a", baseline=True, rules=False)
    second.add("b", baseline=False, rules=True)
    second.add("c", baseline=True, rules=False)
    second.add("d", baseline=True, rules=True)
    second.add("e", baseline=False, rules=True)
    assert second.ids == ["b", "c"]
    first.merge(second)
    assert first.to_json(6) == {
        "passed": 3,
        "accuracy": 0.5,
        "accuracy_ci95": [0.1876, 0.8124],
        "disagreements": 4,
        "only_rules_pass": 2,
        "only_baseline_passes": 2,
        "disagreement_ids": ["a", "b"],
        "disagreement_ids_truncated": True,
    }


@pytest.mark.parametrize(
    ("plan", "calls", "says"),
    [
        ([refund("o-1", 1)], [], "0 calls made, the first plan has 1"),
        ([refund("o-1", 1)], [notify("ann")], "call 0 is 'notify', the first plan has 'refund'"),
        (
            [refund("o-1", 1)],
            [{"name": "refund", "args": "{oops"}],
            "call 0: arguments could not be parsed",
        ),
        ([refund("o-1", 1)], [refund("o-1", 2)], "call 0 /amount: 2 where the plan has 1"),
        (
            [refund("o-1", 1), notify("ann")],
            [refund("o-1", 1), notify("ann", "bye")],
            "call 1 /text: 'bye' where the plan has 'hi'",
        ),
        (
            [get_order("o-1")],
            [{"name": "get_order", "args": {"order_id": "o-1", "x": True}}],
            "call 0 /x: true where the plan has (omitted)",
        ),
        (
            [get_order("o-1")],
            [{"name": "get_order", "args": {}}],
            "call 0 /order_id: (omitted) where the plan has 'o-1'",
        ),
        ([get_order("o-1")], [{"name": "get_order", "args": {"order_id": 1}}], "call 0 /order_id"),
        ([refund("o-1", 1)], [refund("o-1", 1.0)], None),
        ([refund("o-1", 1)], [refund("o-1", True)], "call 0 /amount: true where the plan has 1"),
        (
            [get_order("o-1")],
            [{"name": "lookup", "args": {"order_id": "o-1"}}],
            "call 0 is 'lookup', the first plan has 'get_order' there",
        ),
        ([], [], None),
    ],
)
def test_the_exact_baseline_says_where_it_first_differs(
    plan: list[dict[str, Any]], calls: list[dict[str, Any]], says: str | None
) -> None:
    case = parse_case({"id": "x", "plans": [plan] if plan else []}, SPECS)
    made = parse_output({"id": "x", "calls": calls})
    difference = exact_difference(case.plans, made.calls)
    assert exact_baseline(case.plans, made.calls) is (difference is None)
    if says is None:
        assert difference is None
    else:
        assert difference is not None
        assert difference.startswith(says), difference


def test_the_exact_baseline_compares_the_first_plan_only() -> None:
    case = parse_case({"id": "x", "plans": [[notify("ann")], [get_order("o-1")]]}, SPECS)
    second = parse_output({"id": "x", "calls": [get_order("o-1")]}).calls
    assert exact_baseline(case.plans, second) is False
    assert exact_difference(case.plans, second) == (
        "call 0 is 'get_order', the first plan has 'notify' there"
    )
    assert exact_baseline([[]], []) is True


def _ledger(tmp_path: Path) -> Any:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "store.sql").write_text(
        "CREATE TABLE log (entry TEXT PRIMARY KEY);\n", encoding="utf-8"
    )
    (tmp_path / "tools.py").write_text(
        "def refund(db, order_id, amount):\n"
        "    db.execute('INSERT INTO log VALUES (?)', (order_id,))\n"
        "def get_order(db, order_id):\n"
        "    return {'order_id': order_id}\n",
        encoding="utf-8",
    )
    return load_environment({"database": "store.sql", "tools": "tools.py"}, tmp_path, "t.yaml")


LOGGED = {"tags": [], "goal_state": {"log": [{"entry": "o-1"}]}}
# id: (extra case keys, produced calls, response)
OUTCOMES: dict[str, tuple[dict[str, Any], list[dict[str, Any]], str | None]] = {
    "both-pass": (LOGGED, [refund("o-1", 1)], None),
    "state-only": (LOGGED, [refund("o-1", 2)], None),
    "calls-only": ({"tags": [], "goal_state": {"log": []}}, [refund("o-1", 1)], None),
    "calls-only-too": (
        {"tags": [], "goal_state": {"log": [{"entry": "o-2"}]}},
        [refund("o-1", 1)],
        None,
    ),
    "answered": ({"tags": [], "required_outputs": ["late"]}, [refund("o-1", 1)], "It is late"),
    "unanswered": ({"tags": [], "required_outputs": ["late"]}, [refund("o-1", 1)], None),
    "unchecked": ({}, [refund("o-1", 3)], None),
}


def _outcome_results(tmp_path: Path) -> list[tuple[Case, CaseResult]]:
    env = _ledger(tmp_path)
    found = []
    for key, (extra, calls, response) in OUTCOMES.items():
        case = parse_case({"id": key, "plans": [[refund("o-1", 1)]], **extra}, SPECS)
        made = parse_output({"id": key, "calls": calls, "response": response})
        found.append((case, with_state(env, case, made, score_case(SPECS, case, made), "c")))
    return found


def test_outcomes_are_counted_beside_the_calls(tmp_path: Path) -> None:
    builder = SummaryBuilder(SPECS)
    for case, result in _outcome_results(tmp_path):
        builder.add(case, result)
    summary = builder.finish().to_dict()
    assert summary["passed"] == 5
    assert summary["state"] == {
        "state_accuracy": {"value": 0.5, "n": 4, "passed": 2, "ci95": [0.15, 0.85]},
        "required_outputs": {"value": 0.5, "n": 2, "passed": 1, "ci95": [0.0945, 0.9055]},
        "calls_passed_state_failed": 2,
        "calls_failed_state_passed": 1,
    }
    assert "state" not in _run().to_dict()  # no environment, no state block


@pytest.mark.parametrize("cut", [0, 1, 4, 7])
def test_outcome_tallies_merge(tmp_path: Path, cut: int) -> None:
    results = _outcome_results(tmp_path)
    whole, first, second = SummaryBuilder(SPECS), SummaryBuilder(SPECS), SummaryBuilder(SPECS)
    for case, result in results:
        whole.add(case, result)
    for case, result in results[:cut]:
        first.add(case, result)
    for case, result in results[cut:]:
        second.add(case, result)
    first.merge(second)
    assert first.finish().to_dict() == whole.finish().to_dict()


def _join(
    cases: list[str], outputs: list[str], seen: set[str] | None = None
) -> tuple[list[tuple[str, str | None]], list[list[str]]]:
    unmatched: list[list[str]] = []
    groups = join_groups_by_id(
        cases,
        outputs,
        lambda c: (c, None),
        lambda o: (o, None),
        unmatched.append,
        ("cases.jsonl", "outputs.jsonl"),
        seen,
    )
    pairs = one_each(groups, lambda o: (o, None), "outputs.jsonl")
    return list(pairs), unmatched


def test_join_pairs_by_id_in_any_order_and_reports_strays() -> None:
    pairs, unmatched = _join(["a", "b", "c", "d"], ["c", "x", "a", "b", "y"])
    assert pairs == [("a", "a"), ("b", "b"), ("c", "c"), ("d", None)]
    assert unmatched == [["x", "y"]]
    pairs, unmatched = _join(["a"], [])
    assert (pairs, unmatched) == ([("a", None)], [[]])


def test_join_refuses_duplicate_ids_naming_file_and_line() -> None:
    def on_line(line: int) -> Callable[[str], tuple[str, int | None]]:
        return lambda key: (key, line)

    pairs = one_each(join_groups_by_id(["a", "a"], ["a"], on_line(7), on_line(3)), on_line(3))
    with pytest.raises(CaseError) as caught:
        list(pairs)
    assert str(caught.value) == "<cases>:7: id: duplicate case id 'a'"
    for outputs in (["a", "a"], ["b", "a", "b"], ["a", "b", "a"]):
        with pytest.raises(OutputError) as caught_output:
            _join(["a", "b", "c"], outputs)
        assert str(caught_output.value).startswith("outputs.jsonl: id: duplicate output for case")
    with pytest.raises(OutputError, match="duplicate output for case 'a'"):
        _join(["b"], ["a"], seen={"a"})


def test_a_case_without_output_fails_with_missing_output_and_is_counted() -> None:
    case = parse_case({"id": "c", "plans": [[get_order("o-1")]]}, SPECS)
    (pair,) = list(join([case], []))
    assert pair[0] is case
    assert pair[1] == Trajectory("c", (), missing=True)
    run = score(SPECS, [case], [], sources=("cases.jsonl", "outputs.jsonl"))
    (result,) = list(run)
    assert result.missing_output
    assert [m.code for m in result.mismatches] == ["missing_output"]
    assert run.summary().missing_outputs == 1
    with pytest.raises(CaseError, match=r"^cases\.jsonl:4: id: duplicate case id 'c'$"):
        list(score(SPECS, [case._replace(line=3), case._replace(line=4)], [], ("cases.jsonl", "o")))


def test_scoring_streams_results_and_the_summary_finishes_the_rest() -> None:
    cases = [parse_case({"id": k, "plans": [[get_order(k)]]}, SPECS) for k in ("a", "b", "c")]
    outputs = [parse_output({"id": k, "calls": [get_order(k)]}) for k in ("a", "b", "c")]
    run = score(SPECS, cases, outputs)
    first = next(iter(run))
    assert (first.id, first.passed) == ("a", True)
    summary = run.summary()
    assert (summary.cases, summary.passed) == (3, 3)
    assert run.summary().cases == 3  # asking again scores nothing twice


def _pay_specs() -> SpecSet:
    tools = {"pay": {"args": {"id": "exact", "memo": {"kind": "exact", "default": None},
                              "text": "text"}}}  # fmt: skip
    specs, problems = parse_specs({"tools": tools}, "tools.yaml")
    assert specs is not None, problems
    return specs


PAY = _pay_specs()


def _pay(**args: Any) -> dict[str, Any]:
    return {"name": "pay", "args": args}


def _tally_run(lines: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    cases = [parse_case({"id": key, "plans": [[_pay(id="a")]]}, PAY) for key in lines]
    outputs = [parse_output({"id": key, "calls": calls}) for key, calls in lines.items()]
    return score(PAY, cases, outputs).summary().to_dict()


def test_arguments_outside_the_plan_and_tools_outside_the_spec_are_tallied() -> None:
    summary = _tally_run(
        {
            "defaults-given": [_pay(id="a", memo=None, text="hi")],
            "wrong-and-unknown": [_pay(id="b", colour="red")],
            "unreadable": [{"name": "pay", "args": "{id"}],
            "stranger": [_pay(id="a"), {"name": "drop", "args": {}}],
        }
    )
    assert summary["per_argument"] == {
        "pay.id": {
            "passed": 2,
            "failed": 1,
            "top_codes": [["value_mismatch", 1]],
            "ci95": [0.2077, 0.9385],
        },
        "pay.memo": {"passed": 1, "failed": 0, "top_codes": [], "ci95": [0.2065, 1.0]},
        "pay.colour": {
            "passed": 0,
            "failed": 1,
            "top_codes": [["unexpected_argument", 1]],
            "ci95": [0.0, 0.7935],
        },
    }
    assert summary["per_tool"] == {
        "drop": {  # no call of it was paired: no pass rate, no interval
            "passed": 0,
            "failed": 0,
            "extra": 1,
            "top_codes": [["unknown_tool", 1]],
            "ci95": None,
        },
        "pay": {
            "passed": 2,
            "failed": 2,
            "top_codes": [
                ["value_mismatch", 1],
                ["unexpected_argument", 1],
                ["arguments_unparseable", 1],
            ],
            "ci95": [0.15, 0.85],
        },
    }
    assert summary["argument_accuracy"] == {
        "value": 0.5,
        "n": 4,
        "passed": 2,
        "ci95": [0.15, 0.85],
    }


def test_merging_tallies_made_only_in_the_later_part() -> None:
    first, second, whole = SummaryBuilder(PAY), SummaryBuilder(PAY), SummaryBuilder(PAY)
    lines = {"ok": [_pay(id="a")], "odd": [_pay(id="a", colour=1), {"name": "drop"}]}
    for index, (key, calls) in enumerate(lines.items()):
        case = parse_case({"id": key, "plans": [[_pay(id="a")]]}, PAY)
        result = score_case(PAY, case, parse_output({"id": key, "calls": calls}))
        (first if index == 0 else second).add(case, result)
        whole.add(case, result)
    first.merge(second)
    merged = first.finish().to_dict()
    assert merged == whole.finish().to_dict()
    assert merged["per_argument"]["pay.colour"]["failed"] == 1
    assert merged["per_tool"]["drop"]["extra"] == 1


def test_a_tally_lists_its_three_most_common_codes() -> None:
    tally = tallies.Tally(1, 9, 0, Counter(a=4, b=3, c=2, d=1))
    assert tally.to_json() == {
        "passed": 1,
        "failed": 9,
        "top_codes": [["a", 4], ["b", 3], ["c", 2]],
        "ci95": [0.0179, 0.4042],
    }
    assert tally.to_json(top=1)["top_codes"] == [["a", 4]]


def test_rates_and_accuracy_are_rounded_to_four_places() -> None:
    summary = _tally_run({"x": [_pay(id="a")], "y": [_pay(id="b")], "z": [_pay(id="c")]})
    assert summary["accuracy"] == 0.3333
    assert summary["baselines"]["exact"]["accuracy"] == 0.3333
    assert summary["name_accuracy"]["value"] == 1.0
    assert Rate(2, 3).to_json() == {
        "value": 0.6667,
        "n": 3,
        "passed": 2,
        "ci95": [0.2077, 0.9385],
    }
    assert summary["accuracy_ci95"] == [0.0615, 0.7923]
    assert Rate(0, 0).value is None


def test_a_result_keeps_the_transcript_format_and_its_notes() -> None:
    case = parse_case({"id": "t", "plans": [[_pay(id="a")]]}, PAY)
    call = {"id": "c1", "type": "function", "function": {"name": "pay", "arguments": '{"id": "a"}'}}
    messages = [
        {"role": "user", "content": "pay a"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    result = score_case(PAY, case, parse_output({"id": "t", "messages": messages}))
    assert result.passed
    assert result.format == "openai-chat"
    assert result.notes == ("format detected: openai-chat",)


def test_outputs_left_after_the_last_case_are_strays_and_checked_for_duplicates() -> None:
    pairs, unmatched = _join(["a"], ["a", "z", "y"])
    assert (pairs, unmatched) == ([("a", "a")], [["z", "y"]])
    lines = iter([4, 9])

    def numbered(key: str) -> tuple[str, int | None]:
        return key, next(lines)

    # Lines for a case the cases file lacks may be its trials: each line is counted.
    strays: list[list[str]] = []
    groups = join_groups_by_id(["a"], ["z", "z"], lambda c: (c, 1), numbered, strays.append)
    joined = one_each(groups, numbered)
    assert list(joined) == [("a", None)]
    assert strays == [["z", "z"]]


def test_scoring_with_an_environment_judges_each_case_on_its_outcome(tmp_path: Path) -> None:
    env = _ledger(tmp_path)
    cases, outputs = [], []
    for key, (extra, calls, response) in OUTCOMES.items():
        cases.append(parse_case({"id": key, "plans": [[refund("o-1", 1)]], **extra}, SPECS))
        outputs.append(parse_output({"id": key, "calls": calls, "response": response}))
    run = score(SPECS, cases, outputs, ("c.jsonl", "o.jsonl"), env)
    results = {result.id: result for result in run}
    assert results["both-pass"].state is not None
    assert results["both-pass"].state.passed is True
    assert results["state-only"].state is not None
    assert results["state-only"].state.passed is True
    assert not results["state-only"].passed
    assert results["unchecked"].state is not None
    assert results["unchecked"].state.passed is None
    builder = SummaryBuilder(SPECS)
    for case, result in _outcome_results(tmp_path / "again"):
        builder.add(case, result)
    assert run.summary().to_dict() == builder.finish().to_dict()
    broken = parse_case({"id": "b", "plans": [], "tags": [], "goal_state": {"nope": []}}, SPECS)
    with pytest.raises(CaseError, match=r"^c\.jsonl: goal_state\.nope: case 'b': no table 'nope'"):
        list(score(SPECS, [broken], [], ("c.jsonl", "o.jsonl"), env))


def test_partial_credit_and_efficiency_by_hand() -> None:
    summary = _run().to_dict()
    partial, efficiency = summary["partial"], summary["efficiency"]
    # per case (precision, recall, f1): same, tolerance, reordered, thanks 1, 1, 1;
    # case-of-id and bad-date 0, 0, 0 (nothing matched); wrong-amount 1/2 each (notify);
    # chatty 0, 1, 0 (a call where none was expected); silent 0, 0, 0 (no output: no
    # credit); counts 2/3 each (refund o-1 and one notify of two)
    precision = [1, 1, 1, 0, 0.5, 0, 1, 0, 0, 2 / 3]
    recall = [1, 1, 1, 0, 0.5, 0, 1, 1, 0, 2 / 3]
    f1 = [1, 1, 1, 0, 0.5, 0, 1, 0, 0, 2 / 3]
    assert partial["cases"] == 10
    # matched 7 of 12 expected calls, 12 produced
    for name, values in (("precision", precision), ("recall", recall), ("f1", f1)):
        mean = sum(values) / 10
        half = 1.959963984540054 * statistics.stdev(values) / 10**0.5
        assert partial[name] == {
            "micro": round(7 / 12, 4),
            "macro": round(mean, 4),
            "macro_ci95": [round(max(0, mean - half), 4), round(min(1, mean + half), 4)],
        }
    assert partial["recall"]["macro"] == 0.6167
    assert partial["per_tool"] == {
        "get_order": {"matched": 0, "expected": 1, "produced": 1,
                      "precision": 0.0, "recall": 0.0, "f1": 0.0},
        "notify": {"matched": 3, "expected": 3, "produced": 4,
                   "precision": 0.75, "recall": 1.0, "f1": round(6 / 7, 4)},
        "refund": {"matched": 4, "expected": 7, "produced": 6,
                   "precision": round(4 / 6, 4), "recall": round(4 / 7, 4), "f1": round(8 / 13, 4)},
        "visit": {"matched": 0, "expected": 1, "produced": 1,
                  "precision": 0.0, "recall": 0.0, "f1": 0.0},
    }  # fmt: skip
    # unpaired: case-of-id, wrong-amount, bad-date, chatty, counts; counts repeats a notify;
    # 11 calls in the tool cases read, for 11 expected calls (silent is left out)
    assert efficiency == {
        "extra": 5,
        "excused": 0,
        "repeated": 1,
        "retries": 0,
        "calls_per_expected_call": 1.0,
    }


def test_partial_credit_of_an_excluded_case_counts_nowhere() -> None:
    builder = SummaryBuilder(SPECS, missing="exclude")
    for case, result in _results():
        builder.add(case, result)
    partial = builder.finish().to_dict()["partial"]
    assert partial["cases"] == 9
    assert partial["per_tool"]["get_order"]["expected"] == 0  # only silent expected it
    assert partial["recall"]["micro"] == round(7 / 11, 4)


def test_partial_intervals_need_two_cases_and_a_run_of_none_is_unmeasured() -> None:
    empty = SummaryBuilder(SPECS).finish().to_dict()
    assert empty["partial"]["f1"] == {"micro": None, "macro": None, "macro_ci95": None}
    assert empty["efficiency"]["calls_per_expected_call"] is None
    one = SummaryBuilder(SPECS)
    case, result = _results()[0]
    one.add(case, result)
    assert one.finish().to_dict()["partial"]["f1"] == {
        "micro": 1.0,
        "macro": 1.0,
        "macro_ci95": None,
    }
