"""Produced calls in an order that depends on their content alone, so that a diagnosis breaks
ties between equally good pairings the same way whatever order the agent made the calls in.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence

import orjson

from toolscore.core.model import Call


def canonical_order(calls: Sequence[Call]) -> list[int]:
    """Positions of `calls` sorted by content, so that ties in a diagnosis are broken the same
    way whatever order the agent made the calls in."""
    if len(calls) < 2:
        return list(range(len(calls)))
    return sorted(range(len(calls)), key=lambda j: content_key(calls[j]))


def content_key(call: Call) -> tuple[str, str]:
    """What `canonical_order` sorts by: the tool name, then the arguments as sorted JSON."""
    if call.args is None:
        return call.name, "\x00" + (call.raw_args or "")
    try:
        text = orjson.dumps(call.args, option=orjson.OPT_SORT_KEYS, default=str).decode()
    except orjson.JSONEncodeError:  # nested too deep to write: all such calls tie
        return call.name, "\x01"
    if "null" in text:
        # orjson writes NaN and the infinities as null: the standard writer tells them apart,
        # so that a call holding NaN and one holding null do not tie.
        with contextlib.suppress(RecursionError, TypeError, ValueError):
            text = json.dumps(call.args, sort_keys=True, default=str, separators=(",", ":"))
    return call.name, text
