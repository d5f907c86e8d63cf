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
from toolscore.inputs.formats.responses import (
    AI_MESSAGE,
    CHAT_COMPLETION,
    GENERATE_CONTENT_RESPONSE,
    LANGCHAIN_AI,
    MESSAGE,
    PROMPT_FEEDBACK,
    RESPONSE,
    SHAPES,
)
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
    "format": {
        "description": "the transcript's format (read with a transcript, a response "
        "object or a stream)"
    },
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


def _is(key: str, value: object) -> Schema:
    return {"required": [key], "properties": {key: {"const": value}}}


def response_objects() -> dict[str, Schema]:
    """Each kind of provider's response object (by the name of its `responses.Shape`), told
    as `formats.responses.shape_of` tells it: an OpenAI ChatCompletion (`object:
    chat.completion`, a list of `choices`) or Response (`object: response`, a list `output`),
    an Anthropic Message (`type: message`, `role: assistant`, a string `model`, a `content`),
    a LangChain AIMessage (`type: ai` without `role`, with `content` or a `data` object) or
    Gemini's GenerateContentResponse (a list of `candidates`, or none beside a
    `prompt_feedback`)."""
    openai = {"enum": ["chat.completion", "response"]}
    not_openai = {"not": {"required": ["object"], "properties": {"object": openai}}}
    langchain = {"required": ["type"], "properties": {"type": {"enum": sorted(LANGCHAIN_AI)}}}
    langchain_kind = {"allOf": [langchain, {"not": {"required": ["role"]}}]}
    blocked = {
        "properties": {"candidates": {"type": "null"}},
        "anyOf": [_given(key) for key in PROMPT_FEEDBACK],
    }
    kinds: dict[str, Schema] = {
        CHAT_COMPLETION.name: {**_is("object", "chat.completion"), "allOf": [_listed("choices")]},
        RESPONSE.name: {**_is("object", "response"), "allOf": [_listed("output")]},
        MESSAGE.name: {
            "allOf": [not_openai, _is("type", "message"), _is("role", "assistant")],
            "required": ["model", "content"],
            "properties": {"model": {"type": "string"}},
        },
        AI_MESSAGE.name: {
            "allOf": [not_openai, langchain_kind],
            "anyOf": [
                {"required": ["content"]},
                {"required": ["data"], "properties": {"data": {"type": "object"}}},
            ],
        },
        GENERATE_CONTENT_RESPONSE.name: {
            "allOf": [
                not_openai,
                {"not": _is("type", "message")},
                {"not": langchain_kind},
                {"anyOf": [_listed("candidates"), blocked]},
            ],
        },
    }
    return {name: {"type": "object", **schema} for name, schema in kinds.items()}


def _known_format() -> Schema:
    """A `format` is one of `FORMATS` (or null) where a reader reads it: beside a transcript,
    a response object or a stream (beside calls or turns nothing reads it)."""
    read = {
        "anyOf": [
            *(_given(key) for key in TRANSCRIPT_KEYS),
            _given("stream"),
            {"$ref": "#/$defs/reply"},
            {"required": ["response"], "properties": {"response": {"$ref": "#/$defs/reply"}}},
        ]
    }
    return {"if": read, "then": {"properties": {"format": {"enum": [*FORMATS, None]}}}}


def _format_of_replies() -> list[Schema]:
    """A line whose response object (the line, or under `response`) is of one kind gives no
    `format`, or that kind's."""
    rules: list[Schema] = []
    for shape in SHAPES:
        kind = {"$ref": f"#/$defs/{shape.name}"}
        held = {"anyOf": [kind, {"required": ["response"], "properties": {"response": kind}}]}
        rules.append(
            {"if": held, "then": {"properties": {"format": {"enum": [shape.format, None]}}}}
        )
    return rules


def _listed(key: str) -> Schema:
    return {"required": [key], "properties": {key: {"type": "array"}}}


NOT_A_WAY = ("id", "response", "trial", "format", "choice")
"""The keys of `LINE_KEYS` that do not say what the agent did; each other key does (`calls`,
`stream`, `turns`, a transcript key, and any key a reader of another shape adds)."""


def _ways() -> dict[str, Schema]:
    """Each way a line says what the agent did, by name: a key of `LINE_KEYS` given (the
    transcript keys as one way), a response object under `response`, or the line itself."""
    keys = [key for key in sorted(LINE_KEYS) if key not in (*NOT_A_WAY, *TRANSCRIPT_KEYS)]
    ways = {key: _given(key) for key in keys}
    ways["transcript"] = {"anyOf": [_given(key) for key in TRANSCRIPT_KEYS]}
    ways["response"] = {
        "required": ["response"],
        "properties": {"response": {"$ref": "#/$defs/reply"}},
    }
    ways["line"] = {"$ref": "#/$defs/reply"}
    return ways


def _says_what_the_agent_did() -> list[Schema]:
    """A line says once what the agent did, in one of `_ways`; or, holding only the keys of
    the common line, its calls or a text response. A `choice` picks among a response
    object's choices (or a stream's)."""
    ways = _ways()
    plain = {
        "propertyNames": {"enum": sorted(LINE_KEYS)},
        "properties": {"response": {"type": ["string", "null"]}},
        "anyOf": [{"required": ["calls"]}, {"required": ["response"], "properties": {
            "response": {"type": "string"}}}],
    }  # fmt: skip
    names = list(ways)
    twice = [
        {"not": {"allOf": [ways[first], ways[second]]}}
        for n, first in enumerate(names)
        for second in names[n + 1 :]
        if {first, second} != {"calls", "transcript"}  # said by _one_transcript's rules
    ]
    chosen = {"anyOf": [ways["stream"], ways["response"], ways["line"]]}
    return [
        {"anyOf": [*ways.values(), plain]},
        *twice,
        {"if": {"required": ["choice"]}, "then": chosen},
    ]


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
            *_says_what_the_agent_did(),
            _known_format(),
            *_format_of_replies(),
        ],
        "$defs": {
            "reply": {"anyOf": [{"$ref": f"#/$defs/{shape.name}"} for shape in SHAPES]},
            **response_objects(),
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
