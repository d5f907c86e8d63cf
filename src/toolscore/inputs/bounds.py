"""The file readers' limits, each a default that an environment variable may change.

One place reads them, so that every such variable takes the same form (a whole number above
0) and a wrong one is refused in the same one line, naming the file being read.
"""

from __future__ import annotations

import os

from toolscore.errors import InputError

MAX_LINE_BYTES = 64 << 20
"""The longest line a JSON Lines reader takes by default (64 MiB): far past any case or
agent's output, and a bound on what one line can make toolscore hold."""
LINE_BYTES_VAR = "TOOLSCORE_MAX_LINE_BYTES"
"""The environment variable that sets another line cap, in bytes."""


def env_limit(name: str, default: int, source: str = "<environment>", unit: str = "") -> int:
    """$`name` as a whole number above 0, else `default` when it is unset or empty; an input
    error naming `source` (the file about to be read) when it is anything else."""
    given = os.environ.get(name, "").strip()
    if not given:
        return default
    if not given.isdigit() or int(given) == 0:
        units = f" of {unit}" if unit else ""
        raise InputError(source, f"${name} must be a whole number{units} above 0, got {given!r}")
    return int(given)


def max_line_bytes(source: str = "<environment>") -> int:
    """The line cap: $TOOLSCORE_MAX_LINE_BYTES, else 64 MiB."""
    return env_limit(LINE_BYTES_VAR, MAX_LINE_BYTES, source, "bytes")
