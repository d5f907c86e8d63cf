"""Inputs from streams: `--outputs -`, `--cases -`, `/dev/stdin` and pipes (issue 11, item 8:
they were refused as "no such file")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import toolscore
from toolscore.cli.app import cli, example_dir

ENV_EXAMPLE = Path(__file__).parents[2] / "examples" / "support" / "env"
_SOURCES = str(Path(toolscore.__file__).resolve().parents[1])


def run(*args: str, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin)


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the support example; temporary files go to tmp_path/tmp, to be counted."""
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return target


def score(example: Path, cases: str, outputs: str, *extra: str) -> list[str]:
    return ["score", "--specs", str(example / "tools.yaml"), "--cases", cases,
            "--outputs", outputs, *extra]  # fmt: skip


def report_of(result: Result, path: Path) -> dict[str, object]:
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(path.read_text())
    return data


@pytest.mark.parametrize("workers", ["1", "2"])
def test_outputs_or_cases_from_stdin_give_the_same_report(example: Path, workers: str) -> None:
    cases, outputs = str(example / "cases.jsonl"), str(example / "outputs.jsonl")
    files, piped = example / "files.json", example / "piped.json"
    expected = report_of(run(*score(example, cases, outputs, "--json", str(files))), files)
    for args, stream in (((cases, "-"), outputs), (("-", outputs), cases)):
        extra = ("--json", str(piped), "--workers", workers)
        result = run(*score(example, *args, *extra), stdin=Path(stream).read_bytes())
        assert report_of(result, piped) == expected
        assert "66.7%" in result.stdout


def test_a_saved_run_from_stdin_keeps_the_content_and_names_it(example: Path) -> None:
    db = str(example / "r.db")
    outputs = (example / "outputs.jsonl").read_bytes()
    args = score(example, str(example / "cases.jsonl"), "-", "--db", db)
    result = run(*args, stdin=outputs)
    assert result.exit_code == 0, result.output
    assert "saved as run 1" in result.stdout
    runs = json.loads(run("runs", "--json", "--db", db).stdout)
    assert runs[0]["outputs_path"] == "-"
    assert runs[0]["accuracy"] == pytest.approx(4 / 6)
    assert not list((example.parent / "tmp").iterdir())  # the copy of stdin is gone
    again = run(*args, stdin=outputs)  # the same content: the earlier run is found
    assert again.exit_code == 0, again.output
    rescored = run("rescore", "1", "--specs", str(example / "tools.yaml"), "--db", db)
    assert rescored.exit_code == 0, rescored.output  # re-scored from the stored content
    assert "accuracy 66.7% under run 1" in rescored.stdout


@pytest.mark.parametrize("save", [False, True])
def test_a_bad_line_on_stdin_names_stdin_and_the_line(example: Path, save: bool) -> None:
    lines = (example / "outputs.jsonl").read_bytes().splitlines(keepends=True)
    broken = b"".join(lines[:2]) + b'{"id": 3}\n'
    extra = ("--db", str(example / "r.db")) if save else ()
    result = run(*score(example, str(example / "cases.jsonl"), "-", *extra), stdin=broken)
    assert result.exit_code == 2
    assert (
        result.stderr == "toolscore: error: <stdin>:3: id: every line needs a non-empty string id\n"
    )
    assert not list((example.parent / "tmp").iterdir())


def test_cases_and_outputs_cannot_both_be_stdin(example: Path) -> None:
    result = run(*score(example, "-", "-"), stdin=b"")
    assert result.exit_code == 2
    assert result.stderr == (
        "toolscore: error: --cases and --outputs: cannot both read standard input "
        "(a stream is read once)\n"
    )


def test_a_missing_file_or_a_directory_is_still_one_line(example: Path) -> None:
    for path, message in ((example / "nope.jsonl", "no such file"), (example, "is a directory")):
        result = run(*score(example, str(path), str(example / "outputs.jsonl")))
        assert result.exit_code == 2
        assert result.stderr.startswith(f"toolscore: error: {path}: {message}")


def test_dev_stdin_and_a_pipe_are_read(example: Path) -> None:
    program = (
        f"import sys; sys.path.insert(0, {_SOURCES!r}); from toolscore.cli.app import main; main()"
    )
    outputs = (example / "outputs.jsonl").read_bytes()
    args = score(example, str(example / "cases.jsonl"), "/dev/stdin", "--json", "-")
    done = subprocess.run(
        [sys.executable, "-c", program, *args], input=outputs, capture_output=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["passed"] == 4
    both = [sys.executable, "-c", program, *score(example, "/dev/stdin", "-")]
    done = subprocess.run(both, input=b"", capture_output=True, timeout=60, check=False)
    assert done.returncode == 2
    assert b"cannot both read standard input" in done.stderr


def test_replay_and_label_import_read_stdin(example: Path) -> None:
    outputs = (ENV_EXAMPLE / "outputs.jsonl").read_bytes()
    result = run(
        "replay", "--specs", str(ENV_EXAMPLE / "tools.yaml"), "--outputs", "-", "--case",
        "refund-twice", stdin=outputs,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "call 1 refund:" in result.stdout
    db = str(example / "r.db")
    saved = run(
        *score(example, str(example / "cases.jsonl"), str(example / "outputs.jsonl"), "--db", db)
    )
    assert saved.exit_code == 0
    assert run("disagreements", "1", "--db", db).exit_code == 0
    labels = b"case_id,label,labeller\r\ndefault-omitted,correct,ann\r\n"
    imported = run("labels", "import", "1", "-", "--format", "csv", "--db", db, stdin=labels)
    assert imported.exit_code == 0, imported.output
    assert "stored 1 labels in batch 1" in imported.stdout
