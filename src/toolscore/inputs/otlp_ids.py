"""OTLP trace and span ids, read as the lowercase hex that OTLP JSON writes.

OTLP JSON writes a trace id as 32 hex digits and a span id as 16; protobuf's own JSON mapping
of the same messages writes them as base64 bytes (24 and 12 characters, padded), and some
exporters write that. Both name the same span, so both are read, to the hex that toolscore
reports and links its OpenTelemetry events with.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

TRACE_ID_HEX = 32
SPAN_ID_HEX = 16
_URL_SAFE = str.maketrans("-_", "+/")


def hex_id(value: Any, length: int) -> str | None:
    """`value` as an id of `length` hex digits: hex (with or without `0x`, any case) or base64
    (standard or URL-safe, padded or not); None when it is neither, or all zeros (OTLP's "no
    id")."""
    if not isinstance(value, str):
        return None
    text = value.removeprefix("0x").lower()
    if len(text) == length and not text.strip("0123456789abcdef"):
        return text if text.strip("0") else None
    decoded = _from_base64(value, length // 2)
    return decoded if decoded is not None and decoded.strip("0") else None


def _from_base64(text: str, size: int) -> str | None:
    """The hex of `text` read as base64 of `size` bytes, None if it is not that."""
    body = text.rstrip("=")
    if body != text and len(text) % 4:
        return None  # padding that does not make whole groups of four
    body = body.translate(_URL_SAFE)
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size else None
