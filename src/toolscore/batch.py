"""Deprecated: the batch interface moved to `toolscore.engines.batch`; this name re-exports it
for one release (CHANGELOG, 0.26)."""

import warnings

from toolscore.engines.batch import (
    BatchOutcome,
    BatchScorer,
    merge_outcomes,
    record_groups,
    write_report,
)

__all__ = ["BatchOutcome", "BatchScorer", "merge_outcomes", "record_groups", "write_report"]

warnings.warn(
    "toolscore.batch moved to toolscore.engines.batch; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
