"""`toolscore report RUN|REPORT.json --html OUT`: the one-file HTML report of a run.

RUN names a stored run as `show` takes it (an id, `latest`, -N); an existing file is read as
a report JSON. A missing or invalid report, or an unknown run, is one line and exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from toolscore.cli.common import input_errors
from toolscore.html_report.embed import DEFAULT_MAX_CASES, DEFAULT_MAX_PASSING, Caps

_CAPS = (
    (
        "--max-passing",
        DEFAULT_MAX_PASSING,
        "Passing cases the HTML page embeds at most (passing cases a baseline disagrees with "
        "first).",
    ),
    (
        "--max-cases",
        DEFAULT_MAX_CASES,
        "Cases the HTML page embeds at most, failing ones first; its counts and metrics always "
        "cover every case.",
    ),
)


def cap_options(command: Any) -> Any:
    """`--max-cases` and `--max-passing`: how many cases the page embeds."""
    for name, default, text in _CAPS:
        option = click.option(
            name, default=default, show_default=True, type=click.IntRange(0), help=text
        )
        command = option(command)
    return command


@click.command("report")
@click.argument("source", metavar="RUN|REPORT.json")
@click.option("--html", "html_path", required=True, metavar="PATH", help="Write the page here.")
@click.option("--db", "db_path", metavar="PATH", help="Results store for RUN (as `show`).")
@click.option("--specs", "specs_path", help="With a report JSON: the spec file it was scored with.")
@click.option("--cases", "cases_path", help="With a report JSON: its cases file.")
@click.option("--outputs", "outputs_path", help="With a report JSON: its outputs file.")
@click.option(
    "--coverage",
    is_flag=True,
    help="Add the spec's coverage by the run (as `toolscore coverage`; scores the run again): "
    "a stored run, or a report JSON with --specs --cases --outputs.",
)
@cap_options
@input_errors
def report_command(
    source: str,
    html_path: str,
    db_path: str | None,
    specs_path: str | None,
    cases_path: str | None,
    outputs_path: str | None,
    coverage: bool,
    max_cases: int,
    max_passing: int,
) -> None:
    """Write the one-file HTML report of a stored run or of a report JSON file (with
    `--specs --cases --outputs`, its cases open beside their plans)."""
    from toolscore.html_report.build import html_from_report_file, html_from_store  # noqa: PLC0415
    from toolscore.html_report.page import write_page  # noqa: PLC0415

    caps = Caps(max_cases=max_cases, max_passing=max_passing)
    given = (specs_path, cases_path, outputs_path)
    if any(given) and not all(given):
        raise click.UsageError("--specs, --cases and --outputs go together")
    if Path(source).exists() or source.endswith(".json"):
        inputs = None
        if specs_path and cases_path and outputs_path:
            from toolscore.inputs.paths import check_inputs  # noqa: PLC0415
            from toolscore.specs.loading import load_specs  # noqa: PLC0415

            check_inputs(("--cases", cases_path), ("--outputs", outputs_path))
            inputs = (load_specs(specs_path), cases_path, outputs_path)
        elif coverage:
            message = "--coverage with a report JSON needs --specs, --cases and --outputs"
            raise click.UsageError(message)
        block = None
        if coverage and inputs is not None:
            from toolscore.audit.coverage import coverage_files  # noqa: PLC0415

            block = coverage_files(specs_path or "", cases_path or "", outputs_path).to_json()
        html = html_from_report_file(source, caps, inputs, block)
    elif any(given):
        raise click.UsageError("--specs, --cases and --outputs go with a report JSON, not a run")
    else:
        from toolscore.store import open_store  # noqa: PLC0415

        with open_store(db_path, read_only=True) as store:
            block = None
            if coverage:
                from toolscore.audit.coverage import coverage_of_run  # noqa: PLC0415

                block = coverage_of_run(store, source).to_json()
            html = html_from_store(store, source, caps, block)
    write_page(html_path, html)
    click.echo(f"wrote {html_path}")


def register(group: click.Group) -> None:
    """Add `report` to the `toolscore` command group."""
    group.add_command(report_command)
