"""The terminal shows partial credit and efficiency in tables of their own under the
metrics, and each failed case's F1 on its header line; a stored run saved before them
prints neither table."""

from __future__ import annotations

from rich.console import Console

from toolscore.core.model import CaseResult
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.terminal import render_summary
from toolscore.scoring.case import score_case
from toolscore.scoring.summary import Summary, SummaryBuilder
from toolscore.specs.loading import SpecSet, parse_specs
from toolscore.store.restore import summary_from_json

SPEC = {
    "version": "t",
    "tools": {
        "weather": {"args": {"city": "casefold"}},
        "news": {"args": {"topic": "exact"}},
    },
}
PLAN = [
    {"name": "weather", "args": {"city": "Paris"}},
    {"name": "weather", "args": {"city": "Rome"}},
    {"name": "news", "args": {"topic": "sport"}},
]
HOSTILE = "[bold]x[/bold]\x1b[31m\u202e"


def _specs() -> SpecSet:
    specs, _ = parse_specs(SPEC, "t.yaml")
    assert specs is not None
    return specs


def _run(case_id: str = "near") -> tuple[Summary, list[CaseResult]]:
    specs = _specs()
    builder = SummaryBuilder(specs)
    failed = []
    produced = {
        "pass": PLAN,
        case_id: [PLAN[0], {"name": "weather", "args": {"city": "paris"}}, PLAN[2]],
    }
    for cid, calls in produced.items():
        case = parse_case({"id": cid, "plans": [PLAN]}, specs)
        result = score_case(specs, case, parse_output({"id": cid, "calls": calls}))
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


def test_partial_credit_and_efficiency_tables_follow_the_metrics() -> None:
    lines = _printed(*_run())
    metrics = next(i for i, line in enumerate(lines) if line.startswith("Metrics"))
    title = next(i for i, line in enumerate(lines) if line.startswith("Partial credit (2 cases)"))
    assert title > metrics
    # micro: matched 5 of 6 expected and 6 produced; macro: the mean of 1.0 and 2/3
    # and 2/3 (interval 5/6 -/+ 1.96 * 0.2357 / sqrt(2), clipped)
    for measure in ("precision", "recall", "F1"):
        assert _row(lines, measure)[1:] == ["0.83", "0.83", "0.51 - 1.00"]
    assert _row(lines, "extra calls (left unpaired)")[1:] == ["1"]
    assert _row(lines, "  of which excused by a relaxation")[1:] == ["0"]
    assert _row(lines, "repeated calls (same tool and arguments)")[1:] == ["1"]
    assert _row(lines, "calls per expected call (tool cases)")[1:] == ["1.00"]


def test_a_failed_case_names_its_f1_on_its_header_line() -> None:
    lines = _printed(*_run())
    assert "  near (plan 0): calls failed, f1 0.67, 2 of 3 calls matched" in lines


def test_a_hostile_case_id_is_printed_inert_beside_its_f1() -> None:
    summary, failed = _run(HOSTILE)
    console = Console(record=True, width=200, force_terminal=True, color_system="truecolor")
    render_summary(console, _specs(), "0", summary, failed)
    text = console.export_text(styles=False)
    header = next(line for line in text.splitlines() if "calls failed" in line)
    assert "[bold]x[/bold]" in header  # markup shown as written, not applied
    assert "\x1b" not in header
    assert "\u202e" not in header
    assert header.endswith("f1 0.67, 2 of 3 calls matched")


def test_a_stored_run_saved_before_partial_credit_prints_neither_table() -> None:
    written = _run()[0].to_dict()
    older = summary_from_json(
        {k: v for k, v in written.items() if k not in ("partial", "efficiency")}
    )
    lines = _printed(older, [])
    assert not any(line.startswith(("Partial credit", "Efficiency")) for line in lines)
    assert any(line.startswith("Metrics") for line in lines)


def test_retries_are_counted_in_the_efficiency_table_per_tool() -> None:
    """A call whose tool reported an error, then a call to the same tool: one retry, listed
    under its tool; a tool name an agent made up is printed inert."""
    specs = _specs()
    builder = SummaryBuilder(specs)
    calls = [
        {"name": "weather", "args": {"city": "Paris"}, "error": "timeout"},
        {"name": "weather", "args": {"city": "Paris"}},
        {"name": HOSTILE, "args": {}, "error": "no such tool"},
        {"name": HOSTILE, "args": {}},
    ]
    case = parse_case({"id": "retry", "plans": [PLAN[:1]]}, specs)
    builder.add(case, score_case(specs, case, parse_output({"id": "retry", "calls": calls})))
    lines = _printed(builder.finish(), [])

    def value(label: str) -> str:
        (line,) = [line for line in lines if label in line]
        return line.split("│")[-2].strip()

    assert value("retries (an error, then the same tool again)") == "2"
    assert value("retried weather") == "1"
    (hostile,) = [line for line in lines if "retried" in line and "weather" not in line]
    assert "\x1b" not in hostile
    assert "\\x1b" in hostile
