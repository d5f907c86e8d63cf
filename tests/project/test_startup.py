"""What starting toolscore imports: only what the run uses, so that start-up stays short.

Each test runs in a fresh interpreter (a subprocess) and lists the modules it imported;
the features a run does not use (the results store, replay, calibration, BFCL import, JSON
Schema, the web labelling page, scipy) must not be among them. A second run that does use a
feature shows that the listing sees it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import orjson
import pytest

from imported_modules import found, imported
from toolscore.cli.app import LAZY_COMMANDS, cli

UNUSED_BY_SCORE = (
    "scipy",
    "jsonschema",
    "starlette",
    "uvicorn",
    "jinja2",
    "sqlite3",
    "concurrent.futures",
    "rich.progress",
    "toolscore.store",
    "toolscore.state",
    "toolscore.calibration",
    "toolscore.bfcl",
    "toolscore.lint.checks",
    "toolscore.cli.demo",
    "toolscore.cli.store",
    "toolscore.cli.calibration",
    "toolscore.cli.label",
    "toolscore.cli.bfcl",
    "openai",
    "toolscore.rubrics.remote",
)

SPEC = """
tools:
  refund:
    args:
      order_id: exact
      amount: {kind: number, tol: 0.01}
"""


@pytest.fixture
def inputs(tmp_path: Path) -> list[str]:
    """A spec, cases and outputs whose every case passes."""
    (tmp_path / "tools.yaml").write_text(SPEC)
    cases = [{"id": "c0", "plans": [[{"name": "refund", "args": {"order_id": "o0"}}]]}]
    outputs = [{"id": "c0", "calls": [{"name": "refund", "args": {"order_id": "o0"}}]}]
    (tmp_path / "cases.jsonl").write_bytes(b"\n".join(map(orjson.dumps, cases)) + b"\n")
    (tmp_path / "outputs.jsonl").write_bytes(b"\n".join(map(orjson.dumps, outputs)) + b"\n")
    return [
        "score", "--specs", str(tmp_path / "tools.yaml"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"),
    ]  # fmt: skip


def test_score_imports_none_of_the_features_it_does_not_use(
    tmp_path: Path, inputs: list[str]
) -> None:
    modules = imported(tmp_path, *inputs, "--json", str(tmp_path / "report.json"))
    assert (tmp_path / "report.json").exists()
    assert found(modules, UNUSED_BY_SCORE) == []


@pytest.mark.parametrize("mode", ["auto", "plain", "none"])
def test_a_summary_not_drawn_as_tables_imports_no_rich(
    tmp_path: Path, inputs: list[str], mode: str
) -> None:
    """Standard output is a pipe here: `auto` prints the plain summary, and neither it nor
    `plain` nor `none` loads rich, whose import and tables cost a short run most of its time
    (issue 30); asked for, the tables do load it (so the listing would see it)."""
    report = tmp_path / "report.json"
    modules = imported(tmp_path, *inputs, "--json", str(report), "--summary", mode)
    assert report.exists()
    assert found(modules, ("rich",)) == []
    assert ("toolscore.report.plain_view" in modules) is (mode != "none")  # printed plainly
    tables = imported(tmp_path, *inputs, "--json", str(report), "--summary", "tables")
    assert "rich.console" in tables
    assert "rich.table" in tables


def test_show_prints_a_stored_run_plainly_without_rich(tmp_path: Path, inputs: list[str]) -> None:
    db = str(tmp_path / "results.db")
    imported(tmp_path, *inputs, "--db", db)
    assert found(imported(tmp_path, "show", "latest", "--db", db), ("rich",)) == []
    assert "rich.table" in imported(tmp_path, "show", "latest", "--db", db, "--summary", "tables")


def test_the_listing_sees_a_feature_once_a_run_uses_it(tmp_path: Path, inputs: list[str]) -> None:
    modules = imported(tmp_path, *inputs, "--db", str(tmp_path / "results.db"))
    assert found(modules, ("toolscore.store", "sqlite3")) != []
    assert found(modules, ("toolscore.calibration", "toolscore.bfcl", "jsonschema")) == []


def test_saving_a_run_imports_no_scipy_and_compare_does(tmp_path: Path, inputs: list[str]) -> None:
    """The paired statistics of `compare` import scipy when they run, not with the store."""
    db = str(tmp_path / "results.db")
    saved = imported(tmp_path, *inputs, "--db", db)
    assert "toolscore.stats.paired" in saved
    assert found(saved, ("scipy",)) == []
    imported(tmp_path, *inputs, "--db", db)
    assert "scipy.stats" in imported(tmp_path, "compare", "1", "2", "--db", db)


def test_a_tool_list_spec_imports_json_schema_and_a_native_one_does_not(
    tmp_path: Path, inputs: list[str]
) -> None:
    tool_list = [
        {"type": "function", "function": {"name": "refund", "parameters": {
            "type": "object", "properties": {"order_id": {"type": "string"},
                                             "amount": {"type": "number"}},
        }}},
    ]  # fmt: skip
    (tmp_path / "tools.json").write_bytes(orjson.dumps(tool_list))
    args = [str(tmp_path / "tools.json") if a.endswith("tools.yaml") else a for a in inputs]
    assert "jsonschema" in imported(tmp_path, *args)
    assert "jsonschema" not in imported(tmp_path, *inputs)


def test_lint_and_version_import_neither_rich_nor_the_scorer_s_extras(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(SPEC)
    lint = imported(tmp_path, "lint", "--specs", str(tmp_path / "tools.yaml"))
    assert "toolscore.lint.checks" in lint
    assert found(lint, ("rich", *UNUSED_BY_SCORE)) == ["toolscore.lint.checks"]
    version = imported(tmp_path, "--version")
    assert found(version, ("rich", "yaml", *UNUSED_BY_SCORE)) == []


def test_the_package_alone_imports_no_command_line_nor_optional_library(tmp_path: Path) -> None:
    listing = tmp_path / "modules.txt"
    code = f"import sys, toolscore; open({str(listing)!r}, 'w').write(' '.join(sys.modules))"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    modules = set(listing.read_text().split())
    own = sorted(m for m in modules if m.startswith("toolscore"))
    assert own == ["toolscore", "toolscore._version", "toolscore.build"]  # the rest: on first use
    heavy = (
        "click",
        "rich",
        "yaml",
        "toolscore.report",
        "toolscore.engines.local",
        *UNUSED_BY_SCORE,
    )
    assert found(modules, heavy) == []


def test_a_public_name_imports_its_module_on_first_use(tmp_path: Path) -> None:
    listing = tmp_path / "modules.txt"
    code = (
        "import sys; from toolscore import score_case, Case; "
        f"open({str(listing)!r}, 'w').write(' '.join(sys.modules))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    modules = set(listing.read_text().split())
    assert {"toolscore.scoring.case", "toolscore.core.model"} <= modules
    assert found(modules, ("click", "toolscore.engines.local")) == []


READ_ONLY_WHEN_MET = (
    "toolscore.inputs.formats.openai_chat",
    "toolscore.inputs.formats.anthropic",
    "toolscore.inputs.formats.responses",
    "toolscore.inputs.formats.transcript",
    "toolscore.inputs.mcp_log",
    "toolscore.inputs.otlp_export",
    "toolscore.inputs.inspect_logs",
    "toolscore.inputs.output_turns",
    "toolscore.rubrics.spec",
    "toolscore.rubrics.checks",
    "toolscore.rubrics.base",
    "toolscore.scoring.conversation",
    "zoneinfo",
)
"""Modules a run of plain `calls` lines under a spec without rubrics does not need: the
provider readers, the converters of other layouts, the rubrics, conversations, time zones."""


def test_plain_calls_lines_load_no_provider_reader_nor_rubric(
    tmp_path: Path, inputs: list[str]
) -> None:
    modules = imported(tmp_path, *inputs, "--json", str(tmp_path / "report.json"))
    assert found(modules, READ_ONLY_WHEN_MET) == []


def test_a_transcript_line_and_a_rubric_load_their_modules(
    tmp_path: Path, inputs: list[str]
) -> None:
    (tmp_path / "tools.yaml").write_text(
        SPEC + "      note: {kind: text, rubric: {kind: not_empty}}\n"
    )
    messages = [
        {"role": "user", "content": "refund o0"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "t0", "type": "function",
            "function": {"name": "refund", "arguments": '{"order_id": "o0"}'},
        }]},
    ]  # fmt: skip
    line = {"id": "c0", "format": "openai-chat", "messages": messages}
    (tmp_path / "outputs.jsonl").write_bytes(orjson.dumps(line) + b"\n")
    modules = imported(tmp_path, *inputs, "--json", str(tmp_path / "report.json"))
    report = orjson.loads((tmp_path / "report.json").read_bytes())
    assert report["summary"]["passed"] == 1
    expected = ("toolscore.inputs.formats.openai_chat", "toolscore.rubrics.spec")
    assert found(modules, expected) == sorted(expected)


def test_each_lazy_command_is_registered_by_the_module_named_for_it() -> None:
    by_module: dict[str, set[str]] = {}
    for name, module in LAZY_COMMANDS.items():
        by_module.setdefault(module, set()).add(name)
    for module, names in by_module.items():
        group = click.Group()
        __import__(module, fromlist=["register"]).register(group)
        assert set(group.commands) == names, module


def test_help_lists_every_command_and_an_unknown_one_is_refused() -> None:
    from click.testing import CliRunner  # noqa: PLC0415

    shown = CliRunner().invoke(cli, ["--help"])
    assert shown.exit_code == 0
    for name in (*LAZY_COMMANDS, "score", "lint", "replay", "demo"):
        assert f"\n  {name} " in shown.output
    unknown = CliRunner().invoke(cli, ["scores"])
    assert unknown.exit_code == 2
    assert "No such command 'scores'." in unknown.output
    assert "(Did you mean one of: 'rescore', 'score', 'store'?)" in unknown.output


def test_a_deterministic_rubric_imports_no_extra_and_a_regex_one_only_its_time_limit(
    tmp_path: Path, inputs: list[str]
) -> None:
    """Rubric runs import what their rubrics need: a `mentions` rubric nothing beyond the
    scorer; a `regex` one the time limit of `toolscore.limits` (which stops a search that
    backtracks too long), and not the state package that replay shares it with; neither
    imports the remote rubrics' module (the `openai` client)."""
    for kind, extra in (("mentions", "argument: order_id"), ("regex", "pattern: '^R'")):
        note = f"      note: {{kind: text, rubric: {{kind: {kind}, {extra}}}}}\n"
        spec = SPEC.replace("      order_id: exact\n", "      order_id: exact\n" + note)
        (tmp_path / "tools.yaml").write_text(spec)
        modules = imported(tmp_path, *inputs, "--json", str(tmp_path / "report.json"))
        assert "toolscore.scoring.rubric_run" in modules
        assert found(modules, ("toolscore.rubrics.remote", "openai")) == []
        assert found(modules, UNUSED_BY_SCORE) == []
        assert ("toolscore.limits" in modules) is (kind == "regex")
