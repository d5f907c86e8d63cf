"""`toolscore spec init` on real tool definitions: the bundled example's tools (its Python
functions), BFCL's function docs, tau-bench's airline and retail tools, an MCP server's
`tools/list` written by the `mcp` package, and each provider's format. Each draft is its
golden file, loads, and lints clean but for the guesses it marks for review."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from draft_sources import FORMATS, GOLDEN, ROOT, SOURCES, draft_text
from toolscore.cli.app import cli
from toolscore.cli.spec import init_command
from toolscore.drafting import DRAFT_FORMATS, draft_spec
from toolscore.errors import SpecError
from toolscore.lint.checks import lint_files
from toolscore.specs.loading import load_specs

GUESS = re.compile(r"^warning: .*: a drafted guess to review \(")


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the sources are named relative to the repository


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_draft_is_the_golden_file(name: str) -> None:
    assert draft_text(name) == (GOLDEN / f"{name}.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_draft_loads_and_lints_clean_but_for_its_guesses(name: str, tmp_path: Path) -> None:
    drafted = draft_spec(**SOURCES[name])
    assert drafted.draft.format == FORMATS[name]
    path = tmp_path / "tools.yaml"
    path.write_text(drafted.text, encoding="utf-8")
    specs = load_specs(path)
    assert specs.version == "1"
    assert all(tool.version == 1 for tool in specs.tools.values())
    assert list(specs.tools) == [tool.name for tool in drafted.draft.tools]
    findings = [str(f) for f in lint_files(path)]
    guesses = [f for f in findings if GUESS.match(f)]
    assert len(guesses) == drafted.draft.guesses() > 0
    assert [f for f in findings if not GUESS.match(f)] == []
    assert yaml.safe_load(drafted.text) == yaml.safe_load(path.read_text())


def test_guesses_follow_names_formats_and_descriptions() -> None:
    rules = {
        (tool, path): rule.node
        for tool, path, rule in draft_spec(**SOURCES["mcp_tools_list"]).draft.rules()
    }
    assert rules[("refund", "order_id")]["kind"] == "exact"
    assert "identifier" in rules[("refund", "order_id")]["reason"]
    assert rules[("refund", "note")]["kind"] == "text"
    assert rules[("refund", "amount")] == {
        "kind": "number",
        "tol": 0.005,
        "reason": "cents are what the ledger keeps",
    }  # the definition's own x-compare: no guess
    assert rules[("create_ticket", "customer_email")]["reason"].startswith(
        "draft: an identifier (format: email)"
    )
    assert rules[("create_ticket", "due")] == {"kind": "date"}
    assert rules[("create_ticket", "channel")]["reason"] == (
        "draft: review: exact unless the tool resolves it case-insensitively"
    )
    assert rules[("search_kb", "limit")] == {"kind": "integer", "default": 5}


def test_bfcl_docs_documented_differently_on_two_lines_are_merged_and_noted() -> None:
    drafted = draft_spec("tests/bfcl/data.json")
    weather = next(t for t in drafted.draft.tools if t.name == "get_weather")
    assert "days" in weather.args
    assert any("documents it differently" in c for c in weather.comments)
    area = next(t for t in drafted.draft.tools if t.name == "geometry.area")
    assert area.args["exact"].node == {"kind": "boolean", "default": False}
    assert area.args["origin"].plain() == {"kind": "list", "items": {"kind": "integer"}}


def test_bfcl_multi_turn_function_docs_a_function_a_line_are_read(tmp_path: Path) -> None:
    """BFCL's multi-turn docs (multi_turn_func_doc/*.json) are JSON Lines of bare functions
    with BFCL's types, not entries holding a `function` list."""
    path = tmp_path / "file_system.json"
    path.write_text(
        '{"name": "cd", "description": "Change directory.", "parameters": {"type": "dict", '
        '"properties": {"folder": {"type": "string"}}, "required": ["folder"]}}\n'
        '{"name": "ls", "description": "List.", "parameters": {"type": "dict", '
        '"properties": {"a": {"type": "boolean", "default": false}}, "required": []}}\n'
    )
    drafted = draft_spec(path)
    assert drafted.draft.format == "bfcl"
    assert [t.name for t in drafted.draft.tools] == ["cd", "ls"]
    ls = next(t for t in drafted.draft.tools if t.name == "ls")
    assert ls.args["a"].node == {"kind": "boolean", "default": False}
    out = tmp_path / "drafted.yaml"
    out.write_text(drafted.text)
    assert set(load_specs(out).tools) == {"cd", "ls"}


def test_json_lines_of_something_else_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_text('{"name": "cd"}\n{"name": "ls"}\n')
    with pytest.raises(SpecError, match="not valid JSON"):
        draft_spec(path)


def test_a_default_its_rule_rejects_is_left_out_with_a_comment(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(
        '[{"name": "f", "input_schema": {"type": "object", "properties": '
        '{"n": {"type": "integer", "default": "ten"}, "e": {"enum": [1, 1]}}}}]'
    )
    drafted = draft_spec(path)
    n, e = drafted.draft.tools[0].args["n"], drafted.draft.tools[0].args["e"]
    assert n.node == {"kind": "integer"}
    assert n.comments == [
        "the schema's default 'ten' is left out: expected an integer, got string 'ten'"
    ]
    assert e.node["kind"] == "exact"
    assert e.node["reason"].startswith("draft: review: the schema's rule could not be translated")
    (tmp_path / "d.yaml").write_text(drafted.text)
    load_specs(tmp_path / "d.yaml")


def test_the_command_writes_the_draft_and_says_what_to_review(tmp_path: Path) -> None:
    out = tmp_path / "tools.yaml"
    source = "tests/drafting/definitions/mcp_tools_list.json"
    result = CliRunner().invoke(cli, ["spec", "init", source, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == (GOLDEN / "mcp_tools_list.yaml").read_text()
    assert result.output.strip() == (
        f"drafted 4 tools from mcp definitions; 8 guesses to review (`toolscore lint` lists "
        f"them); wrote {out}"
    )
    shown = CliRunner().invoke(cli, ["spec", "init", source, "--format", "mcp"])
    assert shown.exit_code == 0
    assert shown.stdout == out.read_text()
    linted = CliRunner().invoke(cli, ["lint", "--specs", str(out)])
    assert linted.exit_code == 0
    assert linted.output.strip().endswith("0 errors, 8 warnings")


@pytest.mark.parametrize(
    ("content", "arguments", "message"),
    [
        ('{"hello": 1}', [], "tools.json: (top): tool definitions are a list"),
        ("[]", [], "tools.json: holds no tool definitions"),
        (
            '{"tools": {"t": {"args": {}}}}',
            [],
            "tools.json: is a native spec already, not tool definitions",
        ),
        (
            '[{"name": "t", "input_schema": {}}]',
            ["--format", "mcp"],
            "tools.json: holds anthropic tool definitions, not mcp (see --format)",
        ),
        ('[{"name": "t", "input_schema": {}, "parameters": {}}]', [], "which format is it?"),
        ("[1, 2", [], "tools.json:1: not valid JSON"),
    ],
)
def test_an_unknown_shape_is_one_line_and_exit_2(
    content: str, arguments: list[str], message: str, tmp_path: Path
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(content)
    result = CliRunner().invoke(cli, ["spec", "init", str(path), *arguments])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert message in lines[0].replace(str(tmp_path) + "/", ""), lines[0]


def test_file_or_python_but_not_both() -> None:
    neither = CliRunner().invoke(cli, ["spec", "init"])
    assert neither.exit_code == 2
    assert "give FILE or --python" in neither.output
    both = CliRunner().invoke(cli, ["spec", "init", "x.json", "--python", "m:f"])
    assert both.exit_code == 2


def test_the_command_offers_every_format_the_drafting_reads() -> None:
    option = next(p for p in init_command.params if p.name == "format_name")
    assert list(option.type.choices) == list(DRAFT_FORMATS)  # type: ignore[attr-defined]


def test_the_command_drafts_from_python_functions() -> None:
    reference = str(SOURCES["support_example"]["python"])
    result = CliRunner().invoke(cli, ["spec", "init", "--python", reference])
    assert result.exit_code == 0, result.output
    assert result.stdout == (GOLDEN / "support_example.yaml").read_text()
    assert result.stderr.startswith("drafted 4 tools from python definitions; 7 guesses")
    missing = CliRunner().invoke(cli, ["spec", "init", "--python", "nowhere.py:f"])
    assert missing.exit_code == 2
    assert missing.stderr.strip() == "toolscore: error: --python: no such file: " + str(
        ROOT / "nowhere.py"
    )
