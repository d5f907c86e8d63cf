"""A scoring run over files, end to end: what `toolscore score` does, as a library call.

`score_files(RunOptions(...))` loads the specs, checks the options together, converts the
inputs to JSON Lines, chooses the engine and the number of processes, makes the outputs
asked for (report JSON, HTML page, JUnit XML, OpenTelemetry events, the results store:
each a `report.sink.Sink`), feeds them every batch the engine scores, runs the late pass
of remote rubrics, and finishes them, or discards them all when anything fails. It returns
a `RunResult` for the caller to print and to exit by. A file that cannot be used is an
`InputError`; options that do not go together are an `OptionsError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from toolscore.core.model import CaseResult
from toolscore.engines.local import ALL_RUBRICS, ParallelScoring, default_workers
from toolscore.errors import CaseError, InputError, OptionsError, OutputError
from toolscore.inputs.converted import converted_inputs, layout_of
from toolscore.inputs.jsonl import ByteCounter
from toolscore.inputs.missing import likely_cause, missing_fails, missing_line
from toolscore.inputs.paths import check_inputs, input_size, rereadable
from toolscore.scoring.summary import Summary
from toolscore.specs.loading import SPEC_ENVIRONMENT, SpecSet, load_specs, read_mapping

if TYPE_CHECKING:
    from toolscore.engines.batch import EngineRun
    from toolscore.engines.partitions import Joined
    from toolscore.html_report.sink import HtmlSink
    from toolscore.report.junit import JunitSink
    from toolscore.report.sink import Late, Sink
    from toolscore.rubrics.cache import JudgmentCache
    from toolscore.state import AnyEnvironment as Environment

__all__ = [
    "SPEC_ENVIRONMENT",
    "Progress",
    "RunOptions",
    "RunResult",
    "environment",
    "optional_environment",
    "score_files",
]

ENGINES = ("local", "ray")
PARALLEL_MIN_BYTES = 4 << 20
"""Below this size of cases file, `workers=0` scores in process: starting the workers would
take longer than the work they save (a few thousand cases)."""
FINISHING = ("store", "events", "report", "html", "junit")
"""The order a run's sinks are finished in: the store first (the others may name the saved
run), the HTML page after the report JSON it is made from."""
CANNOT_CLUSTER = ("id", "plans")
"""Keys of a case line that cannot group cases into clusters."""


@dataclass(frozen=True)
class RunOptions:
    """What a run scores and where its results go: one field per option of `score`."""

    specs_path: str
    """The spec file (YAML, JSON or an OpenAI tool list)."""
    spec_cache: bool = True
    """Take the spec file's parse from the cache of parsed specs, and keep it there
    (`specs.cache`); False parses it afresh and leaves the cache alone."""
    cases_path: str | None = None
    """The cases file (JSON Lines, '-' for standard input, or a layout toolscore converts);
    None only with `joined_dir`, which then gives the file it joined."""
    outputs_path: str | None = None
    """The outputs file, as `cases_path`."""
    json_target: str | None = None
    """Where the report JSON goes: a path, or '-' for standard output; None for nowhere."""
    html_path: str | None = None
    """Where the one-file HTML page goes (None: no page)."""
    junit_path: str | None = None
    """Where the verdicts go as JUnit XML (None: no file)."""
    otel_path: str | None = None
    """Where each verdict goes as an OpenTelemetry evaluation event (None: no file)."""
    env_path: str | None = None
    """The environment to replay calls against: `SPEC_ENVIRONMENT` for the spec's own
    block, or a file holding one; None replays nothing."""
    tool_timeout: float | None = None
    """Seconds each replayed call may run (replaces the environment's `timeout`); needs
    `env_path`."""
    workers: int = 0
    """Processes to score on; 0 for every core on inputs large enough to gain from it."""
    db_path: str | None = None
    """The results store to save the run in (None: the default one, when `save`)."""
    save: bool = False
    """Save the run in the results store (implied by `db_path`)."""
    label: str | None = None
    """A label for the saved run (a model name, a release)."""
    keep_failures: int = 10
    """How many failing cases the result keeps, with their mismatches, to be shown."""
    cluster_by: str | None = None
    """A case key ('tag', 'prompt' or another top-level key) whose values group cases into
    clusters for the accuracy's clustered interval; None for none."""
    rubrics: bool = True
    """Score the spec's rubrics on text arguments (judge and similarity ones ask their
    endpoint once the cases are scored)."""
    refresh_rubrics: bool = False
    """Ask remote rubrics again even where the results store keeps their judgment."""
    group_by: str | None = None
    """For an OpenTelemetry collector export as outputs: the span attribute whose values
    make one output each (None: 'trace_id'); for an MCP session log, the field of its lines
    (None: 'session_id')."""
    choice: int | None = None
    """For response objects with several choices: the one to score where a line gives none."""
    engine: str = "local"
    """Where to score: 'local' (`workers` processes) or 'ray' (a Ray cluster)."""
    address: str | None = None
    """With the 'ray' engine: a running cluster's address (None: one is started)."""
    joined_dir: str | None = None
    """With the 'ray' engine: the directory of a join (`toolscore join`) to score."""
    missing: str = "fail"
    """A case without an output line: 'fail' it, or 'exclude' it from every rate."""
    fail_under: float | None = None
    """The accuracy below which the run fails (`RunResult.failing`)."""

    @property
    def saves(self) -> bool:
        """Whether the run is saved in the results store."""
        return self.save or self.db_path is not None


class Progress(NamedTuple):
    """How far a run has read: `read` bytes of the cases file out of `total` (None for a
    stream, whose size is not known); `finished` once scoring is done."""

    read: int
    total: int | None
    finished: bool = False


@dataclass(frozen=True)
class RunResult:
    """What a run gives back to print, and what decides its exit status."""

    specs: SpecSet
    """The spec set the run scored under."""
    summary: Summary
    """The run's summary (as the report JSON holds it)."""
    failures: list[CaseResult]
    """The first failing cases (up to `RunOptions.keep_failures`), without their values."""
    earlier: list[str]
    """Lines about earlier saved runs of the same inputs under other specs."""
    run_id: int | None
    """The id of the saved run (None when it was not saved)."""
    html_path: str | None
    """Where the HTML page was written (None: no page)."""
    fail_under: float | None
    """The threshold the run was given (`RunOptions.fail_under`)."""
    likely_causes: list[str]
    """Why outputs are missing, when most are (lines for standard error)."""
    missing: str | None
    """The line saying which outputs are missing, when their absence fails the run."""

    @property
    def below_fail_under(self) -> bool:
        """Whether the accuracy is below `fail_under`."""
        return self.fail_under is not None and (self.summary.accuracy or 0.0) < self.fail_under

    @property
    def failing(self) -> bool:
        """Whether the run fails (exit status 1): accuracy below `fail_under`, or outputs
        missing that count as failures."""
        return self.below_fail_under or self.missing is not None


def score_files(
    options: RunOptions, progress: Callable[[Progress], None] | None = None
) -> RunResult:
    """Score the files `options` names and write the outputs it asks for; `progress` is
    called after each batch with how far the cases file has been read, and once more,
    `finished`, when scoring is done (before the outputs are written)."""
    if options.cluster_by in CANNOT_CLUSTER:
        raise OptionsError(f"{options.cluster_by!r} cannot group cases", option="--cluster-by")
    specs = load_specs(options.specs_path, cache=options.spec_cache)
    rubrics = ALL_RUBRICS if options.rubrics and specs.rubrics else None
    remote = rubrics is not None and _check_remote_keys(specs, options.specs_path)
    joined = _joined(options)
    if joined is not None:  # the files were read by `join`: they may be elsewhere now
        cases_path = options.cases_path or joined.cases
        outputs_path = options.outputs_path or joined.outputs
    elif options.cases_path is None or options.outputs_path is None:
        raise OptionsError("give --cases and --outputs (or --joined DIR with --engine ray)")
    else:
        cases_path, outputs_path = options.cases_path, options.outputs_path
        check_inputs(("--cases", cases_path), ("--outputs", outputs_path))
    env = optional_environment(specs, options.specs_path, options.env_path, options.tool_timeout)
    _check_group_by(options.group_by, outputs_path)
    # with a join, the engine reads it: the files are read only to be saved or shown
    reads_files = joined is None or options.saves or options.html_path is not None
    names = (cases_path, outputs_path)
    with (
        converted_inputs(cases_path, outputs_path, options.group_by)
        if reads_files
        else contextlib.nullcontext(names)
    ) as lines:
        run = _Run(options, specs, env, joined, names, progress)
        return run.score(lines, rubrics, remote)


def _joined(options: RunOptions) -> Joined | None:
    """The join the 'ray' engine scores (None: it joins the files itself, or the engine is
    the local one, which takes no engine option)."""
    if options.engine not in ENGINES:
        raise OptionsError(f"no engine {options.engine!r}", option="--engine")
    if options.engine == "local":
        if options.address is not None or options.joined_dir is not None:
            raise OptionsError("--address and --joined need --engine ray")
        return None
    if options.joined_dir is None:
        return None
    from toolscore.engines.partitions import read_joined  # noqa: PLC0415 - only engines read joins

    return read_joined(options.joined_dir)


GROUPED_LAYOUTS = frozenset({"otlp-json", "mcp-log"})
"""The layouts of outputs files whose records `group_by` groups into outputs lines."""


def _check_group_by(group_by: str | None, outputs_path: str) -> None:
    """`group_by` groups the spans of a collector export or the messages of an MCP log,
    and means nothing for others."""
    if group_by is None:
        return
    layout = layout_of(outputs_path)
    if not group_by.strip() or layout is None or layout.name not in GROUPED_LAYOUTS:
        message = (
            "groups the spans of an OpenTelemetry collector export, or the messages of an "
            "MCP session log, given as --outputs"
        )
        raise OptionsError(message, option="--group-by")


def _check_remote_keys(specs: SpecSet, specs_path: str) -> bool:
    """Whether a remote rubric will run; an input error (before anything is sent) when one's
    key variable is not set."""
    from toolscore.scoring.rubric_run import check_remote_keys  # noqa: PLC0415 - runs with rubrics

    return check_remote_keys(specs, specs_path)


def auto_workers(cases_bytes: int | None) -> int:
    """How many processes `workers=0` means: every core this process may use, unless the
    cases file is too small for the time to start processes to pay off (or is a stream,
    of unknown size)."""
    if cases_bytes is None or cases_bytes < PARALLEL_MIN_BYTES:
        return 1
    return default_workers()


class _Outputs(NamedTuple):
    """The sinks of a run, in the order they are finished (`FINISHING`), and what the
    store gives the run."""

    sinks: list[Sink]
    rows: bool
    """Whether the run is saved: the engine makes store rows."""
    report_lines: bool
    """Whether some sink takes the cases' report JSON."""
    earlier: list[str]
    judgments: JudgmentCache | None
    sources: tuple[str, str]
    """The inputs to score: the files, or copies of streams when the run is saved."""


@dataclass
class _Run:
    """One run of `score_files` once its options are checked: `names` are the inputs the
    user gave (which a saved run records, when the inputs scored are their conversions)."""

    options: RunOptions
    specs: SpecSet
    env: Environment | None
    joined: Joined | None
    names: tuple[str, str]
    progress: Callable[[Progress], None] | None
    made: list[Sink] = field(default_factory=list)
    """Every sink made so far, discarded if the run fails."""

    def score(self, inputs: tuple[str, str], rubrics: str | None, remote: bool) -> RunResult:
        """Score `inputs` (JSON Lines) into the outputs, and say how the run went."""
        options = self.options
        with contextlib.ExitStack() as stack:
            try:
                outputs = self._outputs(stack, inputs, remote)
                summary, late, failures = self._scored(stack, outputs, rubrics)
            except BaseException:
                for sink in self.made:
                    sink.discard()
                raise
        run_id = _finish(outputs.sinks, summary, late)
        trace_export = options.group_by is None and _is_trace_export(self.names[1])
        causes = likely_cause(summary.join, summary.cases + summary.join.excluded, trace_export)
        absent_trials = summary.trials.missing_trials if summary.trials is not None else 0
        missing = (
            missing_line(summary.join, absent_trials)
            if missing_fails(summary.join, absent_trials)
            else None
        )
        return RunResult(
            self.specs, summary, failures, outputs.earlier, run_id, options.html_path,
            options.fail_under, causes, missing,
        )  # fmt: skip

    def _made(self, sink: Sink) -> Sink:
        self.made.append(sink)
        return sink

    def _outputs(
        self, stack: contextlib.ExitStack, inputs: tuple[str, str], remote: bool
    ) -> _Outputs:
        """Make the sinks the options ask for (each checks its target before any scoring),
        and open the results store when the run is saved or a remote rubric keeps its
        judgments there."""
        options, specs, env = self.options, self.specs, self.env
        engine = None if options.engine == "local" else options.engine
        sinks: dict[str, Sink] = {}
        html: HtmlSink | None = None
        if options.html_path:
            from toolscore.html_report.sink import HtmlSink  # noqa: PLC0415 - only --html

            html = HtmlSink(options.html_path, options.json_target, specs, inputs, options.label)
            sinks["html"] = self._made(html)
        target = html.spool if html is not None else options.json_target
        if target:
            from toolscore.report.json_report import ReportSink  # noqa: PLC0415 - only --json

            sinks["report"] = self._made(ReportSink(target, specs, env, engine))
        junit: JunitSink | None = None
        if options.junit_path:
            from toolscore.report.junit import JunitSink  # noqa: PLC0415 - only --junit

            junit = JunitSink(options.junit_path, options.specs_path, specs, env)
            sinks["junit"] = self._made(junit)
        sources, earlier, judgments = inputs, [], None
        if options.saves:
            from toolscore.store.saving import StoreSink  # noqa: PLC0415 - only a saved run

            sources = (
                stack.enter_context(rereadable(inputs[0], CaseError)),
                stack.enter_context(rereadable(inputs[1], OutputError)),
            )
            saving = StoreSink(
                options.db_path, specs, options.specs_path, sources, options.label, self.names
            )
            sinks["store"] = self._made(saving)
            earlier, judgments = saving.earlier, saving.judgments
        elif remote:  # judgments are kept in the store even when the run is not
            from toolscore.store.database import open_store  # noqa: PLC0415

            judgments = stack.enter_context(open_store(options.db_path)).judgments
        if options.otel_path is not None:
            from toolscore.report.otel_events import EventSink  # noqa: PLC0415 - only --emit-otel

            sinks["events"] = self._made(EventSink(options.otel_path))
        if junit is not None:
            junit.read_tags(sources[0])
        ordered = [sinks[name] for name in FINISHING if name in sinks]
        report_lines = any(name != "store" for name in sinks)
        return _Outputs(ordered, "store" in sinks, report_lines, earlier, judgments, sources)

    def _scored(
        self, stack: contextlib.ExitStack, outputs: _Outputs, rubrics: str | None
    ) -> tuple[Summary, Late, list[CaseResult]]:
        """Score on the engine, handing each batch to every sink; then the late pass of
        remote rubrics. Returns the summary, the late entries and the failures kept."""
        options = self.options
        counter = ByteCounter()
        size = input_size(outputs.sources[0])
        sinks = outputs.sinks
        local = ParallelScoring(
            self.specs,
            *outputs.sources,
            options.workers or auto_workers(size),
            want_report=outputs.report_lines,
            want_rows=outputs.rows,
            keep_failures=options.keep_failures,
            counter=counter,
            env=self.env,
            cluster_by=options.cluster_by,
            rubrics=rubrics,
            missing=options.missing,
            choice=options.choice,
        )
        run = self._engine_run(stack, local)
        failures: list[CaseResult] = []
        keep = options.keep_failures
        for outcome in run:
            if self.progress is not None:
                self.progress(Progress(counter.done, size))
            for sink in sinks:
                sink.add(outcome)
            failures.extend(outcome.failures[: keep - len(failures)])
        builder = run.summary()
        late: Late = {}
        if run.pending and builder.rubrics is not None:
            from toolscore.scoring.rubric_run import late_pass  # noqa: PLC0415 - remote rubrics

            judgments = outputs.judgments
            if judgments is None:  # remote rubrics named only by cases' response_rubrics
                from toolscore.store.database import open_store  # noqa: PLC0415

                judgments = stack.enter_context(open_store(options.db_path)).judgments
            late = late_pass(
                self.specs.rubrics, run.pending, builder.rubrics, judgments,
                options.refresh_rubrics,
            )  # fmt: skip
        if self.progress is not None:
            self.progress(Progress(counter.done, size, finished=True))
        return builder.finish(), late, failures

    def _engine_run(self, stack: contextlib.ExitStack, local: ParallelScoring) -> EngineRun:
        """The run to iterate: `local` itself, else the engine's run with its settings."""
        if self.options.engine == "local":
            return local
        from toolscore.engines.ray import ray_scoring  # noqa: PLC0415 - only the ray engine

        address = self.options.address
        return stack.enter_context(
            ray_scoring(local.scorer, self.options.specs_path, self.joined, address)
        )


def _finish(sinks: list[Sink], summary: Summary, late: Late) -> int | None:
    """Finish the sinks in turn, each told the id of the saved run once the store's sink
    has given it; return that id. When one fails, the rest are discarded, and its error
    (a file that cannot be written) says the run was saved, when it was."""
    run_id: int | None = None
    for done, sink in enumerate(sinks):
        try:
            found = sink.finish(summary, late, run_id)
        except BaseException as error:
            for left in sinks[done:]:
                left.discard()
            if isinstance(error, InputError) and run_id is not None:
                saved = f"{error.message} (the run was saved as run {run_id})"
                raise InputError(error.source, saved) from None
            raise
        if found is not None:
            run_id = found
    return run_id


def _is_trace_export(outputs_path: str) -> bool:
    """Whether the outputs were an OpenTelemetry collector export (grouped by trace id)."""
    layout = layout_of(outputs_path)
    return layout is not None and layout.name == "otlp-json"


def optional_environment(
    specs: SpecSet, specs_path: str, env_path: str | None, tool_timeout: float | None
) -> Environment | None:
    """The environment `env_path` names, or None without one (then a `tool_timeout`,
    which only limits replayed calls, is an OptionsError)."""
    if env_path is None:
        if tool_timeout is not None:
            raise OptionsError("--tool-timeout applies to replay: add --env")
        return None
    return environment(specs, specs_path, env_path, tool_timeout)


def environment(
    specs: SpecSet, specs_path: str, env_path: str, tool_timeout: float | None = None
) -> Environment:
    """The store to replay calls against: the spec's `environment` block
    (`SPEC_ENVIRONMENT`), or a file's (a spec file with such a block, or a file holding the
    block itself); `tool_timeout`, when given, replaces the block's `timeout`."""
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
