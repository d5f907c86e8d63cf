"""`score --save` / `--db`: the run saved in the results store as it is scored.

The store's output of a run (a `report.sink.Sink`): making it opens the store and begins
the run (the inputs are hashed first, and stored with the run last); each batch's rows and
rubric entries are staged; `finish` stores the run whole, with the remote rubrics' late
entries, and gives its id; `discard` stores nothing.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toolscore._version import __version__
from toolscore.stats.intervals import percent
from toolscore.store.database import PreviousScore, open_store
from toolscore.store.integrity import is_damage
from toolscore.store.meta import RunMeta

if TYPE_CHECKING:
    from toolscore.report.sink import Late, Scored
    from toolscore.rubrics.cache import JudgmentCache
    from toolscore.scoring.summary import Summary
    from toolscore.specs.loading import SpecSet


class StoreSink:
    """A run being saved in the store at `db_path` (None: the default store).

    `sources` are the inputs as they are scored (files that can be read twice), `names` the
    paths the run records for them (default: `sources`, when the inputs are conversions of
    the files the user gave). `earlier` holds lines about earlier runs of the same inputs
    under other specs; `judgments` is the store's cache of remote rubrics' judgments.
    """

    def __init__(
        self,
        db_path: str | Path | None,
        specs: SpecSet,
        specs_path: str,
        sources: tuple[str, str],
        label: str | None,
        names: tuple[str, str] | None = None,
    ) -> None:
        self._stack = contextlib.ExitStack()
        try:
            store = self._stack.enter_context(open_store(db_path))
            meta = RunMeta.from_files(
                specs, specs_path, *sources, label, __version__, names=names or sources
            )
            try:
                previous = store.previous_scores(meta.cases_file.sha256, meta.outputs_file.sha256)
            except sqlite3.DatabaseError as error:
                if not is_damage(error):
                    raise
                raise store.damage_error(error) from None
            self.earlier: list[str] = describe_previous(previous, specs)
            self.writer = self._stack.enter_context(store.begin_run(meta))
            self.judgments: JudgmentCache = store.judgments
        except BaseException:
            self._stack.close()
            raise

    def add(self, outcome: Scored) -> None:
        """Stage the batch's rows and rubric entries."""
        self.writer.add_rows(list(outcome.rows))
        self.writer.add_rubrics(outcome.rubrics)

    def finish(self, summary: Summary, late: Late, run_id: int | None) -> int:
        """Store the run with its late rubric entries; return its id."""
        try:
            self.writer.add_rubrics(late.items())
            return self.writer.finish(summary)
        finally:
            self._stack.close()

    def discard(self) -> None:
        """Store nothing, and close the store."""
        self._stack.close()


def describe_previous(previous: Sequence[PreviousScore], specs: SpecSet) -> list[str]:
    """Lines telling that these outputs were already scored under other specs, with the old
    numbers, for `score` to print (empty when every earlier run used the same specs)."""
    lines = []
    for earlier in previous:
        if earlier.specs_sha256 == specs.sha256:
            continue
        label = earlier.specs_version or "unversioned"
        accuracy = percent(earlier.accuracy)
        lines.append(
            f"these outputs were scored before under other specs: run {earlier.run_id} "
            f"(specs version {label}, sha256 {earlier.specs_sha256[:12]}): accuracy {accuracy}"
        )
    return lines
