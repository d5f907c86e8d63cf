"""Tool definitions read as specs (docs/formats.md 2.5): each format's golden file reads as
the same native spec, errors name each file's own JSON positions, a spec's format is told
by its shape, any schema either loads or gives spec problems, and mutated definition files
fail with one-line errors only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutate
from toolscore.errors import SpecError
from toolscore.specs.loading import load_specs, parse_specs
from toolscore.specs.tool_definitions import ShapeError, read_definitions

HERE = Path(__file__).parent
DEFINITIONS = HERE / "definitions"
FORMAT_FILES = {
    "openai_chat": "openai",
    "openai_responses": "openai",
    "anthropic": "anthropic",
    "mcp_result": "mcp",
    "mcp_jsonrpc": "mcp",
    "gemini_openapi": "gemini",
    "gemini_json_schema": "gemini",
}
ERRORS = json.loads((HERE / "definition_errors.json").read_text())["cases"]


@pytest.mark.parametrize("name", sorted(FORMAT_FILES))
def test_every_format_reads_as_the_same_native_spec(name: str) -> None:
    path = DEFINITIONS / f"{name}.json"
    expected = load_specs(DEFINITIONS / "expected.yaml")
    listed = load_specs(path)
    assert list(listed.tools) == list(expected.tools)
    for tool, spec in expected.tools.items():
        assert listed.tools[tool].args == spec.args, tool
        assert listed.tools[tool].version == spec.version
    assert listed.tools["refund"].description == "Refund an order"
    assert read_definitions(json.loads(path.read_text()))[0] == FORMAT_FILES[name]
    assert listed.tool_list


@pytest.mark.parametrize("name", sorted(FORMAT_FILES))
def test_rules_are_named_where_each_file_declares_them(name: str) -> None:
    listed = load_specs(DEFINITIONS / f"{name}.json")
    base, lookup = {
        "openai_chat": ("[0].function.parameters", "[1].function.parameters"),
        "openai_responses": ("[0].parameters", "[1].parameters"),
        "anthropic": ("[0].input_schema", "[1].input_schema"),
        "mcp_result": ("tools[0].inputSchema", "tools[1].inputSchema"),
        "mcp_jsonrpc": ("result.tools[0].inputSchema", "result.tools[1].inputSchema"),
        "gemini_openapi": (
            "tools[0].function_declarations[0].parameters",
            "tools[0].function_declarations[1].parameters",
        ),
        "gemini_json_schema": (
            "[0].functionDeclarations[0].parametersJsonSchema",
            "[0].functionDeclarations[1].parametersJsonSchema",
        ),
    }[name]
    assert listed.rule_field("refund") == base
    assert listed.rule_field("refund", ("order_id",)) == f"{base}.properties.order_id"
    assert listed.rule_field("refund", ("amount",)) == f"{base}.properties.amount.x-compare"
    city = ("address", "city")
    assert listed.rule_field("lookup", city) == (
        f"{lookup}.properties.address.properties.city.x-compare"
    )


@pytest.mark.parametrize("case", ERRORS, ids=[case["description"] for case in ERRORS])
def test_problems_name_the_json_position_in_the_file_shape(case: dict[str, Any]) -> None:
    specs, problems = parse_specs(case["definitions"], "tools.json", "ab" * 32)
    assert specs is None
    assert [str(p).removeprefix("tools.json: ") for p in problems] == case["problems"]


def test_a_tools_list_without_a_label_takes_its_version_from_its_sha256(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_bytes((DEFINITIONS / "anthropic.json").read_bytes())
    listed = load_specs(path)
    assert listed.version == f"sha256:{listed.sha256[:12]}"
    assert listed.version_from_sha
    assert listed.describe()["version_from"] == "sha256"
    native = load_specs(DEFINITIONS / "expected.yaml")
    assert native.version is None
    assert "version_from" not in native.describe()
    unhashed, _ = parse_specs(json.loads(path.read_text()), "tools.json")
    assert unhashed is not None
    assert unhashed.version is None  # no file, no hash: nothing to take a version from


def test_a_native_spec_is_not_read_as_definitions() -> None:
    specs, problems = parse_specs({"tools": []}, "spec.yaml")
    assert specs is None
    assert [p.field for p in problems] == ["tools"]
    with pytest.raises(ShapeError):
        read_definitions("tools")


SCALAR_SCHEMA = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["string", "number", "integer", "boolean", "null", "STRING", "dict", "object"]
        )
        | st.lists(st.sampled_from(["string", "null", "integer"]), max_size=2),
        "format": st.sampled_from(["date", "date-time", "uuid", "email", "weird"]),
        "enum": st.lists(
            st.none() | st.booleans() | st.integers() | st.text(max_size=3), max_size=3
        ),
        "default": st.none() | st.booleans() | st.integers() | st.text(max_size=3) | st.floats(),
        "x-compare": st.sampled_from(["exact", "casefold", "text", "bogus", 3])
        | st.fixed_dictionaries(
            {"kind": st.sampled_from(["number", "enum", "list", "object", "date"])},
            optional={"tol": st.floats() | st.text(max_size=2), "reason": st.text(max_size=5)},
        ),
    },
)
SCHEMA = st.recursive(
    SCALAR_SCHEMA,
    lambda inner: st.fixed_dictionaries(
        {"type": st.sampled_from(["object", "array", "OBJECT"])},
        optional={
            "properties": st.dictionaries(st.text(max_size=4), inner, max_size=3),
            "items": inner | st.booleans(),
        },
    ),
    max_leaves=8,
)
WRAPPERS = [
    lambda s: [{"type": "function", "function": {"name": "t", "parameters": s}}],
    lambda s: [{"name": "t", "parameters": s}],
    lambda s: [{"name": "t", "input_schema": s}],
    lambda s: {"tools": [{"name": "t", "inputSchema": s}]},
    lambda s: {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t", "inputSchema": s}]}},
    lambda s: {"function_declarations": [{"name": "t", "parameters": s}]},
    lambda s: [{"functionDeclarations": [{"name": "t", "parametersJsonSchema": s}]}],
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schema=st.fixed_dictionaries(
        {"type": st.just("object"), "properties": st.dictionaries(st.text(max_size=4), SCHEMA)}
    ),
    wrap=st.sampled_from(WRAPPERS),
)
def test_any_schema_either_loads_or_gives_spec_problems(schema: Any, wrap: Any) -> None:
    specs, problems = parse_specs(wrap(schema), "tools.json", "cd" * 32)
    assert (specs is None) == bool(problems)
    for problem in problems:
        assert isinstance(problem, SpecError)
        assert "\n" not in str(problem)
    if specs is not None:
        assert set(specs.tools) == {"t"}
        assert set(specs.tools["t"].args.args) == set(schema["properties"])


SEEDS = [json.loads(path.read_text()) for path in sorted(DEFINITIONS.glob("*.json"))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_definition_files_load_or_fail_with_one_line(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(SEEDS))
    raw = mutate.line(seed, lambda n: data.draw(st.integers(0, n - 1)))
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return
    specs, problems = parse_specs(document, "tools.json", "ef" * 32)
    assert (specs is None) == bool(problems)
    for problem in problems:
        text = str(problem)
        assert text.startswith("tools.json"), text
        assert "\n" not in text, text
        assert "\r" not in text, text
