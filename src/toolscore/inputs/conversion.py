"""What a converter of a non-JSON-Lines file is asked, in a module below `converted` and the
readers it registers, so that each reader names the type without importing `converted`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

Kind = Literal["cases", "outputs"]


@dataclass(frozen=True)
class Conversion:
    """What a converter is asked: which kind of file it reads, and the options for it."""

    kind: Kind
    group_by: str | None = None
    """`--group-by`: the key that makes one output of many records (trace exports, MCP
    session logs)."""


def first_object(head: bytes, first_key: str) -> Mapping[str, Any] | None:
    """The first line of a file's `head` as an object, for a converter's sniffer; None when
    it is no object. A first line longer than the head cannot be parsed: it counts as
    `{first_key: None}` when it starts with that key (which the file's writer puts first)."""
    text = head.lstrip()
    if not text.startswith(b"{"):
        return None
    end = text.find(b"\n")
    try:
        first = orjson.loads(text if end == -1 else text[:end])
    except orjson.JSONDecodeError:
        return {first_key: None} if text.startswith(b'{"' + first_key.encode() + b'"') else None
    return first if isinstance(first, dict) else None
