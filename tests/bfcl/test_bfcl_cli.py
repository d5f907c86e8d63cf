"""`toolscore import bfcl` and `import bfcl-outputs` in-process: files written whole, exit 2 and
one line on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli
from toolscore.cli.bfcl import register

FIXTURES = Path(__file__).parents[1] / "bfcl"


@pytest.fixture(scope="module")
def group() -> click.Group:
    """The `import` commands on a group of their own (the lead registers them in cli.py)."""
    root = click.Group("toolscore")
    register(root)
    return root


def run(group: click.Group, *args: str) -> Result:
    return CliRunner().invoke(group, list(args))


def one_error_line(result: Result, text: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("toolscore: error: ")
    assert text in lines[0]


def test_import_writes_a_directory_that_scores(group: click.Group, tmp_path: Path) -> None:
    out = tmp_path / "bfcl"
    result = run(
        group, "import", "bfcl", str(FIXTURES / "data.json"),
        str(FIXTURES / "possible_answer.json"), "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "4 cases (4 with calls, 0 abstentions), 3 tools (1 merged" in result.stdout
    assert "note: tool get_weather: docs disagree on the default of unit" in result.stdout
    outputs = tmp_path / "outputs.jsonl"
    result = run(
        group, "import", "bfcl-outputs", str(FIXTURES / "results_fc.json"), "--out", str(outputs)
    )
    assert result.exit_code == 0, result.output
    assert (
        "4 outputs: 4 calls (0 unreadable, scored as failures), 1 without a call" in result.stdout
    )
    score = CliRunner().invoke(
        cli,
        ["score", "--specs", str(out / "tools.yaml"), "--cases", str(out / "cases.jsonl"),
         "--outputs", str(outputs), "--json", str(tmp_path / "report.json")],
    )  # fmt: skip
    assert score.exit_code == 1, score.output  # parallel_multiple_0 has no output
    report = json.loads((tmp_path / "report.json").read_text())
    verdicts = {c["id"]: c["passed"] for c in report["cases"]}
    assert verdicts == {
        "simple_python_0": False,  # broken JSON arguments
        "multiple_0": True,
        "parallel_0": True,
        "parallel_multiple_0": False,  # no output for it
    }


def test_prompting_outputs_count_unreadable_calls(group: click.Group, tmp_path: Path) -> None:
    outputs = tmp_path / "outputs.jsonl"
    result = run(
        group, "import", "bfcl-outputs", str(FIXTURES / "results_prompting.json"),
        "--out", str(outputs), "--bfcl-strings",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "4 calls (2 unreadable, scored as failures), 1 without a call" in result.stdout
    lines = [json.loads(line) for line in outputs.read_text().splitlines()]
    assert lines[0]["calls"][0]["args"] == {"city": "paris", "unit": "celsius"}


def test_irrelevance_needs_no_answer_file(group: click.Group, tmp_path: Path) -> None:
    result = run(
        group, "import", "bfcl", str(FIXTURES / "irrelevance.json"), "--out", str(tmp_path)
    )
    assert result.exit_code == 0, result.output
    assert "2 cases (0 with calls, 2 abstentions)" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bfcl", "missing.json", "--out", "{out}"], "missing.json: cannot read"),
        (
            ["bfcl", str(FIXTURES / "java.json"), "--out", "{out}"],
            "Java categories are not supported",
        ),
        (
            ["bfcl", str(FIXTURES / "data.json"), "--out", "{out}"],
            "no possible answer for this case",
        ),
        (
            ["bfcl", str(FIXTURES / "possible_answer.json"), "--out", "{out}"],
            "must be a list of function docs",
        ),
        (["bfcl-outputs", str(FIXTURES / "data.json"), "--out", "{out}/o.jsonl"], "no 'result'"),
        (["bfcl-outputs", "missing.json", "--out", "{out}/o.jsonl"], "cannot read"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    group: click.Group, tmp_path: Path, args: list[str], message: str
) -> None:
    result = run(group, "import", *[a.replace("{out}", str(tmp_path)) for a in args])
    one_error_line(result, message)
    assert not list(tmp_path.glob("*.jsonl"))
    assert not list(tmp_path.glob("*.yaml"))


def test_a_bad_line_is_named(group: click.Group, tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text('{"id": "a", "result": []}\n[1, 2]\n')
    result = run(group, "import", "bfcl-outputs", str(bad), "--out", str(tmp_path / "o.jsonl"))
    one_error_line(result, f"{bad}:2: each line must be a JSON object")
    assert not (tmp_path / "o.jsonl").exists()


def test_an_output_directory_that_is_a_file(group: click.Group, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run(group, "import", "bfcl", str(FIXTURES / "irrelevance.json"), "--out", str(blocker))
    one_error_line(result, "cannot create")
