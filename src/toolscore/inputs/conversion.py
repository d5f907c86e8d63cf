"""What a converter of a non-JSON-Lines file is asked, in a module below `converted` and the
readers it registers, so that each reader names the type without importing `converted`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["cases", "outputs"]


@dataclass(frozen=True)
class Conversion:
    """What a converter is asked: which kind of file it reads, and the options for it."""

    kind: Kind
    group_by: str | None = None
    """`--group-by`: the key that makes one output of many records (trace exports, MCP
    session logs)."""
