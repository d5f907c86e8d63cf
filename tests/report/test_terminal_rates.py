"""The terminal shows the named call rates in a table of their own under the metrics, each
with its count over its denominator and its 95% interval (the worked example of
docs/formats.md 7.8); a stored run saved before them prints no such table."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from toolscore.core.model import Trajectory
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.terminal import render_summary
from toolscore.scoring.case import score_case
from toolscore.scoring.rates import RATE_KEYS
from toolscore.scoring.summary import Summary, SummaryBuilder
from toolscore.specs.loading import parse_specs
from toolscore.store.restore import summary_from_json

GOLDEN = json.loads((Path(__file__).parents[1] / "cases" / "rates.json").read_text())
SPECS, _ = parse_specs(GOLDEN["spec"], "rates.json")
assert SPECS is not None


def _summary() -> Summary:
    assert SPECS is not None
    builder = SummaryBuilder(SPECS)
    for index, data in enumerate(GOLDEN["cases"]):
        case = parse_case({"id": f"c{index}", "plans": data["plans"]}, SPECS)
        trajectory = (
            Trajectory(case.id, (), missing=True)
            if data.get("missing")
            else parse_output({"id": case.id, "calls": data["produced"]})
        )
        builder.add(case, score_case(SPECS, case, trajectory))
    return builder.finish()


def _printed(summary: Summary) -> list[str]:
    assert SPECS is not None
    console = Console(record=True, width=200, color_system=None)
    render_summary(console, SPECS, "0", summary, [])
    return console.export_text().splitlines()


def _row(lines: list[str], label: str) -> list[str]:
    found = [line for line in lines if line.startswith(f"│ {label} ")]
    assert len(found) == 1, label
    return [cell.strip() for cell in found[0].strip("│").split("│")]


def test_the_three_rates_are_printed_with_their_denominators() -> None:
    lines = _printed(_summary())
    title = next(i for i, line in enumerate(lines) if line.startswith("Call error rates"))
    assert title > next(i for i, line in enumerate(lines) if line.startswith("Metrics"))
    assert "calls/n" in lines[title + 2]
    assert _row(lines, "unknown tool (of produced calls)")[1:] == ["22.2%", "2/9", "6.3% - 54.7%"]
    assert _row(lines, "missing argument (of paired calls)")[1:] == ["33.3%", "2/6", "9.7% - 70.0%"]
    assert _row(lines, "unexpected argument (of paired calls)")[1:] == [
        "16.7%", "1/6", "3.0% - 56.4%",
    ]  # fmt: skip


def test_a_stored_run_without_the_rates_prints_none() -> None:
    written = _summary().to_dict()
    older = summary_from_json({k: v for k, v in written.items() if k not in RATE_KEYS})
    lines = _printed(older)
    assert not any(line.startswith("Call error rates") for line in lines)
    assert any(line.startswith("Metrics") for line in lines)
