"""The terminal shows conversation cases turn by turn: a turns table (turn accuracy, its
interval clustered by case, first failing turns) and each failed conversation's first
failing turn on its header line; a run without conversations prints no such table."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from toolscore.core.model import CaseResult
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.terminal import render_summary
from toolscore.scoring.case import score_case
from toolscore.scoring.summary import Summary, SummaryBuilder
from toolscore.specs.loading import SpecSet, parse_specs

SPEC = {"version": "t", "tools": {"get_order": {"args": {"order_id": "exact"}}}}
GET = {"name": "get_order", "args": {"order_id": "o-1"}}


def _specs() -> SpecSet:
    specs, _ = parse_specs(SPEC, "t.yaml")
    assert specs is not None
    return specs


def _run(lines: dict[str, Any]) -> tuple[Summary, list[CaseResult]]:
    specs = _specs()
    builder = SummaryBuilder(specs)
    failed = []
    for cid, line in lines.items():
        if "turns" in line:
            case = parse_case({"id": cid, "turns": [{"plans": [[GET]]}, {"plans": [[GET]]}]}, specs)
        else:
            case = parse_case({"id": cid, "plans": [[GET]]}, specs)
        result = score_case(specs, case, parse_output({"id": cid, **line}))
        builder.add(case, result)
        if not result.passed:
            failed.append(result)
    return builder.finish(), failed


def _printed(summary: Summary, failed: list[CaseResult]) -> list[str]:
    console = Console(record=True, width=200, color_system=None)
    render_summary(console, _specs(), "0", summary, failed)
    return console.export_text().splitlines()


def _row(lines: list[str], label: str) -> list[str]:
    found = [line for line in lines if line.startswith(f"│ {label} ")]
    assert len(found) == 1, label
    return [cell.strip() for cell in found[0].strip("│").split("│")]


def test_the_turns_table_gives_turn_accuracy_and_first_failing_turns() -> None:
    lines = _printed(*_run({
        "all": {"turns": [{"calls": [GET]}, {"calls": [GET]}]},
        "late": {"turns": [{"calls": [GET]}, {"calls": []}]},
        "early": {"turns": [{"calls": []}, {"calls": [GET]}]},
    }))  # fmt: skip
    assert any(line.startswith("Turns (3 conversations)") for line in lines)
    assert _row(lines, "turn accuracy")[1:3] == ["66.7%", "4/6"]
    assert _row(lines, "first failed at turn 0")[1:] == ["", "1", ""]
    assert _row(lines, "first failed at turn 1")[1:] == ["", "1", ""]
    assert _row(lines, "  clustered by case")[3] != "-"
    assert (
        "    turn 1: missing_call plan call 0: expected a call to 'get_order', none was made"
        in (lines)
    )
    assert "  late: calls failed (first at turn 1), f1 0.67, 1 of 2 calls matched" in lines


def test_a_run_without_conversations_prints_no_turns_table() -> None:
    lines = _printed(*_run({"plain": {"calls": [GET]}}))
    assert not any(line.startswith("Turns") for line in lines)
