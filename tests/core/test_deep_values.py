"""Values nested as deep as JSON readers allow (1,000 levels) in plans, outputs and results
are scored, reported and saved, never a RecursionError (issue 11, item 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.core.dataflow import iter_refs, substitute
from toolscore.core.model import AnyOf, Call, Ref
from toolscore.core.values import json_equal
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case
from toolscore.specs.loading import parse_specs

LEVELS = 1000
DEEP_TEXT = "[" * LEVELS + "]" * LEVELS
OTHER_TEXT = "[" * (LEVELS - 1) + "1" + "]" * (LEVELS - 1)  # differs only at the bottom
OBJECT_TEXT = '{"k":' * LEVELS + "1" + "}" * LEVELS
SPEC = {"tools": {"t": {"args": {"a": "exact", "b": {"kind": "exact", "default": None}}}}}


def deep(text: str = DEEP_TEXT) -> Any:
    return orjson.loads(text)


def test_json_equal_compares_at_any_depth() -> None:
    assert json_equal(deep(), deep())
    assert not json_equal(deep(), deep(OTHER_TEXT))
    assert json_equal(deep(OBJECT_TEXT), deep(OBJECT_TEXT))
    assert not json_equal(deep(OBJECT_TEXT), deep(OBJECT_TEXT.replace("1", "true")))
    assert json_equal(deep(OBJECT_TEXT), deep(OBJECT_TEXT.replace("1", "1.0")))


def _result(plan_args: str, produced: list[dict[str, Any]]) -> Any:
    specs, problems = parse_specs(SPEC, "spec")
    assert specs is not None, problems
    raw = '{"id": "c", "plans": [' + plan_args + "]}"
    case = parse_case(orjson.loads(raw), specs, has_markers="$" in raw)
    result = score_case(specs, case, parse_output({"id": "c", "calls": produced}))
    assert orjson.loads(orjson.dumps(case_to_json(result)))["id"] == "c"  # reportable
    return result


@pytest.mark.parametrize("text", [DEEP_TEXT, OBJECT_TEXT], ids=["lists", "objects"])
def test_a_plan_and_an_output_both_deep_are_scored(text: str) -> None:
    # The reproducer: the exact baseline recursed past Python's limit.
    result = _result('[{"name": "t", "args": {"a": ' + text + "}}]", [
        {"name": "t", "args": {"a": deep(text)}}
    ])  # fmt: skip
    assert result.passed
    assert result.baselines == {"exact": True, "lowercase": True, "nothing": False}


def test_deep_values_that_differ_at_the_bottom_fail() -> None:
    result = _result('[{"name": "t", "args": {"a": ' + DEEP_TEXT + "}}]", [
        {"name": "t", "args": {"a": deep(OTHER_TEXT)}}
    ])  # fmt: skip
    assert not result.passed
    assert [m.code for m in result.mismatches] == ["value_mismatch"]
    assert result.baselines == {"exact": False, "lowercase": False, "nothing": False}


def test_a_deep_alternative_of_any_is_read_and_compared() -> None:
    result = _result('[{"name": "t", "args": {"a": {"$any": [1, ' + DEEP_TEXT + "]}}}]", [
        {"name": "t", "args": {"a": deep()}}
    ])  # fmt: skip
    assert result.passed


def test_linked_calls_with_deep_values_are_scored() -> None:
    plan = (
        '[{"id": "l", "name": "t", "args": {"a": 1}}, '
        '{"name": "t", "args": {"a": {"$ref": "l#/x"}, "b": ' + OBJECT_TEXT + "}}]"
    )
    produced: list[dict[str, Any]] = [
        {"name": "t", "args": {"a": 1}, "result": {"x": deep()}},
        {"name": "t", "args": {"a": deep(), "b": deep(OBJECT_TEXT)}},
    ]
    assert _result(plan, produced).passed
    produced[1]["args"]["a"] = deep(OTHER_TEXT)
    assert not _result(plan, produced).passed


def test_substitute_keeps_structure_and_alternatives() -> None:
    source = Call("t", {}, result={"x": [1, 2]})
    value = {"p": [Ref("l", "/x"), AnyOf((Ref("l", "/x/1"), {"q": Ref("l", "")}))], "d": deep()}
    done = substitute(value, {"l": source})
    assert done["p"][0] == [1, 2]
    assert type(done["p"][1]) is AnyOf
    assert done["p"][1] == AnyOf((2, {"q": {"x": [1, 2]}}))
    assert json_equal(done["d"], deep())
    assert value["p"][0] == Ref("l", "/x")  # the expected value itself is left as it was
    assert [path for path, _ in iter_refs(value)] == [("p", 0), ("p", 1), ("p", 1, "q")]


def test_deep_failures_on_two_workers_give_the_report_of_one(tmp_path: Path) -> None:
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps(SPEC))
    cases, outputs = [], []
    for index, (want, got) in enumerate(
        [(DEEP_TEXT, DEEP_TEXT), (DEEP_TEXT, OTHER_TEXT), (OBJECT_TEXT, DEEP_TEXT)]
    ):
        cases.append(f'{{"id": "c{index}", "plans": [[{{"name": "t", "args": {{"a": {want}}}}}]]}}')
        outputs.append(f'{{"id": "c{index}", "calls": [{{"name": "t", "args": {{"a": {got}}}}}]}}')
    (tmp_path / "cases.jsonl").write_text("\n".join(cases) + "\n")
    (tmp_path / "outputs.jsonl").write_text("\n".join(outputs) + "\n")
    reports = []
    for workers in ("1", "2"):
        report = tmp_path / f"r{workers}.json"
        result = CliRunner().invoke(
            cli,
            ["score", "--specs", str(spec), "--cases", str(tmp_path / "cases.jsonl"),
             "--outputs", str(tmp_path / "outputs.jsonl"), "--workers", workers,
             "--json", str(report), "--db", str(tmp_path / "results.db")],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "c1 (plan 0): calls failed" in result.output
        reports.append(json.loads(report.read_text()))
    assert reports[0]["cases"] == reports[1]["cases"]
    assert [case["passed"] for case in reports[0]["cases"]] == [True, False, False]
