"""Deprecated: the batch interface moved to `toolscore.engines.batch`; this name re-exports it
for one release (CHANGELOG)."""

from toolscore.engines import warn_moved
from toolscore.engines.batch import (
    BatchOutcome,
    BatchScorer,
    merge_outcomes,
    record_groups,
    write_report,
)

__all__ = ["BatchOutcome", "BatchScorer", "merge_outcomes", "record_groups", "write_report"]

warn_moved(__name__, "toolscore.engines.batch")
