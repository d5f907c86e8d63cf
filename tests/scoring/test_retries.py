"""Retries (docs/formats.md, 7.9): the golden cases of tests/cases/retries.json scored again
without the relaxation, a call entry with both `result` and `error`, the `retries`
relaxation as loaded, the summary's counts (merged across builders and restored), the
worked example of the docs, and the relaxation changing nothing where no result is an
error."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from spec_strategies import SETTINGS, build_specs, plans_and_calls, spec_dicts
from toolscore.cli import cli
from toolscore.core.model import Case, CaseResult, Trajectory
from toolscore.errors import OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import SpecSet, parse_specs
from toolscore.store.restore import summary_from_json

ROOT = Path(__file__).parents[2]
GOLDEN = json.loads((ROOT / "tests" / "cases" / "retries.json").read_text())


def _specs(spec: dict[str, Any]) -> SpecSet:
    specs, errors = parse_specs(spec, "spec.yaml")
    assert specs is not None, [str(e) for e in errors]
    return specs


def _trajectory(data: dict[str, Any]) -> Trajectory:
    if "messages" in data:
        return parse_output({"id": "r", "messages": data["messages"]}, "outputs.jsonl")
    return parse_output({"id": "r", "calls": data["produced"]}, "outputs.jsonl")


def _scored(specs: SpecSet, data: dict[str, Any]) -> tuple[Case, CaseResult]:
    case = parse_case(
        {"id": "r", "plans": data["plans"]}, specs, "cases.jsonl", has_markers="$" in str(data)
    )
    return case, score_case(specs, case, _trajectory(data))


UNRELAXED = _specs({key: value for key, value in GOLDEN["spec"].items() if key != "relax"})


@pytest.mark.parametrize("data", GOLDEN["cases"], ids=[c["description"] for c in GOLDEN["cases"]])
def test_without_the_relaxation_nothing_is_excused(data: dict[str, Any]) -> None:
    _, result = _scored(UNRELAXED, data)
    expected = data["unrelaxed"]
    assert result.passed is expected["passed"]
    assert sorted(m.code for m in result.mismatches) == sorted(expected["codes"])
    assert not any(retry.excused for retry in result.retries)
    assert [r.call for r in result.retries] == [r["call"] for r in data["retries"]]


def test_the_golden_cases_cover_each_kind_of_retry() -> None:
    cases = GOLDEN["cases"]
    assert any(c["passed"] and not c["unrelaxed"]["passed"] for c in cases)
    assert any(r["excused"] is False for c in cases for r in c["retries"])
    assert any(len(c["retries"]) == 2 for c in cases)


def test_a_call_with_both_result_and_error_is_an_input_error() -> None:
    calls = [
        {"name": "get_order", "args": {"order_id": "o-7"}, "result": 1},
        {"name": "get_order", "args": {}, "error": "timeout", "result": None},
    ]
    with pytest.raises(OutputError) as raised:
        parse_output({"id": "r", "calls": calls}, "outputs.jsonl", 3)
    assert str(raised.value).startswith("outputs.jsonl:3: calls[1].error: ")
    assert "not both" in str(raised.value)


def test_the_cli_exits_2_on_both_result_and_error(tmp_path: Path) -> None:
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps(GOLDEN["spec"]))
    cases = tmp_path / "cases.jsonl"
    plan = [{"name": "get_order", "args": {"order_id": "o-7"}}]
    cases.write_text(json.dumps({"id": "a", "plans": [plan]}) + "\n")
    outputs = tmp_path / "outputs.jsonl"
    bad = {"name": "get_order", "args": {"order_id": "o-7"}, "result": {}, "error": "x"}
    outputs.write_text(json.dumps({"id": "a", "calls": [bad]}) + "\n")
    result = CliRunner().invoke(
        cli, ["score", "--specs", str(spec), "--cases", str(cases), "--outputs", str(outputs)]
    )
    assert result.exit_code == 2, result.output
    assert f"{outputs}:1: calls[0].error:" in result.output


def test_a_plain_error_is_the_call_s_result_and_a_tool_error() -> None:
    (call,) = parse_output(
        {"id": "r", "calls": [{"name": "t", "args": "{}", "error": {"code": 5}}]}, "o"
    ).calls
    assert (call.args, call.result, call.result_error) == ({}, {"code": 5}, True)
    result = score_case(UNRELAXED, Case("r", ()), Trajectory("r", (call,)))
    assert case_to_json(result)["tool_errors"] == [{"call": 0, "name": "t", "result": {"code": 5}}]


def _problems(relax: list[Any]) -> list[str]:
    _, errors = parse_specs({"tools": {"t": {"args": {}}, "u": {"args": {}}}, "relax": relax}, "s")
    return [str(e) for e in errors]


def test_the_relaxation_loads_like_the_others() -> None:
    assert _problems([{"allow": "retries", "reason": "flaky"}]) == []
    assert _problems([{"allow": "retries", "tools": ["v"], "reason": "r"}]) == [
        "s: relax[0].tools: unknown tool 'v'"
    ]
    assert _problems([{"allow": "retries", "tools": ["t"]}]) == [
        "s: relax[0].reason: every relaxation needs a reason"
    ]
    assert _problems([{"allow": "retries", "tools": [], "reason": "r"}]) == [
        "s: relax[0].tools: must be a non-empty list of tool names"
    ]
    everything = _specs({"tools": {"t": {"args": {}}, "u": {"args": {}}},
                         "relax": [{"allow": "retries", "reason": "flaky"}]})  # fmt: skip
    assert everything.retries_ok == {"t", "u"}
    assert everything.extra_ok == frozenset()
    assert [r.to_json() for r in everything.relaxations] == [
        {"allow": "retries", "tools": ["t", "u"], "reason": "flaky"}
    ]


def _builder(pairs: list[tuple[Case, CaseResult]]) -> SummaryBuilder:
    builder = SummaryBuilder(_specs(GOLDEN["spec"]))
    for case, result in pairs:
        builder.add(case, result)
    return builder


def test_the_summary_counts_retries_and_merges() -> None:
    specs = _specs(GOLDEN["spec"])
    scored = [_scored(specs, data) for data in GOLDEN["cases"]]
    whole = _builder(scored).finish().to_dict()
    # 11 cases: 1 + 1 + 0 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 0 retries, the refund one not excused
    assert whole["efficiency"]["retries"] == 10
    assert whole["retries"] == {
        "calls": 10,
        "excused": 9,
        "per_tool": {"get_order": 9, "refund": 1},
    }
    for cut in (0, 4, len(scored)):
        first, second = _builder(scored[:cut]), _builder(scored[cut:])
        first.merge(second)
        assert first.finish().to_dict() == whole
    assert summary_from_json(whole).to_dict() == whole


def test_a_run_without_retries_has_no_retries_block() -> None:
    specs = _specs(GOLDEN["spec"])
    summary = _builder([_scored(specs, GOLDEN["cases"][2])]).finish().to_dict()
    assert summary["efficiency"]["retries"] == 0
    assert "retries" not in summary


def test_per_tool_produced_calls_leave_excused_retries_out() -> None:
    specs = _specs(GOLDEN["spec"])
    summary = _builder([_scored(specs, GOLDEN["cases"][0])]).finish().to_dict()
    assert summary["partial"]["per_tool"]["get_order"]["produced"] == 1
    assert summary["partial"]["f1"]["micro"] == 1.0


def test_the_worked_example_of_the_docs() -> None:
    text = (ROOT / "docs" / "formats.md").read_text()
    (block,) = [
        b
        for b in re.findall(r"```json\n(.*?)```", text, re.S)
        if '"worked_example": "retries"' in b
    ]
    example: dict[str, Any] = json.loads(block)
    example["produced"] = example["calls"]
    case, result = _scored(_specs(example["spec"]), example)
    data = case_to_json(result)
    assert data["passed"] is example["passed"]
    for key in ("retries", "partial", "efficiency"):
        assert data[key] == example[key]
    unrelaxed = {k: v for k, v in example["spec"].items() if k != "relax"}
    _, without = _scored(_specs(unrelaxed), example)
    assert [m.code for m in without.mismatches] == ["extra_call"]
    assert case.id == "r"


def _with_retries(spec: dict[str, Any]) -> dict[str, Any]:
    relax = [*spec.get("relax", []), {"allow": "retries", "reason": "flaky"}]
    return {**spec, "relax": relax}


@SETTINGS
@given(st.data())
def test_without_error_results_the_relaxation_changes_nothing(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    plans, calls = data.draw(plans_and_calls(spec), label="case")
    results = []
    for specs in (build_specs(spec), build_specs(_with_retries(spec))):
        has_markers = '"$' in json.dumps(plans)
        case = parse_case({"id": "p", "plans": plans}, specs, "prop", has_markers=has_markers)
        trajectory = parse_output({"id": "p", "calls": calls}, "prop")
        assert not any(call.result_error for call in trajectory.calls)
        results.append(orjson.dumps(case_to_json(score_case(specs, case, trajectory))))
    assert results[0] == results[1]
