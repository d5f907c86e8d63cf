"""`toolscore audit`: plant known-bad answers and known-harmless variants in each case and
say which the spec catches, forgives, passes and fails (the library's `audit.audit_run`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from toolscore.cli.common import input_errors
from toolscore.escape import printable
from toolscore.inputs.paths import check_inputs

if TYPE_CHECKING:
    from toolscore.audit.audit_run import AuditReport, Row

REASONS_SHOWN = 3
"""Forgiving rules (or failing mismatches) a row's line names before it counts the rest."""


@click.command("audit")
@click.option("--specs", "specs_path", required=True, help="Spec file to audit.")
@click.option(
    "--cases", "cases_path", required=True, help="Cases whose plans the mistakes are made from."
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the random choices (which character, enum member, alias).",
)
@click.option("--json", "json_path", help="Also write the findings as JSON to this file.")
@input_errors
def audit_command(specs_path: str, cases_path: str, seed: int, json_path: str | None) -> None:
    """Plant mistakes in each case's plans and say which the spec forgives: per kind, tool and
    argument, the bad answers caught and forgiven (and by what), the harmless variants passed
    and failed. Exit 0 when the audit ran, 2 when a file cannot be used."""
    from toolscore.audit.audit_run import audit_files  # noqa: PLC0415 - only `audit` needs it

    check_inputs(("--specs", specs_path), ("--cases", cases_path))
    report = audit_files(specs_path, cases_path, seed)
    if json_path is not None:
        import orjson  # noqa: PLC0415

        from toolscore.files import write_atomically  # noqa: PLC0415

        data = orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2) + b"\n"
        write_atomically(json_path, data)
    for line in report_lines(report):
        sys.stdout.write(printable(line) + "\n")
    if json_path is not None:
        sys.stdout.write(f"wrote {printable(json_path)}\n")


def report_lines(report: AuditReport) -> list[str]:
    """The terminal report: each family's totals, a line per kind, then a line per (kind,
    tool, argument) that the spec forgives or fails (`--json` has every row), then what was
    skipped."""
    bad, harmless = report.bad_rows(), report.harmless_rows()
    caught = sum(r.ok for r in bad)
    forgiven = sum(r.wrong for r in bad)
    lines = [
        f"audit of {report.cases} cases (seed {report.seed})",
        f"bad answers: {caught + forgiven} planted, {caught} caught, {forgiven} forgiven",
    ]
    lines += _kinds(bad, "caught", "forgiven")
    lines += _attention(bad, "forgiven", "caught", "forgiven by")
    passed = sum(r.ok for r in harmless)
    failed = sum(r.wrong for r in harmless)
    lines.append(f"harmless variants: {passed + failed} planted, {passed} passed, {failed} failed")
    lines += _kinds(harmless, "passed", "failed")
    lines += _attention(harmless, "failed", "passed", "failed by")
    if report.skipped:
        lines.append(f"not planted in: {len(report.skipped)}")
        for skip in report.skipped[:10]:
            plan = "" if skip["plan"] is None else f" plan {skip['plan']}"
            lines.append(f"  case {skip['case']!r}{plan}: {skip['reason']}")
        if len(report.skipped) > 10:
            lines.append(f"  ... and {len(report.skipped) - 10} more (--json lists them all)")
    return lines


def _attention(rows: list[Row], wrong: str, ok: str, by: str) -> list[str]:
    """The rows with answers forgiven (or failed), under a heading; none without any."""
    shown = [_line(row, ok, wrong, by) for row in rows if row.wrong]
    return [f"  {wrong}, by tool and argument:", *shown] if shown else []


def _kinds(rows: list[Row], ok: str, wrong: str) -> list[str]:
    """A line per kind: its counts over every tool and argument."""
    totals: dict[str, list[int]] = {}
    for row in rows:
        total = totals.setdefault(row.kind, [0, 0, 0])
        total[0] += row.n
        total[1] += row.ok
        total[2] += row.wrong
    return [
        f"  {kind:<20} {n:>6}  {ok} {good}, {wrong} {bad}"
        for kind, (n, good, bad) in totals.items()
    ]


def _line(row: Row, ok: str, wrong: str, by: str) -> str:
    where = row.tool if row.argument is None else f"{row.tool}.{row.argument}"
    text = f"  {row.kind:<20} {where:<28} {row.n:>5}  {ok} {row.ok}, {wrong} {row.wrong}"
    if row.wrong:
        named = [f"{name} ({n})" for name, n in row.forgiven_by.most_common(REASONS_SHOWN)]
        more = len(row.forgiven_by) - REASONS_SHOWN
        tail = f", {more} more" if more > 0 else ""
        cases = ", ".join(repr(case) for case in row.examples)
        text += f"  {by}: {', '.join(named)}{tail}; e.g. {cases}"
    return text


def register(group: click.Group) -> None:
    """Add `audit` to the `toolscore` group."""
    group.add_command(audit_command)
