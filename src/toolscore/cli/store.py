"""`toolscore runs | show | rescore | compare | spec-diff | store recover`: the results
store on the command line.

Each command opens the store, calls one library function and prints its result: tables for
people, `--json` for machines. A missing store, an unknown run or a bad spec file is one
line on stderr and exit status 2. `show` and `rescore` print a run's summary as `score` does,
in the view `--summary` chooses; the rich views of `store.terminal` are imported by the
commands that draw them, so that a plain summary does not load rich.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import click
import orjson

from toolscore.cli.common import console, input_errors
from toolscore.cli.options import (
    db_option,
    json_option,
    missing_option,
    refresh_rubrics_option,
    show_failures_option,
)
from toolscore.cli.summary import SummaryPrinter, summary_option
from toolscore.errors import InputError
from toolscore.escape import printable
from toolscore.report.cells import percent
from toolscore.report.layout import safe_line
from toolscore.report.terminal import summary_blocks
from toolscore.specs.loading import SpecSet, load_specs
from toolscore.store import compare, open_store, spec_diff
from toolscore.store.database import RunInfo, Store
from toolscore.store.recovery import recover
from toolscore.store.report import stored_report_head, stored_specs
from toolscore.store.rescore import rescore
from toolscore.store.restore import result_from_json, summary_from_json

RUN_PREFIX = "run:"
"""`spec-diff run:N NEW` diffs the specs stored with run N."""


def print_json(value: Any) -> None:
    """Print a value as indented JSON on stdout (the `--json` form of a command)."""
    stdout = sys.stdout.buffer
    stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    stdout.flush()


@click.command("runs")
@click.option("--limit", type=click.IntRange(1), help="Only the newest N runs.")
@db_option
@json_option
@input_errors
def runs_command(limit: int | None, db_path: str | None, as_json: bool) -> None:
    """List the stored runs: id, time, label, spec version and the four metrics."""
    from toolscore.store.terminal import runs_table  # noqa: PLC0415 - rich

    with open_store(db_path, read_only=True) as store:
        runs = store.runs(limit)
    if as_json:
        print_json([run.to_json() for run in runs])
    else:
        console().print(runs_table(runs))


@click.command("show")
@click.argument("run")
@click.option("--case", "case_id", metavar="ID", help="Show this case only.")
@show_failures_option
@db_option
@json_option
@summary_option
@input_errors
def show_command(
    run: str,
    case_id: str | None,
    show_failures: int,
    db_path: str | None,
    as_json: bool,
    summary_mode: str = "auto",
) -> None:
    """Print a stored run as `score` did (RUN is an id, `latest`, or -N for the N-th newest)."""
    with open_store(db_path, read_only=True) as store:
        info = store.run(run)
        if case_id is not None:
            case = store.case(info.id, case_id)
            if case is None:
                raise InputError(str(store.path), f"run {info.id} has no case {case_id!r}")
            if as_json:
                print_json(case)
            else:
                from toolscore.store.terminal import case_lines, run_line  # noqa: PLC0415

                out = console()
                out.print(run_line(info))
                for line in case_lines(case):
                    out.print(line, soft_wrap=True)
            return
        if as_json:
            _write_report(store, info)
        else:
            _render_run(store, info, show_failures, SummaryPrinter(summary_mode))


def _render_run(store: Store, info: RunInfo, show_failures: int, out: SummaryPrinter) -> None:
    """A stored run's heading and summary, as `score` printed it (nothing under `none`)."""
    if out.view == "none":
        return
    failed = [
        result_from_json(case)
        for case in itertools.islice(store.cases(info.id, failed_only=True), show_failures)
    ]
    summary = summary_from_json(store.summary(info.id))
    heading = safe_line(info.heading(), style="bold", soft_wrap=False)
    specs = stored_specs(store, info)
    out.blocks([heading, *summary_blocks(specs, info.toolscore_version, summary, failed)])


def _write_report(store: Store, info: RunInfo) -> None:
    """The run's report JSON as `score --json` wrote it, with the run's record first;
    the cases are streamed, one a line."""
    head = stored_report_head(store, info)
    stdout = sys.stdout.buffer
    stdout.write(orjson.dumps(head)[:-1] + b',"cases":[')
    for index, case in enumerate(store.cases(info.id)):
        stdout.write((b"\n" if index == 0 else b",\n") + orjson.dumps(case))
    stdout.write(b"\n]}\n")
    stdout.flush()


@click.command("rescore")
@click.argument("run")
@click.option(
    "--specs",
    "specs_path",
    help="The new spec file (required, unless --rubrics-only: then the run's own by default).",
)
@click.option(
    "--label",
    help="Label of the new run (default: the old run's, marked: 'v1 (rescore of run 1)').",
)
@click.option(
    "--no-rubrics", is_flag=True, help="Skip the rubrics on text arguments (the new run has none)."
)
@click.option(
    "--rubrics-only",
    is_flag=True,
    help="Keep the run's call results and summary as they are and (re)compute only its rubric "
    "results, under --specs when given (which may change nothing but rubrics).",
)
@refresh_rubrics_option
@show_failures_option
@missing_option(
    "A case with no output line: 'fail' it or 'exclude' it from every rate (default: as the "
    "run did)."
)
@db_option
@json_option
@summary_option
@input_errors
def rescore_command(
    run: str,
    specs_path: str | None,
    label: str | None,
    show_failures: int,
    db_path: str | None,
    as_json: bool,
    no_rubrics: bool = False,
    rubrics_only: bool = False,
    refresh_rubrics: bool = False,
    missing: str | None = None,
    summary_mode: str = "auto",
) -> None:
    """Re-score a stored run's cases and outputs under new specs, rubrics included (judge and
    similarity rubrics reuse the judgments the store keeps); store it as a new run."""
    if specs_path is None and not rubrics_only:
        raise click.UsageError("Missing option '--specs' (only --rubrics-only may leave it out).")
    if no_rubrics and rubrics_only:
        raise click.UsageError("--no-rubrics and --rubrics-only cannot be used together.")
    if missing is not None and rubrics_only:
        raise click.UsageError("--missing and --rubrics-only cannot be used together.")
    with open_store(db_path, create=False) as store:
        old = store.run(run)
        new_id = rescore(
            store,
            old.id,
            specs_path,
            label,
            rubrics=not no_rubrics,
            rubrics_only=rubrics_only,
            refresh=refresh_rubrics,
            missing=missing,
        )
        new = store.run(new_id)
        if as_json:
            print_json({"run": new.to_json(), "rescored_from": old.to_json()})
            return
        out = SummaryPrinter(summary_mode)
        _render_run(store, new, show_failures, out)
    out.line(
        f"accuracy {percent(old.accuracy)} under run {old.id} (specs "
        f"{old.specs_version or 'unversioned'}) -> {percent(new.accuracy)} under run "
        f"{new.id} (specs {new.specs_version or 'unversioned'}); `toolscore compare "
        f"{old.id} {new.id}` lists the cases that flipped",
        fold=True,
    )


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option(
    "--show",
    "limit",
    default=20,
    show_default=True,
    type=click.IntRange(0),
    help="How many flipped cases to print.",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=int,
    help="Seed of the paired bootstrap (the same seed gives the same intervals).",
)
@click.option(
    "--resamples",
    default=10_000,
    show_default=True,
    type=click.IntRange(1),
    help="Bootstrap resamples of the shared cases.",
)
@click.option(
    "--html", "html_path", metavar="PATH", help="Also write the comparison as one HTML file."
)
@db_option
@json_option
@input_errors
def compare_command(
    run_a: str,
    run_b: str,
    limit: int,
    seed: int,
    resamples: int,
    db_path: str | None,
    as_json: bool,
    html_path: str | None = None,
) -> None:
    """Compare two stored runs: metrics side by side, B - A on the shared cases with a paired
    bootstrap 95% interval and McNemar's exact test, the cases whose verdict flipped and the
    rule (and spec change) that decided each; and, when the runs have rubric results, each
    rubric's pass rates on the entries both scored, B - A with its interval over cases."""
    with open_store(db_path, read_only=True) as store:
        comparison = compare(store, run_a, run_b, seed=seed, resamples=resamples)
    if html_path:
        from toolscore.html_report.compare_html import compare_html  # noqa: PLC0415 - jinja2
        from toolscore.html_report.page import write_page  # noqa: PLC0415

        write_page(html_path, compare_html(comparison.to_json()))
    if as_json:
        print_json(comparison.to_json())
    else:
        from toolscore.store.terminal import render_comparison  # noqa: PLC0415 - rich

        render_comparison(console(), comparison, limit)


@click.command("spec-diff")
@click.argument("old")
@click.argument("new")
@db_option
@json_option
@input_errors
def spec_diff_command(old: str, new: str, db_path: str | None, as_json: bool) -> None:
    """List what changed from spec file OLD to NEW and what each change can do to verdicts
    (`run:N` stands for the specs stored with run N)."""
    old_specs, new_specs = _specs(old, db_path), _specs(new, db_path)
    changes = spec_diff(old_specs, new_specs)
    if as_json:
        print_json(
            {
                "old": {"source": old, **old_specs.describe()},
                "new": {"source": new, **new_specs.describe()},
                "changes": [change.to_json() for change in changes],
            }
        )
        return
    from toolscore.store.terminal import render_changes  # noqa: PLC0415 - rich

    out = console()
    out.print(printable(f"spec-diff {old} ({_label(old_specs)}) -> {new} ({_label(new_specs)})"))
    render_changes(out, changes)


def _specs(argument: str, db_path: str | None) -> SpecSet:
    if argument.startswith(RUN_PREFIX) and not Path(argument).exists():
        with open_store(db_path, read_only=True) as store:
            return store.specs(store.run(argument[len(RUN_PREFIX) :]))
    return load_specs(argument)


def _label(specs: SpecSet) -> str:
    return f"version {specs.version or 'unversioned'}, sha256 {specs.sha256[:12]}"


@click.group("store")
def store_group() -> None:
    """Look after the results store file itself."""


@store_group.command("recover")
@click.argument("damaged", type=click.Path(dir_okay=False))
@click.option(
    "--to", "target", required=True, type=click.Path(dir_okay=False),
    help="The new store to create (it must not exist).",
)  # fmt: skip
@json_option
@input_errors
def recover_command(damaged: str, target: str, as_json: bool) -> None:
    """Copy every whole run, batch, label, judgment and stored file a damaged store still
    holds into a new store (DAMAGED is only read); list what was lost. Exit 1 when a run
    was lost."""
    recovery = recover(damaged, target)
    if as_json:
        print_json(recovery.to_json())
    else:
        out = console()
        for line in [*recovery.lost, *recovery.flagged, recovery.summary()]:
            out.print(printable(line), soft_wrap=True)
    if recovery.runs_lost:
        sys.exit(1)


def register(group: click.Group) -> None:
    """Add the store's commands to the `toolscore` command group."""
    for command in (
        runs_command,
        show_command,
        rescore_command,
        compare_command,
        spec_diff_command,
        store_group,
    ):
        group.add_command(command)
