"""Outputs lines that hold a response object or a stream instead of `calls` or a transcript.

The line is the response object itself (its `id` the case's), holds one under `response`, or
holds a stream under `stream` (`responses`, `streams`). As for transcripts, `format` may name
the provider's format and must then agree with the shapes; without it the shape found is
noted (`format detected: openai-chat (ChatCompletion)`). `choice` (an integer from 0) says
which of several choices or candidates to score; the run's `choice` is the default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.core.model import Trajectory
from toolscore.core.values import json_type, show, suggest
from toolscore.errors import OutputError
from toolscore.inputs.formats import FORMATS
from toolscore.inputs.formats.detect import evidence
from toolscore.inputs.formats.responses import Shape, read_response, shape_of
from toolscore.inputs.formats.streams import read_stream, stream_kind
from toolscore.inputs.formats.transcript import Transcript

__all__ = ["read_reply", "read_stream_line", "reply_shape"]

reply_shape = shape_of
"""The kind of response object a value is (`responses.shape_of`), or None."""

STREAMS = (
    "OpenAI ChatCompletionChunk dumps, Anthropic stream events, OpenAI Responses stream events"
)


def _start(
    data: Mapping[str, Any], shape: Shape, what: str, source: str, line: int | None
) -> Transcript:
    """The transcript to read into, its format checked against the one the line names."""
    name = data.get("format")
    if name is None:
        return Transcript(source, line, shape.format, [f"format detected: {shape.format} ({what})"])
    if name not in FORMATS:
        hint = suggest(name, FORMATS) if isinstance(name, str) else ""
        message = f"unknown transcript format {show(name)}{hint}; known: {', '.join(FORMATS)}"
        raise OutputError(source, message, line=line, field="format")
    if name != shape.format:
        message = f"the line's {what} is {shape.format}, but its format is {name!r}"
        raise OutputError(source, message, line=line, field="format")
    return Transcript(source, line, shape.format)


def _choice(
    data: Mapping[str, Any], default: int | None, source: str, line: int | None
) -> int | None:
    """The line's `choice` (an integer from 0), else the run's."""
    if "choice" not in data or data["choice"] is None:
        return default
    choice = data["choice"]
    if type(choice) is not int or choice < 0:
        message = f"must be the index of a choice, an integer from 0, got {show(choice)}"
        raise OutputError(source, message, line=line, field="choice")
    return choice


def _finish(data: Mapping[str, Any], case_id: str, t: Transcript) -> Trajectory:
    """The trajectory read; a text `response` on the line wins over the reply's text."""
    response = data.get("response")
    return t.trajectory(case_id, response if isinstance(response, str) else t.response)


def read_reply(
    data: Mapping[str, Any],
    node: Mapping[str, Any],
    shape: Shape,
    key: str,
    source: str,
    line: int | None,
    choice: int | None,
) -> Trajectory:
    """The trajectory of a line holding the response object `node` under `key` ("": the
    line is the object)."""
    t = _start(data, shape, shape.name, source, line)
    read_response(node, shape, key, t, _choice(data, choice, source, line))
    return _finish(data, data["id"], t)


def read_stream_line(
    data: Mapping[str, Any], case_id: str, source: str, line: int | None, choice: int | None
) -> Trajectory:
    """The trajectory of a line holding a saved stream under `stream`."""
    events = data["stream"]
    if not isinstance(events, list):
        message = f"must be a list of a stream's chunks or events, got {json_type(events)}"
        raise OutputError(source, message, line=line, field="stream")
    kind = stream_kind(events)
    if kind is None:
        found = evidence("messages", events)
        hint = ""
        if found is not None and found[0] != "langchain":  # AIMessageChunks are no messages
            hint = f" (stream holds {found[0]} messages: put them under messages)"
        message = f"no chunk or event names a stream toolscore reads ({STREAMS}){hint}"
        raise OutputError(source, message, line=line, field="stream")
    t = _start(data, kind.shape, kind.name, source, line)
    read_stream(events, kind, "stream", t, _choice(data, choice, source, line))
    return _finish(data, case_id, t)
