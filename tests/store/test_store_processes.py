"""The store across processes: a save killed at any point leaves nothing half-written, and two
processes saving at once both succeed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolscore.cli.app import example_dir
from toolscore.store import Store, open_store

SAVER = """
import sys, time
from toolscore.core.model import CaseResult, Mismatch
from toolscore.scoring.summary import Summary
from toolscore.specs.loading import load_specs
from toolscore.store import RunMeta, open_store
from toolscore.store import writer as writer_module

writer_module.CACHE_KIB = 256  # a small page cache: the final copy spills into the log
db, folder, label, n, pause_at, runs, start_file = sys.argv[1:8]
n, pause_at, runs = int(n), int(pause_at), int(runs)
while start_file != "-" and not __import__("os").path.exists(start_file):
    time.sleep(0.001)
specs = load_specs(f"{folder}/tools.yaml")
wrong = (Mismatch("value_mismatch", ("order_id",), "exact", "order-7", "ORDER-7", "m" * 60, 0, 0),)
with open_store(db) as store:
    for _ in range(runs):
        meta = RunMeta.from_files(
            specs, f"{folder}/tools.yaml", f"{folder}/cases.jsonl", f"{folder}/outputs.jsonl",
            label, "test",
        )
        with store.begin_run(meta) as writer:
            for i in range(n):
                if i == pause_at:
                    print("staging", flush=True)
                    time.sleep(60)
                passed = i % 2 == 0
                writer.add(CaseResult(
                    f"{label}-{i}", passed, "tool", 0, () if passed else wrong,
                    {"exact": False, "lowercase": passed}, passed,
                ))
            print("finishing", flush=True)
            writer.finish(Summary(cases=n, passed=(n + 1) // 2))
print("done", flush=True)
"""


def saver(
    db: Path, label: str, n: int, pause_at: int = -1, runs: int = 1, start: str = "-"
) -> subprocess.Popen[str]:
    """A process saving `runs` runs of `n` case results (use it as a context manager)."""
    arguments = [str(db), str(example_dir()), label, str(n), str(pause_at), str(runs), start]
    return subprocess.Popen(
        [sys.executable, "-c", SAVER, *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def save(db: Path, label: str, n: int, runs: int = 1) -> None:
    """Save in a process of its own, to completion."""
    with saver(db, label, n, runs=runs) as child:
        _, errors = child.communicate(timeout=120)
    assert child.returncode == 0, errors


def assert_complete(store: Store) -> list[str | None]:
    """Every listed run has all its results; returns the runs' labels."""
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for run in store.runs():
        count = store.db.execute("SELECT count(*) FROM results WHERE run_id = ?", (run.id,))
        assert count.fetchone()[0] == run.cases
    orphans = store.db.execute(
        "SELECT count(*) FROM results WHERE run_id NOT IN (SELECT id FROM runs)"
    ).fetchone()[0]
    assert orphans == 0
    return [run.label for run in store.runs()]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store holding one complete run, made by a process of its own."""
    path = tmp_path / "results.db"
    save(path, "complete", 100)
    return path


def test_a_save_killed_while_staging_stores_nothing(db: Path) -> None:
    with saver(db, "killed", 50_000, pause_at=20_000) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "staging"
        child.send_signal(signal.SIGKILL)
    with open_store(db) as store:
        assert assert_complete(store) == ["complete"]


def test_a_save_killed_while_committing_stores_nothing(db: Path) -> None:
    wal = Path(f"{db}-wal")
    with saver(db, "killed", 300_000) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "finishing"
        start = wal.stat().st_size if wal.exists() else 0
        deadline = time.monotonic() + 30
        while (wal.stat().st_size if wal.exists() else 0) < start + (2 << 20):
            assert child.poll() is None, "the save finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.0005)
        child.send_signal(signal.SIGKILL)  # the copy into the store is under way
    assert wal.stat().st_size > start  # the killed transaction's pages are in the log...
    with open_store(db) as store:
        assert assert_complete(store) == ["complete"]  # ...and the store ignores them
    save(db, "after", 10)
    with open_store(db) as store:
        assert assert_complete(store) == ["complete", "after"]


def test_two_processes_saving_at_once_both_succeed(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "results.db"  # both also race to create and migrate it
    start = tmp_path / "start"
    with (
        saver(path, "a", 30_000, runs=3, start=str(start)) as a,
        saver(path, "b", 30_000, runs=3, start=str(start)) as b,
    ):
        time.sleep(0.5)
        start.touch()
        for child in (a, b):
            _, errors = child.communicate(timeout=300)
            assert child.returncode == 0, errors
    with open_store(path) as store:
        labels = assert_complete(store)
    assert sorted(map(str, labels)) == ["a", "a", "a", "b", "b", "b"]
