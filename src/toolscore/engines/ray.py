"""`score --engine ray`: joined records scored on a Ray cluster, with the local run's report.

Ray Data reads the parts of a join (`toolscore.engines.partitions`), and `map_batches` hands
batches of records to a pool of actors; each actor loads and compiles the spec once (and opens the
environment once, for `--env`) and scores its batches with a `batch.BatchScorer`. The driver
puts the batches' outcomes back in cases-file order (each record carries its place, `seq`)
and merges their summaries, so the report, the summary and the saved rows are the local
run's. An actor that dies is restarted by Ray and its batch scored again (Ray Data's actors
retry by default); an input error in a batch comes back as the batch's outcome and fails
the run with that error. Ray is imported here only, when the engine runs.
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscore.engines.batch import BatchOutcome, BatchScorer, EngineRun
from toolscore.engines.partitions import Joined
from toolscore.errors import InputError
from toolscore.inputs.join import CHUNK_BYTES

if TYPE_CHECKING:
    from toolscore.state import AnyEnvironment as Environment

BATCH = 2000
"""Records per batch an actor scores at once (as `parallel.CHUNK`), fewer for long records
(`batch_records`)."""
EXIT_ONCE = "TOOLSCORE_RAY_EXIT_ONCE"
"""Fault injection for tests: a file path; the first actor to score a batch while the file
does not exist creates it and ends its process at once (Ray must restart it and retry)."""
LOCAL_HOST = "127.0.0.1"
LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch between a machine of its own ("0": every process on the loopback address,
as on Windows and macOS) and a node of a cluster (Linux's default)."""


def batch_records(joined: Joined, most: int = BATCH, budget: int = CHUNK_BYTES) -> int:
    """Records per batch: `most`, or fewer when the join's records are long, so that a batch
    holds about `budget` bytes at most (as the local engine's chunks; Ray batches by count,
    so the count comes from the parts' mean record size)."""
    if joined.cases_count == 0:
        return most
    size = sum(os.path.getsize(path) for path in joined.paths() if os.path.exists(path))
    mean = max(1, size // joined.cases_count)
    return max(1, min(most, budget // mean))


class _ScoreBatches:
    """A Ray actor's scorer: made once per actor, called once per batch of records."""

    def __init__(
        self,
        specs_path: str,
        specs_sha256: str,
        settings: dict[str, Any],
        env: Environment | None,
        parts: str,
        exit_once: str | None = None,
    ) -> None:
        from toolscore.specs.loading import load_specs  # noqa: PLC0415 - loaded once per actor

        self.parts = parts
        self.exit_once = exit_once
        self.failure: InputError | None = None
        """Why this actor cannot score (its node's spec file), sent back for each batch."""
        try:
            specs = load_specs(specs_path)
        except InputError as error:
            self.failure = error
            return
        if specs.sha256 != specs_sha256:
            self.failure = InputError(specs_path, "differs on a Ray node from the driver's")
        self.scorer = BatchScorer(specs, env=env, **settings)

    def __call__(self, batch: Any) -> dict[str, Any]:
        import numpy as np  # noqa: PLC0415 - Ray Data's own dependency

        if self.exit_once is not None and not os.path.exists(self.exit_once):
            Path(self.exit_once).touch()
            os._exit(1)  # a worker dying mid-run, for the fault test
        held = np.empty(1, dtype=object)  # one object: np.array would unpack a tuple
        try:
            if self.failure is not None:
                raise self.failure
            records = _records(batch, self.parts)
            held[0] = self.scorer.score_records(records)
        except InputError as error:
            # Sent back as data: Ray would keep only its text, wrapped in its own errors.
            held[0] = error
            records = []
        first = records[0]["seq"] if records else -1
        return {
            "first": np.array([first], dtype=np.int64),
            "count": np.array([len(records)], dtype=np.int64),
            "outcome": held,
        }


def _records(batch: Any, parts: str) -> list[dict[str, Any]]:
    """A batch (an Arrow table) as joined records: Parquet columns, or JSON Lines text."""
    if "text" not in batch.column_names:
        rows: list[dict[str, Any]] = batch.to_pylist()
        return rows
    import orjson  # noqa: PLC0415

    records = []
    for text in batch.column("text").to_pylist():
        try:
            record = orjson.loads(text)
        except orjson.JSONDecodeError as error:
            raise InputError(parts, f"a part holds a line that is not JSON: {error.msg}") from None
        if type(record) is not dict or "seq" not in record:
            raise InputError(parts, "a part holds a line that is not a joined record")
        records.append(record)
    return records


class RayScoring(EngineRun):
    """A scoring run on Ray over a join: iterate it for batch outcomes in cases-file order
    (as `engines.local.ParallelScoring`), then ask for `summary()`.

    `scorer` gives the run's settings (the actors build their own from the spec file at
    `specs_path`); `address` is a running cluster's (`ray.init`'s), None to start a local
    one on this machine's cores (`num_cpus` limits it), stopped when the run ends.
    """

    engine = "ray"

    def __init__(
        self,
        scorer: BatchScorer,
        specs_path: str,
        joined: Joined,
        *,
        address: str | None = None,
        num_cpus: int | None = None,
        batch_size: int = BATCH,
    ) -> None:
        super().__init__(scorer)
        self.specs_path = specs_path
        self.joined = joined
        self.address = address
        self.num_cpus = num_cpus
        self.batch_size = batch_size
        self._summary.set_unmatched(joined.unmatched_output_ids, joined.unmatched_outputs)

    def _outcomes(self) -> Iterator[BatchOutcome]:
        ray = _import_ray(local=self.address is None)

        # Ray's notes to its own API's users (deprecations) are not this run's to show.
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ray(\.|$)")
        started = not ray.is_initialized()
        if started:
            start_ray(self.address, self.num_cpus)
        try:
            yield from self._in_order(self._batches())
        finally:
            if started:
                ray.shutdown()

    def _batches(self) -> Iterator[tuple[int, int, BatchOutcome]]:
        import ray.data  # noqa: PLC0415

        logging.getLogger("ray.data").setLevel(logging.ERROR)  # the terminal is toolscore's
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True  # only fewer outcomes wait
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        paths = self.joined.paths()
        # Reading is light: every core is left to the actors.
        if self.joined.format == "parquet":
            dataset = ray.data.read_parquet(paths, num_cpus=0)
        else:
            dataset = ray.data.read_text(paths, num_cpus=0)
        scorer = self.scorer
        cores = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        actors = max(1, int(cores))
        arguments = (
            self.specs_path,
            scorer.specs.sha256,
            scorer.settings(),
            scorer.env,
            str(self.joined.directory),
            os.environ.get(EXIT_ONCE),
        )
        scored = dataset.map_batches(
            _ScoreBatches,
            fn_constructor_args=arguments,
            batch_size=batch_records(self.joined, self.batch_size),
            batch_format="pyarrow",
            compute=_pool(ray.data.ActorPoolStrategy, actors, self.joined.format),
            num_cpus=1,
        )
        for row in scored.iter_rows():
            if isinstance(row["outcome"], InputError):
                raise row["outcome"]
            yield int(row["first"]), int(row["count"]), row["outcome"]

    def _in_order(
        self, outcomes: Iterator[tuple[int, int, BatchOutcome]]
    ) -> Iterator[BatchOutcome]:
        """The outcomes in cases-file order."""
        waiting: list[tuple[int, int, int, BatchOutcome]] = []
        expected = 0
        for arrival, (first, count, outcome) in enumerate(outcomes):
            if count:
                heapq.heappush(waiting, (first, arrival, count, outcome))
            while waiting and waiting[0][0] == expected:
                _, _, done, ready = heapq.heappop(waiting)
                expected += done
                yield ready
        if waiting or expected != self.joined.cases_count:
            raise RuntimeError(
                f"Ray returned {expected} of {self.joined.cases_count} cases in order"
            )


def _pool(strategy: Any, actors: int, fmt: str) -> Any:
    """One actor a core; a Parquet read's pool grows from one actor, so that a core stays
    free for the task listing its files (else it would wait on the actors for ever)."""
    if fmt == "parquet":
        return strategy(min_size=1, max_size=actors)
    return strategy(size=actors)


def _import_ray(local: bool) -> Any:
    """Ray, imported; for a `local` cluster started by this process, told first to have
    its processes listen on the loopback address only (it reads the switch on import)."""
    if local and "ray" not in sys.modules:
        os.environ.setdefault(LOCAL_ONLY, "0")
    import ray  # noqa: PLC0415 - the `ray` extra, only for this engine

    return ray


def start_ray(address: str | None, num_cpus: int | None = None) -> None:
    """Connect to the cluster at `address`, or start a local one that listens on this
    machine's loopback address only (no dashboard)."""
    ray = _import_ray(local=address is None)

    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address is not None:
        ray.init(address=address, **quiet)
        return
    ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address=LOCAL_HOST, **quiet)


@contextlib.contextmanager
def ray_scoring(
    scorer: BatchScorer,
    specs_path: str,
    joined: Joined | None,
    address: str | None = None,
) -> Iterator[RayScoring]:
    """A run on Ray over `joined`, or, without one, over a join of the scorer's two files
    made first in a temporary directory (removed afterwards: on a cluster, whose nodes
    cannot see this machine's files, join to shared storage first with `toolscore join`)."""
    if joined is not None:
        yield RayScoring(scorer, specs_path, joined, address=address)
        return
    from toolscore.engines.partitions import write_joined  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="toolscore-join-") as directory:
        made = write_joined(*scorer.sources, directory)
        yield RayScoring(scorer, specs_path, made, address=address)
