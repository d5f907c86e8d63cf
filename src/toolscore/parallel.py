"""Scoring on several processes, with the same verdicts, report and summary as one process.

The main process reads both files, joins cases to outputs by id with the same result as
`scoring.join` (`rawjoin`: without parsing the lines), and hands chunks of raw line pairs to
worker processes; each worker parses, scores and tallies its chunk and sends back the report
lines, store rows and a partial summary. Chunks come back in order, so the report lists
cases in the order of the cases file either way. One worker scores in this process.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from toolscore.cases import may_hold_markers, parse_case
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.jsonl import ByteCounter, parse_line
from toolscore.model import MISSING, Case, CaseResult
from toolscore.outputs import parse_output
from toolscore.rawjoin import Aligned, Chunk, joined_chunks
from toolscore.scoring import (
    SummaryBuilder,
    outcome_passed,
    score_case,
    score_trials,
    with_state,
)
from toolscore.specs import SpecSet

if TYPE_CHECKING:
    from concurrent.futures import Future

    from toolscore.rubrics.run import Pending, RubricEntry, RubricRunner
    from toolscore.state import AnyEnvironment as Environment
    from toolscore.store.codec import ResultRow

CHUNK = 2000
"""Cases per chunk: large enough that passing work between processes costs little."""
ALL_RUBRICS = "all"
LOCAL_RUBRICS = "local"
"""What `rubrics=` asks a run to score: every rubric, or the deterministic ones only."""


class ChunkOutcome(NamedTuple):
    """What a worker sends back for one chunk."""

    summary: SummaryBuilder
    report_lines: list[bytes]
    """Each case's report JSON, when the run writes a report."""
    rows: list[ResultRow]
    """Each case's results-store row, when the run is saved."""
    failures: list[CaseResult]
    """The first failing cases, as the terminal prints them: their mismatches without the
    values (an agent's may be nested too deep to send from one process to another)."""
    rubrics: Sequence[tuple[str, list[RubricEntry]]] = ()
    """Each case's rubric entries (case id, entries), when the run is saved and scored some."""
    pending: Sequence[Pending] = ()
    """The targets of remote rubrics, asked once scoring is done (`rubrics.run.run_remote`)."""


LineGroup = tuple[int, bytes, str, Sequence[tuple[int, bytes]]]
"""A case line's number, text and id, and its output lines' numbers and texts (none when
the case has no output, several for trials): the lines share the id they were joined by."""


def _line_groups(chunk: Chunk) -> Iterable[LineGroup]:
    """The case and output lines of a chunk; an aligned chunk's columns are zipped as they
    come (each case with its one output line)."""
    if isinstance(chunk, Aligned):
        # zip of one iterable makes 1-tuples: each case's one (number, line), made in C
        outputs = zip(zip(chunk.out_numbers, chunk.out_lines, strict=True))
        return zip(chunk.numbers, chunk.lines, chunk.ids, outputs, strict=True)
    return [
        (case.line, case.raw, case.id, [(output.line, output.raw) for output in outputs])
        for case, outputs in chunk
    ]


def _load(raw: bytes, number: int, line_id: str, path: str, error: type[InputError]) -> Any:
    """A line parsed in the worker, with the id the main process joined it by checked."""
    data = parse_line(raw, path, number, error, lenient=error is OutputError)
    if data.get("id") != line_id:
        raise error(path, "a line must be a JSON object with one string id", line=number)
    return data


class _WorkerState:
    """What a worker process keeps between chunks: the specs, and the file names for errors."""

    specs: SpecSet
    sources: tuple[str, str]
    env: Environment | None
    cluster_by: str | None
    rubrics: RubricRunner | None


_state = _WorkerState()


def _start_worker(
    specs: SpecSet,
    sources: tuple[str, str],
    env: Environment | None,
    cluster_by: str | None = None,
    rubrics: str | None = None,
) -> None:
    _state.specs = specs
    _state.sources = sources
    _state.env = env
    _state.cluster_by = cluster_by
    _state.rubrics = None
    if rubrics is not None:
        from toolscore.rubrics.run import RubricRunner  # noqa: PLC0415 - only runs with rubrics

        _state.rubrics = RubricRunner(specs, remote=rubrics == ALL_RUBRICS)


def _score_chunk(
    chunk: Chunk, want_report: bool, want_rows: bool, keep_failures: int
) -> ChunkOutcome:
    if _state.env is None and (_state.rubrics is None or not _state.rubrics.has_regex):
        # no call is replayed and no regex searched: nothing to time
        return _score_cases(chunk, want_report, want_rows, keep_failures)
    from toolscore.state.limits import alarms_installed  # noqa: PLC0415 - only replay needs it

    with alarms_installed():  # once a chunk, not once a case (see state.limits)
        return _score_cases(chunk, want_report, want_rows, keep_failures)


def _score_cases(
    chunk: Chunk, want_report: bool, want_rows: bool, keep_failures: int
) -> ChunkOutcome:
    # The report's and the store's code is imported only by runs that write them.
    if want_report:
        from toolscore.report.json_report import case_to_json, plain  # noqa: PLC0415
    if want_rows:
        from toolscore.store.writer import result_row  # noqa: PLC0415
    specs = _state.specs
    cases_source = _state.sources[0]
    summary = SummaryBuilder(specs, _state.cluster_by, cases_source)
    lines: list[bytes] = []
    rows: list[ResultRow] = []
    failures: list[CaseResult] = []
    runner = _state.rubrics
    rubric_rows: list[tuple[str, list[RubricEntry]]] = []
    if runner is not None:
        from toolscore.rubrics.summary import RubricTally  # noqa: PLC0415

        tally = summary.rubrics = RubricTally()
    keep = want_report or want_rows
    for number, raw, line_id, outputs in _line_groups(chunk):
        data = _load(raw, number, line_id, cases_source, CaseError)
        case = parse_case(data, specs, cases_source, number, may_hold_markers(raw))
        results = _score_lines(case, line_id, outputs, summary)
        for result in results:
            entries = runner.run(case, result, tally, keep) if runner is not None else None
            # The store keys rubric rows by case id, unique only without trials.
            if entries and want_rows and result.trial is None:
                rubric_rows.append((case.id, entries))
            if want_report:
                data = case_to_json(result)
                if entries:
                    data["rubrics"] = [entry.to_json() for entry in entries]
                lines.append(orjson.dumps(data, default=plain))
            if want_rows:
                rows.append(result_row(result))
            if len(failures) < keep_failures and not outcome_passed(result):
                failures.append(_without_values(result))
    pending = runner.pending if runner is not None else []
    if runner is not None:
        runner.pending = []
    return ChunkOutcome(summary, lines, rows, failures, rubric_rows, pending)


def _score_lines(
    case: Case, line_id: str, outputs: Sequence[tuple[int, bytes]], summary: SummaryBuilder
) -> Sequence[CaseResult]:
    """The results of a case's output lines (one, or one per trial), counted in `summary`."""
    specs, env = _state.specs, _state.env
    cases_source, outputs_source = _state.sources
    if len(outputs) == 1:
        out_number, out_raw = outputs[0]
        data = _load(out_raw, out_number, line_id, outputs_source, OutputError)
        trajectory = parse_output(data, outputs_source, out_number)
        if trajectory.trial is None:
            # One line, no trial: the usual case, scored without `score_trials` (it runs once
            # per case, so the calls it saves count); the same verdict either way.
            result = score_case(specs, case, trajectory)
            if env is not None:
                result = with_state(env, case, trajectory, result, cases_source)
            if result.state is None:
                summary.add(case, result)  # as `add_case` counts such a case
            else:
                summary.add_case(case, (result,), 1)
            return (result,)
    trajectories = [
        parse_output(
            _load(out_raw, out_number, line_id, outputs_source, OutputError),
            outputs_source,
            out_number,
        )
        for out_number, out_raw in outputs
    ]
    results = score_trials(specs, case, trajectories, env, _state.sources)
    summary.add_case(case, results, len(trajectories))
    return results


def _without_values(result: CaseResult) -> CaseResult:
    mismatches = tuple(m._replace(expected=MISSING, produced=MISSING) for m in result.mismatches)
    return result._replace(calls=(), mismatches=mismatches)


class ParallelScoring:
    """A scoring run over files on `workers` processes (in this one for a single worker);
    iterate it for chunk outcomes in case order, then ask for `summary()` (a `SummaryBuilder`
    merged from every chunk)."""

    def __init__(
        self,
        specs: SpecSet,
        cases_path: str,
        outputs_path: str,
        workers: int,
        *,
        want_report: bool = False,
        want_rows: bool = False,
        keep_failures: int = 0,
        counter: ByteCounter | None = None,
        chunk_size: int = CHUNK,
        env: Environment | None = None,
        cluster_by: str | None = None,
        rubrics: str | None = None,
    ) -> None:
        self.specs = specs
        self.rubrics = rubrics if specs.rubric_uses else None
        """`ALL_RUBRICS`, `LOCAL_RUBRICS`, or None (rubrics are not scored)."""
        self.sources = (cases_path, outputs_path)
        self.workers = max(1, workers)
        self.want_report = want_report
        self.want_rows = want_rows
        self.keep_failures = keep_failures
        self.counter = counter
        self.chunk_size = chunk_size
        self.env = env
        self.cluster_by = cluster_by
        self._summary = SummaryBuilder(specs, cluster_by, cases_path)
        if self.rubrics is not None:
            from toolscore.rubrics.summary import RubricTally  # noqa: PLC0415

            self._summary.rubrics = RubricTally()
        self.pending: list[Pending] = []
        """Every chunk's remote rubric targets, in case order (complete after iteration)."""

    def _chunks(self) -> Iterator[Chunk]:
        cases_path, outputs_path = self.sources
        return joined_chunks(
            cases_path,
            outputs_path,
            self.chunk_size,
            (CaseError, OutputError),
            self._unmatched,
            self.counter,
        )

    def _unmatched(self, ids: list[str]) -> None:
        self._summary.unmatched_outputs = len(ids)

    def __iter__(self) -> Iterator[ChunkOutcome]:
        wants = (self.want_report, self.want_rows, self.keep_failures)
        if self.workers == 1:
            _start_worker(self.specs, self.sources, self.env, self.cluster_by, self.rubrics)
            for chunk in self._chunks():
                yield self._merged(_score_chunk(chunk, *wants))
            return
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - only for workers

        with ProcessPoolExecutor(
            self.workers,
            initializer=_start_worker,
            initargs=(self.specs, self.sources, self.env, self.cluster_by, self.rubrics),
        ) as pool:
            waiting: deque[Future[ChunkOutcome]] = deque()
            for chunk in self._chunks():
                waiting.append(pool.submit(_score_chunk, chunk, *wants))
                if len(waiting) > 2 * self.workers:  # bounded: memory stays flat
                    yield self._merged(waiting.popleft().result())
            while waiting:
                yield self._merged(waiting.popleft().result())

    def _merged(self, outcome: ChunkOutcome) -> ChunkOutcome:
        self._summary.merge(outcome.summary)
        self.pending.extend(outcome.pending)
        return outcome

    def summary(self) -> SummaryBuilder:
        """Every chunk's tallies merged (complete once iteration has finished)."""
        return self._summary


def default_workers() -> int:
    """The number of cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
