"""Agent and file text on the terminal: escape codes, bidi overrides and rich markup in a tool
name, an argument, a response, a case id, a run label or a labeller's name print as inert
text in every view (issue 11, item 8: the "Weakest tools" table let an agent clear the screen).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from toolscore.cli.app import cli, example_dir
from toolscore.report.printable import printable

HOSTILE = "\x1b[2J\x1b]0;pwned\x07[red]boom[/red]:x:\u202eevil\x9b31m\r\nFAKE\x7f"
"""Clears the screen, retitles the window, recolours (raw and C1 CSI), reverses the text
direction, starts a new line, and tries rich markup and an emoji code."""
SHOWN = "\\x1b[2J\\x1b]0;pwned\\x07[red]boom[/red]:x:\\u202eevil\\x9b31m\\r\\nFAKE\\x7f"
"""How HOSTILE reads on the terminal once escaped."""
_RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Any control character a terminal would act on (the output's own newlines aside)."""

ENV_EXAMPLE = Path(__file__).parents[2] / "examples" / "support" / "env"


def invoke(*args: str, input: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def assert_inert(text: str) -> None:
    found = _RAW.search(text)
    assert found is None, f"raw {found.group()!r} near {text[max(0, found.start() - 40) :]!r}"
    assert "\nFAKE" not in text  # the agent's newline did not start a line of its own


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return path


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """The support example with a hostile case id, spec version, tool name, argument name
    and value and response, saved twice: run 1 passes (a disagreement with exact JSON),
    run 2, labelled hostile, fails."""
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    spec = (target / "tools.yaml").read_text()
    spec = spec.replace('version: "2026.11"', 'version: "\\e[2J[red]v[/red]\\u202e"')
    (target / "tools.yaml").write_text(spec)
    case = {
        "id": "case" + HOSTILE,
        "plans": [[{"name": "refund", "args": {"order_id": "order-77", "amount": 12.5}}]],
    }
    write_jsonl(target / "cases.jsonl", [case])
    calls = [
        {"name": HOSTILE, "args": {"x": HOSTILE}},
        {"name": "refund", "args": {"order_id": HOSTILE, "amount": 12.5, HOSTILE: 1}},
    ]
    write_jsonl(target / "outputs.jsonl", [{"id": case["id"], "calls": calls, "response": HOSTILE}])
    # Rules pass this one (a free-text note is not compared); exact JSON fails it.
    right = {"name": "refund", "args": {"order_id": "order-77", "amount": 12.5, "note": HOSTILE}}
    write_jsonl(target / "right.jsonl", [{"id": case["id"], "calls": [right]}])
    for outputs, label in (("right.jsonl", "first"), ("outputs.jsonl", HOSTILE)):
        result = invoke(*score_args(target, outputs), "--save", "--label", label)
        assert result.exit_code == 0, result.output
    return target


def score_args(directory: Path, outputs: str = "outputs.jsonl") -> list[str]:
    return [
        "score", "--specs", str(directory / "tools.yaml"), "--cases",
        str(directory / "cases.jsonl"), "--outputs", str(directory / outputs),
        "--db", str(directory / "results.db"),
    ]  # fmt: skip


def test_printable_escapes_controls_and_keeps_other_text() -> None:
    assert printable(HOSTILE) == SHOWN
    kept = "Zürich 東京 👩‍👩‍👧 tab-free [bold] :x: \\x1b"
    assert printable(kept) == kept
    assert printable("\u2066\u2069\u200f\u061c\u2028\ud800") == (
        "\\u2066\\u2069\\u200f\\u061c\\u2028\\ud800"
    )


@settings(max_examples=200)
@given(st.text())
def test_printable_leaves_nothing_a_terminal_acts_on(text: str) -> None:
    shown = printable(text)
    assert _RAW.search(shown) is None
    assert "\n" not in shown
    assert printable(shown) == shown  # escaping twice changes nothing


@pytest.mark.parametrize("summary", ["plain", "tables"])
def test_score_prints_agent_text_inert(hostile: Path, summary: str) -> None:
    """In both views of the summary (issue 30): the tool name, an argument's name and value
    and the case id hold ANSI escapes, a carriage return, a bidi override and rich markup."""
    result = invoke(*score_args(hostile), "--summary", summary)
    assert result.exit_code == 0, result.output
    assert_inert(result.output)
    assert "Weakest tools" in result.stdout
    assert SHOWN in result.stdout  # the tool name, escaped, markup and emoji code as written
    assert "[red]v[/red]\\u202e" in result.stdout  # the spec version
    assert ("┃ name" in result.stdout) is (summary == "tables")
    # the unknown tool's row in the weakest tools, its name whole in the plain view
    if summary == "plain":
        assert re.search(re.escape(SHOWN) + r" +0 +0 +1 +unknown_tool x1\n", result.stdout)
    assert f"unknown_tool call 0: '{SHOWN}' is not a tool" in result.stdout  # a failure line
    value = SHOWN[:38]  # the produced value, as the mismatch shows it (cut)
    assert f"value_mismatch call 1 /order_id [exact]: '{value}" in result.stdout
    report = invoke(*score_args(hostile), "--json", "-", "--summary", summary)
    assert_inert(report.stderr)
    assert SHOWN in report.stderr


def test_stored_runs_print_agent_text_inert(hostile: Path) -> None:
    db = str(hostile / "results.db")
    views = [
        invoke("runs", "--db", db),
        invoke("show", "2", "--db", db),
        invoke("show", "2", "--db", db, "--summary", "tables"),
        invoke("show", "2", "--case", "case" + HOSTILE, "--db", db),
        invoke("compare", "1", "2", "--db", db),
        invoke("spec-diff", "run:1", str(example_dir() / "tools.yaml"), "--db", db),
    ]
    for result in views:
        assert result.exit_code == 0, result.output
        assert_inert(result.output)
    assert "│ \\x1b[2J\\x1b…" in views[0].stdout  # the run's label, cut to its column
    assert "case" + SHOWN in views[1].stdout  # a failing case, in both views of the summary
    assert "case" + SHOWN in views[2].stdout
    assert "case" + SHOWN in views[3].stdout
    assert "case" + SHOWN in views[4].stdout  # the flipped case


def test_calibration_views_print_agent_text_inert(hostile: Path) -> None:
    db = str(hostile / "results.db")
    assert invoke("disagreements", "1", "--db", db).exit_code == 0
    labels = write_jsonl(
        hostile / "labels.jsonl",
        [{"case_id": "case" + HOSTILE, "label": "incorrect", "labeller": HOSTILE, "note": HOSTILE}],
    )
    assert invoke("labels", "import", "1", str(labels), "--db", db).exit_code == 0
    views = [invoke("batches", "--db", db), invoke("calibrate", "1", "--db", db)]
    for result in views:
        assert result.exit_code == 0, result.output
        assert_inert(result.output)
        assert SHOWN in result.stdout  # the labeller's name
    assert "case" + SHOWN in views[1].stdout  # the scorer bug's case


def test_replay_and_error_lines_print_agent_text_inert(tmp_path: Path) -> None:
    calls = [
        {"name": HOSTILE, "args": {}},
        {"name": "refund", "args": {"order_id": "order-77", "amount": 1, "note": HOSTILE}},
        {"name": "get_order", "args": {"order_id": HOSTILE}},
    ]
    outputs = write_jsonl(tmp_path / "o.jsonl", [{"id": "refund-twice", "calls": calls}])
    args = ["replay", "--specs", str(ENV_EXAMPLE / "tools.yaml"), "--outputs", str(outputs)]
    result = invoke(*args, "--case", "refund-twice")
    assert result.exit_code == 0, result.output
    assert_inert(result.output)
    assert f"call 0 {SHOWN}: error:" in result.stdout
    missing = invoke(*args, "--case", HOSTILE)
    assert missing.exit_code == 2
    assert_inert(missing.stderr)


def test_lint_prints_file_text_inert(tmp_path: Path) -> None:
    spec = tmp_path / "tools.json"
    spec.write_bytes(orjson.dumps({"tools": {HOSTILE: {"args": {"a": {"kind": HOSTILE}}}}}))
    result = invoke("lint", "--specs", str(spec))
    assert result.exit_code == 1
    assert_inert(result.output)
    assert SHOWN in result.stdout
