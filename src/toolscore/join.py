"""Deprecated: the partitions of joined records moved to `toolscore.engines.partitions`; this
name re-exports them for one release (CHANGELOG)."""

import warnings

from toolscore.engines.partitions import (
    Joined,
    joined_records,
    read_joined,
    record_schema,
    write_joined,
)

__all__ = ["Joined", "joined_records", "read_joined", "record_schema", "write_joined"]

warnings.warn(
    "toolscore.join moved to toolscore.engines.partitions; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
