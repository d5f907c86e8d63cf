"""What the terminal summary says about what is absent: cases without an output line, output
lines without a case, and the cases an agent that did nothing would pass."""

from __future__ import annotations

from toolscore.escape import printable
from toolscore.inputs.missing import IDS_SHOWN, IdSample
from toolscore.report.layout import Line, safe_line
from toolscore.scoring.summary import Summary


def _ids_row(label: str, sample: IdSample) -> tuple[str, str, str, str] | None:
    """An indented row naming the first ids of `sample` (none when no id was kept)."""
    if not sample.ids:
        return None
    return printable(f"  {label}: {sample.shown()}"), "", "", ""


def join_rows(summary: Summary) -> list[tuple[str, str, str, str]]:
    """The metrics table's rows about joining: cases without output (failed, or left out of
    every rate), absent trials, and outputs without case, each with its first ids."""
    join = summary.join
    excluded = join.policy == "exclude"
    label = "missing outputs (left out: --missing exclude)" if excluded else "missing outputs"
    rows: list[tuple[str, str, str, str] | None] = [
        (label + (" (failed)" if join.missing.count and not excluded else ""), "",
         str(summary.missing_outputs), ""),
        _ids_row("no output line", join.missing) if join.missing.count else None,
    ]  # fmt: skip
    absent = summary.trials.missing_trials if summary.trials is not None else 0
    if absent:
        what = "left out" if excluded else "failed"
        rows.append((f"absent trials ({what})", "", str(absent), ""))
    if summary.unmatched_outputs:
        rows.append(("outputs with no case (ignored)", "", str(summary.unmatched_outputs), ""))
        rows.append(_ids_row("no such case", join.unmatched))
    return [row for row in rows if row is not None]


def nothing_lines(summary: Summary, limit: int = IDS_SHOWN) -> list[Line]:
    """The tool cases the do-nothing baseline passes, as they measure nothing (abstention
    cases aside: doing nothing is their right answer)."""
    tally = summary.baselines.get("nothing")
    if tally is None or tally.tool_cases is None or not tally.tool_cases.count:
        return []
    passes = tally.tool_cases
    lines = [
        safe_line(
            f"Passes without doing anything: {passes.count} tool case"
            f"{'s' if passes.count != 1 else ''} (no call, and under --env the unchanged "
            "initial state, passes them: they measure nothing)",
            style="bold yellow",
        )
    ]
    lines += [safe_line(f"  {case_id}") for case_id in passes.ids[:limit]]
    if passes.count > limit:
        lines.append(Line(f"  ... and {passes.count - limit} more (--json lists them)"))
    return lines
