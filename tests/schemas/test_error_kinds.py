"""For every load error kind that a schema can express (an unknown key, a wrong type, a
missing required key, a value out of its set or range, ...), inputs that the loader and the
schema both refuse: listed ones (bad_inputs.yaml, with the loader's words and the schema's
keyword) and ones generated from the loaders' own tables (an unknown key for every table,
a value of the wrong JSON type for every option of every kind)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from schema_goldens import Golden, load_problem
from toolscore.core.rules.compile import COMMON_OPTIONS, KIND_OPTIONS
from toolscore.inputs.cases import CALL_KEYS, TURN_KEYS
from toolscore.inputs.output_turns import TURN_ENTRY_KEYS
from toolscore.rubrics.spec import CHECK_KINDS, REMOTE_KINDS
from toolscore.schemas import NAMES, generate
from toolscore.schemas.rules import OPTION_SCHEMAS, RUBRIC_OPTION_SCHEMAS, option_schema
from toolscore.specs.loading import RELAX_KEYS, TOP_KEYS
from toolscore.specs.problems import TOOL_KEYS
from toolscore.state.checks import DOCUMENT_CHECK_KEYS

BAD = yaml.safe_load((Path(__file__).parent / "bad_inputs.yaml").read_text())
CASE_SPEC = BAD["case_spec"]
VALIDATORS = {name: jsonschema.Draft202012Validator(generate(name)) for name in NAMES}


def _keywords(error: jsonschema.ValidationError) -> Iterator[str]:
    """The keyword of an error and of every error under it (`anyOf` keeps its branches')."""
    yield str(error.validator)
    for inner in error.context or ():
        yield from _keywords(inner)


def _listed() -> Iterator[Any]:
    for name in NAMES:
        for entry in BAD[name]:
            yield pytest.param(name, entry, id=f"{name}: {entry['description']}")


def _golden(name: str, document: Any) -> Golden:
    return Golden(name, "bad_inputs.yaml", document, CASE_SPEC if name == "cases" else None)


@pytest.mark.parametrize(("name", "entry"), list(_listed()))
def test_a_listed_bad_input_is_refused_by_both(name: str, entry: dict[str, Any]) -> None:
    problem = load_problem(_golden(name, entry["document"]))
    assert problem is not None, "the loader accepts it"
    assert entry["loader"] in problem
    errors = list(VALIDATORS[name].iter_errors(entry["document"]))
    assert errors, "the schema accepts it"
    keywords = {keyword for error in errors for keyword in _keywords(error)}
    assert entry["keyword"] in keywords, keywords


def _spec_with_rule(rule: Any) -> dict[str, Any]:
    return {"tools": {"t": {"args": {"a": rule}}}}


def _spec_with_rubric(rubric: Any) -> dict[str, Any]:
    return {"tools": {"t": {}}, "rubrics": {"r": rubric}}


RULE_BASES: dict[str, dict[str, Any]] = {
    "normalized": {"strip": True},
    "pattern": {"regex": "a+"},
    "one_of": {"values": ["a"]},
    "enum": {"values": ["a"]},
}
"""What a rule of each kind needs to load, so that a generated bad option is the only fault."""
RUBRIC_BASES: dict[str, dict[str, Any]] = {
    "regex": {"pattern": "a"},
    "contains": {"phrases": ["a"]},
    "not_contains": {"phrases": ["a"]},
    "mentions": {"argument": "b"},
    "length": {"min": 1},
    "judge": {"text": "polite", "base_url": "http://127.0.0.1:8000/v1", "model": "m"},
    "similarity": {"base_url": "http://127.0.0.1:8000/v1", "model": "m"},
}


def _rule(kind: str, **options: Any) -> dict[str, Any]:
    return {"kind": kind, **RULE_BASES.get(kind, {}), **options}


def _rubric(kind: str, **options: Any) -> dict[str, Any]:
    return {"kind": kind, **RUBRIC_BASES.get(kind, {}), **options}


@pytest.mark.parametrize("kind", list(KIND_OPTIONS))
def test_each_kind_with_its_base_loads_and_validates(kind: str) -> None:
    document = _spec_with_rule(_rule(kind))
    assert load_problem(_golden("spec", document)) is None
    assert VALIDATORS["spec"].is_valid(document)


@pytest.mark.parametrize("kind", [*CHECK_KINDS, *REMOTE_KINDS])
def test_each_rubric_kind_with_its_base_loads_and_validates(kind: str) -> None:
    document = _spec_with_rubric(_rubric(kind))
    assert load_problem(_golden("spec", document)) is None
    assert VALIDATORS["spec"].is_valid(document)


def _unknown_keys() -> Iterator[Any]:
    """For every key table a loader checks, a document with one key the table lacks."""
    yield "spec", {"tools": {"t": {}}, "tolls": 1}, TOP_KEYS
    yield "spec", {"tools": {"t": {"argz": {}}}}, TOOL_KEYS
    yield (
        "spec",
        {"tools": {"t": {}}, "relax": [{"allow": "retries", "reason": "r", "x": 1}]},
        (RELAX_KEYS),
    )
    for kind, options in KIND_OPTIONS.items():
        yield "spec", _spec_with_rule(_rule(kind, bogus_option=1)), options
    for kind in (*CHECK_KINDS, *REMOTE_KINDS):
        yield "spec", _spec_with_rubric(_rubric(kind, bogus_option=1)), kind
    yield "cases", {"id": "c", "plans": [[{"name": "refund", "bogus": 1}]]}, CALL_KEYS
    yield "cases", {"id": "c", "turns": [{"plans": [], "bogus": 1}]}, TURN_KEYS
    check = {"name": "n", "path": "/a", "equals": 1, "bogus": 1}
    yield "cases", {"id": "c", "plans": [], "state_checks": [check]}, DOCUMENT_CHECK_KEYS
    yield "outputs", {"id": "c", "turns": [{"calls": [], "bogus": 1}]}, TURN_ENTRY_KEYS


@pytest.mark.parametrize(("name", "document", "table"), list(_unknown_keys()))
def test_a_key_no_table_lists_is_refused_by_both(name: str, document: Any, table: Any) -> None:
    assert load_problem(_golden(name, document)) is not None
    assert not VALIDATORS[name].is_valid(document)


WRONG_VALUES: tuple[Any, ...] = ("x", 3, -1, 2.5, True, [], ["x"], {"x": 1}, None)
_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


def _is_of(value: Any, types: list[str]) -> bool:
    for name in types:
        if name in ("integer", "number") and isinstance(value, bool):
            continue
        if name == "integer" and isinstance(value, float):
            continue
        if isinstance(value, _JSON_TYPES[name]):
            return True
    return False


def _types(schema: dict[str, Any]) -> list[str]:
    """The JSON types a schema allows, when it names them (itself, or every branch of its
    `anyOf`); [] when it does not (a `$ref`, an `enum`)."""
    if "type" in schema:
        named = schema["type"]
        return [named] if isinstance(named, str) else list(named)
    branches = [_types(branch) for branch in schema.get("anyOf", [])]
    if branches and all(branches):
        return [name for branch in branches for name in branch]
    return []


def _wrong_types() -> Iterator[Any]:
    """For every option of every rule kind and rubric kind whose schema names its JSON types,
    each value of `WRONG_VALUES` of another type: the loader refuses it as the schema does."""
    for kind, options in KIND_OPTIONS.items():
        for option in (*COMMON_OPTIONS, *options):
            types = _types(option_schema(kind, option, OPTION_SCHEMAS))
            for value in WRONG_VALUES if types else ():
                if not _is_of(value, types):
                    yield pytest.param(
                        "spec", _spec_with_rule(_rule(kind, **{option: value})),
                        id=f"{kind}.{option}={value!r}",
                    )  # fmt: skip
    for kind, options in {**CHECK_KINDS, **REMOTE_KINDS}.items():
        for option in options:
            types = _types(option_schema(kind, option, RUBRIC_OPTION_SCHEMAS))
            for value in WRONG_VALUES if types else ():
                if not _is_of(value, types):
                    yield pytest.param(
                        "spec", _spec_with_rubric(_rubric(kind, **{option: value})),
                        id=f"rubric {kind}.{option}={value!r}",
                    )  # fmt: skip


@pytest.mark.parametrize(("name", "document"), list(_wrong_types()))
def test_a_value_of_the_wrong_type_is_refused_by_both(name: str, document: Any) -> None:
    assert load_problem(_golden(name, document)) is not None
    assert not VALIDATORS[name].is_valid(document)


def test_every_option_with_a_type_is_tried() -> None:
    """The generated wrong types reach every kind (none is skipped for lack of a type)."""
    tried = {param.id.split(".")[0] for param in _wrong_types()}
    typed = {
        kind
        for kind, options in KIND_OPTIONS.items()
        if any(_types(option_schema(kind, o, OPTION_SCHEMAS)) for o in options)
    }
    assert typed <= tried
    assert {"number", "enum", "normalized", "pattern", "one_of", "date", "datetime"} <= typed
