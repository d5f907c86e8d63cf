"""`toolscore coverage` on golden data (tests/audit/coverage_cases.json): which items each
spec's cases exercise, which of them decided a verdict, and the untested and uncovered lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.audit import coverage
from toolscore.cli.app import cli
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.specs.loading import parse_specs

GOLDEN = json.loads((Path(__file__).parent / "coverage_cases.json").read_text())


def _specs(spec: dict[str, Any]) -> Any:
    specs, problems = parse_specs(spec, "<spec>")
    assert not problems, problems
    return specs


@pytest.mark.parametrize("golden", GOLDEN, ids=[g["description"][:60] for g in GOLDEN])
def test_golden_coverage(golden: dict[str, Any]) -> None:
    specs = _specs(golden["spec"])
    cases = [parse_case(c, specs) for c in golden["cases"]]
    without = coverage(specs, cases)
    assert without.scored is None
    assert without.untested == golden["untested_without_outputs"]
    outputs = [parse_output(o, "<outputs>", n) for n, o in enumerate(golden["outputs"], 1)]
    report = coverage(specs, cases, outputs)
    assert report.scored == len(golden["cases"])
    assert report.untested == golden["untested"]
    assert report.uncovered == golden["uncovered"]
    rows = {
        item.name: [item.cases, item.raised, item.forgave, item.decided] for item in report.items
    }
    for name, counts in golden["rows"].items():
        assert rows[name] == counts, name


def test_the_command_writes_the_json_and_lists_untested_and_uncovered(tmp_path: Path) -> None:
    golden = GOLDEN[0]
    (tmp_path / "tools.json").write_text(json.dumps(golden["spec"]))
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden["cases"]))
    (tmp_path / "outputs.jsonl").write_text(
        "".join(json.dumps(o) + "\n" for o in golden["outputs"])
    )
    report = tmp_path / "coverage.json"
    args = ["coverage", "--specs", str(tmp_path / "tools.json"), "--cases"]
    args += [str(tmp_path / "cases.jsonl"), "--outputs", str(tmp_path / "outputs.jsonl")]
    result = CliRunner().invoke(cli, [*args, "--json", str(report)])
    assert result.exit_code == 0, result.output
    assert "refund.unit:alias:dollar" in result.output
    data = json.loads(report.read_text())
    assert data["untested"] == golden["untested"]
    assert data["uncovered"] == []
    row = next(r for r in data["items"] if r["name"] == "refund.unit:alias:euro")
    assert row == {
        "name": "refund.unit:alias:euro",
        "kind": "option",
        "cases": 2,
        "raised": 0,
        "forgave": 1,
        "decided": 1,
        "compared": True,
    }


def test_outputs_and_a_run_together_are_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["coverage", "1", "--outputs", "o.jsonl"])
    assert result.exit_code == 2
    assert "not both" in result.output
