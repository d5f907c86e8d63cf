"""The `toolscore` command line: a thin shell over the library.

Commands parse options, call the library, and turn its input errors into one-line messages
with exit status 2 (STYLE.md 9). Exit 0 means scoring completed; 1 means a threshold was not met.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

from toolscore import __version__
from toolscore.cases import read_cases
from toolscore.errors import InputError
from toolscore.jsonl import ByteCounter
from toolscore.lint import lint_files
from toolscore.model import CaseResult
from toolscore.outputs import read_outputs
from toolscore.parallel import ParallelScoring
from toolscore.report.json_report import ReportWriter, report_header
from toolscore.report.terminal import render_summary
from toolscore.scoring import Summary, score
from toolscore.specs import SpecSet, load_specs

F = TypeVar("F", bound=Callable[..., Any])

PROGRESS_AFTER_SECONDS = 2.0


def input_errors(command: F) -> F:
    """Turn the library's input errors into one line on stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except InputError as error:
            click.echo(f"toolscore: error: {error}", err=True)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="toolscore")
def cli() -> None:
    """Score what an LLM agent did with its tools against what a correct agent would have done."""


def _console(err: bool = False) -> Console:
    stream = sys.stderr if err else sys.stdout
    return Console(file=stream, soft_wrap=False, width=max(100, Console(file=stream).width))


class _ProgressBar:
    """A progress bar on stderr that appears only for runs longer than a couple of seconds."""

    def __init__(self, counter: ByteCounter, total: int) -> None:
        self.counter = counter
        self.total = max(total, 1)
        self.started = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.progress: Progress | None = None

    def tick(self) -> None:
        if not self.enabled:
            return
        if self.progress is None:
            if time.monotonic() - self.started < PROGRESS_AFTER_SECONDS:
                return
            self.progress = Progress(
                TextColumn("scoring"),
                BarColumn(),
                TaskProgressColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.start()
            self.progress.add_task("scoring", total=self.total)
        self.progress.update(0, completed=self.counter.done)  # type: ignore[arg-type]

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _with_progress(results: Iterator[CaseResult], bar: _ProgressBar) -> Iterator[CaseResult]:
    for count, result in enumerate(results, 1):
        if count % 2048 == 0:
            bar.tick()
        yield result


@cli.command("score")
@click.option(
    "--specs", "specs_path", required=True, help="Spec file (YAML, JSON or OpenAI tool list)."
)
@click.option("--cases", "cases_path", required=True, help="Cases file (JSON Lines).")
@click.option("--outputs", "outputs_path", required=True, help="Outputs file (JSON Lines).")
@click.option(
    "--json",
    "json_target",
    metavar="PATH|-",
    help="Write the report JSON to PATH, or stdout with '-'.",
)
@click.option(
    "--fail-under",
    type=click.FloatRange(0, 1),
    metavar="X",
    help="Exit 1 when accuracy is below X (a fraction, e.g. 0.9).",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="Processes to score on (the report and summary are the same for any number).",
)
@click.option(
    "--show-failures",
    default=10,
    show_default=True,
    type=click.IntRange(0),
    help="How many failing cases to print with their mismatches.",
)
@input_errors
def score_command(
    specs_path: str,
    cases_path: str,
    outputs_path: str,
    json_target: str | None,
    fail_under: float | None,
    workers: int,
    show_failures: int,
) -> None:
    """Score an outputs file against a cases file under a spec file."""
    specs = load_specs(specs_path)
    for path in (cases_path, outputs_path):
        if not Path(path).is_file():
            raise InputError(path, "no such file")
    counter = ByteCounter()
    writer = ReportWriter(json_target, sys.stdout.buffer) if json_target else None
    bar = _ProgressBar(counter, Path(cases_path).stat().st_size)
    failed: list[CaseResult] = []
    try:
        if workers > 1:
            summary = _score_in_parallel(
                specs, cases_path, outputs_path, workers, writer, failed, show_failures, bar
            )
        else:
            run = score(
                specs,
                read_cases(cases_path, specs, counter),
                read_outputs(outputs_path),
                sources=(cases_path, outputs_path),
            )
            for result in _with_progress(iter(run), bar):
                if writer is not None:
                    writer.add(result)
                if not result.passed and len(failed) < show_failures:
                    failed.append(result)
            summary = run.summary()
    except BaseException:
        bar.close()
        if writer is not None:
            writer.discard()
        raise
    bar.close()
    if writer is not None:
        writer.finish(report_header(specs, __version__), summary)
    console = _console(err=json_target == "-")
    render_summary(console, specs, __version__, summary, failed)
    if fail_under is not None and (summary.accuracy or 0.0) < fail_under:
        console.print(f"accuracy {summary.accuracy or 0:.4f} is below --fail-under {fail_under}")
        sys.exit(1)


def _score_in_parallel(
    specs: SpecSet,
    cases_path: str,
    outputs_path: str,
    workers: int,
    writer: ReportWriter | None,
    failed: list[CaseResult],
    show_failures: int,
    bar: _ProgressBar,
) -> Summary:
    run = ParallelScoring(
        specs,
        cases_path,
        outputs_path,
        workers,
        want_report=writer is not None,
        keep_failures=show_failures,
        counter=bar.counter,
    )
    for outcome in run:
        bar.tick()
        if writer is not None:
            for line in outcome.report_lines:
                writer.add_encoded(line)
        failed.extend(outcome.failures[: show_failures - len(failed)])
    return run.summary().finish()


@cli.command("lint")
@click.option("--specs", "specs_path", required=True, help="Spec file to check.")
@click.option("--cases", "cases_path", help="Cases file to check against the spec.")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@input_errors
def lint_command(specs_path: str, cases_path: str | None, strict: bool) -> None:
    """Check a spec (and cases) for problems before scoring with them."""
    findings = lint_files(specs_path, cases_path)
    out = sys.stdout
    for finding in findings:
        out.write(f"{finding}\n")
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    out.write(f"{errors} errors, {warnings} warnings\n")
    if errors or (strict and warnings):
        sys.exit(1)


def example_dir() -> Path:
    """The bundled support-desk example (installed with the package)."""
    return Path(str(resources.files("toolscore") / "examples" / "support"))


@cli.command("demo")
@input_errors
def demo_command() -> None:
    """Score the bundled support-desk example three ways and show why they differ."""
    from toolscore.demo import run_demo  # noqa: PLC0415 - only the demo needs it

    run_demo(_console(), example_dir(), __version__)


def main() -> None:
    """Entry point of the `toolscore` script."""
    cli(prog_name="toolscore")
