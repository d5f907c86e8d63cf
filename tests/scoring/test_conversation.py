"""Conversation cases scored turn by turn (docs/formats.md 3.8, 4.7, 7.10): the golden cases
are in tests/cases/conversations.json; here, properties over random conversations (both
output shapes agree, shuffling calls within a turn changes nothing, one turn is a plain
case), the summary's turn figures and the report JSON."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec_strategies import SETTINGS, Node, build_specs, plans_and_calls, spec_dicts
from toolscore.core.model import CaseResult
from toolscore.errors import OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import SpecSet, parse_specs
from toolscore.stats.intervals import clustered_se

SPEC = {
    "version": "t",
    "tools": {
        "get_order": {"args": {"order_id": "exact"}},
        "refund": {"args": {"order_id": "exact", "amount": {"kind": "number", "tol": 0.005}}},
    },
}


def _specs() -> SpecSet:
    specs, errors = parse_specs(SPEC, "spec")
    assert specs is not None, errors
    return specs


def _case(specs: SpecSet, turns: list[Any], **more: Any) -> Any:
    line = {"id": "c", "turns": turns, **more}
    return parse_case(line, specs, "cases", has_markers='"$' in json.dumps(line))


def _chat(turns: list[list[Any]]) -> list[dict[str, Any]]:
    """An OpenAI Chat transcript with one user message per turn and the turn's calls after it."""
    messages: list[dict[str, Any]] = []
    n = 0
    for k, calls in enumerate(turns):
        messages.append({"role": "user", "content": f"turn {k}"})
        if calls:
            made = []
            for call in calls:
                n += 1
                arguments = (
                    call["args"] if isinstance(call["args"], str) else json.dumps(call["args"])
                )
                function = {"name": call["name"], "arguments": arguments}
                made.append({"id": f"c{n}", "type": "function", "function": function})
            messages.append({"role": "assistant", "content": None, "tool_calls": made})
        messages.append({"role": "assistant", "content": f"answer {k}"})
    return messages


def _verdict(result: CaseResult) -> tuple[Any, ...]:
    return (
        result.passed,
        sorted(m.code for m in result.mismatches),
        [(t.passed, t.plan, sorted(m.code for m in t.mismatches)) for t in result.turns],
        result.first_failed_turn,
        dict(result.baselines),
    )


def _json_args(calls: list[Any]) -> list[Any]:
    """Calls whose arguments an OpenAI transcript can carry (a JSON object, or junk text)."""
    return [c for c in calls if isinstance(c, dict) and isinstance(c.get("name"), str)
            and isinstance(c.get("args"), dict | str)]  # fmt: skip


@st.composite
def conversations(draw: st.DrawFn) -> tuple[Node, list[Any], list[list[Any]]]:
    """A spec, a conversation case's turns, and each turn's produced calls."""
    spec = draw(spec_dicts())
    turns: list[Any] = []
    produced: list[list[Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        plans, calls = draw(plans_and_calls(spec))
        turns.append({"plans": plans})
        produced.append(_json_args(calls))
    return spec, turns, produced


@given(conversations())
@SETTINGS
def test_both_output_shapes_give_the_same_verdicts(
    drawn: tuple[Node, list[Any], list[list[Any]]],
) -> None:
    spec, turns, produced = drawn
    specs = build_specs(spec)
    case = _case(specs, turns)
    listed = parse_output({"id": "c", "turns": [{"calls": calls} for calls in produced]}, "o")
    transcript = parse_output({"id": "c", "messages": _chat(produced)}, "o")
    assert _verdict(score_case(specs, case, listed)) == _verdict(
        score_case(specs, case, transcript)
    )


def _listed(turns: list[list[Any]]) -> Any:
    return parse_output({"id": "c", "turns": [{"calls": calls} for calls in turns]}, "o")


@given(conversations(), st.randoms(use_true_random=False))
@SETTINGS
def test_shuffling_the_calls_within_a_turn_changes_no_verdict(
    drawn: tuple[Node, list[Any], list[list[Any]]], rng: random.Random
) -> None:
    spec, turns, produced = drawn
    specs = build_specs(spec)
    case = _case(specs, turns)
    shuffled = [rng.sample(calls, len(calls)) for calls in produced]
    first = score_case(
        specs, case, parse_output({"id": "c", "turns": [{"calls": c} for c in produced]})
    )
    again = score_case(
        specs, case, parse_output({"id": "c", "turns": [{"calls": c} for c in shuffled]})
    )
    assert _verdict(first)[:4] == _verdict(again)[:4]  # exact compares by position: left out
    assert first.baselines["lowercase"] == again.baselines["lowercase"]


@given(spec_dicts().flatmap(lambda spec: st.tuples(st.just(spec), plans_and_calls(spec))))
@SETTINGS
def test_a_one_turn_conversation_scores_as_the_plain_case(
    drawn: tuple[Node, tuple[list[Any], list[Any]]],
) -> None:
    spec, (plans, calls) = drawn
    specs = build_specs(spec)
    markers = '"$' in json.dumps(plans)
    plain = parse_case({"id": "c", "plans": plans}, specs, "cases", has_markers=markers)
    conversation = _case(specs, [{"plans": plans}])
    output = parse_output({"id": "c", "calls": calls}, "o")
    one, other = score_case(specs, plain, output), score_case(specs, conversation, output)
    assert (one.passed, one.mismatches, dict(one.baselines), one.name_ok, one.pairs) == (
        other.passed, other.mismatches, dict(other.baselines), other.name_ok, other.pairs,
    )  # fmt: skip
    assert one.kind == other.kind
    assert one.partial is not None
    assert other.partial is not None
    assert (one.partial.matched, one.partial.expected, one.partial.produced) == (
        other.partial.matched, other.partial.expected, other.partial.produced,
    )  # fmt: skip
    assert other.turns[0].passed is one.passed
    assert other.turns[0].plan == one.plan


def test_a_turn_counts_its_produced_calls_in_the_whole_conversation() -> None:
    specs = _specs()
    case = _case(specs, [
        {"plans": [[{"name": "get_order", "args": {"order_id": "o-1"}}]]},
        {"plans": [[{"name": "refund", "args": {"order_id": "o-1", "amount": 1}}]]},
    ])  # fmt: skip
    output = parse_output({"id": "c", "turns": [
        {"calls": [{"name": "get_order", "args": {"order_id": "o-1"}}]},
        {"calls": [{"name": "get_order", "args": {"order_id": "o-1"}},
                   {"name": "refund", "args": {"order_id": "o-1", "amount": 2}}]},
    ]})  # fmt: skip
    result = score_case(specs, case, output)
    second = result.turns[1]
    assert second.calls == (1, 3)
    assert sorted((m.code, m.call) for m in second.mismatches) == [
        ("extra_call", 1), ("value_mismatch", 2),
    ]  # fmt: skip
    assert second.pairs == ((0, 2),)
    data = case_to_json(result)
    assert [t["index"] for t in data["turns"]] == [0, 1]
    assert data["turns"][1]["calls"] == [1, 3]
    assert data["first_failed_turn"] == 1
    assert [m["code"] for m in data["mismatches"]] == [
        m["code"] for m in data["turns"][1]["mismatches"]
    ]


def test_a_plain_case_has_no_turns_in_its_report_json() -> None:
    specs = _specs()
    case = parse_case({"id": "c", "plans": []}, specs)
    data = case_to_json(score_case(specs, case, parse_output({"id": "c", "calls": []})))
    assert "turns" not in data
    assert "first_failed_turn" not in data


def test_turn_responses_are_kept_for_both_shapes() -> None:
    listed = parse_output({"id": "c", "turns": [{"calls": []}, {"calls": [], "response": "b"}]})
    assert listed.turn_responses == (None, "b")
    assert listed.final_turn == 2
    transcript = parse_output({"id": "c", "messages": _chat([[], []])})
    assert transcript.turn_responses == ("answer 0", "answer 1")


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({"turns": []}, "turns"),
        ({"turns": {"calls": []}}, "turns"),
        ({"turns": [{"calls": [], "said": "x"}]}, "turns[0].said"),
        ({"turns": [{"response": "x"}]}, "turns[0].calls"),
        ({"turns": [{"calls": {"name": "x"}}]}, "turns[0].calls"),
        ({"turns": [{"calls": []}], "response": "x"}, "response"),
        ({"turns": [{"calls": []}], "calls": []}, "turns"),
    ],
)
def test_a_broken_turns_line_is_an_input_error(line: dict[str, Any], field: str) -> None:
    with pytest.raises(OutputError) as error:
        parse_output({"id": "c", **line}, "outputs.jsonl", 3)
    assert error.value.field == field
    assert error.value.line == 3


def test_the_summary_counts_turns_clustered_by_case() -> None:
    specs = _specs()
    get = {"name": "get_order", "args": {"order_id": "o-1"}}
    case = _case(specs, [{"plans": [[get]]}, {"plans": [[get]]}, {"plans": []}])
    outputs = [
        [[get], [get], []],  # all three turns pass
        [[], [get], []],  # turn 0 fails
        [[get], [], [get]],  # turns 1 and 2 fail
        [[get]],  # turns 1 and 2 missing
    ]
    builder = SummaryBuilder(specs)
    results = []
    for n, turns in enumerate(outputs):
        output = parse_output({"id": f"c{n}", "turns": [{"calls": c} for c in turns]})
        result = score_case(specs, case._replace(id=f"c{n}"), output)
        results.append(result)
        builder.add(case, result)
    plain = parse_case({"id": "p", "plans": []}, specs)
    builder.add(plain, score_case(specs, plain, parse_output({"id": "p", "calls": []})))
    data = builder.finish().to_dict()
    assert data["conversations"] == 4
    rate = data["turn_accuracy"]
    assert (rate["passed"], rate["n"]) == (3 + 2 + 1 + 1, 12)
    expected_se = clustered_se([(3, 3), (3, 2), (3, 1), (3, 1)], 7, 12)
    assert expected_se is not None
    assert rate["clustered"]["se"] == round(expected_se, 6)
    assert data["first_failed_turn"] == {"0": 1, "1": 2}
    assert data["cases"] == 5
    assert data["passed"] == 2
    assert data["codes"]["missing_turn"] == 2


def test_a_run_without_conversations_has_no_turn_figures() -> None:
    specs = _specs()
    plain = parse_case({"id": "p", "plans": []}, specs)
    builder = SummaryBuilder(specs)
    builder.add(plain, score_case(specs, plain, parse_output({"id": "p", "calls": []})))
    data = builder.finish().to_dict()
    assert "turn_accuracy" not in data
    assert "conversations" not in data


def test_merged_builders_count_turns_as_one() -> None:
    specs = _specs()
    get = {"name": "get_order", "args": {"order_id": "o-1"}}
    case = _case(specs, [{"plans": [[get]]}, {"plans": [[get]]}])
    whole, first, second = SummaryBuilder(specs), SummaryBuilder(specs), SummaryBuilder(specs)
    runs: list[list[list[Any]]] = [[[get], [get]], [[get], []], [[], []]]
    for n, turns in enumerate(runs):
        output = parse_output({"id": f"c{n}", "turns": [{"calls": c} for c in turns]})
        result = score_case(specs, case, output)
        whole.add(case, result)
        (first if n < 2 else second).add(case, result)
    first.merge(second)
    assert first.finish().to_dict()["turn_accuracy"] == whole.finish().to_dict()["turn_accuracy"]


def test_a_missing_output_fails_every_turn() -> None:
    from toolscore.core.model import Trajectory  # noqa: PLC0415

    specs = _specs()
    case = _case(specs, [{"plans": []}, {"plans": []}])
    result = score_case(specs, case, Trajectory("c", (), missing=True))
    assert not result.passed
    assert [t.passed for t in result.turns] == [False, False]
    assert [m.code for m in result.mismatches] == ["missing_output"]
    assert result.baselines["nothing"] is True
    assert result.kind == "abstention"


def test_rubrics_run_on_every_turn_against_its_own_plan() -> None:
    from toolscore.scoring.rubric_run import RubricRunner  # noqa: PLC0415

    spec = {
        "version": "t",
        "tools": {"note": {"args": {"order_id": "exact", "text": {"kind": "text",
                                     "rubric": {"kind": "not_empty"}}}}},
    }  # fmt: skip
    specs, errors = parse_specs(spec, "spec")
    assert specs is not None, errors
    plan = [[{"name": "note", "args": {"order_id": "o-1"}}]]
    case = _case(specs, [{"plans": plan}, {"plans": plan}])
    output = parse_output({"id": "c", "turns": [
        {"calls": [{"name": "note", "args": {"order_id": "o-1", "text": "hello"}}]},
        {"calls": [{"name": "note", "args": {"order_id": "o-1", "text": ""}}]},
    ]})  # fmt: skip
    result = score_case(specs, case, output)
    entries = RubricRunner(specs).run(case, result)
    assert [(entry.call, entry.passed) for entry in entries] == [(0, True), (1, False)]


def test_lint_checks_the_values_of_every_turns_plans(tmp_path: Path) -> None:
    from toolscore.lint.checks import lint_cases  # noqa: PLC0415

    spec = {"version": "t", "tools": {"count": {"args": {"n": "integer"}}}}
    specs, errors = parse_specs(spec, "spec")
    assert specs is not None, errors
    wrong = [[{"name": "count", "args": {"n": "x"}}]]
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c", "turns": [{"plans": []}, {"plans": wrong}]}) + "\n")
    found = [str(finding) for finding in lint_cases(specs, cases)]
    assert any("turns[1].plans[0][0].args.n" in text for text in found), found
