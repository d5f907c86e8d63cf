"""The schema of one case (a line of a cases file, docs/formats.md 3 and 9.2), built from
`inputs.cases`' tables (`CASE_KEYS`, `CALL_KEYS`, `TURN_KEYS`, `TURN_OUTCOME_SHAPES`),
`specs.forbid.CASE_KEYS`, `rubrics.response.ENTRY_KEYS` and `state`'s tables (the state
checks' keys and tests, `OPTION_KEYS` and their values).

A case is checked against its spec when it loads (its tools, their arguments, its `$ref`
labels): that part no schema of the file alone can say, so the schema checks the case's
shape and leaves the spec's part to `toolscore lint`."""

from __future__ import annotations

from toolscore.inputs.cases import CALL_KEYS, CASE_KEYS, TURN_KEYS, TURN_OUTCOME_SHAPES
from toolscore.rubrics.response import ENTRY_KEYS as RESPONSE_RUBRIC_KEYS
from toolscore.rubrics.response import KEY as RESPONSE_RUBRICS
from toolscore.schemas.rules import NON_BLANK, RULE, Schema, rubric_defs, rule_defs
from toolscore.specs.forbid import CASE_KEYS as FORBID_KEYS
from toolscore.state.checks import (
    DOCUMENT_CHECK_KEYS,
    DOCUMENT_TESTS,
    SQLITE_CHECK_KEYS,
    SQLITE_TESTS,
)
from toolscore.state.outputs import NORMALISATIONS, OPTION_KEYS, PLACES

_JSON_TYPES: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
}

CALL_KEY_SCHEMAS: dict[str, Schema] = {
    "name": {"type": "string", "description": "a tool of the spec"},
    "args": {"type": "object", "description": "argument values, plain JSON or $any/$ref"},
    "id": {"type": ["string", "null"], "description": "a label, unique within its plan"},
    "after": {
        "type": "array",
        "items": {"type": "string"},
        "description": "labels of calls of this plan that must come earlier",
    },
}

_REQUIRED_OUTPUT: Schema = {
    "anyOf": [
        NON_BLANK,
        {
            "type": "object",
            "properties": {
                "$ref": {"type": "string", "pattern": "#", "description": "LABEL#/pointer"},
                "$result": {
                    "type": "object",
                    "required": ["tool"],
                    "properties": {"tool": {"type": "string"}, "path": {"type": "string"}},
                    "additionalProperties": False,
                },
                "rule": RULE,
            },
            "additionalProperties": False,
            "oneOf": [{"required": ["$ref"]}, {"required": ["$result"]}],
        },
    ]
}

_STATE_CHECK_VALUES: dict[str, Schema] = {
    "name": NON_BLANK,
    "path": {"type": "string", "description": "a JSON pointer into the state"},
    "table": {"type": "string"},
    "where": {"type": "object", "description": "{column: value}: the rows selected"},
    "column": {"type": "string"},
    "equals": {},
    "in": {"type": "array", "minItems": 1},
    "absent": {"const": True},
    "matches": {},
    "count": {"type": "integer", "minimum": 0},
    "rule": RULE,
}


def _state_check(keys: tuple[str, ...], tests: tuple[str, ...], what: str) -> Schema:
    """A check of one kind of environment: its keys, exactly one test, a rule only with
    `matches` (and always with it)."""
    return {
        "type": "object",
        "description": what,
        "required": ["name"],
        "properties": {key: _STATE_CHECK_VALUES.get(key, {}) for key in keys},
        "additionalProperties": False,
        "oneOf": [{"required": [test]} for test in tests],
        "if": {"required": ["matches"]},
        "then": {"required": ["rule"]},
        "else": {"not": {"required": ["rule"]}},
    }


STATE_KEY_SCHEMAS: dict[str, Schema] = {
    "goal_state": {
        "anyOf": [{"type": ["object", "null"]}, {"const": "plan"}],
        "description": 'the state the store must end in: {table: [rows]}, a document, or "plan"',
    },
    "state_checks": {
        "type": ["array", "null"],
        "minItems": 1,
        "items": {"anyOf": [{"$ref": "#/$defs/document_check"}, {"$ref": "#/$defs/sqlite_check"}]},
        "description": "named tests of values of the final state",
    },
    "setup": {
        "type": ["string", "array", "null"],
        "description": "SQL, or a list of SQL strings and calls {name, args}, run first",
    },
    "required_outputs_in": {"enum": list(PLACES)},
    "normalise": {"enum": list(NORMALISATIONS)},
}
"""The case keys read under `--env` (docs/formats.md 9.2, 9.7); `setup` and `goal_state`
are checked against the environment there."""

CASE_KEY_SCHEMAS: dict[str, Schema] = {
    "id": {"type": "string", "minLength": 1, "description": "unique in the file"},
    "plans": {
        "type": ["array", "null"],
        "items": {"$ref": "#/$defs/plan"},
        "description": "acceptable plans ([]: no call is expected)",
    },
    "turns": {
        "type": "array",
        "minItems": 1,
        "items": {"$ref": "#/$defs/turn"},
        "description": "a conversation: each user turn with its own plans",
    },
    "prompt": {"description": "shown to a person, never scored"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "score_turns": {"enum": ["final", "all"]},
    "required_outputs": {"type": ["array", "null"], "items": _REQUIRED_OUTPUT},
    "forbid": {"type": "array", "items": {"$ref": "#/$defs/forbid"}},
    RESPONSE_RUBRICS: {"type": "array", "items": {"$ref": "#/$defs/response_rubric"}},
    "max_calls": {"type": ["integer", "null"], "minimum": 1},
    "variant_of": {"type": "string", "minLength": 1},
    "variant": {"type": "string", "minLength": 1},
    **STATE_KEY_SCHEMAS,
}

TURN_KEY_SCHEMAS: dict[str, Schema] = {
    "prompt": {},
    "plans": CASE_KEY_SCHEMAS["plans"] | {"type": "array"},
    "required_outputs": CASE_KEY_SCHEMAS["required_outputs"],
    "goal_state": STATE_KEY_SCHEMAS["goal_state"],
    "state_checks": STATE_KEY_SCHEMAS["state_checks"] | {"type": "array"},
    "results_from_plan": {"type": "integer", "minimum": 0},
}


def _turn_key(key: str) -> Schema:
    """A turn key's schema, at least the JSON types `TURN_OUTCOME_SHAPES` requires."""
    schema = TURN_KEY_SCHEMAS.get(key, {})
    shapes = TURN_OUTCOME_SHAPES.get(key)
    if shapes is None:
        return schema
    return {"allOf": [{"type": [_JSON_TYPES[t] for t in shapes]}, schema]}


def cases_schema() -> Schema:
    """The JSON Schema of one case (a line of a cases file, or a YAML mapping of one)."""
    defs: Schema = {
        "call": {
            "type": "object",
            "required": ["name"],
            "properties": {key: CALL_KEY_SCHEMAS.get(key, {}) for key in sorted(CALL_KEYS)},
            "additionalProperties": False,
        },
        "plan": {"type": "array", "items": {"$ref": "#/$defs/call"}},
        "turn": {
            "type": "object",
            "required": ["plans"],
            "properties": {key: _turn_key(key) for key in sorted(TURN_KEYS)},
            "additionalProperties": False,
        },
        "forbid": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "args": {"type": "object"}},
            "additionalProperties": False,
        },
        "response_rubric": {
            "type": "object",
            "required": ["rubric"],
            "properties": {
                key: {"type": "string"} if key == "rubric" else NON_BLANK
                for key in RESPONSE_RUBRIC_KEYS
            },
            "additionalProperties": False,
        },
        "document_check": _state_check(
            DOCUMENT_CHECK_KEYS, DOCUMENT_TESTS, "a check of a documents environment"
        ),
        "sqlite_check": _state_check(
            SQLITE_CHECK_KEYS, SQLITE_TESTS, "a check of a SQLite environment"
        ),
        **rule_defs(),
        **rubric_defs(),
    }
    forbid_keys = {key: defs["forbid"]["properties"].get(key, {}) for key in FORBID_KEYS}
    defs["forbid"]["properties"] = forbid_keys
    case_keys = dict.fromkeys((*CASE_KEYS, *STATE_KEY_SCHEMAS, *OPTION_KEYS))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "toolscore case",
        "description": "One case of a toolscore cases file (docs/formats.md 3): what a "
        "correct agent would have done for one prompt. Other keys are kept, never scored.",
        "type": "object",
        "required": ["id"],
        "properties": {key: CASE_KEY_SCHEMAS.get(key, {}) for key in case_keys},
        "anyOf": [
            {
                "required": ["plans"],
                "properties": {"plans": {"type": "array"}},
                "not": {"required": ["turns"]},
            },
            {"required": ["turns"], "properties": {"plans": {"type": "null"}}},
        ],
        "dependentRequired": {"variant": ["variant_of"]},
        "if": {"required": ["turns"]},
        "then": {"not": {"required": ["score_turns"]}},
        "$defs": defs,
    }
