"""`toolscore suggest RUN`: the single-argument rule changes a stored run's evidence points
to, printed as spec lines to add (the library's `audit.suggest`); nothing is applied."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from toolscore.cli.common import input_errors
from toolscore.cli.options import db_option
from toolscore.escape import printable

if TYPE_CHECKING:
    from toolscore.audit.suggest import Suggestion, Suggestions

FLIPS_SHOWN = 10
"""Flipped case ids a suggestion's paragraph names before it counts the rest."""


@click.command("suggest")
@click.argument("run")
@click.option("--batch", "batch", help="A labelled batch of the run: its scorer bugs are evidence.")
@click.option(
    "--no-audit", is_flag=True, help="Leave out audit's findings (planted wrong identifiers)."
)
@click.option("--json", "json_path", help="Also write the suggestions as JSON to this file.")
@db_option
@input_errors
def suggest_command(
    run: str, batch: str | None, no_audit: bool, json_path: str | None, db_path: str | None
) -> None:
    """Propose single-argument rule changes from a stored run's disagreements with the
    lowercase baseline, audit's findings and a labelled batch, each with the cases it would
    flip; never applied. Exit 0, 2 when the run or batch cannot be used."""
    from toolscore.audit.suggest import suggest_run  # noqa: PLC0415 - only `suggest` needs it
    from toolscore.store import open_store  # noqa: PLC0415

    with open_store(db_path, read_only=True) as store:
        found = suggest_run(store, run, batch, audit=not no_audit)
    if json_path is not None:
        import orjson  # noqa: PLC0415

        from toolscore.files import write_atomically  # noqa: PLC0415

        data = orjson.dumps(found.to_json(), option=orjson.OPT_INDENT_2) + b"\n"
        write_atomically(json_path, data)
    for line in suggestion_lines(found):
        sys.stdout.write(printable(line) + "\n")
    if json_path is not None:
        sys.stdout.write(f"wrote {printable(json_path)}\n")


def suggestion_lines(found: Suggestions) -> list[str]:
    """The terminal text: a paragraph per suggestion, then the ones the labels reject."""
    batch = "" if found.batch is None else f" and batch {found.batch}"
    lines = [
        f"suggestions for run {found.run}{batch}: {len(found.proposed)} proposed, "
        f"{len(found.rejected)} rejected by the labels ({found.evidence_cases} evidence cases)"
    ]
    for suggestion in found.proposed:
        lines += ["", *_paragraph(suggestion)]
    if found.rejected:
        lines += ["", "rejected (the person labelled what they let through as wrong):"]
        for suggestion in found.rejected:
            lines += _paragraph(suggestion)[:1]
    if found.proposed:
        lines += ["", "Nothing was applied: add the lines you agree with, with their reason."]
    return lines


def _paragraph(s: Suggestion) -> list[str]:
    where = s.tool if s.argument is None else f"{s.tool}.{s.argument}"
    head = (
        f"{where}: {s.change} (from {', '.join(s.sources)}; {s.evidence} failures) flips "
        f"{len(s.flips)} cases ({s.fail_to_pass} fail -> pass, {s.pass_to_fail} pass -> fail)"
    )
    if s.labelled:
        head += (
            f"; {s.labelled} labelled: the person agrees with {s.agreed}, "
            f"{s.let_through} wrong answers let through"
        )
    shown = ", ".join(repr(case) for case in s.flips[:FLIPS_SHOWN])
    more = len(s.flips) - FLIPS_SHOWN
    lines = [head, *(f"  spec-diff: {change}" for change in s.spec_diff)]
    lines.append(f"  cases: {shown}" + (f" and {more} more" if more > 0 else ""))
    lines += [f"    {line}" for line in s.spec_lines.splitlines()]
    return lines


def register(group: click.Group) -> None:
    """Add `suggest` to the `toolscore` group."""
    group.add_command(suggest_command)
