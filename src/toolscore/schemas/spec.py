"""The schema of a spec file (docs/formats.md 2): a native spec, whose keys come from
`specs.loading`'s tables (`TOP_KEYS`, `RELAX_KEYS`, `RELAXATIONS`), `specs.problems.TOOL_KEYS`,
`specs.forbid.SPEC_KEYS` and the environments' key tables, or tool definitions in one of
the shapes `specs.tool_definitions` reads.
A key a table gains appears in the schema at once, its value unchecked (`{}`) until
`TOP_KEY_SCHEMAS` describes it."""

from __future__ import annotations

from toolscore.schemas.rules import (
    NON_BLANK,
    RUBRIC,
    RULE,
    Schema,
    rubric_defs,
    rule_defs,
    x_compare_defs,
)
from toolscore.specs.forbid import SPEC_KEYS as FORBID_KEYS
from toolscore.specs.loading import MAX_TIMEOUT, RELAX_KEYS, RELAXATIONS, TOP_KEYS
from toolscore.specs.problems import TOOL_KEYS
from toolscore.specs.side_rules import DEFINITIONS_KEY
from toolscore.specs.tool_definitions import GEMINI_JSON_SCHEMA, GEMINI_LISTS, NATIVE_KEYS
from toolscore.state.documents import DOCUMENTS_KEYS
from toolscore.state.environment import SQLITE_KEYS

_NAMES: Schema = {"type": "array", "minItems": 1, "items": {"type": "string"}}

TOOL_KEY_SCHEMAS: dict[str, Schema] = {
    "version": {
        "anyOf": [
            {"type": "string"},
            {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1},
            {"type": "null"},
        ],
        "description": "the tool's own spec version, recorded with every result",
    },
    "args": {
        "type": ["object", "null"],
        "additionalProperties": RULE,
        "description": "argument names to rules (absent: no arguments)",
    },
    "description": {"description": "kept, never compared"},
}

RELAX_KEY_SCHEMAS: dict[str, Schema] = {
    "allow": {"enum": list(RELAXATIONS)},
    "tools": {**_NAMES, "description": "tools of the spec (retries may leave it out)"},
    "reason": {**NON_BLANK, "description": "why the relaxation is harmless"},
}

FORBID_KEY_SCHEMAS: dict[str, Schema] = {
    "tool": {"type": "string", "description": "a tool of the spec"},
    "args": {"type": "object", "description": "argument values, read as a plan call's"},
    "reason": NON_BLANK,
}

ENVIRONMENT_KEY_SCHEMAS: dict[str, Schema] = {
    "timeout": {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": MAX_TIMEOUT,
        "description": "seconds a replayed call may run",
    },
}
"""Only `timeout` is checked when a spec loads; the others are checked under `--env`."""

TOP_KEY_SCHEMAS: dict[str, Schema] = {
    "version": {
        "type": ["string", "number", "null"],
        "description": "the spec set's version label",
    },
    "tools": {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"$ref": "#/$defs/tool"},
        "description": "tool names to tools",
    },
    "relax": {
        "type": "array",
        "items": {"$ref": "#/$defs/relaxation"},
        "description": "declared exceptions to failing closed, each with its reason",
    },
    "environment": {"$ref": "#/$defs/environment"},
    "rubrics": {
        "type": "object",
        "additionalProperties": RUBRIC,
        "propertyNames": NON_BLANK,
        "description": "rubric names to rubrics",
    },
    DEFINITIONS_KEY: {
        "type": "string",
        "minLength": 1,
        "description": "a side rules file: the tool definitions file (a path relative to this "
        "file) whose rules `tools` adds to or overrides",
    },
    "forbid": {
        "type": "array",
        "items": {"$ref": "#/$defs/forbid"},
        "description": "calls no case may make, whatever its plans say",
    },
}


def _keyed(keys: tuple[str, ...], schemas: dict[str, Schema]) -> Schema:
    """The properties of a mapping whose keys are `keys` (a table), each with its schema."""
    return {key: schemas.get(key, {}) for key in keys}


def _tool_definitions() -> list[Schema]:
    """Tool definitions as the providers and MCP write them (2.5): a list of OpenAI Chat
    (`{type: function, function: {...}}`), bare or Responses, Anthropic (`input_schema`) or
    Gemini definitions (a tool holding `function_declarations`), a mapping with a `tools`
    list (an MCP `tools/list` result, a Gemini request), a mapping with Gemini's
    `function_declarations`, or a whole JSON-RPC response."""
    schema: Schema = {
        "anyOf": [
            {"type": "object", "$ref": "#/$defs/json_schema"},
            {"enum": [None, False]},  # none: a tool without arguments
        ],
    }
    keys = ("parameters", "input_schema", "inputSchema", *GEMINI_JSON_SCHEMA)
    definition: Schema = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "description": {},
            **dict.fromkeys(keys, schema),
            "x-version": TOOL_KEY_SCHEMAS["version"],
        },
    }
    declarations: Schema = {"type": "array", "items": definition}
    gemini: Schema = {"anyOf": [{"required": [key]} for key in GEMINI_LISTS]}
    item: Schema = {
        "anyOf": [
            {"type": "object", "required": ["function"], "properties": {"function": definition}},
            {
                "type": "object",
                **gemini,
                "properties": dict.fromkeys(GEMINI_LISTS, declarations),
            },
            {"not": {"anyOf": [{"required": ["function"]}, *gemini["anyOf"]]}, **definition},
        ]
    }
    listed: Schema = {"type": "array", "minItems": 1, "items": item}
    no_native: Schema = {"not": {"anyOf": [{"required": [key]} for key in NATIVE_KEYS]}}
    with_tools: Schema = {
        "type": "object",
        "required": ["tools"],
        "properties": {"tools": listed},
        **no_native,
    }
    return [
        listed,
        with_tools,
        {
            "type": "object",
            **gemini,
            "properties": dict.fromkeys(GEMINI_LISTS, declarations),
            **no_native,
        },
        {
            "type": "object",
            "required": ["jsonrpc", "result"],
            "not": {"required": ["error"]},
            "properties": {"result": with_tools},
        },
    ]


def spec_schema() -> Schema:
    """The JSON Schema of a spec file."""
    environment_keys = dict.fromkeys((*SQLITE_KEYS, *DOCUMENTS_KEYS))
    defs: Schema = {
        "tool": {
            "type": "object",
            "properties": _keyed(TOOL_KEYS, TOOL_KEY_SCHEMAS),
            "additionalProperties": False,
        },
        "relaxation": {
            "type": "object",
            "properties": _keyed(RELAX_KEYS, RELAX_KEY_SCHEMAS),
            "additionalProperties": False,
            "required": ["allow", "reason"],
            "if": {"not": {"properties": {"allow": {"const": "retries"}}}},
            "then": {"required": ["tools"]},
        },
        "forbid": {
            "type": "object",
            "properties": _keyed(FORBID_KEYS, FORBID_KEY_SCHEMAS),
            "additionalProperties": False,
            "required": ["tool", "reason"],
        },
        "environment": {
            "type": ["object", "null"],
            "description": "the store state checks replay calls against (read under --env)",
            "properties": _keyed(tuple(environment_keys), ENVIRONMENT_KEY_SCHEMAS),
        },
        "json_schema": {
            "type": ["object", "boolean"],
            "description": "a JSON Schema whose properties may carry x-compare",
            "properties": {
                "properties": {"additionalProperties": {"$ref": "#/$defs/json_schema"}},
                "items": {"$ref": "#/$defs/json_schema"},
                "x-compare": {"$ref": "#/$defs/x_compare"},
            },
        },
        **rule_defs(),
        **x_compare_defs(),
        **rubric_defs(),
    }
    native: Schema = {
        "type": "object",
        "anyOf": [{"required": ["tools"]}, {"required": [DEFINITIONS_KEY]}],
        "properties": _keyed(TOP_KEYS, TOP_KEY_SCHEMAS),
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "toolscore spec",
        "description": "A toolscore spec (docs/formats.md 2): per tool and argument, the rule "
        "that compares expected and produced values.",
        "anyOf": [native, *_tool_definitions()],
        "$defs": defs,
    }
