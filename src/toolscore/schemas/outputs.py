"""The schema of one outputs line (docs/formats.md 4), built from `inputs.outputs.LINE_KEYS`,
`inputs.output_turns.TURN_ENTRY_KEYS`, the transcript formats (`FORMATS`, `TRANSCRIPT_KEYS`)
and the trial bounds.

It checks the line's structure, the harness's part, which the reader checks as input: the
`id`, `calls` a list, each of `turns` an object with `calls`, a known `format`, a transcript
key holding a list. What is inside a call or a transcript came from the agent and is never
an input error, so the schema leaves it open; so are keys no reader uses (a provider's
response object may be the line itself), which the reader keeps and counts."""

from __future__ import annotations

from toolscore.inputs.formats import FORMATS, KEYS, TRANSCRIPT_KEYS
from toolscore.inputs.output_turns import TURN_ENTRY_KEYS
from toolscore.inputs.outputs import LINE_KEYS
from toolscore.inputs.trials import MAX_TRIAL
from toolscore.schemas.rules import Schema

PRODUCED_CALL: Schema = {
    "description": "one call as the agent made it (anything inside is scored, never refused)",
    "properties": {
        "name": {"description": "the tool's name"},
        "args": {"description": "an object, or the provider's JSON text"},
        "id": {"description": "the call's id"},
        "result": {"description": "what the tool returned"},
        "error": {"description": "the tool's error, in place of a result"},
    },
    "not": {"required": ["result", "error"]},
}

_NOT_NULL: Schema = {"not": {"type": "null"}}
"""A value given (on a line, null is as good as absent)."""
_CALLS: Schema = {"type": ["array", "null"], "items": {"$ref": "#/$defs/call"}}

LINE_KEY_SCHEMAS: dict[str, Schema] = {
    "id": {"type": "string", "minLength": 1, "description": "the id of the case"},
    "calls": {**_CALLS, "description": "the calls in the order the agent made them"},
    "response": {"description": "the agent's final text (or a provider's response object)"},
    "trial": {
        "anyOf": [
            {"type": "integer", "minimum": -MAX_TRIAL, "maximum": MAX_TRIAL},
            {"type": "string", "minLength": 1},
            {"type": "null"},
        ],
        "description": "which run of the case this line is",
    },
    "format": {"enum": [*FORMATS, None], "description": "the transcript's format"},
    "choice": {"type": ["integer", "null"], "minimum": 0},
    "stream": {"type": ["array", "null"], "description": "a saved stream's chunks or events"},
    "turns": {
        "type": ["array", "null"],
        "minItems": 1,
        "items": {"$ref": "#/$defs/turn"},
        "description": "each user turn's calls and response",
    },
    **{key: {"type": ["array", "null"], "description": "a transcript"} for key in TRANSCRIPT_KEYS},
    "spans": {"type": ["array", "object", "null"], "description": "spans, or an OTLP export"},
}

TURN_ENTRY_SCHEMAS: dict[str, Schema] = {
    "calls": _CALLS,
    "response": {"description": "the agent's text in this turn"},
}


def _given(*keys: str) -> Schema:
    """A line on which each of `keys` is present and not null."""
    return {"required": list(keys), "properties": dict.fromkeys(keys, _NOT_NULL)}


def _one_transcript() -> list[Schema]:
    """A line holds one transcript, never beside `calls`, under a key its `format` reads."""
    found: list[Schema] = [{"not": _given("calls", key)} for key in TRANSCRIPT_KEYS]
    found.extend(
        {"not": _given(first, second)}
        for n, first in enumerate(TRANSCRIPT_KEYS)
        for second in TRANSCRIPT_KEYS[n + 1 :]
    )
    for name, keys in KEYS.items():
        others = [key for key in TRANSCRIPT_KEYS if key not in keys]
        found.append(
            {
                "if": {"required": ["format"], "properties": {"format": {"const": name}}},
                "then": {"allOf": [{"not": _given(key)} for key in others]},
            }
        )
    return found


def outputs_schema() -> Schema:
    """The JSON Schema of one outputs line."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "toolscore output line",
        "description": "One line of a toolscore outputs file (docs/formats.md 4): what the "
        "agent did for one case, as calls, a transcript, a response object, a stream or "
        "turns.",
        "type": "object",
        "required": ["id"],
        "properties": {key: LINE_KEY_SCHEMAS.get(key, {}) for key in sorted(LINE_KEYS)},
        "allOf": [
            {"not": _given("calls", "turns")},
            {"if": _given("turns"), "then": {"properties": {"response": {"type": "null"}}}},
            *_one_transcript(),
        ],
        "$defs": {
            "call": PRODUCED_CALL,
            "turn": {
                "type": "object",
                "required": ["calls"],
                "properties": {
                    key: TURN_ENTRY_SCHEMAS.get(key, {}) for key in sorted(TURN_ENTRY_KEYS)
                },
                "additionalProperties": False,
            },
        },
    }
