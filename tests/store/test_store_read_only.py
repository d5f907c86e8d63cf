"""A results store on read-only media can be listed and read (issue 11, item 8: `runs` said
"cannot use the results store: unable to open database file").

The store's directory is made read-only with a read-only bind mount in a new user and mount
namespace (`unshare`), so that the check holds for root too, as on a read-only disk; where
namespaces are not available the tests are skipped. An old store on read-only media needs a
migration it cannot get: one line says so.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import toolscore
from toolscore.calibration.batches import Batches
from toolscore.cli.app import cli, example_dir
from toolscore.store import SCHEMA_VERSION, open_store

FIRST_SCHEMA = Path(__file__).parents[1] / "store" / "schema-1.sql"
_MOUNT_READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
_SOURCES = str(Path(toolscore.__file__).resolve().parents[1])


def read_only(directory: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run `argv` with `directory` mounted read-only."""
    command = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _MOUNT_READ_ONLY]
    return subprocess.run(
        [*command, str(directory), *argv], capture_output=True, text=True, timeout=60, check=False
    )


def toolscore_read_only(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The toolscore command line, run with `directory` mounted read-only."""
    program = (
        f"import sys; sys.path.insert(0, {_SOURCES!r}); from toolscore.cli.app import main; main()"
    )
    return read_only(directory, sys.executable, "-c", program, *args)


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """A directory holding a store with the support example saved twice and a batch."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) to mount a directory read-only")
    probe = read_only(tmp_path, "sh", "-c", f"! touch {tmp_path}/probe 2>/dev/null")
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a directory read-only here: {probe.stderr.strip()}")
    example = example_dir()
    db = tmp_path / "results.db"
    args = ["score", "--specs", str(example / "tools.yaml"), "--cases",
            str(example / "cases.jsonl"), "--outputs", str(example / "outputs.jsonl"),
            "--db", str(db)]  # fmt: skip
    for _ in range(2):
        assert CliRunner().invoke(cli, args).exit_code == 0
    assert CliRunner().invoke(cli, ["disagreements", "1", "--db", str(db)]).exit_code == 0
    return tmp_path


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["runs"], "66.7%"),
        (["runs", "--json"], '"accuracy"'),
        (["show", "latest"], "Failing cases"),
        (["show", "1", "--case", "thanks"], "thanks: FAILED"),
        (["show", "1", "--json"], '"cases"'),
        (["compare", "1", "2"], "0 cases flipped"),
        (["spec-diff", "run:1", "run:2"], "no changes"),
        (["batches"], "batch 1: run 1"),
        (["labels", "export", "1"], ""),
        (["calibrate", "1"], "nothing labelled yet"),
    ],
)
def test_reading_commands_work_on_a_read_only_store(
    store_dir: Path, args: list[str], expected: str
) -> None:
    before = sorted(p.name for p in store_dir.iterdir())
    done = toolscore_read_only(store_dir, *args, "--db", str(store_dir / "results.db"))
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
    assert sorted(p.name for p in store_dir.iterdir()) == before


def test_a_write_to_a_read_only_store_is_one_line(store_dir: Path) -> None:
    done = toolscore_read_only(
        store_dir, "disagreements", "1", "--db", str(store_dir / "results.db")
    )
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "results.db" in done.stderr


def test_an_old_store_on_read_only_media_says_it_needs_a_migration(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) to mount a directory read-only")
    db = sqlite3.connect(tmp_path / "old.db")
    db.executescript(FIRST_SCHEMA.read_text())
    db.close()
    done = toolscore_read_only(tmp_path, "runs", "--db", str(tmp_path / "old.db"))
    if "mount" in done.stderr:
        pytest.skip(f"cannot mount a directory read-only here: {done.stderr.strip()}")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"toolscore: error: {tmp_path / 'old.db'}: this results store has schema version 1 "
        f"and needs migrating to version {SCHEMA_VERSION} before this toolscore can read it, "
        "but it is read-only: copy it somewhere writable and use the copy"
    ]


def test_a_store_whose_log_holds_data_on_read_only_media_is_one_line(store_dir: Path) -> None:
    copy = store_dir / "copy"
    copy.mkdir()
    writer = sqlite3.connect(store_dir / "results.db")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("UPDATE runs SET label = 'only in the log'")
    writer.commit()
    for name in ("results.db", "results.db-wal"):  # copied while the log holds the update
        shutil.copy(store_dir / name, copy / name)
    writer.close()
    done = toolscore_read_only(copy, "runs", "--db", str(copy / "results.db"))
    assert done.returncode == 2, done.stdout
    assert done.stderr.strip().splitlines() == [
        f"toolscore: error: {copy / 'results.db'}: cannot open the results store read-only "
        "(unable to open database file) while results.db-wal holds data: open it once where "
        "it can be written, then copy it"
    ]


def test_an_old_writable_store_is_migrated_when_read(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "old.db")
    db.executescript(FIRST_SCHEMA.read_text())
    db.close()
    result = CliRunner().invoke(cli, ["runs", "--json", "--db", str(tmp_path / "old.db")])
    assert result.exit_code == 0, result.output
    assert '"label": "schema 1 fixture"' in result.stdout
    with open_store(tmp_path / "old.db", read_only=True) as store:
        assert Batches.of(store).all_batches() == []  # the batches table exists: migrated


def test_reading_never_creates_a_store(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["runs", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 2
    assert "no results store here" in result.stderr
    assert not (tmp_path / "none.db").exists()
