"""The store's schema: built by migrations from empty, from the first schema, never downgraded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner

from toolscore.calibration.batches import Batches
from toolscore.cli.store import register
from toolscore.errors import InputError
from toolscore.store import SCHEMA_VERSION, open_store
from toolscore.store.connection import connect
from toolscore.store.migrations import MIGRATIONS, Migration, migrate, schema_version
from toolscore.store.rescore import rescore

FIRST_SCHEMA = Path(__file__).parents[1] / "store" / "schema-1.sql"
"""A store at schema version 1 holding one run of examples/support (see the file's header)."""


def tables(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")
    return {name for (name,) in rows if not name.startswith("sqlite_")}


def first_schema_store(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(FIRST_SCHEMA.read_text())
    db.close()
    return path


def test_an_empty_file_gets_every_migration(tmp_path: Path) -> None:
    with open_store(tmp_path / "results.db") as store:
        assert schema_version(store.db) == SCHEMA_VERSION == len(MIGRATIONS)
        assert {"runs", "results", "contents", "content_chunks", "runs_inputs"} <= tables(store.db)
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with open_store(tmp_path / "results.db") as again:  # opening twice changes nothing
        assert schema_version(again.db) == SCHEMA_VERSION


def test_a_first_schema_store_is_migrated_and_its_run_still_reads(tmp_path: Path) -> None:
    path = first_schema_store(tmp_path / "old.db")
    db = sqlite3.connect(path)
    assert schema_version(db) == 1
    assert "runs_inputs" not in tables(db)
    db.close()
    with open_store(path) as store:
        assert schema_version(store.db) == SCHEMA_VERSION
        assert "runs_inputs" in tables(store.db)
        run = store.run(1)
        assert (run.label, run.cases, run.passed, run.specs_version) == (
            "schema 1 fixture",
            6,
            4,
            "2026.11",
        )
        cases = list(store.cases(1))
        assert [c["id"] for c in cases if not c["passed"]] == ["wrong-case-id", "thanks"]
        assert cases[2]["mismatches"][0]["produced"] == "ORDER-77"
        assert store.summary(1)["accuracy"] == 0.6667
        assert store.previous_scores(run.cases_sha256, run.outputs_sha256)[0].run_id == 1
        assert len(store.specs(run).tools) == 2
        new_specs = tmp_path / "tools.yaml"
        new_specs.write_bytes(b"".join(raw for _, raw in store.content_lines(run.specs_sha256)))
        assert rescore(store, 1, new_specs) == 2  # re-scored from the content the fixture kept


def test_a_newer_store_is_refused_with_its_file_named(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    open_store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    db.commit()
    db.close()
    with pytest.raises(InputError, match="newer toolscore") as caught:
        open_store(path)
    assert caught.value.source == str(path)
    group = click.Group()
    register(group)
    result = CliRunner().invoke(group, ["runs", "--db", str(path)])
    assert result.exit_code == 2
    assert str(path) in result.stderr
    assert f"schema version {SCHEMA_VERSION + 1}" in result.stderr


def test_a_failing_migration_leaves_the_store_at_the_step_before(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    broken = (
        *MIGRATIONS,
        Migration(
            "half done", ("CREATE TABLE half_done (name TEXT)", "INSERT INTO nowhere VALUES (1)")
        ),
    )
    db = connect(path)
    with pytest.raises(sqlite3.OperationalError, match="nowhere"):
        migrate(db, str(path), broken)
    assert schema_version(db) == len(MIGRATIONS)
    assert "half_done" not in tables(db)
    assert not db.in_transaction
    db.close()


THIRD_SCHEMA = Path(__file__).parents[1] / "store" / "schema-3.sql"
"""A store at schema version 3: a run of examples/support and a labelled batch of its
disagreements, made before batches sampled agreements (see the file's header)."""


def test_a_batch_made_before_agreements_still_reads_and_calibrates(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(THIRD_SCHEMA.read_text())
    assert schema_version(db) == 3
    db.close()
    with open_store(path) as store:
        assert schema_version(store.db) == SCHEMA_VERSION
        info = Batches.of(store).info(1)
        assert (info.size, info.disagreements, info.agreements_requested) == (4, 4, 0)
        assert (info.agreement_strata, info.agreements_sampled) == (None, 0)
        assert {case.population for case in Batches.of(store).cases(1)} == {"disagreement"}
        labels = {label.case_id: label.label for label in Batches.of(store).labels(1)}
        assert labels == {
            "default-omitted": "correct",
            "unit-alias": "incorrect",
            "computed-amount": "correct",
        }
    group = click.Group()
    from toolscore.cli.calibration import register as register_calibration  # noqa: PLC0415

    register_calibration(group)
    result = CliRunner().invoke(group, ["calibrate", "1", "--db", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.output)
    assert report["labels"] == {"correct": 2, "incorrect": 1, "unsure": 0}
    assert report["scorer_bug_rate"]["bugs"] == 1  # unit-alias: passed, the person says not
    assert report["run_accuracy"]["available"] is False
    assert report["batch"]["agreement_strata"] is None
    # the upgraded store takes a new batch with agreements beside the old one
    result = CliRunner().invoke(
        group, ["disagreements", "1", "--agreements", "2", "--db", str(path), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.output)["agreement_strata"] == {
        "get_order [extra_call]": 1,
        "refund.order_id [exact]": 1,
    }
