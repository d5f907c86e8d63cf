"""`toolscore.run.score_files`, called as a library: every output a run writes from one loop,
nothing written when the run fails, the progress it reports, and what decides its exit."""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from toolscore import files
from toolscore.cli.app import example_dir
from toolscore.errors import InputError, OptionsError, OutputError
from toolscore.run import Progress, RunOptions, score_files
from toolscore.store import open_store


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """The bundled support-desk example, copied (its specs, cases and outputs)."""
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    return target


def options(directory: Path, **more: object) -> RunOptions:
    return RunOptions(
        specs_path=str(directory / "tools.yaml"),
        cases_path=str(directory / "cases.jsonl"),
        outputs_path=str(directory / "outputs.jsonl"),
        **more,  # type: ignore[arg-type]
    )


def every_output(out: Path) -> dict[str, object]:
    return {
        "json_target": str(out / "report.json"),
        "html_path": str(out / "report.html"),
        "junit_path": str(out / "junit.xml"),
        "otel_path": str(out / "events.jsonl"),
        "db_path": str(out / "results.db"),
    }


def test_a_run_writes_every_output_it_is_asked_for(example: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = score_files(options(example, label="v1", **every_output(out)))
    assert result.run_id == 1
    assert result.html_path == str(out / "report.html")
    assert sorted(p.name for p in out.iterdir()) == [
        "events.jsonl", "junit.xml", "report.html", "report.json", "results.db",
    ]  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    assert report["summary"] == result.summary.to_dict()
    assert "engine" not in report  # the local engine is not named
    assert len(report["cases"]) == result.summary.cases
    events = [orjson.loads(line) for line in (out / "events.jsonl").read_bytes().splitlines()]
    records = events[0]["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert len(records) == result.summary.cases
    assert f'tests="{result.summary.cases}"' in (out / "junit.xml").read_text()
    assert "<html" in (out / "report.html").read_text()
    with open_store(out / "results.db") as store:
        [run] = store.runs()
        assert (run.id, run.label, run.accuracy) == (1, "v1", result.summary.accuracy)
    failed = [case for case in report["cases"] if not case["passed"]]
    assert [f.id for f in result.failures] == [case["id"] for case in failed][:10]
    assert result.earlier == []


def test_the_same_run_without_outputs_gives_the_same_summary(example: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    written = score_files(options(example, **every_output(out)))
    bare = score_files(options(example))
    assert bare.summary.to_dict() == written.summary.to_dict()
    assert (bare.run_id, bare.html_path) == (None, None)


def test_a_failing_input_leaves_nothing_written(example: Path, tmp_path: Path) -> None:
    lines = (example / "outputs.jsonl").read_bytes().splitlines()
    (example / "outputs.jsonl").write_bytes(b"\n".join([*lines[:3], b"{not json", *lines[3:]]))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(OutputError, match=r"outputs\.jsonl:4"):
        score_files(options(example, **every_output(out)))
    assert [p.name for p in out.iterdir()] == ["results.db"]  # the store, with no run in it
    with open_store(out / "results.db") as store:
        assert store.runs() == []
    assert list(Path(tempfile.gettempdir()).glob("toolscore-report-*")) == []


def test_an_output_that_cannot_be_written_after_the_save_names_the_saved_run(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> object:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(files, "_create_beside", refuse)  # the report's and JUnit's final file
    out = tmp_path / "out"
    out.mkdir()
    asked = {"json_target": str(out / "report.json"), "junit_path": str(out / "junit.xml")}
    with pytest.raises(InputError) as raised:
        score_files(options(example, db_path=str(out / "results.db"), **asked))
    assert str(raised.value) == (
        f"{out / 'report.json'}: cannot write: Read-only file system (the run was saved as run 1)"
    )
    assert [p.name for p in out.iterdir()] == ["results.db"]  # JUnit's file discarded too


def test_progress_is_told_the_bytes_read_then_that_scoring_is_done(example: Path) -> None:
    told: list[Progress] = []
    score_files(options(example), told.append)
    size = (example / "cases.jsonl").stat().st_size
    assert told[-1] == Progress(size, size, finished=True)
    reading = told[:-1]
    assert reading
    assert not any(p.finished for p in reading)
    assert all(p.total == size for p in reading)
    assert [p.read for p in reading] == sorted(p.read for p in reading)


def test_the_result_says_why_the_run_fails(example: Path) -> None:
    passing = score_files(options(example))
    assert not passing.failing
    assert (passing.below_fail_under, passing.missing, passing.likely_causes) == (False, None, [])
    accuracy = passing.summary.accuracy or 0.0
    assert score_files(options(example, fail_under=accuracy)).failing is False
    above = score_files(options(example, fail_under=min(1.0, accuracy + 0.01)))
    assert above.below_fail_under
    assert above.failing


def test_missing_outputs_fail_the_run_unless_they_are_excluded(example: Path) -> None:
    lines = (example / "outputs.jsonl").read_bytes().splitlines()
    (example / "outputs.jsonl").write_bytes(lines[0] + b"\n")
    failing = score_files(options(example))
    assert failing.failing
    assert not failing.below_fail_under
    assert failing.missing is not None
    assert failing.missing.startswith("5 cases without an output line")
    assert failing.likely_causes  # most cases have no output: the likely cause is told
    excluded = score_files(options(example, missing="exclude"))
    assert excluded.missing is None
    assert not excluded.failing


@pytest.mark.parametrize(
    ("more", "message", "option"),
    [
        ({"cluster_by": "id"}, "'id' cannot group cases", "--cluster-by"),
        ({"address": "ray://x"}, "--address and --joined need --engine ray", None),
        ({"tool_timeout": 1.0}, "--tool-timeout applies to replay: add --env", None),
        ({"group_by": "trace_id"}, "groups the spans of an OpenTelemetry", "--group-by"),
        ({"cases_path": None}, "give --cases and --outputs", None),
    ],
)
def test_options_that_do_not_go_together_are_an_options_error(
    example: Path, more: dict[str, object], message: str, option: str | None
) -> None:
    given = options(example)
    with pytest.raises(OptionsError) as raised:
        score_files(replace(given, **more))  # type: ignore[arg-type]
    assert raised.value.message.startswith(message)
    assert raised.value.option == option


@pytest.mark.parametrize(
    ("more", "error"),
    [
        (["--cluster-by", "id"], "Error: Invalid value for --cluster-by: 'id' cannot group cases"),
        (["--address", "ray://x"], "Error: --address and --joined need --engine ray"),
        (["--tool-timeout", "1"], "Error: --tool-timeout applies to replay: add --env"),
    ],
)
def test_the_command_line_shows_an_options_error_as_a_usage_error(
    example: Path, more: list[str], error: str
) -> None:
    from click.testing import CliRunner  # noqa: PLC0415

    from toolscore.cli.app import cli  # noqa: PLC0415

    given = options(example)
    args = ["score", "--specs", given.specs_path, "--cases", str(given.cases_path)]
    result = CliRunner().invoke(cli, [*args, "--outputs", str(given.outputs_path), *more])
    assert result.exit_code == 2
    assert result.output.startswith("Usage: cli score [OPTIONS]\n")  # CliRunner names it cli
    assert result.output.endswith(f"\n{error}\n")
