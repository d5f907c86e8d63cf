"""A missing output is never a pass: a case without an output line fails with `missing_output`
in every rate (or, under `--missing exclude`, is left out of all of them, and said so), outputs
without a case are named, `score` exits 1 and says why most outputs are missing; beside it, the
do-nothing baseline names the cases a do-nothing agent passes.

Each test starts from the reproducer of what was wrong: an empty outputs file on abstention
cases passed with 100% abstention accuracy and exit status 0, `--fail-under` included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from toolscore import parse_case, parse_output, parse_specs, score
from toolscore.cli.app import cli
from toolscore.core.diagnosis import best_plan
from toolscore.core.model import Trajectory
from toolscore.engines.local import ParallelScoring
from toolscore.inputs.missing import JoinTally, likely_cause, nothing_calls
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case, with_state
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import SpecSet
from toolscore.state import check_state, load_environment, unreplayed
from toolscore.store.codec import baseline_bits, case_json

ROOT = Path(__file__).parents[2]
SUPPORT = ROOT / "examples" / "support"
SPEC = str(SUPPORT / "tools.yaml")


def _specs() -> SpecSet:
    tools = {"get_order": {"args": {"order_id": "exact"}}, "log": {"args": {"entry": "exact"}}}
    specs, problems = parse_specs({"tools": tools}, "tools.yaml")
    assert specs is not None, problems
    return specs


SPECS = _specs()


def get_order(order_id: str) -> dict[str, Any]:
    return {"name": "get_order", "args": {"order_id": order_id}}


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def _score(cases: str, outputs: str, *more: str, spec: str = SPEC) -> Result:
    return CliRunner().invoke(
        cli, ["score", "--specs", spec, "--cases", cases, "--outputs", outputs, *more]
    )


ABSTENTIONS = [{"id": f"chat-{n}", "plans": []} for n in range(3)]


# --- the reproducer: an empty outputs file ------------------------------------------------


def test_an_empty_outputs_file_on_abstention_cases_fails_and_exits_1(tmp_path: Path) -> None:
    cases = _write(tmp_path / "cases.jsonl", ABSTENTIONS)
    outputs = _write(tmp_path / "outputs.jsonl", [])
    report = tmp_path / "r.json"
    result = _score(cases, outputs, "--fail-under", "0.15", "--json", str(report))
    assert result.exit_code == 1, result.output
    summary = json.loads(report.read_text())["summary"]
    assert (summary["passed"], summary["accuracy"]) == (0, 0.0)
    assert summary["abstention_accuracy"]["passed"] == 0
    assert summary["abstention_accuracy"]["n"] == 3
    assert summary["missing_outputs"] == 3
    assert summary["missing_output_ids"] == ["chat-0", "chat-1", "chat-2"]
    assert summary["missed_calls"] == 0
    assert summary["codes"] == {"missing_output": 3}
    assert "3 cases without an output line (chat-0, chat-1, chat-2)" in result.output


def test_the_summary_never_counts_a_missing_output_as_passing() -> None:
    cases = [parse_case(row, SPECS) for row in ABSTENTIONS]
    run = score(SPECS, cases, [parse_output({"id": "chat-0", "calls": []})])
    results = list(run)
    assert [r.passed for r in results] == [True, False, False]
    summary = run.summary()
    assert (summary.cases, summary.passed, summary.abstention.passed) == (3, 1, 1)
    # cases scored one by one (trials, or an outcome judged) go the other way through add_case
    builder = SummaryBuilder(SPECS)
    for case, result in zip(cases, results, strict=True):
        builder.add_case(case, [result._replace(trial=0, trials=(1, 0))], 0)
    assert builder.finish().to_dict()["trials"]["calls"]["pass_hat_k"][0]["value"] == 0.3333


def test_one_missing_output_exits_1_and_the_terminal_names_it(tmp_path: Path) -> None:
    result = _score(str(SUPPORT / "cases.jsonl"), _write(tmp_path / "o.jsonl", []))
    assert result.exit_code == 1
    assert "missing outputs (failed)" in result.output
    assert (
        "no output line: default-omitted, parallel-swapped, wrong-case-id, unit-alias, thanks, ..."
        in (" ".join(result.output.replace("│", " ").split()))
    )


# --- --missing exclude ----------------------------------------------------------------------


def _partial(tmp_path: Path) -> tuple[str, str]:
    """The support example with the outputs of its first two cases left out, and a stray."""
    lines = (SUPPORT / "outputs.jsonl").read_text().splitlines()[2:]
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text("\n".join([*lines, '{"id": "Stray", "calls": []}']) + "\n")
    return str(SUPPORT / "cases.jsonl"), str(outputs)


def test_exclude_leaves_missing_cases_out_of_every_rate_and_says_which(tmp_path: Path) -> None:
    cases, outputs = _partial(tmp_path)
    full = tmp_path / "full.json"
    assert _score(cases, str(SUPPORT / "outputs.jsonl"), "--json", str(full)).exit_code == 0
    report = tmp_path / "r.json"
    result = _score(cases, outputs, "--missing", "exclude", "--json", str(report))
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    summary = data["summary"]
    assert (summary["cases"], summary["missing_outputs"]) == (4, 2)
    assert summary["missing_policy"] == "exclude"
    assert summary["missing_output_ids"] == ["default-omitted", "parallel-swapped"]
    assert "missing_output" not in summary["codes"]
    assert [c["id"] for c in data["cases"]] == [
        "wrong-case-id", "unit-alias", "thanks", "computed-amount"
    ]  # fmt: skip
    kept = {c["id"]: c for c in json.loads(full.read_text())["cases"]}
    assert data["cases"] == [kept[c["id"]] for c in data["cases"]]  # the others as scored whole
    text = " ".join(result.output.replace("│", " ").split())
    assert "missing outputs (left out: --missing exclude) 2" in text
    assert "no output line: default-omitted, parallel-swapped" in text
    assert "outputs with no case (ignored) 1" in text
    assert "no such case: Stray" in text
    failing = _score(cases, outputs, "--json", str(report))
    assert failing.exit_code == 1
    assert json.loads(report.read_text())["summary"]["cases"] == 6


@pytest.mark.parametrize("missing", ["fail", "exclude"])
def test_workers_give_the_summary_of_one_process(tmp_path: Path, missing: str) -> None:
    rows = [{"id": f"c{n}", "plans": [[get_order(f"o-{n}")]] if n % 3 else []} for n in range(40)]
    outputs = [{"id": f"c{n}", "calls": [get_order(f"o-{n}")]} for n in range(40) if n % 4]
    paths = (_write(tmp_path / "c.jsonl", rows), _write(tmp_path / "o.jsonl", outputs))
    serial = score(
        SPECS,
        [parse_case(row, SPECS) for row in rows],
        [parse_output(row) for row in outputs],
        missing=missing,
    )
    expected = [case_to_json(result) for result in serial]
    run = ParallelScoring(SPECS, *paths, 2, want_report=True, chunk_size=3, missing=missing)
    lines = [json.loads(line) for outcome in run for line in outcome.report_lines]
    assert lines == expected
    merged = run.summary().finish().to_dict()
    assert merged == serial.summary().to_dict()
    assert merged["missing_outputs"] == 10
    assert merged["cases"] == (30 if missing == "exclude" else 40)


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="missing must be one of fail, exclude"):
        score(SPECS, [], [], missing="skip")


def test_exclude_is_kept_by_the_store_and_rescore(tmp_path: Path) -> None:
    cases, outputs = _partial(tmp_path)
    db = str(tmp_path / "results.db")
    report = tmp_path / "r.json"
    done = _score(cases, outputs, "--missing", "exclude", "--db", db, "--json", str(report))
    assert done.exit_code == 0, done.output
    shown = json.loads(CliRunner().invoke(cli, ["show", "1", "--json", "--db", db]).output)
    written = json.loads(report.read_text())
    assert shown["summary"] == written["summary"]
    assert shown["cases"] == written["cases"]
    again = CliRunner().invoke(cli, ["rescore", "1", "--specs", SPEC, "--db", db, "--json"])
    assert again.exit_code == 0, again.output
    rescored = json.loads(CliRunner().invoke(cli, ["show", "2", "--json", "--db", db]).output)
    assert rescored["summary"]["missing_policy"] == "exclude"
    assert rescored["cases"] == written["cases"]
    failing = CliRunner().invoke(
        cli, ["rescore", "1", "--specs", SPEC, "--db", db, "--missing", "fail", "--json"]
    )
    assert failing.exit_code == 0, failing.output
    third = json.loads(CliRunner().invoke(cli, ["show", "3", "--json", "--db", db]).output)
    assert (third["summary"]["cases"], third["summary"]["missing_policy"]) == (6, "fail")
    assert third["cases"][0]["mismatches"][0]["code"] == "missing_output"
    # run 2 keeps no row for the two cases: compared with run 3, the cases pair by id
    compared = json.loads(
        CliRunner().invoke(cli, ["compare", "2", "3", "--db", db, "--json"]).output
    )
    assert compared["shared_cases"] == 4
    assert compared["only_in_b"] == 2
    assert compared["flipped"] == 0
    shown_text = CliRunner().invoke(cli, ["show", "2", "--db", db]).output
    assert "left out: --missing exclude" in shown_text


# --- outputs without a case and the likely cause ------------------------------------------


def test_most_outputs_missing_for_ids_that_differ_by_prefix_or_case(tmp_path: Path) -> None:
    cases = _write(tmp_path / "c.jsonl", [{"id": f"Task-{n}", "plans": []} for n in range(4)])
    outputs = _write(tmp_path / "o.jsonl", [{"id": f"run7/task-{n}"} for n in range(4)])
    result = _score(cases, outputs)
    assert result.exit_code == 1
    assert "warning: 4 of 4 cases have no output line" in result.output
    assert "likely cause: case and output ids differ only by a prefix, letter case or" in (
        result.output
    )
    assert "(case 'Task-0', output 'run7/task-0')" in result.output


def test_ids_with_stray_whitespace_are_named_as_the_likely_cause() -> None:
    join = JoinTally()
    join.missing.extend(["a-1", "a-2", "a-3"])
    join.unmatched.extend(["zzz", " A-2 "])
    (_, cause) = likely_cause(join, 3)
    assert "(case 'a-2', output ' A-2 ')" in cause
    case_side = JoinTally()
    case_side.missing.extend(["suite.a-1", "suite.a-2"])
    case_side.unmatched.extend(["a-2"])
    assert "(case 'suite.a-2', output 'a-2')" in likely_cause(case_side, 2)[1]
    assert likely_cause(join, 6) == []  # half of the cases: no warning
    unrelated = JoinTally()
    unrelated.missing.extend(["a", "b"])
    unrelated.unmatched.extend(["x"])
    assert "1 output line matches no case (x)" in likely_cause(unrelated, 2)[1]


def test_provider_response_ids_over_the_case_ids_are_named_as_the_likely_cause() -> None:
    """`{"id": case_id, **completion.model_dump()}` keeps the dump's own id, so no line
    matches its case: the warning says why and how to write the line."""
    join = JoinTally()
    join.missing.extend(["c1", "c2"])
    join.unmatched.extend(["chatcmpl-9x", "chatcmpl-9y"])
    (_, cause) = likely_cause(join, 2)
    assert "the outputs' ids are a provider's response ids ('chatcmpl-9x')" in cause
    assert '{**response.model_dump(), "id": case_id}' in cause


def test_a_trace_export_scored_without_group_by_names_it(tmp_path: Path) -> None:
    here = ROOT / "tests" / "formats" / "otel_export"
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(here / "tools.yaml"), "--cases", str(here / "cases.jsonl"),
         "--outputs", str(here / "collector.jsonl")],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "warning: 3 of 3 cases have no output line" in result.output
    assert "OpenTelemetry collector export, grouped by trace id; give --group-by" in result.output
    grouped = CliRunner().invoke(
        cli,
        ["score", "--specs", str(here / "tools.yaml"), "--cases", str(here / "cases.jsonl"),
         "--outputs", str(here / "collector.jsonl"), "--group-by", "gen_ai.conversation.id"],
    )  # fmt: skip
    assert "warning:" not in grouped.output


# --- trials: an absent trial is a missing output ------------------------------------------


def test_an_absent_trial_exits_1_and_exclude_averages_over_the_trials_there(
    tmp_path: Path,
) -> None:
    cases = _write(tmp_path / "c.jsonl", [
        {"id": "a", "plans": [[get_order("o-1")]]}, {"id": "b", "plans": [[get_order("o-2")]]},
    ])  # fmt: skip
    outputs = _write(tmp_path / "o.jsonl", [
        {"id": "a", "trial": 0, "calls": [get_order("o-1")]},
        {"id": "a", "trial": 1, "calls": []},
        {"id": "b", "trial": 0, "calls": [get_order("o-2")]},
    ])  # fmt: skip
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps({"tools": {"get_order": {"args": {"order_id": "exact"}}}}))
    report = tmp_path / "r.json"
    failed = _score(cases, outputs, "--json", str(report), spec=str(spec))
    assert failed.exit_code == 1
    assert "1 absent trial, counted as failures" in failed.output
    trials = json.loads(report.read_text())["summary"]["trials"]
    assert trials["missing_trials"] == 1
    assert [row["value"] for row in trials["calls"]["pass_hat_k"]] == [0.5, 0.0]
    case_c = _write(tmp_path / "c3.jsonl", [*map(json.loads, Path(cases).read_text().splitlines()),
                                           {"id": "c", "plans": []}])  # fmt: skip
    assert _score(case_c, outputs, "--json", str(report), spec=str(spec)).exit_code == 1
    summary = json.loads(report.read_text())["summary"]
    assert summary["missing_output_ids"] == ["c"]  # an abstention case with no line at all
    assert {"trials": 0, "passed": 0, "state_passed": None, "cases": 1} in (
        summary["trials"]["distribution"]
    )  # counted from the totals, as a case that passed no trial
    left_out = _score(cases, outputs, "--json", str(report), "--missing", "exclude", spec=str(spec))
    assert left_out.exit_code == 0, left_out.output
    trials = json.loads(report.read_text())["summary"]["trials"]
    assert trials["missing_trials_excluded"] is True
    # k=1: a 1/2, b 1/1; k=2: only a has two trials, one failed
    hat = trials["calls"]["pass_hat_k"]
    assert [(row["value"], row["cases"]) for row in hat] == [(0.75, 2), (0.0, 1)]


# --- the do-nothing baseline --------------------------------------------------------------

CALL = st.builds(lambda n: get_order(f"o-{n}"), st.integers(0, 2))
PLANS = st.lists(st.lists(CALL, max_size=2), max_size=3)


def _relaxed() -> SpecSet:
    tools = {"get_order": {"args": {"order_id": "exact"}}}
    relax = [{"allow": "extra_calls", "tools": ["get_order"], "reason": "read-only"}]
    specs, problems = parse_specs({"tools": tools, "relax": relax}, "relaxed.yaml")
    assert specs is not None, problems
    return specs


@given(PLANS, st.sampled_from([SPECS, _relaxed()]))
def test_doing_nothing_is_the_matcher_on_no_call(
    plans: list[list[dict[str, Any]]], specs: SpecSet
) -> None:
    case = parse_case({"id": "c", "plans": plans}, specs)
    verdict = best_plan(specs.rules, specs.extra_ok, case.plans, ())
    assert nothing_calls(case) is verdict.passed
    scored = score_case(specs, case, parse_output({"id": "c", "calls": []}))
    assert scored.baselines["nothing"] is scored.passed is verdict.passed


def test_the_tool_cases_doing_nothing_passes_are_listed(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"id": "either", "plans": [[get_order("o-1")], []]},
        {"id": "lookup", "plans": [[get_order("o-1")]]},
        {"id": "hello", "plans": []},
    ]
    outputs = [{"id": row["id"], "calls": [get_order("o-1")]} for row in rows]
    report = tmp_path / "r.json"
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps({"tools": {"get_order": {"args": {"order_id": "exact"}}}}))
    result = _score(
        _write(tmp_path / "c.jsonl", rows), _write(tmp_path / "o.jsonl", outputs),
        "--json", str(report), spec=str(spec),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert [c["baselines"]["nothing"] for c in data["cases"]] == [True, False, True]
    nothing = data["summary"]["baselines"]["nothing"]
    assert list(nothing)[-3:] == ["tool_cases_passed", "tool_case_ids", "tool_case_ids_truncated"]
    assert (nothing["passed"], nothing["tool_cases_passed"]) == (2, 1)
    assert nothing["tool_case_ids"] == ["either"]
    assert nothing["disagreement_ids"] == ["lookup", "hello"]  # the rules failed hello
    assert "Passes without doing anything: 1 tool case" in result.output
    assert "\n  either\n" in result.output
    assert list(data["summary"]["baselines"]) == ["exact", "lowercase", "nothing"]
    page = tmp_path / "r.html"
    assert CliRunner().invoke(cli, ["report", str(report), "--html", str(page)]).exit_code == 0
    html = page.read_text()
    assert 'data-scorer="nothing"' in html
    assert 'data-nothing-tool-cases="1"' in html


def _env(tmp_path: Path) -> Any:
    (tmp_path / "store.sql").write_text(
        "CREATE TABLE log (id INTEGER PRIMARY KEY, entry TEXT);\n", encoding="utf-8"
    )
    (tmp_path / "tools.py").write_text(
        "def get_order(db, order_id):\n    return {'order_id': order_id}\n\n\n"
        "def log(db, entry):\n    db.execute('INSERT INTO log (entry) VALUES (?)', (entry,))\n",
        encoding="utf-8",
    )
    return load_environment({"database": "store.sql", "tools": "tools.py"}, tmp_path, "t.yaml")


OUTCOME_CASES: list[tuple[dict[str, Any], bool]] = [
    ({"id": "read-only-plan", "plans": [[get_order("o-1")]], "goal_state": "plan"}, True),
    (
        {
            "id": "writing-plan",
            "plans": [[{"name": "log", "args": {"entry": "x"}}]],
            "goal_state": "plan",
        },
        False,
    ),
    ({"id": "rows-as-they-are", "plans": [[get_order("o-1")]], "goal_state": {"log": []}}, True),
    ({"id": "rows-again", "plans": [[get_order("o-2")]], "goal_state": {"log": []}}, True),
    (
        {"id": "rows-to-write", "plans": [], "goal_state": {"log": [{"id": 1, "entry": "x"}]}},
        False,
    ),
    ({"id": "says-done", "plans": [[get_order("o-1")]], "required_outputs": ["done"]}, False),
    ({"id": "no-outcome-check", "plans": [[get_order("o-1")]]}, False),
]


def test_outcome_checks_decide_the_do_nothing_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path)
    judged: list[str] = []
    original = check_state

    def counting(env: Any, case: Any, *args: Any, **kwargs: Any) -> Any:
        judged.append(case.id)
        return original(env, case, *args, **kwargs)

    monkeypatch.setattr(unreplayed, "check_state", counting)
    for row, expected in OUTCOME_CASES:
        case = parse_case(row, SPECS)
        made = parse_output({"id": row["id"], "calls": [get_order("o-1")]})
        result = with_state(env, case, made, score_case(SPECS, case, made), "cases.jsonl")
        assert result.baselines["nothing"] is expected, row["id"]
        missing = Trajectory(row["id"], (), missing=True)
        absent = with_state(env, case, missing, score_case(SPECS, case, missing), "cases.jsonl")
        assert absent.baselines["nothing"] is expected  # the case's verdict, output or none
        assert absent.state.passed is (False if "goal_state" in row else None)  # never a pass
        assert absent.state.outputs_passed is (False if "required_outputs" in row else None)
    # the same row goal with no setup is judged once; a case's second result asks no replay
    assert judged == ["read-only-plan", "writing-plan", "rows-as-they-are", "rows-to-write"]


def test_under_env_a_missing_output_fails_state_accuracy(tmp_path: Path) -> None:
    env = _env(tmp_path)
    cases = [parse_case(row, SPECS) for row, _ in OUTCOME_CASES[:4]]
    summary = score(SPECS, cases, [], env=env).summary().to_dict()
    assert summary["state"]["state_accuracy"]["passed"] == 0
    assert summary["state"]["state_accuracy"]["n"] == 4
    assert summary["baselines"]["nothing"]["tool_cases_passed"] == 3


# --- the store keeps the do-nothing verdict -----------------------------------------------


def test_the_do_nothing_bit_is_kept_and_old_rows_read_back_as_they_were() -> None:
    for exact in (False, True):
        for lowercase in (False, True):
            for nothing in (False, True):
                baselines = {"exact": exact, "lowercase": lowercase, "nothing": nothing}
                bits = baseline_bits(baselines)
                assert bits is not None
                assert bits & 3 == exact + 2 * lowercase  # where compare and disagreements read
                assert case_json("c", 1, "tool", 0, bits, None)[0]["baselines"] == baselines
            old = {"exact": exact, "lowercase": lowercase}
            assert case_json("c", 1, "tool", 0, baseline_bits(old), None)[0]["baselines"] == old
    assert baseline_bits({"lowercase": True, "exact": True, "nothing": False}) is None


def test_the_summary_keys_come_in_the_documented_order(tmp_path: Path) -> None:
    formats = (ROOT / "docs" / "formats.md").read_text()
    section = formats[formats.index("### 8.2 `summary`") : formats.index("### 8.3 `cases`")]
    documented = [
        key
        for row in section.splitlines()
        if row.startswith("| `")
        for key in re.findall(r"`(\w+)`", row.split(" | ")[0])
    ]
    report = tmp_path / "r.json"
    cases, outputs = _partial(tmp_path)
    _score(cases, outputs, "--json", str(report), "--cluster-by", "tag")
    keys = list(json.loads(report.read_text())["summary"])
    assert keys == [key for key in documented if key in keys]
    assert set(keys) <= set(documented)
