"""Deprecated: the partitions of joined records moved to `toolscore.engines.partitions`; this
name re-exports them for one release (CHANGELOG)."""

from toolscore.engines import warn_moved
from toolscore.engines.partitions import (
    Joined,
    joined_records,
    read_joined,
    record_schema,
    write_joined,
)

__all__ = ["Joined", "joined_records", "read_joined", "record_schema", "write_joined"]

warn_moved(__name__, "toolscore.engines.partitions")
