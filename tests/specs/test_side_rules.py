"""A side rules file (docs/formats.md 2.5): a native spec whose tools come from a file of
tool definitions, adding or overriding rules per tool and argument. Its problems name the
side file's fields, the definitions' problems their own file's positions; its sha256 covers
both files; a results store keeps the bundle and reads the spec again without either file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.errors import SpecError
from toolscore.lint.checks import lint_files
from toolscore.specs.loading import bundled_specs, check_specs, load_specs, parse_specs
from toolscore.store.database import open_store

DEFINITIONS = Path(__file__).parent / "definitions"
SIDE = """\
version: "2026.12"
definitions: tools.json
tools:
  refund:
    version: 4
    args:
      order_id: {kind: casefold, reason: "the ledger folds case"}
      note: {kind: text, rubric: {checks: [{kind: length, max: 500}]}, reason: "a rubric judges it"}
  lookup:
    args:
      query: {kind: text, reason: "words, not an identifier"}
relax:
  - {allow: extra_calls, tools: [lookup], reason: "a read-only lookup"}
forbid:
  - {tool: refund, args: {unit: USD}, reason: "no dollar refunds"}
"""


@pytest.fixture
def side(tmp_path: Path) -> Path:
    """A side rules file beside an MCP tools/list result."""
    shutil.copy(DEFINITIONS / "mcp_result.json", tmp_path / "tools.json")
    path = tmp_path / "rules.yaml"
    path.write_text(SIDE)
    return path


def test_the_side_file_overrides_rules_and_keeps_the_rest(side: Path) -> None:
    specs = load_specs(side)
    listed = load_specs(side.parent / "tools.json")
    refund = specs.tools["refund"]
    assert refund.version == 4
    assert refund.args.args["order_id"].kind == "casefold"
    assert refund.args.args["amount"] == listed.tools["refund"].args.args["amount"]
    assert list(refund.args.args) == list(listed.tools["refund"].args.args)
    assert specs.tools["lookup"].version is None
    assert specs.tools["lookup"].args.args["query"].kind == "text"
    assert specs.version == "2026.12"
    assert not specs.version_from_sha
    assert specs.extra_ok == {"lookup"}
    assert [f.tool for f in specs.forbid] == ["refund"]
    assert [use.rubric for use in specs.rubric_uses["refund"]] == ["refund.note"]
    assert not specs.tool_list


def test_rules_are_named_in_the_file_that_declares_them(side: Path) -> None:
    specs = load_specs(side)
    tools_json = str(side.parent / "tools.json")
    assert specs.rule_field("refund", ("order_id",)) == "tools.refund.args.order_id"
    assert specs.rule_source("refund", ("order_id",)) == str(side)
    assert specs.rule_field("refund", ("amount",)) == (
        "tools[0].inputSchema.properties.amount.x-compare"
    )
    assert specs.rule_source("refund", ("amount",)) == tools_json
    tools = side.parent / "tools.json"
    data = json.loads(tools.read_text())
    del data["tools"][1]["inputSchema"]["properties"]["address"]["properties"]["city"]["x-compare"][
        "reason"
    ]
    tools.write_text(json.dumps(data))
    side.write_text(SIDE.replace('reason: "the ledger folds case"', ""))
    assert [str(f) for f in lint_files(side)] == [
        f"warning: {side}: tools.refund.args.order_id: casefold forgives differences: add a "
        "reason saying why that is safe",
        f"warning: {tools_json}: tools[1].inputSchema.properties.address.properties.city"
        ".x-compare: casefold forgives differences: add a reason saying why that is safe",
    ]


def test_unknown_tools_and_arguments_are_errors_naming_the_side_file(side: Path) -> None:
    text = SIDE.replace("      query: {kind: text", "      qury: {kind: text")
    side.write_text(text.replace("tools:\n  refund:", "tools:\n  refnd: {}\n  refund:"))
    tools = side.parent / "tools.json"
    _, problems = check_specs(side)
    assert [str(p) for p in problems] == [
        f"{side}: tools.refnd: 'refnd' is not a tool of {tools} (tools: refund, lookup)"
        " (did you mean 'refund'?)",
        f"{side}: tools.lookup.args.qury: 'qury' is not an argument of 'lookup' in {tools} "
        "(arguments: query, limit, exact_match, tags, address) (did you mean 'query'?)",
    ]


def test_a_bad_override_and_a_bad_definition_are_named_in_their_own_files(side: Path) -> None:
    tools = side.parent / "tools.json"
    data = json.loads(tools.read_text())
    data["tools"][1]["inputSchema"]["properties"]["limit"]["default"] = "ten"
    tools.write_text(json.dumps(data))
    side.write_text(
        SIDE.replace(
            'query: {kind: text, reason: "words, not an identifier"}',
            "query: {kind: number, tol: -1}",
        )
    )
    _, problems = check_specs(side)
    assert sorted(str(p) for p in problems) == sorted(
        [
            f"{tools}: tools[1].inputSchema.properties.limit: default 'ten' is rejected by its "
            "own rule: expected an integer, got string 'ten'",
            f"{side}: tools.lookup.args.query: tol must be a finite number >= 0, got -1",
        ]
    )


def test_the_sha256_covers_both_files_and_a_missing_label_comes_from_it(side: Path) -> None:
    first = load_specs(side)
    tools = side.parent / "tools.json"
    tools.write_text(tools.read_text().replace("Find orders", "Find orders fast"))
    second = load_specs(side)
    assert first.sha256 != second.sha256
    side.write_text(SIDE.replace('version: "2026.12"\n', ""))
    third = load_specs(side)
    assert third.sha256 not in (first.sha256, second.sha256)
    assert third.version == f"sha256:{third.sha256[:12]}"
    assert third.version_from_sha


def test_definitions_must_be_a_file_and_must_exist(side: Path) -> None:
    _, problems = parse_specs({"definitions": "tools.json", "tools": {"t": {}}}, "spec.yaml")
    assert [str(p) for p in problems] == [
        "spec.yaml: definitions: must be the path of a definitions file, read from a spec file"
    ]
    side.write_text(SIDE.replace("definitions: tools.json", "definitions: nowhere.json"))
    with pytest.raises(SpecError, match=r"nowhere\.json: cannot read"):
        load_specs(side)


def test_a_store_keeps_the_bundle_and_reads_the_spec_again(side: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "c1", "plans": [[{"name": "refund", "args": {"order_id": "o-1", '
        '"amount": 12.5, "note": "sorry"}}]]}\n'
    )
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(
        '{"id": "c1", "calls": [{"name": "refund", "args": {"order_id": "O-1", '
        '"amount": 12.501, "note": "so sorry"}}]}\n'
    )
    db = tmp_path / "runs.db"
    args = ["score", "--specs", str(side), "--cases", str(cases), "--outputs", str(outputs)]
    result = CliRunner().invoke(cli, [*args, "--db", str(db), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    loaded = load_specs(side)
    assert report["specs"]["sha256"] == loaded.sha256
    (side.parent / "tools.json").unlink()
    side.unlink()
    store = open_store(db)
    run = store.run(1)
    stored = store.specs(run)
    assert stored.sha256 == loaded.sha256
    assert stored.tools["refund"].args == loaded.tools["refund"].args
    assert "(stored with run 1)" in stored.source


def test_spec_diff_compares_definitions_and_their_side_file(side: Path) -> None:
    tools = side.parent / "tools.json"
    shown = CliRunner().invoke(cli, ["spec-diff", str(tools), str(side), "--json"])
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.stdout)
    assert report["old"]["version"].startswith("sha256:")
    assert report["old"]["version_from"] == "sha256"
    assert report["new"]["version"] == "2026.12"
    changed = {(c["code"], c["tool"], c["argument"]) for c in report["changes"]}
    assert ("kind_changed", "refund", "order_id") in changed
    assert ("kind_changed", "lookup", "query") in changed
    assert "relaxation_added" in {code for code, _, _ in changed}


def test_a_damaged_stored_bundle_is_one_error() -> None:
    assert bundled_specs(b"version: 1\ntools: {}\n", " (stored with run 1)") is None
    with pytest.raises(SpecError, match="a stored bundle that cannot be read"):
        bundled_specs(b'{"toolscore_bundle": 1, "rules": 3}', " (stored with run 1)")
