"""`toolscore score`: parse its options, score with `toolscore.run.score_files`, print the
summary, and exit 1 when the run fails (accuracy below `--fail-under`, missing outputs).

The scoring itself (inputs, engines, workers, outputs, the results store, rubrics) is the
library's; this module only turns options into `RunOptions` and the `RunResult` into text.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import click

from toolscore._version import __version__
from toolscore.build import build_kind
from toolscore.cli.common import input_errors
from toolscore.cli.options import (
    env_option,
    missing_option,
    refresh_rubrics_option,
    show_failures_option,
    tool_timeout_option,
)
from toolscore.cli.summary import SummaryPrinter, summary_option
from toolscore.escape import printable
from toolscore.run import ENGINES, Progress, RunOptions, RunResult, score_files

if TYPE_CHECKING:
    from rich.progress import Progress as Bar

PROGRESS_AFTER_SECONDS = 2.0


class _ProgressBar:
    """A progress bar on stderr that appears only for runs longer than a couple of seconds,
    drawn from the run's `Progress` and gone once scoring is done."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.progress: Bar | None = None

    def __call__(self, at: Progress) -> None:
        if at.finished:
            self.close()
            return
        if not self.enabled:
            return
        if self.progress is None:
            if time.monotonic() - self.started < PROGRESS_AFTER_SECONDS:
                return
            from rich.console import Console  # noqa: PLC0415 - only a long run shows it
            from rich.progress import (  # noqa: PLC0415
                BarColumn,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as Bar  # noqa: PLC0415

            self.progress = Bar(
                TextColumn("scoring"),
                BarColumn(),
                TaskProgressColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.start()
            # None: a stream, size unknown
            self.progress.add_task("scoring", total=None if at.total is None else max(at.total, 1))
        self.progress.update(0, completed=at.read)  # type: ignore[arg-type]

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
        self.enabled = False


@click.command("score")
@click.option(
    "--specs", "specs_path", required=True, help="Spec file (YAML, JSON or OpenAI tool list)."
)
@click.option("--cases", "cases_path", help="Cases file (JSON Lines; '-' for stdin).")
@click.option("--outputs", "outputs_path", help="Outputs file (JSON Lines; '-' for stdin).")
@click.option(
    "--json",
    "json_target",
    metavar="PATH|-",
    help="Write the report JSON to PATH, or stdout with '-'.",
)
@click.option(
    "--html",
    "html_path",
    metavar="PATH",
    help="Also write the one-file HTML report to PATH (failing cases first, at most 5,000 "
    "cases, 500 of them passing: `toolscore report` sets other caps).",
)
@click.option(
    "--fail-under",
    type=click.FloatRange(0, 1),
    metavar="X",
    help="Exit 1 when accuracy is below X (a fraction, e.g. 0.9).",
)
@env_option(
    "Also replay each case's calls against a store and judge its final state: the spec's "
    "environment block, or FILE's (imports the tools module)."
)
@tool_timeout_option
@click.option(
    "--workers",
    default=0,
    type=click.IntRange(0),
    help="Processes to score on (default 0: every core, on inputs large enough to gain from "
    "it); the report and summary are the same for any number.",
)
@click.option("--db", "db_path", metavar="PATH", help="Save the run in this results store.")
@click.option(
    "--save",
    is_flag=True,
    help="Save the run in the results store ($TOOLSCORE_DB, else ./.toolscore/results.db).",
)
@click.option("--label", help="A label for the saved run (a model name, a release).")
@show_failures_option
@click.option(
    "--cluster-by",
    metavar="FIELD",
    help="Also give the accuracy's clustered 95% interval, cases grouped by FIELD: 'tag' (a "
    "case's tags), 'prompt', or another top-level key of the case lines; a case lacking it "
    "is a cluster of its own.",
)
@click.option(
    "--junit",
    "junit_path",
    metavar="PATH",
    help="Also write the verdicts as JUnit XML to PATH: a test case per case, failures "
    "listing the mismatches.",
)
@click.option(
    "--no-rubrics",
    is_flag=True,
    help="Skip the rubrics on text arguments (scored apart from the calls; judge and "
    "similarity rubrics ask an endpoint).",
)
@refresh_rubrics_option
@click.option(
    "--group-by",
    metavar="KEY",
    help="For an OpenTelemetry collector export (OTLP JSON Lines) as outputs: one output per "
    "'trace_id' (the default), 'gen_ai.conversation.id' or other span attribute. For an MCP "
    "session log (JSON-RPC messages as JSON Lines): one output per value of the lines' field "
    "KEY ('session_id', the default).",
)
@click.option(
    "--emit-otel",
    "otel_path",
    metavar="PATH",
    help="Also write each case's verdict as an OpenTelemetry gen_ai.evaluation.result event "
    "(OTLP JSON Lines), linked to the trace it was read from.",
)
@missing_option(
    "A case with no output line: 'fail' it (and exit 1), or 'exclude' it from every rate "
    "(a partial run; the summary says how many and which).",
    default="fail",
)
@click.option(
    "--choice",
    type=click.IntRange(0),
    metavar="N",
    help="For outputs lines holding a response object with several choices (OpenAI n > 1, "
    "Gemini candidates): score choice N, counted from 0, where the line gives no `choice`.",
)
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="local",
    help="Where to score: 'local' (--workers processes) or 'ray' (a Ray cluster; the `ray` "
    "extra); the report is the same but for its `engine` key.",
)
@click.option(
    "--address", metavar="ADDR", help="With --engine ray: a running cluster (else one starts)."
)
@click.option(
    "--joined",
    "joined_dir",
    metavar="DIR",
    help="With --engine ray: score the parts `toolscore join` wrote to DIR (instead of "
    "--cases and --outputs, which then default to the files it joined).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Parse the spec file afresh: neither read nor write the cache of parsed specs "
    "(TOOLSCORE_CACHE_DIR, else $XDG_CACHE_HOME/toolscore).",
)
@summary_option
@input_errors
def score_command(
    specs_path: str,
    cases_path: str | None,
    outputs_path: str | None,
    json_target: str | None,
    fail_under: float | None,
    env_path: str | None,
    tool_timeout: float | None,
    workers: int,
    db_path: str | None,
    save: bool,
    label: str | None,
    show_failures: int,
    cluster_by: str | None,
    html_path: str | None = None,
    no_rubrics: bool = False,
    refresh_rubrics: bool = False,
    group_by: str | None = None,
    otel_path: str | None = None,
    junit_path: str | None = None,
    choice: int | None = None,
    engine: str = "local",
    address: str | None = None,
    joined_dir: str | None = None,
    missing: str = "fail",
    no_cache: bool = False,
    summary_mode: str = "auto",
) -> None:
    """Score an outputs file against a cases file under a spec file.

    Judge and similarity rubrics keep their judgments in the results store (`--db`, else the
    default one), so that scoring the same outputs again asks the endpoint nothing."""
    options = RunOptions(
        specs_path=specs_path,
        spec_cache=not no_cache,
        cases_path=cases_path,
        outputs_path=outputs_path,
        json_target=json_target,
        html_path=html_path,
        junit_path=junit_path,
        otel_path=otel_path,
        env_path=env_path,
        tool_timeout=tool_timeout,
        workers=workers,
        db_path=db_path,
        save=save,
        label=label,
        keep_failures=show_failures,
        cluster_by=cluster_by,
        rubrics=not no_rubrics,
        refresh_rubrics=refresh_rubrics,
        group_by=group_by,
        choice=choice,
        engine=engine,
        address=address,
        joined_dir=joined_dir,
        missing=missing,
        fail_under=fail_under,
    )
    bar = _ProgressBar()
    try:
        result = score_files(options, bar)
    finally:
        bar.close()
    out = SummaryPrinter(summary_mode, err=json_target == "-")  # stdout may hold the report
    _print_run(result, out)
    _exit_status(result, out)


def _print_run(result: RunResult, out: SummaryPrinter) -> None:
    """The summary of a scored run (in the view `--summary` chose), and where its results
    went (plain lines, printed under `--summary none` too)."""
    if out.view != "none":
        from toolscore.report.terminal import summary_blocks  # noqa: PLC0415 - when printing

        version = f"{__version__} ({build_kind()})"
        out.blocks(summary_blocks(result.specs, version, result.summary, result.failures))
    for line in result.earlier:
        out.line(line)
    if result.run_id is not None:
        out.line(f"saved as run {result.run_id}")
    if result.html_path:
        out.line(f"HTML report written to {result.html_path}")


def _exit_status(result: RunResult, out: SummaryPrinter) -> None:
    """Say why outputs are missing when most are (on stderr), and exit 1 when accuracy is
    below `--fail-under` or outputs count as missing; these lines are plain in every view."""
    for line in result.likely_causes:
        click.echo(printable(line), err=True)
    if result.below_fail_under:
        accuracy = result.summary.accuracy or 0
        out.line(f"accuracy {accuracy:.4f} is below --fail-under {result.fail_under}")
    if result.missing is not None:
        out.line(result.missing)
    if result.failing:
        sys.exit(1)


def register(group: click.Group) -> None:
    """Add `score` to the `toolscore` group."""
    group.add_command(score_command)
