"""Partial credit and efficiency (docs/formats.md, 7.6): the golden cases of
tests/cases/partial.json, the worked example of the docs, and properties of the numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec_strategies import SETTINGS, Node, build_specs, plans_and_calls, spec_dicts
from toolscore.core.model import Call, CaseResult
from toolscore.core.partial import plan_pairs, repeated_calls
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case
from toolscore.specs.loading import parse_specs

ROOT = Path(__file__).parents[2]
CASES = ROOT / "tests" / "cases" / "partial.json"


def test_every_partial_golden_case_expects_both_blocks() -> None:
    # Checked case by case by test_golden.py, which reads `partial` and `efficiency`.
    cases = json.loads(CASES.read_text())["cases"]
    assert len(cases) >= 15
    assert all("partial" in case and "efficiency" in case for case in cases)


def test_the_worked_example_of_the_docs() -> None:
    text = (ROOT / "docs" / "formats.md").read_text()
    (block,) = [
        b
        for b in re.findall(r"```json\n(.*?)```", text, re.S)
        if '"worked_example": "partial credit"' in b
    ]
    example: dict[str, Any] = json.loads(block)
    specs, errors = parse_specs(example["spec"], "formats.md")
    assert specs is not None, errors
    case = parse_case({"id": "doc", "plans": example["plans"]}, specs, "formats.md")
    result = score_case(specs, case, parse_output({"id": "doc", "calls": example["calls"]}, "x"))
    data = case_to_json(result)
    assert data["partial"] == example["partial"]
    assert data["efficiency"] == example["efficiency"]


def _scored(spec: Node, plans: list[Any], calls: list[Any]) -> CaseResult:
    specs = build_specs(spec)
    has_markers = '"$' in json.dumps(plans)
    case = parse_case({"id": "p", "plans": plans}, specs, "prop", has_markers=has_markers)
    return score_case(specs, case, parse_output({"id": "p", "calls": calls}, "prop"))


def _numbers(result: CaseResult) -> tuple[Any, ...]:
    assert result.partial is not None
    return (result.partial[:7], result.efficiency)


@SETTINGS
@given(st.data())
def test_f1_is_a_rate_and_a_passing_case_scores_one(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    plans, calls = data.draw(plans_and_calls(spec), label="case")
    result = _scored(spec, plans, calls)
    partial = result.partial
    assert partial is not None
    assert result.efficiency is not None
    for rate in (partial.precision, partial.recall, partial.f1):
        assert 0.0 <= rate <= 1.0
    assert partial.matched <= min(partial.expected, len(calls))
    assert partial.produced <= len(calls)
    assert result.efficiency.extra == len(calls) - partial.matched
    assert result.efficiency.excused <= result.efficiency.extra
    if result.passed:
        assert (partial.precision, partial.recall, partial.f1) == (1.0, 1.0, 1.0)
        assert result.efficiency.excused == result.efficiency.extra


@SETTINGS
@given(st.data())
def test_the_order_of_the_calls_changes_no_number(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    plans, calls = data.draw(plans_and_calls(spec), label="case")
    shuffled = data.draw(st.permutations(calls), label="shuffled")
    assert _numbers(_scored(spec, plans, shuffled)) == _numbers(_scored(spec, plans, calls))


@SETTINGS
@given(st.data())
def test_a_call_to_a_tool_no_plan_calls_never_raises_f1(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    plans, calls = data.draw(plans_and_calls(spec), label="case")
    called = {call["name"] for plan in plans for call in plan}
    others = [*sorted(set(spec["tools"]) - called), "not_in_the_spec"]
    name = data.draw(st.sampled_from(others), label="tool")
    position = data.draw(st.integers(0, len(calls)), label="position")
    more = [*calls[:position], {"name": name, "args": {}}, *calls[position:]]
    before, after = _scored(spec, plans, calls).partial, _scored(spec, plans, more).partial
    assert before is not None
    assert after is not None
    assert after.f1 <= before.f1


REPEAT_SPEC = {
    "version": "r",
    "tools": {
        "pay": {"args": {"id": "exact", "amount": "number", "who": "casefold"}},
        "tag": {
            "args": {
                "labels": {"kind": "list", "items": "casefold", "order": "unordered"},
                "to": {"kind": "object", "args": {"city": "casefold", "zip": "exact"}},
            }
        },
    },
}


@pytest.mark.parametrize(
    ("calls", "repeated"),
    [
        ([{"name": "pay", "args": {"id": "a", "amount": 1}}] * 3, 2),
        ([{"name": "pay", "args": {"id": "a", "amount": 1}},
          {"name": "pay", "args": {"amount": 1.0, "id": "a"}}], 1),  # number, key order
        ([{"name": "pay", "args": {"id": "a", "who": "Ann"}},
          {"name": "pay", "args": {"id": "a", "who": "ANN"}}], 1),  # casefold
        ([{"name": "pay", "args": {"id": "a", "amount": 1}},
          {"name": "pay", "args": {"id": "a", "amount": 2}}], 0),  # same id, other amount
        ([{"name": "pay", "args": {"id": 1}}, {"name": "pay", "args": {"id": True}}], 0),
        ([{"name": "pay", "args": {"id": "a", "x": float("nan")}},
          {"name": "pay", "args": {"id": "a", "x": float("nan")}}], 0),  # NaN equals nothing
        ([{"name": "tag", "args": {"labels": ["A", "b"], "to": {"city": "Rome", "zip": "1"}}},
          {"name": "tag", "args": {"labels": ["B", "a"], "to": {"zip": "1", "city": "ROME"}}}], 1),
        ([{"name": "tag", "args": {"to": {"city": "Rome", "zip": "1"}}},
          {"name": "tag", "args": {"to": {"city": "Rome", "zip": 1}}}], 0),
        ([{"name": "fly", "args": {"to": {"a": [1, True]}}},
          {"name": "fly", "args": {"to": {"a": [1.0, True]}}},
          {"name": "fly", "args": {"to": {"a": [1, 1]}}}], 1),  # a tool the spec lacks
        ([{"name": "pay", "args": "{not json"}, {"name": "pay", "args": "{not json"}], 1),
        ([{"name": "pay", "args": {"id": "a"}}, {"name": "tag", "args": {"id": "a"}}], 0),
    ],
)  # fmt: skip
def test_repeated_calls(calls: list[Any], repeated: int) -> None:
    result = _scored(REPEAT_SPEC, [], calls)
    assert result.efficiency is not None
    assert result.efficiency.repeated == repeated


def test_a_call_nested_too_deep_repeats_nothing_and_breaks_nothing() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = {"a": deep}
    calls = [Call("fly", {"to": deep}), Call("fly", {"to": deep}), Call("fly", {"to": 1}),
             Call("fly", {"to": 1})]  # fmt: skip
    assert repeated_calls({}, calls) == 1


@SETTINGS
@given(st.data())
def test_the_credit_equals_a_fresh_matching_of_every_plan(data: st.DataObject) -> None:
    # The verdict's pairs seed the matching, and a one-call plan takes them as they are:
    # the counts must be those of a maximum matching found from nothing.
    spec = data.draw(spec_dicts(), label="spec")
    plans, calls = data.draw(plans_and_calls(spec), label="case")
    specs = build_specs(spec)
    result = _scored(spec, plans, calls)
    partial = result.partial
    assert partial is not None
    case = parse_case({"id": "p", "plans": plans}, specs, "prop", has_markers=True)
    scored = result.calls
    by_name: dict[str, list[int]] = {}
    for j, call in enumerate(scored):
        by_name.setdefault(call.name, []).append(j)
    fresh = [len(plan_pairs(specs.rules, plan, scored, by_name)) for plan in case.plans]
    if partial.plan is None:
        assert partial.matched == 0
    else:
        assert partial.matched == fresh[partial.plan]
