"""A report or results store that cannot be written (disk full, read-only) is one error line
with exit status 2, and leaves nothing half-written; a device given as the report is written
into, never replaced. Built from issue 11, item 7's reproducers."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import stat
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from toolscore import files
from toolscore.cli.app import cli, example_dir
from toolscore.store import connection, open_store, writer


@pytest.fixture
def example(tmp_path: Path) -> Path:
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    return target


def score(directory: Path, *extra: str) -> Result:
    args = [
        "score",
        "--specs", str(directory / "tools.yaml"),
        "--cases", str(directory / "cases.jsonl"),
        "--outputs", str(directory / "outputs.jsonl"),
        *extra,
    ]  # fmt: skip
    return CliRunner().invoke(cli, args)


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    errors = [line for line in result.output.splitlines() if line.startswith("toolscore: error")]
    assert len(errors) == 1, result.output
    assert "Traceback" not in result.output
    return errors[0]


def _is_char_device(path: str) -> bool:
    return os.path.exists(path) and stat.S_ISCHR(os.stat(path).st_mode)


@pytest.mark.skipif(not _is_char_device("/dev/full"), reason="no /dev/full on this system")
def test_a_report_on_a_full_disk_is_one_line_and_the_device_stays(example: Path) -> None:
    line = one_error_line(score(example, "--json", "/dev/full"))
    assert line == "toolscore: error: /dev/full: cannot write: No space left on device"
    assert _is_char_device("/dev/full")  # written into, not replaced by a regular file


@pytest.mark.skipif(not _is_char_device("/dev/null"), reason="no /dev/null on this system")
def test_a_report_to_a_device_is_written_into_it(example: Path) -> None:
    result = score(example, "--json", "/dev/null")
    assert result.exit_code == 0, result.output
    assert _is_char_device("/dev/null")


def _refuse(code: int) -> object:
    def refuse(*args: object, **kwargs: object) -> object:
        raise OSError(code, os.strerror(code))

    return refuse


@pytest.mark.parametrize(
    ("module", "where"), [(tempfile, "TemporaryFile"), (files, "_create_beside")]
)
def test_a_report_in_a_read_only_place_is_one_line(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: object, where: str
) -> None:
    # Root may write into a directory without write permission, so the file system's refusal
    # is simulated where the report writer creates its files (the spool, the final file).
    monkeypatch.setattr(module, where, _refuse(errno.EROFS))
    report = tmp_path / "report.json"
    line = one_error_line(score(example, "--json", str(report)))
    assert line == f"toolscore: error: {report}: cannot write: Read-only file system"
    assert not report.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["support"]  # no temporary file left


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_report_in_a_directory_without_write_permission_is_one_line(
    example: Path, tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        line = one_error_line(score(example, "--json", str(locked / "r.json")))
    finally:
        locked.chmod(0o755)
    assert line.endswith("cannot write: Permission denied")


def test_a_report_that_is_a_directory_is_refused_before_scoring(
    example: Path, tmp_path: Path
) -> None:
    line = one_error_line(score(example, "--json", str(tmp_path)))
    assert line == f"toolscore: error: {tmp_path}: is a directory, not a report file"


def _small_disk(pages: int) -> object:
    """`connection.connect` on a disk with room for `pages` pages of the store: SQLite then
    fails a write with SQLITE_FULL ("database or disk is full"), as on a full disk."""
    real = connection.connect

    def connect(path: Path) -> sqlite3.Connection:
        db = real(path)
        db.execute(f"PRAGMA max_page_count = {pages}")
        return db

    return connect


def test_a_save_on_a_full_disk_is_one_line_and_stores_nothing(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "results.db"
    assert score(example, "--db", str(db)).exit_code == 0
    with open_store(db) as store:
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    monkeypatch.setattr(writer, "connect", _small_disk(pages))
    outputs = example / "outputs.jsonl"
    noise = os.urandom(20_000).hex()  # stored compressed: it must not compress away
    padded = outputs.read_text().replace('"response": "', '"response": "' + noise)
    outputs.write_text(padded)  # new content to store, more than the disk holds
    report = tmp_path / "r.json"
    line = one_error_line(score(example, "--db", str(db), "--label", "full", "--json", str(report)))
    assert line == f"toolscore: error: {db}: cannot save the run: database or disk is full"
    assert not report.exists()
    with open_store(db) as store:
        assert [run.label for run in store.runs()] == [None]
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_save_to_a_read_only_store_is_one_line(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "results.db"
    assert score(example, "--db", str(db)).exit_code == 0

    def read_only(path: Path) -> sqlite3.Connection:
        opened = connection.connect(path)
        opened.execute("PRAGMA query_only = ON")  # every write fails as on read-only media
        return opened

    monkeypatch.setattr(writer, "connect", read_only)
    line = one_error_line(score(example, "--db", str(db), "--label", "again"))
    assert (
        line == f"toolscore: error: {db}: cannot save the run: attempt to write a readonly database"
    )
    with open_store(db) as store:
        assert len(store.runs()) == 1


def test_a_store_that_cannot_be_prepared_is_one_line(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolscore.store import database  # noqa: PLC0415

    monkeypatch.setattr(database, "connect", _small_disk(1))
    db = tmp_path / "new.db"
    line = one_error_line(score(example, "--db", str(db)))
    assert (
        line
        == f"toolscore: error: {db}: cannot prepare the results store: database or disk is full"
    )
