"""Reports and exports: written whole or not at all, with the mode `open()` would give them
(issue 11, item 8: they were created 0600 whatever the umask)."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli, example_dir
from toolscore.files import atomic_file, write_atomically


@pytest.fixture(params=[0o002, 0o022, 0o027, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_0666_less_the_umask(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "out.json"
    write_atomically(target, b"{}")
    assert target.read_bytes() == b"{}"
    assert mode(target) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    target.chmod(0o640)
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new"
    assert mode(target) == 0o640


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_bytes(b"old")

    def fail_halfway() -> None:
        with atomic_file(target) as handle:
            handle.write(b"half")
            raise RuntimeError

    with pytest.raises(RuntimeError):
        fail_halfway()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_reports_and_exports_follow_the_umask(tmp_path: Path, umask: int) -> None:
    example = tmp_path / "support"
    shutil.copytree(example_dir(), example)
    db, report = tmp_path / "r.db", tmp_path / "report.json"
    batch, labels = tmp_path / "batch.jsonl", tmp_path / "labels.csv"
    commands = [
        ["score", "--specs", str(example / "tools.yaml"), "--cases",
         str(example / "cases.jsonl"), "--outputs", str(example / "outputs.jsonl"),
         "--json", str(report), "--db", str(db)],
        ["disagreements", "1", "--db", str(db), "--out", str(batch)],
        ["labels", "export", "1", "--db", str(db), "--out", str(labels)],
    ]  # fmt: skip
    for args in commands:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
    for written in (report, batch, labels):
        assert mode(written) == 0o666 & ~umask, written.name
    assert mode(db) == 0o644 & ~umask  # SQLite creates its file 0644 less the umask
