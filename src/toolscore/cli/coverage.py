"""`toolscore coverage`: how much of a spec the cases exercise and, given outputs (a file or
a stored run), which of its rules and aliases decided a verdict."""

from __future__ import annotations

import click
import orjson

from toolscore.cli.common import console, input_errors
from toolscore.cli.options import db_option
from toolscore.escape import printable
from toolscore.files import write_output
from toolscore.inputs.paths import check_inputs


@click.command("coverage")
@click.argument("run", required=False)
@click.option("--specs", "specs_path", help="Spec file (default with RUN: the run's own).")
@click.option("--cases", "cases_path", help="Cases file (default with RUN: the run's own).")
@click.option(
    "--outputs",
    "outputs_path",
    help="Outputs file: also score them and count what each rule decided.",
)
@click.option("--json", "json_path", metavar="PATH", help="Also write the report as JSON.")
@db_option
@input_errors
def coverage_command(
    run: str | None,
    specs_path: str | None,
    cases_path: str | None,
    outputs_path: str | None,
    json_path: str | None,
    db_path: str | None,
) -> None:
    """For every tool, argument, rule option (each alias, default, tolerance, coerce,
    casefold), relaxation and forbid entry: how many cases exercise it and, given outputs
    (--outputs, or a stored RUN's), in how many cases it raised a mismatch or forgave a
    difference exact JSON fails. Lists the untested items and the uncovered tools."""
    from toolscore.audit.coverage import coverage_files, coverage_of_run  # noqa: PLC0415
    from toolscore.audit.terminal import render_coverage  # noqa: PLC0415

    if run is not None and outputs_path is not None:
        raise click.UsageError("give --outputs or RUN (a stored run's outputs), not both")
    if run is None:
        if specs_path is None or cases_path is None:
            raise click.UsageError("--specs and --cases are required without RUN")
        check_inputs(("--specs", specs_path), ("--cases", cases_path), ("--outputs", outputs_path))
        report = coverage_files(specs_path, cases_path, outputs_path)
    else:
        from toolscore.store import open_store  # noqa: PLC0415 - only with RUN

        check_inputs(("--specs", specs_path), ("--cases", cases_path))
        with open_store(db_path, read_only=True) as store:
            report = coverage_of_run(store, run, specs_path, cases_path)
    if json_path is not None:
        data = orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2).decode() + "\n"
        write_output(json_path, data)
    render_coverage(console(), report)
    if json_path is not None:
        console().print(printable(f"wrote {json_path}"))


def register(group: click.Group) -> None:
    """Add `coverage` to the `toolscore` command group."""
    group.add_command(coverage_command)
