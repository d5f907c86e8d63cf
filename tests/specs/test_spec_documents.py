"""Spec files that YAML or JSON accept but a spec must not be: duplicate keys, alias bombs,
recursive aliases, nesting beyond the limit, tool versions beyond 64 bits. Each is one error
naming the file and line, found before the spec is validated (issue 11, items 7 and 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from toolscore.cli.app import cli, example_dir
from toolscore.errors import SpecError
from toolscore.specs import parsing as documents
from toolscore.specs.loading import load_specs, parse_specs
from toolscore.specs.parsing import MAX_ALIAS_VALUES, MAX_DEPTH


def load(tmp_path: Path, text: str, name: str = "tools.yaml") -> object:
    path = tmp_path / name
    path.write_text(text)
    return load_specs(path)


def refused(tmp_path: Path, text: str, name: str = "tools.yaml") -> str:
    with pytest.raises(SpecError) as raised:
        load(tmp_path, text, name)
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_libyaml_is_used_where_present() -> None:
    if yaml.__with_libyaml__:
        assert documents.safe_loader().__name__ == "CSafeLoader"
    assert issubclass(documents.safe_loader(), yaml.constructor.SafeConstructor)


def test_a_duplicate_tool_names_both_lines(tmp_path: Path) -> None:
    text = "tools:\n  refund:\n    args: {a: exact}\n  refund:\n    args: {b: exact}\n"
    message = refused(tmp_path, text)
    assert message.endswith(
        "tools.yaml:4: duplicate key 'refund' (first at line 2); YAML would keep only the last"
    )


def test_a_duplicate_argument_names_both_lines(tmp_path: Path) -> None:
    text = "tools:\n  t:\n    args:\n      a: exact\n      b: exact\n      a: casefold\n"
    assert "tools.yaml:6: duplicate key 'a' (first at line 4)" in refused(tmp_path, text)


def test_a_duplicate_key_in_a_flow_mapping_or_a_rule_is_refused(tmp_path: Path) -> None:
    text = "tools:\n  t:\n    args: {a: {kind: number, tol: 1, tol: 0}}\n"
    assert "tools.yaml:3: duplicate key 'tol' (first at line 3)" in refused(tmp_path, text)


def test_a_duplicate_key_in_a_json_spec_names_its_line(tmp_path: Path) -> None:
    """orjson, like most JSON readers, keeps the last of two equal keys: a spec whose second
    `refund` silently replaced the first would score with rules nobody meant."""
    text = (
        '{"tools": {\n'
        '  "refund": {"args": {"a": "exact"}},\n'
        '  "refund": {"args": {"b": "exact"}}}}\n'
    )
    message = refused(tmp_path, text, "tools.json")
    assert message.endswith(
        "tools.json:3: duplicate key 'refund' in one object; JSON readers differ on which they keep"
    )


def test_a_duplicate_key_deep_in_json_is_refused(tmp_path: Path) -> None:
    text = '{"tools": {"t": {"args":\n {"a": {"kind": "number",\n "tol": 1, "tol": 0}}}}}\n'
    assert "tools.json:3: duplicate key 'tol'" in refused(tmp_path, text, "tools.json")


def test_a_duplicate_key_in_json_that_yaml_cannot_read_is_refused_without_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line comes from the YAML reader; JSON it reads otherwise is still refused."""

    def unreadable(content: bytes, source: str) -> object:
        raise yaml.YAMLError("found unknown escape character")

    monkeypatch.setattr(documents, "_load_yaml", unreadable)
    text = '{"tools": {"t": {"args": {"a": "exact", "a": "casefold"}}}}'
    message = refused(tmp_path, text, "tools.json")
    assert message.endswith(
        "tools.json: duplicate key 'a' in one object; JSON readers differ on which they keep"
    )


def test_equal_keys_in_different_json_objects_are_fine(tmp_path: Path) -> None:
    text = '{"tools": {"t": {"args": {"a": "exact"}}, "u": {"args": {"a": "exact"}}}}'
    assert load(tmp_path, text, "tools.json")


def test_keys_equal_as_values_are_duplicates(tmp_path: Path) -> None:
    text = "tools:\n  t:\n    args:\n      a:\n        kind: enum\n        values: [1]\n"
    text += "        aliases: {0x1: 1, 1: 1}\n"
    assert "duplicate key 1 (first at line 7)" in refused(tmp_path, text)


def test_a_merge_key_may_be_overridden(tmp_path: Path) -> None:
    text = (
        "tools:\n"
        "  t1:\n    args: &common {a: exact, b: exact}\n"
        "  t2:\n    args: {<<: *common, a: casefold}\n"
    )
    specs = load(tmp_path, text)
    assert specs.tools["t2"].args.args["a"].kind == "casefold"  # type: ignore[attr-defined]
    assert specs.tools["t2"].args.args["b"].kind == "exact"  # type: ignore[attr-defined]


def _bomb(levels: int) -> str:
    lines = ["tools:", "  t:", "    args:", "      x:", "        kind: enum", "        values:"]
    lines.append('          - &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]')
    for level in range(1, levels):
        refs = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"          - &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    # Nine levels of nine aliases: about 10**9 values once expanded (61 s to validate before).
    message = refused(tmp_path, _bomb(9))
    assert "aliases repeat" in message
    assert f"more than the {MAX_ALIAS_VALUES:,} a spec may repeat" in message


def test_aliases_within_the_budget_are_read(tmp_path: Path) -> None:
    # Four levels repeat 9 + 81 + 729 + ... values, well within the budget: the spec is read
    # (and then refused by validation for what it says, not for its aliases).
    with pytest.raises(SpecError) as raised:
        load(tmp_path, _bomb(4))
    assert "aliases repeat" not in str(raised.value)
    assert "tools.t.args.x" in str(raised.value)


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    text = "tools: &t\n  t:\n    args: {a: {kind: exact, default: *t}}\n"
    assert "tools.yaml:1: an alias refers to a value that contains it" in refused(tmp_path, text)


def _nested_objects(levels: int) -> str:
    node = '"exact"'
    for _ in range(levels):
        node = '{"kind": "object", "args": {"a": ' + node + "}}"
    return '{"tools": {"t": {"args": {"a": ' + node + "}}}}"


def _nested_default(levels: int) -> str:
    value = "[" * levels + "]" * levels
    return '{"tools": {"t": {"args": {"a": {"kind": "exact", "default": ' + value + "}}}}}"


@pytest.mark.parametrize("name", ["tools.json", "tools.yaml"])
@pytest.mark.parametrize(
    "text",
    [_nested_objects(300), _nested_default(2000), "tools: " + "[" * 100_000 + "]" * 100_000],
    ids=["300 nested objects", "2,000 nested lists", "100,000 brackets"],
)
def test_deep_nesting_is_one_error_stating_the_limit(tmp_path: Path, name: str, text: str) -> None:
    if name == "tools.json" and text.startswith("tools:"):
        text = '{"tools": ' + text[len("tools: ") :] + "}"
    assert f"nested deeper than {MAX_DEPTH} levels" in refused(tmp_path, text, name)


@pytest.mark.parametrize("name", ["tools.json", "tools.yaml"])
def test_nesting_up_to_the_limit_is_read(tmp_path: Path, name: str) -> None:
    # The file's mapping, tools, t, args and a's rule: five levels; the default's lists make
    # up the rest.
    specs = load(tmp_path, _nested_default(MAX_DEPTH - 5), name)
    assert specs.tools["t"].args.args["a"].default is not None  # type: ignore[attr-defined]
    assert f"nested deeper than {MAX_DEPTH}" in refused(
        tmp_path, _nested_default(MAX_DEPTH - 4), name
    )


def test_block_nesting_is_bounded_too(tmp_path: Path) -> None:
    text = "tools:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(3000))
    assert f"nested deeper than {MAX_DEPTH} levels" in refused(tmp_path, text)


@pytest.mark.parametrize(
    ("version", "ok"),
    [(2**63 - 1, True), (-(2**63), True), (3, True), ("2026.11", True), (None, True),
     (2**63, False), (10**35, False), (-(2**63) - 1, False), (True, False), (1.5, False),
     ([3], False)],
)  # fmt: skip
def test_a_tool_version_must_fit_what_results_record(version: object, ok: bool) -> None:
    tool: dict[str, object] = {"args": {"a": "exact"}}
    if version is not None:
        tool["version"] = version
    specs, problems = parse_specs({"tools": {"t": tool}}, "tools.yaml")
    assert (specs is not None) is ok, problems
    if not ok:
        assert str(problems[0]).startswith("tools.yaml: tools.t.version: must be")
    listed, problems = parse_specs([{"name": "t", "x-version": version}], "tools.json")
    assert (listed is not None) is ok, problems


def test_a_huge_tool_version_is_refused_at_load_not_when_saving(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        (example_dir() / "tools.yaml").read_text().replace("version: 3", f"version: {10**35}")
    )
    directory = example_dir()
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(spec), "--cases", str(directory / "cases.jsonl"),
         "--outputs", str(directory / "outputs.jsonl"), "--db", str(tmp_path / "r.db"),
         "--json", str(tmp_path / "r.json")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output.strip().endswith(
        "tools.yaml: tools.refund.version: must be an integer within 64 bits (a string holds "
        "any label)"
    )
    assert not (tmp_path / "r.json").exists()
    assert not (tmp_path / "r.db").exists()


def test_the_json_depth_check_counts_lists_and_objects_alike() -> None:
    documents._check_depth(json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH), "x.json")
    with pytest.raises(SpecError, match="nested deeper"):
        documents._check_depth(json.loads('{"a":' * (MAX_DEPTH + 1) + "1" + "}" * 101), "x.json")
