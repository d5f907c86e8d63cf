"""The schema files shipped in the package are the ones the generator writes from the
loaders' tables now (so they cannot go stale), each a valid draft 2020-12 schema, installed
as package data, and `toolscore schema` prints or writes them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import click
import jsonschema
import pytest
from click.testing import CliRunner

from toolscore.cli.app import LAZY_COMMANDS, cli
from toolscore.cli.schema import schema_command
from toolscore.core.rules.compile import KIND_OPTIONS, KINDS
from toolscore.inputs.formats.responses import SHAPES
from toolscore.inputs.outputs import LINE_KEYS
from toolscore.schemas import NAMES, generate, render, shipped
from toolscore.schemas.generate import file_name, write_shipped
from toolscore.schemas.outputs import response_objects
from toolscore.schemas.spec import spec_schema
from toolscore.specs.loading import TOP_KEYS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", NAMES)
def test_the_shipped_file_is_what_the_generator_writes(name: str) -> None:
    assert shipped(name) == render(generate(name)), (
        f"{file_name(name)} is stale: run `python -m toolscore.schemas` and commit the files"
    )


@pytest.mark.parametrize("name", NAMES)
def test_each_schema_is_a_valid_draft_2020_12_schema(name: str) -> None:
    schema = json.loads(shipped(name))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_the_files_are_package_data() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"]["package-data"]["toolscore"]
    folder = ROOT / "src" / "toolscore"
    matched = {path.name for pattern in patterns for path in folder.glob(pattern)}
    assert {file_name(name) for name in NAMES} <= matched


def test_write_shipped_writes_every_file(tmp_path: Path) -> None:
    written = write_shipped(tmp_path)
    assert [path.name for path in written] == [file_name(name) for name in NAMES]
    for name in NAMES:
        assert (tmp_path / file_name(name)).read_text() == shipped(name)


def test_the_spec_schema_follows_the_loader_tables() -> None:
    schema = generate("spec")
    native = schema["anyOf"][0]
    assert list(native["properties"]) == list(TOP_KEYS)
    assert schema["$defs"]["rule_mapping"]["properties"]["kind"]["enum"] == list(KINDS)
    assert set(schema["$defs"]["kind_name"]["enum"]) == set(KINDS) - {
        "normalized",
        "pattern",
        "one_of",
        "enum",
    }
    for kind, options in KIND_OPTIONS.items():
        declared = schema["$defs"][f"rule_{kind}"]["properties"]
        assert set(declared) == {"kind", "default", "reason", *options}


def test_a_key_added_to_a_table_appears_in_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """One source of truth: a new top-level spec key is in the schema once it is in the
    loader's table, its value unchecked until it is described."""
    import toolscore.schemas.spec as spec_module  # noqa: PLC0415

    monkeypatch.setattr(spec_module, "TOP_KEYS", (*TOP_KEYS, "x_new_key"))
    native = spec_module.spec_schema()["anyOf"][0]
    assert native["properties"]["x_new_key"] == {}
    validator = jsonschema.Draft202012Validator(spec_module.spec_schema())
    assert validator.is_valid({"tools": {"t": {}}, "x_new_key": [1, "anything"]})
    assert not validator.is_valid({"tools": {"t": {}}, "x_other_key": 1})


def test_a_side_rules_file_may_name_its_definitions_without_tools() -> None:
    validator = jsonschema.Draft202012Validator(spec_schema())
    assert validator.is_valid({"version": 1, "definitions": "tools.json"})
    assert not validator.is_valid({"version": 1, "definitions": ""})
    assert not validator.is_valid({"version": 1})


def test_the_command_is_registered_lazily_with_every_name() -> None:
    assert LAZY_COMMANDS["schema"] == "toolscore.cli.schema"
    kind = next(p for p in schema_command.params if p.name == "name").type
    assert isinstance(kind, click.Choice)
    assert tuple(kind.choices) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_toolscore_schema_prints_the_schema(name: str) -> None:
    result = CliRunner().invoke(cli, ["schema", name])
    assert result.exit_code == 0, result.output
    assert result.stdout == shipped(name)


def test_toolscore_schema_out_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "spec.schema.json"
    result = CliRunner().invoke(cli, ["schema", "spec", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == shipped("spec")
    assert result.stdout == ""


def test_an_unwritable_out_is_one_line_and_status_2(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "spec.schema.json"
    result = CliRunner().invoke(cli, ["schema", "spec", "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "cannot write" in result.stderr


def test_an_unknown_name_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["schema", "report"])
    assert result.exit_code == 2
    assert "'report' is not one of 'spec', 'cases', 'outputs'" in result.output


def test_every_kind_of_response_object_has_its_schema() -> None:
    assert set(response_objects()) == {shape.name for shape in SHAPES}


def test_a_key_added_to_the_line_keys_is_a_way_to_say_what_the_agent_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reader of another shape (say an MCP session under `mcp`) adds its key to
    `LINE_KEYS`: a line may then say what the agent did with it, and only once."""
    import toolscore.schemas.outputs as outputs_schema  # noqa: PLC0415

    monkeypatch.setattr(outputs_schema, "LINE_KEYS", LINE_KEYS | {"mcp"})
    validator = jsonschema.Draft202012Validator(outputs_schema.outputs_schema())
    assert validator.is_valid({"id": "c", "mcp": []})
    assert not validator.is_valid({"id": "c", "mcp": [], "turns": [{"calls": []}]})
    assert not jsonschema.Draft202012Validator(generate("outputs")).is_valid({"id": "c", "x": []})


def test_an_x_compare_enum_may_take_its_values_from_the_property() -> None:
    """In a tool list, `x-compare: enum` (or `{kind: enum}`) takes the property's `enum`."""
    validator = jsonschema.Draft202012Validator(generate("spec"))
    for compare in ("enum", {"kind": "enum", "aliases": {}}):
        prop = {"type": "string", "enum": ["EUR", "USD"], "x-compare": compare}
        assert validator.is_valid([{"name": "t", "parameters": {"properties": {"unit": prop}}}])
