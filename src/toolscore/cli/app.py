"""The `toolscore` command line: a thin shell over the library.

Commands parse options, call the library, and turn its input errors into one-line messages
with exit status 2. Exit 0 means scoring completed; 1 means a threshold was not met, or
(`score`) some case had no output line and `--missing exclude` was not given.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from toolscore._version import __version__
from toolscore.build import build_kind
from toolscore.cli.common import console, input_errors
from toolscore.cli.options import (
    refresh_rubrics_option,
    show_failures_option,
    tool_timeout_option,
)
from toolscore.core.model import Case, CaseResult
from toolscore.engines.local import ALL_RUBRICS, ParallelScoring, default_workers
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.escape import printable
from toolscore.inputs.converted import converted_inputs, layout_of
from toolscore.inputs.jsonl import ByteCounter
from toolscore.inputs.missing import MISSING_POLICIES, likely_cause, missing_fails, missing_line
from toolscore.inputs.paths import check_inputs, input_size, rereadable
from toolscore.scoring.summary import Summary
from toolscore.specs.loading import SpecSet, load_specs, read_mapping

if TYPE_CHECKING:
    from rich.progress import Progress

    from toolscore.engines.partitions import Joined
    from toolscore.engines.ray import RayScoring
    from toolscore.report.json_report import ReportWriter
    from toolscore.report.junit import JunitWriter
    from toolscore.report.otel_events import EventWriter
    from toolscore.rubrics.cache import JudgmentCache
    from toolscore.state import AnyEnvironment as Environment
    from toolscore.store import RunWriter

PROGRESS_AFTER_SECONDS = 2.0
SPEC_ENVIRONMENT = "spec"
"""What `--env` given without a file means: the spec file's own environment block."""
ENGINES = ("local", "ray")
PARALLEL_MIN_BYTES = 4 << 20
"""Below this size of cases file, `--workers 0` scores in process: starting the workers would
take longer than the work they save (a few thousand cases)."""


def _show_version(context: click.Context, _: click.Parameter, value: bool) -> None:
    """`--version`: the version and which build runs (compiled or pure-python)."""
    if value and not context.resilient_parsing:
        click.echo(f"toolscore, version {__version__} ({build_kind()})")
        context.exit()


LAZY_COMMANDS = {
    "import": "toolscore.cli.bfcl",
    "runs": "toolscore.cli.store",
    "show": "toolscore.cli.store",
    "rescore": "toolscore.cli.store",
    "compare": "toolscore.cli.store",
    "spec-diff": "toolscore.cli.store",
    "label": "toolscore.cli.label",
    "disagreements": "toolscore.cli.calibration",
    "batches": "toolscore.cli.calibration",
    "labels": "toolscore.cli.calibration",
    "calibrate": "toolscore.cli.calibration",
    "report": "toolscore.cli.report",
    "join": "toolscore.cli.join",
}
"""The commands other modules add (with their `register`), and the module of each."""


class _LazyGroup(click.Group):
    """The `toolscore` group: a command of `LAZY_COMMANDS` is registered, its module
    imported, only when it is asked for, so that `toolscore score` does not import the
    results store, calibration or BFCL code (nor what they import)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            wanted = LAZY_COMMANDS.get(cmd_name)
            # An unknown name registers them all: click's "Did you mean" looks among them.
            for module in [wanted] if wanted else sorted(set(LAZY_COMMANDS.values())):
                importlib.import_module(module).register(self)
        return self.commands.get(cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and the build (compiled or pure-python), and exit.",
)
def cli() -> None:
    """Score what an LLM agent did with its tools against what a correct agent would have done."""


class _ProgressBar:
    """A progress bar on stderr that appears only for runs longer than a couple of seconds."""

    def __init__(self, counter: ByteCounter, total: int | None) -> None:
        self.counter = counter
        self.total = None if total is None else max(total, 1)  # None: a stream, size unknown
        self.started = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.progress: Progress | None = None

    def tick(self) -> None:
        if not self.enabled:
            return
        if self.progress is None:
            if time.monotonic() - self.started < PROGRESS_AFTER_SECONDS:
                return
            from rich.console import Console  # noqa: PLC0415 - only a long run shows it
            from rich.progress import (  # noqa: PLC0415
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )

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


@cli.command("score")
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
@click.option(
    "--env",
    "env_path",
    is_flag=False,
    flag_value=SPEC_ENVIRONMENT,
    default=None,
    metavar="[FILE]",
    help="Also replay each case's calls against a store and judge its final state: the "
    "spec's environment block, or FILE's (imports the tools module).",
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
    "'trace_id' (the default), 'gen_ai.conversation.id' or other span attribute.",
)
@click.option(
    "--emit-otel",
    "otel_path",
    metavar="PATH",
    help="Also write each case's verdict as an OpenTelemetry gen_ai.evaluation.result event "
    "(OTLP JSON Lines), linked to the trace it was read from.",
)
@click.option(
    "--missing",
    type=click.Choice(MISSING_POLICIES),
    default="fail",
    show_default=True,
    help="A case with no output line: 'fail' it (and exit 1), or 'exclude' it from every rate "
    "(a partial run; the summary says how many and which).",
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
@input_errors
def score_command(
    specs_path: str,
    cases_path: str,
    outputs_path: str,
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
) -> None:
    """Score an outputs file against a cases file under a spec file.

    Judge and similarity rubrics keep their judgments in the results store (`--db`, else the
    default one), so that scoring the same outputs again asks the endpoint nothing."""
    if cluster_by in ("id", "plans"):
        raise click.BadParameter(f"{cluster_by!r} cannot group cases", param_hint="--cluster-by")
    specs = load_specs(specs_path)
    rubrics = None if no_rubrics or not specs.rubric_uses else ALL_RUBRICS
    remote = rubrics is not None and _check_remote_keys(specs, specs_path)
    run_on = _engine(engine, address, joined_dir)
    if run_on.joined is not None:  # the files were read by `join`: they may be elsewhere now
        cases_path = cases_path or run_on.joined.cases
        outputs_path = outputs_path or run_on.joined.outputs
    elif cases_path is None or outputs_path is None:
        raise click.UsageError("give --cases and --outputs (or --joined DIR with --engine ray)")
    else:
        check_inputs(("--cases", cases_path), ("--outputs", outputs_path))
    env = optional_environment(specs, specs_path, env_path, tool_timeout)
    _check_group_by(group_by, outputs_path)
    # with --joined, the engine reads the join: the files are read only to be saved or shown
    reads_files = run_on.joined is None or save or db_path is not None or html_path is not None
    with (
        converted_inputs(cases_path, outputs_path, group_by)
        if reads_files
        else contextlib.nullcontext((cases_path, outputs_path))
    ) as (cases_lines, outputs_lines):
        _score(
            specs, specs_path, cases_lines, outputs_lines, json_target, fail_under, env, workers,
            db_path, save, label, show_failures, cluster_by, html_path, rubrics, remote,
            refresh_rubrics, otel_path, (cases_path, outputs_path), junit_path, run_on,
            missing, group_by, choice,
        )  # fmt: skip


def _check_group_by(group_by: str | None, outputs_path: str) -> None:
    """`--group-by` groups the spans of a collector export, and means nothing for others."""
    if group_by is None:
        return
    layout = layout_of(outputs_path)
    if not group_by.strip() or layout is None or layout.name != "otlp-json":
        message = "groups the spans of an OpenTelemetry collector export given as --outputs"
        raise click.BadParameter(message, param_hint="--group-by")


class Engine(NamedTuple):
    """`score --engine`: where to score, and what the engine reads."""

    name: str = "local"
    address: str | None = None
    joined: Joined | None = None


def _engine(name: str, address: str | None, joined_dir: str | None) -> Engine:
    if name == "local":
        if address is not None or joined_dir is not None:
            raise click.UsageError("--address and --joined need --engine ray")
        return Engine()
    from toolscore.engines.partitions import read_joined  # noqa: PLC0415 - only engines read joins

    return Engine(name, address, read_joined(joined_dir) if joined_dir else None)


def _score(
    specs: SpecSet,
    specs_path: str,
    cases_path: str,
    outputs_path: str,
    json_target: str | None,
    fail_under: float | None,
    env: Environment | None,
    workers: int,
    db_path: str | None,
    save: bool,
    label: str | None,
    show_failures: int,
    cluster_by: str | None,
    html_path: str | None,
    rubrics: str | None,
    remote: bool,
    refresh_rubrics: bool,
    otel_path: str | None = None,
    names: tuple[str, str] | None = None,
    junit_path: str | None = None,
    run_on: Engine = Engine(),  # noqa: B008 - immutable
    missing: str = "fail",
    group_by: str | None = None,
    choice: int | None = None,
) -> None:
    """`score` once its inputs are JSON Lines (`names`: the files the user gave, which a
    saved run records, when the inputs are their conversions)."""
    counter = ByteCounter()
    html = _HtmlTarget(html_path, json_target) if html_path else None
    report = _report_writer(html.spool if html else json_target)
    junit = _junit_writer(junit_path, specs_path)
    failed: list[CaseResult] = []
    earlier: list[str] = []
    run_id: int | None = None
    with contextlib.ExitStack() as stack:
        saving = None
        cache: JudgmentCache | None = None
        sources = (cases_path, outputs_path)
        if save or db_path is not None:
            sources, saving, earlier, cache = _begin_saving(
                stack, specs, specs_path, sources, db_path, label, names
            )
        elif remote:  # judgments are kept in the store even when the run is not
            from toolscore.store import open_store  # noqa: PLC0415

            cache = stack.enter_context(open_store(db_path)).judgments
        events = None
        if otel_path is not None:
            from toolscore.report.otel_events import emitting  # noqa: PLC0415

            events = stack.enter_context(emitting(otel_path))
        if junit is not None:
            junit.read_tags(sources[0])
        size = input_size(sources[0])
        bar = _ProgressBar(counter, size)
        try:
            workers = workers or auto_workers(size)
            summary, late = _score_chunks(
                specs, sources, workers, report, saving, failed, show_failures, bar, env,
                cluster_by, rubrics, (cache, refresh_rubrics), events, junit,
                (specs_path, run_on), missing, choice,
            )  # fmt: skip
            if saving is not None:
                run_id = saving.finish(summary)
        except BaseException:
            bar.close()
            if report is not None:
                report.discard()
            if junit is not None:
                junit.discard()
            raise
    bar.close()
    if report is not None:
        inputs = (cases_path, outputs_path)
        _write_reports(report, html, specs, env, summary, run_id, inputs, label, late, run_on.name)
    if junit is not None:
        junit.finish(summary.to_dict(), _header(specs, env))
    _print_run(specs, summary, failed, earlier, run_id, html_path, json_target == "-")
    trace_export = group_by is None and _is_trace_export((names or sources)[1])
    _exit_status(summary, fail_under, json_target == "-", trace_export)


def _exit_status(
    summary: Summary, fail_under: float | None, to_stderr: bool, trace_export: bool
) -> None:
    """Say why outputs are missing when most are (on stderr), and exit 1 when accuracy is
    below `--fail-under` or outputs count as missing (`missing.missing_fails`)."""
    for line in likely_cause(summary.join, summary.cases + summary.join.excluded, trace_export):
        console(err=True).print(printable(line), soft_wrap=True)
    out = console(err=to_stderr)
    failing = False
    if fail_under is not None and (summary.accuracy or 0.0) < fail_under:
        out.print(f"accuracy {summary.accuracy or 0:.4f} is below --fail-under {fail_under}")
        failing = True
    absent_trials = summary.trials.missing_trials if summary.trials is not None else 0
    if missing_fails(summary.join, absent_trials):
        out.print(printable(missing_line(summary.join, absent_trials)), soft_wrap=True)
        failing = True
    if failing:
        sys.exit(1)


def _is_trace_export(outputs_path: str) -> bool:
    """Whether the outputs were an OpenTelemetry collector export (grouped by trace id)."""
    layout = layout_of(outputs_path)
    return layout is not None and layout.name == "otlp-json"


def _print_run(
    specs: SpecSet,
    summary: Summary,
    failed: list[CaseResult],
    earlier: list[str],
    run_id: int | None,
    html_path: str | None,
    to_stderr: bool,
) -> None:
    """The terminal summary of a scored run, and where its results went."""
    from toolscore.report.terminal import render_summary  # noqa: PLC0415 - rich, when printing

    out = console(err=to_stderr)
    render_summary(out, specs, f"{__version__} ({build_kind()})", summary, failed)
    for line in earlier:
        out.print(printable(line), soft_wrap=True)
    if run_id is not None:
        out.print(f"saved as run {run_id}")
    if html_path:
        out.print(printable(f"HTML report written to {html_path}"), soft_wrap=True)


def _write_reports(
    report: ReportWriter,
    html: _HtmlTarget | None,
    specs: SpecSet,
    env: Environment | None,
    summary: Summary,
    run_id: int | None,
    inputs: tuple[str, str],
    label: str | None,
    late: Any = None,
    engine: str = "local",
) -> None:
    """Write the report JSON (with `late`, the remote rubrics' entries asked once scoring
    was done), then the HTML page made from it (`--html`); an error writing either names
    the run when it was saved."""
    header = _header(specs, env)
    if engine != "local":  # provenance: the only difference from a local run's report
        header["engine"] = engine
    try:
        report.finish(header, summary, late)
        if html is not None:
            html.write(specs, *inputs, label, run_id)
    except InputError as error:
        if run_id is None:
            raise
        saved = f"{error.message} (the run was saved as run {run_id})"
        raise InputError(error.source, saved) from None
    finally:
        if html is not None:
            html.close()


class _HtmlTarget:
    """`score --html PATH`: the page is made from the report JSON once it is written, so the
    report goes to a file: `--json`'s own, or a temporary one (then copied to stdout or the
    device `--json` names, if any). jinja2 is imported only here, with `--html`."""

    def __init__(self, path: str, json_target: str | None) -> None:
        import secrets  # noqa: PLC0415
        import tempfile  # noqa: PLC0415

        if Path(path).is_dir():
            raise InputError(path, "is a directory, not an HTML file")
        if not Path(path).parent.is_dir():  # found before scoring, not after
            raise InputError(path, "cannot write: its directory does not exist")
        self.path = path
        self.copy_to: str | None = None
        self.temporary: Path | None = None
        target = Path(json_target) if json_target and json_target != "-" else None
        if target is not None and (not target.exists() or target.is_file()):
            self.spool = str(target)
        else:
            # Only named here: the report writer creates it once scoring has finished.
            self.copy_to = json_target
            name = f"toolscore-report-{secrets.token_hex(8)}.json"
            self.temporary = Path(tempfile.gettempdir()) / name
            self.spool = str(self.temporary)

    def write(
        self, specs: SpecSet, cases: str, outputs: str, label: str | None, run_id: int | None
    ) -> None:
        """Copy the report where `--json` wanted it, then write the page."""
        from toolscore.html_report.build import html_from_score  # noqa: PLC0415 - jinja2 here
        from toolscore.html_report.embed import Caps  # noqa: PLC0415
        from toolscore.html_report.page import write_page  # noqa: PLC0415

        if self.copy_to is not None:
            self._copy_report(self.copy_to)
        page = html_from_score(self.spool, specs, cases, outputs, Caps(), label, run_id)
        write_page(self.path, page)

    def _copy_report(self, target: str) -> None:
        import shutil  # noqa: PLC0415

        with open(self.spool, "rb") as source:
            if target == "-":
                shutil.copyfileobj(source, sys.stdout.buffer)
                sys.stdout.buffer.flush()
            else:
                with open(target, "wb") as out:
                    shutil.copyfileobj(source, out)

    def close(self) -> None:
        """Remove the temporary report, if one was made."""
        if self.temporary is not None:
            self.temporary.unlink(missing_ok=True)


def _header(specs: SpecSet, env: Environment | None) -> dict[str, Any]:
    """The report's header: the scorer, the spec set, the environment (with `--env`)."""
    from toolscore.report.json_report import report_header  # noqa: PLC0415

    return report_header(specs, __version__, env.describe() if env is not None else None)


def _junit_writer(junit_path: str | None, specs_path: str) -> JunitWriter | None:
    """The writer of the JUnit XML `--junit` asks for, or None without `--junit`."""
    if not junit_path:
        return None
    from toolscore.report.junit import JunitWriter  # noqa: PLC0415 - only --junit needs it

    return JunitWriter(junit_path, Path(specs_path).stem)


def _check_remote_keys(specs: SpecSet, specs_path: str) -> bool:
    """Whether a remote rubric will run; an input error (before anything is sent) when one's
    key variable is not set."""
    from toolscore.scoring.rubric_run import check_remote_keys  # noqa: PLC0415 - runs with rubrics

    return check_remote_keys(specs, specs_path)


def _report_writer(json_target: str | None) -> ReportWriter | None:
    """The writer of the report `--json` asks for, or None without `--json`."""
    if not json_target:
        return None
    from toolscore.report.json_report import ReportWriter  # noqa: PLC0415 - only --json needs it

    return ReportWriter(json_target, sys.stdout.buffer)


def _begin_saving(
    stack: contextlib.ExitStack,
    specs: SpecSet,
    specs_path: str,
    paths: tuple[str, str],
    db_path: str | None,
    label: str | None,
    names: tuple[str, str] | None = None,
) -> tuple[tuple[str, str], RunWriter, list[str], JudgmentCache]:
    """Open the results store and begin a run in it: the inputs to score (streams copied, as
    a saved run hashes its inputs first and stores them last), the run's writer, lines
    about earlier runs of the same inputs, and the store's judgments of remote rubrics.
    The run records `names` as its inputs' paths (default: `paths`)."""
    from toolscore.store import RunMeta, describe_previous, open_store  # noqa: PLC0415

    names = names or paths
    sources = (
        stack.enter_context(rereadable(paths[0], CaseError)),
        stack.enter_context(rereadable(paths[1], OutputError)),
    )
    store = stack.enter_context(open_store(db_path))
    meta = RunMeta.from_files(specs, specs_path, *sources, label, __version__, names=names)
    previous = store.previous_scores(meta.cases_file.sha256, meta.outputs_file.sha256)
    earlier = describe_previous(previous, specs)
    return sources, stack.enter_context(store.begin_run(meta)), earlier, store.judgments


def auto_workers(cases_bytes: int | None) -> int:
    """How many processes `--workers 0` means: every core this process may use, unless the
    cases file is too small for the time to start processes to pay off (or is a stream,
    of unknown size)."""
    if cases_bytes is None or cases_bytes < PARALLEL_MIN_BYTES:
        return 1
    return default_workers()


def _score_chunks(
    specs: SpecSet,
    sources: tuple[str, str],
    workers: int,
    report: ReportWriter | None,
    saving: RunWriter | None,
    failed: list[CaseResult],
    show_failures: int,
    bar: _ProgressBar,
    env: Environment | None,
    cluster_by: str | None = None,
    rubrics: str | None = None,
    judgments: tuple[JudgmentCache | None, bool] = (None, False),
    events: EventWriter | None = None,
    junit: JunitWriter | None = None,
    engine: tuple[str, Engine] = ("", Engine()),
    missing: str = "fail",
    choice: int | None = None,
) -> tuple[Summary, dict[str, list[dict[str, Any]]]]:
    """Score chunk by chunk on `workers` processes, writing the report and the store rows
    the workers made, then ask the remote rubrics about their texts (with `judgments`: the
    cache of judgments and whether to ask again anyway); return the summary and the remote
    rubrics' entries by case id (for the report)."""
    run = ParallelScoring(
        specs,
        sources[0],
        sources[1],
        workers,
        want_report=report is not None or events is not None or junit is not None,
        want_rows=saving is not None,
        keep_failures=show_failures,
        counter=bar.counter,
        env=env,
        cluster_by=cluster_by,
        rubrics=rubrics,
        missing=missing,
        choice=choice,
    )
    with contextlib.ExitStack() as stack:
        scoring = _engine_run(stack, run, *engine)
        for outcome in scoring:
            bar.tick()
            if report is not None:
                report.add_all_encoded(outcome.report_lines)
            if events is not None:
                events.add_encoded(outcome.report_lines)
            if junit is not None:
                junit.add_all_encoded(outcome.report_lines)
            if saving is not None:
                saving.add_rows(outcome.rows)
                saving.add_rubrics(outcome.rubrics)
            failed.extend(outcome.failures[: show_failures - len(failed)])
    builder = scoring.summary()
    late: dict[str, list[dict[str, Any]]] = {}
    if scoring.pending and builder.rubrics is not None:
        from toolscore.scoring.rubric_run import remote_scorer, run_remote  # noqa: PLC0415

        cache, refresh = judgments
        found = run_remote(specs.rubrics, scoring.pending, remote_scorer(refresh), cache)
        for entries in found.values():
            for entry in entries:
                builder.rubrics.add(entry)
        if saving is not None:
            saving.add_rubrics(found.items())
        late = {case_id: [e.to_json() for e in entries] for case_id, entries in found.items()}
    return builder.finish(), late


def _engine_run(
    stack: contextlib.ExitStack, run: ParallelScoring, specs_path: str, engine: Engine
) -> ParallelScoring | RayScoring:
    """The run to iterate: `run` itself locally, else the engine's run with its settings."""
    if engine.name == "local":
        return run
    from toolscore.engines.ray import ray_scoring  # noqa: PLC0415 - only --engine ray

    return stack.enter_context(ray_scoring(run.scorer, specs_path, engine.joined, engine.address))


@cli.command("lint")
@click.option("--specs", "specs_path", required=True, help="Spec file to check.")
@click.option(
    "--cases",
    "cases_path",
    help="Cases file to check against the spec; each case's plans are scored as an agent's "
    "output, and the agent that does nothing too.",
)
@click.option(
    "--env",
    "env_path",
    is_flag=False,
    flag_value=SPEC_ENVIRONMENT,
    default=None,
    metavar="[FILE]",
    help="Also replay each plan against a store (as `score --env`): the spec's environment "
    "block, or FILE's (imports the tools module).",
)
@tool_timeout_option
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@input_errors
def lint_command(
    specs_path: str,
    cases_path: str | None,
    env_path: str | None,
    tool_timeout: float | None,
    strict: bool,
) -> None:
    """Check a spec (and cases) for problems before scoring with them: exit 1 on an error
    (on a warning too with --strict), 2 when a file cannot be read."""
    from toolscore.lint.checks import lint_files  # noqa: PLC0415 - only `lint` needs it

    if env_path is None and tool_timeout is not None:
        raise click.UsageError("--tool-timeout applies to replay: add --env")
    if cases_path is not None:
        check_inputs(("--cases", cases_path))

    def replayed_on(specs: SpecSet) -> Environment:
        assert env_path is not None
        return environment(specs, specs_path, env_path, tool_timeout)

    findings = lint_files(specs_path, cases_path, replayed_on if env_path else None)
    out = sys.stdout
    for finding in findings:
        out.write(f"{printable(finding)}\n")
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    out.write(f"{errors} errors, {warnings} warnings\n")
    if errors or (strict and warnings):
        sys.exit(1)


def optional_environment(
    specs: SpecSet, specs_path: str, env_path: str | None, tool_timeout: float | None
) -> Environment | None:
    """The environment `--env` asks for, or None without `--env` (then `--tool-timeout`,
    which only limits replayed calls, is a usage error)."""
    if env_path is None:
        if tool_timeout is not None:
            raise click.UsageError("--tool-timeout applies to replay: add --env")
        return None
    return environment(specs, specs_path, env_path, tool_timeout)


def environment(
    specs: SpecSet, specs_path: str, env_path: str, tool_timeout: float | None = None
) -> Environment:
    """The store to replay calls against: the spec's `environment` block, or a file's (a
    spec file with such a block, or a file holding the block itself); `tool_timeout`, when
    given, replaces the block's `timeout`."""
    if env_path == SPEC_ENVIRONMENT:
        if specs.environment is None:
            raise InputError(specs_path, "no environment block: add one, or name a file with --env")
        config, base, source = specs.environment, Path(specs_path).parent, specs_path
    else:
        data = read_mapping(env_path)
        block = data.get("environment", data)
        if not isinstance(block, dict):
            raise InputError(env_path, "must be a mapping", field="environment")
        config, base, source = block, Path(env_path).parent, env_path
    if tool_timeout is not None:
        config = {**config, "timeout": tool_timeout}
    from toolscore.state import load_environment  # noqa: PLC0415 - only replay needs it

    env = load_environment(config, base, source)
    lacking = env.lacking(specs.tools)
    if lacking:
        raise InputError(
            source, f"the tools module has no function for {', '.join(lacking)}",
            field="environment.tools",
        )  # fmt: skip
    return env


@cli.command("replay")
@click.option(
    "--specs",
    "specs_path",
    required=True,
    help="Spec file (its tools, and perhaps its environment).",
)
@click.option(
    "--env",
    "env_path",
    is_flag=False,
    flag_value=SPEC_ENVIRONMENT,
    default=SPEC_ENVIRONMENT,
    metavar="[FILE]",
    help="The environment: the spec's own block (the default), or FILE's.",
)
@click.option(
    "--outputs", "outputs_path", required=True, help="Outputs file (JSON Lines; '-' for stdin)."
)
@click.option("--case", "case_id", required=True, help="The id of the case to replay.")
@click.option("--cases", "cases_path", help="Cases file: its setup and goal state for the case.")
@click.option(
    "--choice",
    type=click.IntRange(0),
    metavar="N",
    help="The choice of a response object with several to replay (as score --choice).",
)
@tool_timeout_option
@input_errors
def replay_command(
    specs_path: str,
    env_path: str,
    outputs_path: str,
    case_id: str,
    cases_path: str | None,
    tool_timeout: float | None,
    choice: int | None = None,
) -> None:
    """Replay one case's calls against the store and print each call's outcome and the final
    state's difference from the goal (with --cases) or from the initial state."""
    import orjson  # noqa: PLC0415 - what only replay needs is imported here

    from toolscore.inputs.cases import read_cases  # noqa: PLC0415
    from toolscore.inputs.outputs import read_outputs  # noqa: PLC0415
    from toolscore.report.terminal import state_lines  # noqa: PLC0415
    from toolscore.state import check_state  # noqa: PLC0415
    from toolscore.state.replay import ReplayStoppedError  # noqa: PLC0415
    from toolscore.state.verdict import changes_from_start, replay_any  # noqa: PLC0415

    specs = load_specs(specs_path)
    check_inputs(("--outputs", outputs_path), ("--cases", cases_path))
    env = environment(specs, specs_path, env_path, tool_timeout)
    outputs = read_outputs(outputs_path, choice)
    trajectory = next((t for t in outputs if t.case_id == case_id), None)
    if trajectory is None:
        raise InputError(outputs_path, f"no output for case {case_id!r}", field="id")
    case = Case(case_id, ())
    if cases_path is not None:
        found = next((c for c in read_cases(cases_path, specs) if c.id == case_id), None)
        if found is None:
            raise InputError(cases_path, f"no case {case_id!r}", field="id")
        case = found
    out = sys.stdout
    try:
        final, outcomes = replay_any(env, case, trajectory.calls, cases_path or "<cases>")
    except ReplayStoppedError as stop:
        out.write(f"replay stopped at {stop}\n")
        return
    for outcome in outcomes:
        shown = (
            f"error: {outcome.error}" if outcome.error else orjson.dumps(outcome.result).decode()
        )
        out.write(printable(f"call {outcome.call} {outcome.name}: {shown}") + "\n")
    if "goal_state" in case.extra or "required_outputs" in case.extra:
        verdict = check_state(
            env,
            case,
            trajectory.calls,
            trajectory.response,
            source=cases_path or "",
            said=trajectory.said,
        )
        lines = state_lines(verdict) or ["nothing to check"]
    else:
        changes = changes_from_start(env, final)
        lines = ["changes from the initial state:"] + (changes or ["none"])
    out.write("".join(printable(line) + "\n" for line in lines))


def example_dir() -> Path:
    """The bundled support-desk example (installed with the package)."""
    from importlib import resources  # noqa: PLC0415 - only the demo and tests need it

    return Path(str(resources.files("toolscore") / "examples" / "support"))


@cli.command("demo")
@input_errors
def demo_command() -> None:
    """Score the bundled support-desk example three ways and show why they differ."""
    from toolscore.cli.demo import run_demo  # noqa: PLC0415 - only the demo needs it

    run_demo(console(), example_dir(), __version__)


def main() -> None:
    """Entry point of the `toolscore` script."""
    cli(prog_name="toolscore")
