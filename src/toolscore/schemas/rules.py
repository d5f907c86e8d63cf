"""The schemas of an argument rule and of a rubric, built from the loaders' own tables:
`core.rules.compile.KIND_OPTIONS` (each kind and its options) and `rubrics.spec`'s
`CHECK_KINDS` and `REMOTE_KINDS`. A kind or an option added to a table appears here without
a change; its value's schema is `{}` (anything) until `OPTION_SCHEMAS` describes it."""

from __future__ import annotations

from typing import Any

from toolscore.core.rules.compile import COMMON_OPTIONS, KIND_OPTIONS, KINDS
from toolscore.core.rules.strings import NORMALIZATIONS
from toolscore.rubrics.spec import CHECK_KINDS, MAX_ANSWER_LIMIT, REMOTE_KINDS

Schema = dict[str, Any]
"""A JSON Schema, as a JSON-ready mapping."""

RULE = {"$ref": "#/$defs/rule"}
"""Where a rule may stand: a kind name or a rule mapping."""
RUBRIC = {"$ref": "#/$defs/rubric"}

NON_BLANK: Schema = {"type": "string", "pattern": r"\S"}
"""A string holding something besides white space (what the loaders call non-empty)."""
SCALAR_TYPES = ["string", "number", "boolean"]
VERSION: Schema = {"type": ["string", "integer", "null"], "description": "a version label"}

_FLAG: Schema = {"type": "boolean"}
_TOLERANCE: Schema = {"type": "number", "minimum": 0}

OPTION_SCHEMAS: dict[tuple[str, str], Schema] = {
    ("*", "default"): {"description": "the value an omitted argument has (null included)"},
    ("*", "reason"): {
        "anyOf": [{"type": "null"}, NON_BLANK],
        "description": "why the rule is safe",
    },
    **{("normalized", name): _FLAG for name in NORMALIZATIONS},
    ("pattern", "regex"): {
        "type": "string",
        "minLength": 1,
        "description": "matched whole against the produced string (re.fullmatch)",
    },
    ("one_of", "values"): {
        "type": "array",
        "minItems": 1,
        "uniqueItems": True,
        "items": {"type": SCALAR_TYPES},
        "description": "the accepted values (strings, numbers or booleans)",
    },
    ("number", "tol"): {**_TOLERANCE, "description": "absolute tolerance"},
    ("number", "rel_tol"): {**_TOLERANCE, "description": "relative tolerance"},
    ("*", "coerce"): {**_FLAG, "description": "a string writing the value counts as it"},
    ("enum", "values"): {
        "type": "array",
        "minItems": 1,
        "uniqueItems": True,
        "items": {"type": [*SCALAR_TYPES, "null"]},
    },
    ("enum", "aliases"): {
        "type": "object",
        "additionalProperties": {"type": [*SCALAR_TYPES, "null"]},
        "description": "other spellings, each mapped to a member of values",
    },
    ("date", "formats"): {"type": "array", "items": {"type": "string"}},
    ("datetime", "tol"): {**_TOLERANCE, "description": "seconds"},
    ("datetime", "naive_tz"): {
        "type": ["string", "null"],
        "description": "UTC, +02:00, Europe/Paris",
    },
    ("text", "rubric"): {
        "anyOf": [
            {"type": ["string", "null"], "description": "a rubric of `rubrics`"},
            RUBRIC,
        ]
    },
    ("list", "items"): RULE,
    ("list", "order"): {"enum": ["ordered", "unordered"]},
    ("object", "args"): {"type": "object", "additionalProperties": RULE},
}
"""The schema of each option's value, by (kind, option); `*` stands for any kind."""

REQUIRED_OPTIONS: dict[str, tuple[str, ...]] = {
    "pattern": ("regex",),
    "one_of": ("values",),
    "enum": ("values",),
}
"""The options a kind cannot do without (the factory refuses the rule without them)."""


BARE_KINDS: tuple[str, ...] = tuple(
    kind for kind in KINDS if kind not in REQUIRED_OPTIONS and kind != "normalized"
)
"""The kinds that may stand as a name alone: the others need an option (`normalized` one of
its normalisations set)."""


def option_schema(kind: str, option: str, table: dict[tuple[str, str], Schema]) -> Schema:
    """The schema of `option` of `kind` in `table`: its own, else the one for any kind, else
    anything (an option a table gained that nobody has described yet)."""
    return table.get((kind, option), table.get(("*", option), {}))


def rule_defs() -> dict[str, Schema]:
    """The `$defs` of rules: `rule` (a kind name or a mapping), `kind_name` and one
    `rule_KIND` per kind of `KIND_OPTIONS`."""
    defs: dict[str, Schema] = {
        "kind_name": {"enum": list(BARE_KINDS), "description": "a kind alone: {kind: NAME}"},
        "rule": {
            "description": "a kind name or a mapping with kind and its options",
            "anyOf": [{"$ref": "#/$defs/kind_name"}, {"$ref": "#/$defs/rule_mapping"}],
        },
    }
    defs["rule_mapping"] = {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": list(KINDS)}},
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": kind}}},
                "then": {"$ref": f"#/$defs/rule_{kind}"},
            }
            for kind in KINDS
        ],
    }
    for kind, options in KIND_OPTIONS.items():
        properties: Schema = {"kind": {"const": kind}}
        for option in (*COMMON_OPTIONS, *options):
            if option != "kind":
                properties[option] = option_schema(kind, option, OPTION_SCHEMAS)
        rule: Schema = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
            "required": ["kind", *REQUIRED_OPTIONS.get(kind, ())],
        }
        if kind == "normalized":
            rule["anyOf"] = [
                {"required": [name], "properties": {name: {"const": True}}}
                for name in NORMALIZATIONS
            ]
        defs[f"rule_{kind}"] = rule
    return defs


def x_compare_defs() -> dict[str, Schema]:
    """The `$defs` of a tool list's `x-compare` (docs/formats.md 2.5): a rule, except that a
    kind name may stand alone where the property supplies what it needs (`enum` its values,
    `object` and `list` their args and items), so `enum` does not require `values` there;
    null is as good as none (the rule then follows the property's type)."""
    bare = [kind for kind in KINDS if kind in BARE_KINDS or kind == "enum"]
    open_enum = dict(rule_defs()["rule_enum"])
    open_enum["required"] = ["kind"]
    return {
        "x_compare": {
            "description": "the property's rule: a kind name or a rule mapping",
            "anyOf": [{"enum": [*bare, None]}, {"$ref": "#/$defs/x_compare_mapping"}],
        },
        "x_compare_mapping": {
            "type": "object",
            "required": ["kind"],
            "properties": {"kind": {"enum": list(KINDS)}},
            "allOf": [
                {
                    "if": {"properties": {"kind": {"const": kind}}},
                    "then": {
                        "$ref": f"#/$defs/{'x_compare_enum' if kind == 'enum' else 'rule_' + kind}"
                    },
                }
                for kind in KINDS
            ],
        },
        "x_compare_enum": open_enum,
    }


_COUNT: Schema = {"type": ["integer", "null"], "minimum": 0}
"""A count that may be left out (null is as good as absent)."""
_PHRASES: Schema = {
    "type": "array",
    "minItems": 1,
    "items": {"type": "string", "minLength": 1},
}
RUBRIC_OPTION_SCHEMAS: dict[tuple[str, str], Schema] = {
    ("regex", "pattern"): {"type": "string", "description": "searched for (re.search)"},
    ("regex", "must_match"): _FLAG,
    ("regex", "max_timeouts"): {**_COUNT, "minimum": 1},
    ("*", "phrases"): _PHRASES,
    ("*", "casefold"): _FLAG,
    ("mentions", "argument"): {"type": "string", "minLength": 1},
    ("length", "min"): _COUNT,
    ("length", "max"): _COUNT,
    ("judge", "text"): {**NON_BLANK, "description": "the rubric the judge applies"},
    ("judge", "scale"): {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 2,
        "maxItems": 2,
        "description": "[low, high]",
    },
    ("judge", "threshold"): {"type": "number"},
    ("similarity", "threshold"): {"type": "number", "minimum": -1, "maximum": 1},
    ("judge", "seed"): {"type": ["integer", "null"]},
    ("*", "base_url"): {**NON_BLANK, "description": "an OpenAI-compatible API's URL"},
    ("*", "model"): NON_BLANK,
    ("*", "api_key_env"): {"type": ["string", "null"], "minLength": 1},
    ("*", "timeout"): {"type": "number", "exclusiveMinimum": 0, "maximum": 3600},
    ("*", "retries"): {**_COUNT, "maximum": 20},
    ("*", "concurrency"): {**_COUNT, "minimum": 1, "maximum": 256},
    ("*", "max_answer_bytes"): {**_COUNT, "minimum": 1024, "maximum": MAX_ANSWER_LIMIT},
}
"""The schema of each rubric option's value, by (kind, option); `*` stands for any kind."""

RUBRIC_REQUIRED: dict[str, tuple[str, ...]] = {
    "regex": ("pattern",),
    "contains": ("phrases",),
    "not_contains": ("phrases",),
    "mentions": ("argument",),
    "judge": ("text", "base_url", "model"),
    "similarity": ("base_url", "model"),
}


def _rubric_kind(kind: str, options: tuple[str, ...], extra: tuple[str, ...]) -> Schema:
    """One kind of check or rubric: its options (and `extra`, such as `version`) and no other."""
    properties: Schema = {"kind": {"const": kind}}
    for option in (*extra, *options):
        properties[option] = (
            VERSION if option == "version" else option_schema(kind, option, RUBRIC_OPTION_SCHEMAS)
        )
    schema: Schema = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        "required": ["kind", *RUBRIC_REQUIRED.get(kind, ())],
    }
    if kind == "length":
        schema["anyOf"] = [
            {"required": [bound], "properties": {bound: {"type": "integer"}}}
            for bound in ("min", "max")
        ]
    return schema


def _by_kind(kinds: list[str], prefix: str) -> Schema:
    """A mapping whose `kind` is one of `kinds`, held to `#/$defs/{prefix}_KIND`."""
    return {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": kinds}},
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": kind}}},
                "then": {"$ref": f"#/$defs/{prefix}_{kind}"},
            }
            for kind in kinds
        ],
    }


def rubric_defs() -> dict[str, Schema]:
    """The `$defs` of rubrics: `rubric` (several `checks`, one check, or a remote rubric),
    `check`, and one definition per kind of the rubric tables."""
    defs: dict[str, Schema] = {}
    for kind, options in CHECK_KINDS.items():
        defs[f"check_{kind}"] = _rubric_kind(kind, options, ())
        defs[f"rubric_{kind}"] = _rubric_kind(kind, options, ("version",))
    for kind, options in REMOTE_KINDS.items():
        defs[f"rubric_{kind}"] = _rubric_kind(kind, options, ("version",))
    defs["check"] = _by_kind(list(CHECK_KINDS), "check")
    defs["rubric"] = {
        "description": "one check, several deterministic checks, or a judge or similarity",
        "anyOf": [
            {
                "type": "object",
                "required": ["checks"],
                "properties": {
                    "checks": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"$ref": "#/$defs/check"},
                    },
                    "version": VERSION,
                },
                "additionalProperties": False,
            },
            {
                "not": {"required": ["checks"]},
                **_by_kind([*CHECK_KINDS, *REMOTE_KINDS], "rubric"),
            },
        ],
    }
    return defs
