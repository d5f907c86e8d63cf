"""Readers that turn provider transcripts into the same `Trajectory` as a plain `calls` list.

An outputs line may carry, instead of `calls`, a transcript: `messages` (OpenAI Chat
Completions, Anthropic Messages, Gemini contents or Inspect AI chat messages), `contents`
(Gemini), `items` (OpenAI Responses API), `spans` / `resourceSpans` (OpenTelemetry GenAI,
OpenLLMetry and OpenInference attributes alike: `otel.py`) or `mcp` (an MCP session's JSON-RPC
messages: `mcp.py`). `format` names it; without it the
format is detected from the shapes and the detection is noted. Each call gets its provider id,
its result (linked by id), and its `turn`: the number of genuine user messages before it, so
that the scorer can keep the agent's answer to the last one.

A line whose transcript is not one (not a list, two transcripts, a format its shapes
contradict) is an input error; a part inside it that its reader cannot understand is counted
on the trajectory as unread, and the case cannot pass (`transcript.py`).

A provider's response object (one assistant turn) or a saved stream is read by the same
readers, through `responses`, `streams` and `replies`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Final

from toolscore.core.model import Trajectory
from toolscore.core.values import suggest
from toolscore.errors import OutputError
from toolscore.inputs.calls import json_text
from toolscore.inputs.formats.detect import detect, evidence

FORMATS: Final = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "otel",
    "inspect",
    "langchain",
    "mcp",
)

TRANSCRIPT_KEYS: Final = ("messages", "items", "contents", "spans", "resourceSpans", "mcp")
"""The keys that can hold a transcript, one per line (LangChain messages under `messages`)."""
_TRANSCRIPT_KEY_SET: Final = frozenset(TRANSCRIPT_KEYS)

READERS: Final[Mapping[str, str]] = {
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "otel": "otel",
    "inspect": "inspect_messages",
    "langchain": "langchain",
    "mcp": "mcp",
}
"""Each format's reader: the module of this package whose `read` reads it, imported when a
line holds that format (a file of plain `calls` lines loads none of them)."""

KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    "openai-chat": ("messages",),
    "openai-responses": ("items", "messages"),
    "anthropic": ("messages",),
    "gemini": ("contents", "messages"),
    "otel": ("spans", "resourceSpans"),
    "inspect": ("messages",),
    "langchain": ("messages",),
    "mcp": ("mcp", "messages"),
}
"""Where each format's transcript may be found on a line."""

__all__ = ["FORMATS", "has_transcript", "read_transcript"]


def has_transcript(data: Mapping[str, Any]) -> bool:
    """True when an outputs line carries a transcript instead of a `calls` list."""
    if data.keys().isdisjoint(_TRANSCRIPT_KEY_SET):
        return False  # the common case, a `calls` line, decided without a loop in Python
    return any(data.get(key) is not None for key in TRANSCRIPT_KEYS)


def read_transcript(
    data: Mapping[str, Any], source: str = "<outputs>", line: int | None = None
) -> Trajectory:
    """The trajectory of an outputs line holding a transcript; OutputError when the line's
    transcript does not fit its format (never for what the agent put in a call)."""
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise OutputError(
            source, "every output needs the string id of its case", line=line, field="id"
        )
    key = _transcript_key(data, source, line)
    node = data[key]
    notes = []
    name = data.get("format")
    if name is None:
        name = detect(key, node)
        notes.append(f"format detected: {name}")
    else:
        _check_format(name, key, node, source, line)
    from toolscore.inputs.formats.transcript import Transcript  # noqa: PLC0415 - as a reader

    transcript = Transcript(source, line, name, notes)
    importlib.import_module(f"{__name__}.{READERS[name]}").read(node, key, transcript)
    response = data.get("response")
    if response is None:
        response = transcript.response
    elif not isinstance(response, str):
        response = json_text(response)
    return transcript.trajectory(case_id, response)


def _transcript_key(data: Mapping[str, Any], source: str, line: int | None) -> str:
    present = [key for key in TRANSCRIPT_KEYS if data.get(key) is not None]
    if not present:
        keys = ", ".join(TRANSCRIPT_KEYS)
        raise OutputError(source, f"no transcript ({keys})", line=line, field="messages")
    if len(present) > 1:
        message = f"a line holds one transcript, and this one already has {present[0]!r}"
        raise OutputError(source, message, line=line, field=present[1])
    if data.get("calls") is not None:
        message = f"give either calls or a transcript ({present[0]!r}), not both"
        raise OutputError(source, message, line=line, field="calls")
    return present[0]


def _check_format(name: Any, key: str, node: Any, source: str, line: int | None) -> None:
    if name not in FORMATS:
        hint = suggest(name, FORMATS) if isinstance(name, str) else ""
        message = f"unknown transcript format {name!r}{hint}; known: {', '.join(FORMATS)}"
        raise OutputError(source, message, line=line, field="format")
    if key not in KEYS[name]:
        message = f"format {name!r} reads {' or '.join(KEYS[name])}, not {key!r}"
        raise OutputError(source, message, line=line, field=key)
    found = evidence(key, node)
    if found and found[0] != name:
        message = f"written as {found[0]}, but the line's format is {name!r}"
        raise OutputError(source, message, line=line, field=found[1])
