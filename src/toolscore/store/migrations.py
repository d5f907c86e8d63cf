"""The results store's schema, built by numbered migrations applied one transaction each.

`schema_version` holds the number of the last migration applied. Opening a store applies the
ones it lacks; a store written by a newer toolscore (a higher number than this one knows) is
refused rather than misread. A migration that fails leaves the store at the step before it.
Migrations, once released, never change: a new schema is a new migration, and the first
schema is kept as a test fixture (tests/store/) to prove old stores still open.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from toolscore.errors import InputError


@dataclass(frozen=True)
class Migration:
    """One schema step: what it does, in words, and the SQL statements that do it."""

    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "runs, their case results, and the files they were scored from",
        (
            "CREATE TABLE schema_version (version INTEGER NOT NULL)",
            "INSERT INTO schema_version (version) VALUES (0)",
            # Files (spec, cases, outputs) stored once per content, zlib-compressed in chunks
            # so that neither saving nor re-scoring holds a whole file in memory.
            """CREATE TABLE contents (
                sha256 TEXT PRIMARY KEY,
                size INTEGER NOT NULL,
                chunks INTEGER NOT NULL
            )""",
            """CREATE TABLE content_chunks (
                sha256 TEXT NOT NULL REFERENCES contents (sha256),
                seq INTEGER NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (sha256, seq)
            )""",
            """CREATE TABLE runs (
                id INTEGER PRIMARY KEY,
                created TEXT NOT NULL,
                label TEXT,
                toolscore_version TEXT NOT NULL,
                git_revision TEXT,
                rescored_from INTEGER REFERENCES runs (id),
                specs_path TEXT NOT NULL,
                specs_sha256 TEXT NOT NULL REFERENCES contents (sha256),
                specs_version TEXT,
                tool_versions TEXT NOT NULL,
                relaxations TEXT NOT NULL,
                cases_path TEXT NOT NULL,
                cases_sha256 TEXT NOT NULL REFERENCES contents (sha256),
                outputs_path TEXT NOT NULL,
                outputs_sha256 TEXT NOT NULL REFERENCES contents (sha256),
                cases INTEGER NOT NULL,
                passed INTEGER NOT NULL,
                accuracy REAL,
                name_accuracy REAL,
                argument_accuracy REAL,
                abstention_accuracy REAL,
                summary BLOB NOT NULL
            )""",
            # One row per case, in the order of the cases file. `baselines` packs the exact
            # and lowercase verdicts as bits 0 and 1; `detail` is the rest of the case's
            # report JSON (mismatches, notes, ...), NULL when there is nothing but no
            # mismatches, zlib-compressed when that makes it smaller.
            """CREATE TABLE results (
                run_id INTEGER NOT NULL REFERENCES runs (id),
                seq INTEGER NOT NULL,
                case_id TEXT NOT NULL,
                passed INTEGER NOT NULL,
                kind TEXT NOT NULL,
                plan INTEGER,
                baselines INTEGER,
                detail BLOB,
                PRIMARY KEY (run_id, seq)
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        "find earlier runs of the same cases and outputs (`score` reports their numbers)",
        ("CREATE INDEX runs_inputs ON runs (cases_sha256, outputs_sha256)",),
    ),
    Migration(
        "labelling batches of sampled disagreements, and the labels people gave them",
        (
            """CREATE TABLE batches (
                id INTEGER PRIMARY KEY,
                run_id INTEGER NOT NULL REFERENCES runs (id),
                created TEXT NOT NULL,
                baseline TEXT NOT NULL,
                seed INTEGER NOT NULL,
                requested INTEGER NOT NULL,
                disagreements INTEGER NOT NULL,
                strata TEXT NOT NULL
            )""",
            # One row per sampled case, in labelling order. `view` is what the labelling page
            # shows (prompt, plans, produced calls, differences) as JSON, so that a batch
            # stands on its own; `verdicts` holds the three scorers' verdicts, shown to a
            # person only after they labelled the case.
            """CREATE TABLE batch_cases (
                batch_id INTEGER NOT NULL REFERENCES batches (id),
                position INTEGER NOT NULL,
                case_id TEXT NOT NULL,
                stratum TEXT NOT NULL,
                verdicts TEXT NOT NULL,
                view BLOB NOT NULL,
                PRIMARY KEY (batch_id, position),
                UNIQUE (batch_id, case_id)
            )""",
            """CREATE TABLE labels (
                batch_id INTEGER NOT NULL REFERENCES batches (id),
                case_id TEXT NOT NULL,
                labeller TEXT NOT NULL,
                label TEXT NOT NULL CHECK (label IN ('correct', 'incorrect', 'unsure')),
                note TEXT NOT NULL DEFAULT '',
                updated TEXT NOT NULL,
                PRIMARY KEY (batch_id, case_id, labeller)
            )""",
        ),
    ),
    Migration(
        "judgments of remote rubrics (judge, similarity), reused instead of asking again",
        (
            # One row per scored judgment, keyed by the sha256 of everything that decided it
            # (rubrics/cache.py). `tokens` is what asking cost; `created` is when it was asked.
            # Unscored verdicts are never stored, so a later run asks again.
            """CREATE TABLE judgments (
                key TEXT PRIMARY KEY,
                rubric TEXT NOT NULL,
                score REAL NOT NULL,
                passed INTEGER NOT NULL,
                reason TEXT NOT NULL,
                tokens INTEGER NOT NULL,
                created TEXT NOT NULL
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        "agreement samples in labelling batches: each case's population, and the run's "
        "agreements per stratum (the weights of an estimate of the rule scorer's accuracy)",
        (
            "ALTER TABLE batches ADD COLUMN agreements_requested INTEGER NOT NULL DEFAULT 0",
            # The run's cases where the rule scorer agrees with the baseline, per stratum, as
            # JSON; NULL for a batch made before agreements were sampled.
            "ALTER TABLE batches ADD COLUMN agreement_strata TEXT",
            "ALTER TABLE batch_cases ADD COLUMN population TEXT NOT NULL DEFAULT 'disagreement' "
            "CHECK (population IN ('disagreement', 'agreement'))",
        ),
    ),
    Migration(
        "rubric results: each case's rubric entries, apart from its call verdict",
        (
            # One row per rubric entry of a case (`seq` is the case's, as in `results`):
            # a text argument of a plan call, the rubric, its score and pass (NULL when
            # unscored, `unscored` saying why), and the produced call (NULL when unpaired).
            """CREATE TABLE rubric_results (
                run_id INTEGER NOT NULL REFERENCES runs (id),
                seq INTEGER NOT NULL,
                plan_call INTEGER NOT NULL,
                argument TEXT NOT NULL,
                rubric TEXT NOT NULL,
                call INTEGER,
                tool TEXT NOT NULL,
                score REAL,
                passed INTEGER,
                reason TEXT NOT NULL,
                cached INTEGER NOT NULL,
                unscored TEXT,
                tokens INTEGER NOT NULL,
                PRIMARY KEY (run_id, seq, plan_call, argument, rubric)
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        "rubric batches: labelling batches that sample a run's results of one rubric",
        (
            # The rubric a batch samples, as JSON (name, kind, definition, how scores were
            # stratified, the run's unscored entries); NULL for a batch of calls.
            "ALTER TABLE batches ADD COLUMN rubric TEXT",
            # A rubric batch's item: the stored entry (case, plan call, argument, score,
            # passed, reason) as JSON, shown only once labelled; NULL in a batch of calls.
            "ALTER TABLE batch_cases ADD COLUMN entry TEXT",
        ),
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema this toolscore writes: the number of the last migration."""


def schema_version(db: sqlite3.Connection) -> int:
    """The number of the last migration applied to `db` (0 for an empty database)."""
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if row is None:
        return 0
    found = db.execute("SELECT version FROM schema_version").fetchone()
    return int(found[0]) if found is not None else 0


def migrate(
    db: sqlite3.Connection, source: str, migrations: Sequence[Migration] = MIGRATIONS
) -> int:
    """Bring `db` (a connection in autocommit mode) up to the last of `migrations`.

    Each step runs in its own transaction, taken with a write lock and re-checked inside it,
    so that two processes opening a new store at once apply each step exactly once.
    Returns the schema version reached; InputError (naming `source`) for a newer store.
    """
    db.execute("BEGIN")  # one snapshot for the checks, as another process may be migrating
    try:
        current = checked_version(db, source, len(migrations))
    finally:
        if db.in_transaction:  # SQLite ends it itself on some errors (disk I/O, disk full)
            db.execute("COMMIT")
    for number in range(current + 1, len(migrations) + 1):
        db.execute("BEGIN IMMEDIATE")
        try:
            if checked_version(db, source, len(migrations)) < number:
                for statement in migrations[number - 1].statements:
                    db.execute(statement)
                db.execute("UPDATE schema_version SET version = ?", (number,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite ends it itself on some errors (disk full)
                db.execute("ROLLBACK")
            raise
    return len(migrations)


def checked_version(db: sqlite3.Connection, source: str, known: int = SCHEMA_VERSION) -> int:
    """The schema version of `db` (read only); InputError naming `source` when it is newer
    than `known` or the database is not a toolscore store."""
    version = schema_version(db)
    if version > known:
        raise InputError(
            source,
            f"this results store has schema version {version}, written by a newer toolscore; "
            f"this one reads up to version {known}: upgrade toolscore to use it",
        )
    if version == 0 and _has_foreign_tables(db):
        raise InputError(source, "not a toolscore results store (it has other tables)")
    return version


def _has_foreign_tables(db: sqlite3.Connection) -> bool:
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchone()
    return row is not None
