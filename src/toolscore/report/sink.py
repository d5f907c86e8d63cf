"""Where a scoring run's outcomes go: one protocol for every output a run writes.

The report JSON, JUnit XML, OpenTelemetry events (here, in `report/`), the HTML page
(`html_report.sink`) and the results store (`store.saving`) each implement `Sink`; the run
(`toolscore.run`) makes the ones it was asked for, hands each batch's outcome to every one,
then finishes them in turn, or discards them all when anything fails, so that no output is
left half-written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from toolscore.rubrics.entries import RubricEntry
    from toolscore.scoring.summary import Summary

Late = Mapping[str, Sequence["RubricEntry"]]
"""The remote rubrics' entries by case id, decided once every case was scored."""


class Scored(Protocol):
    """What one batch of a run gives its sinks (an engine's `engines.batch.BatchOutcome`)."""

    @property
    def report_lines(self) -> Sequence[bytes]:
        """Each case's report JSON (when some sink wants it)."""

    @property
    def rows(self) -> Sequence[Any]:
        """Each case's results-store row (`store.codec.ResultRow`, when the run is saved)."""

    @property
    def rubrics(self) -> Sequence[tuple[str, list[RubricEntry]]]:
        """Each case's rubric entries by case id (when the run is saved)."""


class Sink(Protocol):
    """An output of a run. Making it checks its target (a bad path fails before scoring);
    `add` takes each batch in case order; `finish` writes the output whole, given the run's
    summary, the late rubric entries and the id of the saved run (None when it was not, or
    not yet, saved), and returns the id of the run it saved itself (the store's sink) or
    None; `discard` drops whatever was gathered, writing nothing (it may be called more than
    once, and after a `finish` that failed)."""

    def add(self, outcome: Scored) -> None:
        """Take one batch's outcome."""

    def finish(self, summary: Summary, late: Late, run_id: int | None) -> int | None:
        """Write the output whole."""

    def discard(self) -> None:
        """Write nothing, and remove what was spooled."""
