"""Scoring on several processes, with the same verdicts, report and summary as one process.

The main process reads both files, joins cases to outputs by id with the same result as
`scoring.join` (`rawjoin`: without parsing the lines), and hands chunks of raw line pairs to
worker processes; each worker parses, scores and tallies its chunk with a
`batch.BatchScorer` (as every engine does) and sends back the report lines, store rows and
a partial summary. Chunks come back in order, so the report lists
cases in the order of the cases file either way. One worker scores in this process.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from toolscore.engines.batch import (
    ALL_RUBRICS,
    LOCAL_RUBRICS,
    BatchOutcome,
    BatchScorer,
    EngineRun,
    LineGroup,
)
from toolscore.errors import CaseError, OutputError
from toolscore.inputs.join import CHUNK_BYTES, Aligned, Chunk, joined_chunks
from toolscore.inputs.jsonl import ByteCounter
from toolscore.specs.loading import SpecSet

if TYPE_CHECKING:
    from concurrent.futures import Future

    from toolscore.state import AnyEnvironment as Environment

__all__ = ["ALL_RUBRICS", "LOCAL_RUBRICS", "ChunkOutcome", "ParallelScoring", "default_workers"]

CHUNK = 2000
"""Cases per chunk: large enough that passing work between processes costs little. A chunk
also ends at `join.CHUNK_BYTES` of case and output lines, so long lines do not make it big."""

ChunkOutcome = BatchOutcome
"""What a worker sends back for one chunk (the batch interface's outcome)."""


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


_scorer: BatchScorer | None = None
"""The scorer a worker process keeps between chunks (made once, by `_start_worker`)."""


def _start_worker(scorer: BatchScorer) -> None:
    global _scorer  # noqa: PLW0603 - one per worker process, set by its initializer
    _scorer = scorer


def _score_chunk(chunk: Chunk) -> ChunkOutcome:
    assert _scorer is not None, "the worker was started without a scorer"
    return _scorer.score_groups(_line_groups(chunk))


class ParallelScoring(EngineRun):
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
        chunk_bytes: int = CHUNK_BYTES,
        env: Environment | None = None,
        cluster_by: str | None = None,
        rubrics: str | None = None,
        missing: str = "fail",
        choice: int | None = None,
    ) -> None:
        self.sources = (cases_path, outputs_path)
        self.workers = max(1, workers)
        self.counter = counter
        self.chunk_size = chunk_size
        self.chunk_bytes = chunk_bytes
        scorer = BatchScorer(
            specs,
            self.sources,
            env,
            cluster_by=cluster_by,
            rubrics=rubrics if specs.rubrics else None,  # None: rubrics are not scored
            want_report=want_report,
            want_rows=want_rows,
            keep_failures=keep_failures,
            missing=missing,
            choice=choice,
        )
        super().__init__(scorer)

    def _chunks(self) -> Iterator[Chunk]:
        cases_path, outputs_path = self.sources
        return joined_chunks(
            cases_path,
            outputs_path,
            self.chunk_size,
            (CaseError, OutputError),
            self._unmatched,
            self.counter,
            self.chunk_bytes,
        )

    def _unmatched(self, ids: list[str]) -> None:
        self._summary.set_unmatched(ids)

    def _outcomes(self) -> Iterator[ChunkOutcome]:
        if self.workers == 1:
            for chunk in self._chunks():
                yield self.scorer.score_groups(_line_groups(chunk))
            return
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - only for workers

        with ProcessPoolExecutor(
            self.workers, initializer=_start_worker, initargs=(self.scorer,)
        ) as pool:
            waiting: deque[Future[ChunkOutcome]] = deque()
            for chunk in self._chunks():
                waiting.append(pool.submit(_score_chunk, chunk))
                if len(waiting) > 2 * self.workers:  # bounded: memory stays flat
                    yield waiting.popleft().result()
            while waiting:
                yield waiting.popleft().result()


def default_workers() -> int:
    """The number of cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
