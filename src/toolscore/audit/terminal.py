"""The readable forms of a coverage report and of a blame, rendered with rich."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from toolscore.audit.blame import Blame
from toolscore.audit.coverage import Coverage
from toolscore.report.printable import printable, safe_text


def render_coverage(console: Console, report: Coverage) -> None:
    """One row per item (cases exercising it; raised, forgave and decided given outputs),
    then the untested items and the uncovered tools."""
    scored = report.scored is not None
    table = Table(title="Spec coverage", title_justify="left")
    table.add_column("item")
    table.add_column("kind")
    for column in ("cases", *(("raised", "forgave", "decided") if scored else ())):
        table.add_column(column, justify="right", no_wrap=True)
    for item in report.items:
        counts = [str(item.cases)]
        if scored:
            counts += [str(item.raised), str(item.forgave), str(item.decided)]
        kind = item.kind if item.compared else f"{item.kind} (not compared)"
        table.add_row(safe_text(item.name), kind, *counts)
    console.print(table)
    head = f"{report.cases} cases"
    if scored:
        head += f", {report.scored} verdicts scored"
        if report.missing:
            head += f" ({report.missing} cases without an output line)"
        if report.unmatched_outputs:
            head += f", {report.unmatched_outputs} output lines matching no case"
    else:
        head += " (no outputs: untested means no case exercises it)"
    console.print(printable(head))
    what = "decided no verdict" if scored else "exercised by no case"
    _listed(console, f"untested ({what})", report.untested)
    _listed(console, "uncovered (no case calls them)", report.uncovered)


def _listed(console: Console, title: str, names: Sequence[str]) -> None:
    if names:
        console.print(printable(f"{title}: {len(names)}"))
        for name in names:
            console.print("  " + printable(name), soft_wrap=True)
    else:
        console.print(printable(f"{title}: none"))


def render_blame(console: Console, blames: Sequence[Blame], head: str) -> None:
    """`head` (the two runs and their spec versions), then each flipped case with the spec
    changes that flipped it."""
    console.print(printable(head), soft_wrap=True)
    if not blames:
        console.print("no verdict changed")
        return
    for blame in blames:
        verdicts = f"{_word(blame.before)} -> {_word(blame.after)}"
        console.print(printable(f"{blame.case}: {verdicts} ({blame.found})"), soft_wrap=True)
        for change in blame.changes:
            console.print("  " + printable(change.line()), soft_wrap=True)


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"
