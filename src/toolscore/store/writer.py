"""Save a run as it is scored, and commit it whole or not at all.

The input files and the case results are staged in temporary tables on a connection of the
writer's own (`staging`); `finish` copies them into the store in one transaction. The
store's write lock is therefore held only for that copy, not for the whole scoring, and a
save interrupted at any point (an exception, Ctrl-C, a kill) leaves the store as it was.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from toolscore.core.model import CaseResult
from toolscore.errors import InputError
from toolscore.report.json_report import case_to_json
from toolscore.scoring.summary import Summary
from toolscore.store.codec import (
    ResultRow,
    case_row,
    mismatch_tools,
    pack_json,
    plain_row,
)
from toolscore.store.connection import connect
from toolscore.store.content import has_content
from toolscore.store.integrity import check_before_writing, is_damage, read_error
from toolscore.store.meta import InputFile, RunMeta
from toolscore.store.rubrics import COMMIT_STAGED, INSERT_STAGED, rubric_rows
from toolscore.store.staging import INSERT_RESULT, TABLES, stage_content

if TYPE_CHECKING:
    from toolscore.rubrics.entries import RubricEntry

BATCH = 4096
"""Case results staged per insert."""
CACHE_KIB = 65536
"""Page cache of the writer's connection: the copy into the store runs from memory."""


def result_row(result: CaseResult) -> ResultRow:
    """The stored row of one case result: its report JSON, taken apart into columns."""
    row = plain_row(result)
    if row is None:
        row = case_row(case_to_json(result), mismatch_tools(result))
    return row


class RunWriter:
    """Collects one run's case results and stores them with the run on `finish`.

    Use it as a context manager (`with store.begin_run(meta) as writer:`): leaving the block
    without `finish` (by an exception or otherwise) stores nothing.
    """

    def __init__(self, path: Path, meta: RunMeta, *, check: bool = True) -> None:
        self.path = path
        self.meta = meta
        self.check = check
        """Whether to run `quick_check` first (not when the store opening it just did)."""
        self.run_id: int | None = None
        """The id of the stored run, once `finish` has committed it."""
        self._db: sqlite3.Connection | None = None
        self._rows: list[ResultRow] = []

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """A disk that is full or read-only, say, as one input error naming the store."""
        try:
            yield
        except (sqlite3.OperationalError, OSError) as error:
            self._close()
            raise InputError(str(self.path), f"cannot save the run: {error}") from None
        except sqlite3.DatabaseError as error:
            if not is_damage(error):
                raise
            problem = read_error(self._db, self.path, error)
            self._close()
            raise problem from None

    def __enter__(self) -> RunWriter:
        with self._errors():
            self._stage_inputs()
        return self

    def _stage_inputs(self) -> None:
        db = self._db = connect(self.path)
        try:
            db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            if self.check:
                check_before_writing(db, self.path)
            for statement in TABLES:
                db.execute(statement)
            missing = self._missing_contents(db)
            # Staging is one transaction on the temporary tables only: the store itself is
            # neither read nor locked again until `finish`.
            db.execute("BEGIN")
            for item in missing:
                stage_content(db, item)
        except BaseException:
            self._close()
            raise

    def __exit__(self, *_: object) -> None:
        self._close()

    def add(self, result: CaseResult) -> None:
        """Stage one case result (in the order of the cases file)."""
        self._rows.append(result_row(result))
        if len(self._rows) >= BATCH:
            self._flush()

    def add_rows(self, rows: list[ResultRow]) -> None:
        """Stage case results already made into rows (`result_row`, by a scoring worker)."""
        self._rows.extend(rows)
        if len(self._rows) >= BATCH:
            self._flush()

    def add_rubrics(self, cases: Iterable[tuple[str, Iterable[RubricEntry]]]) -> None:
        """Stage rubric entries by case id (a worker's, or remote ones decided after the
        cases: the case's position is found when the run is stored)."""
        rows = [row for case_id, entries in cases for row in rubric_rows(case_id, entries)]
        if rows:
            with self._errors():
                self._connection().executemany(INSERT_STAGED, rows)

    def _flush(self) -> None:
        if self._rows:
            with self._errors():
                self._connection().executemany(INSERT_RESULT, self._rows)
            self._rows.clear()

    def finish(self, summary: Summary, stored: dict[str, Any] | None = None) -> int:
        """Store the run and its staged results in one transaction; return the run's id.
        `stored` is the summary JSON to keep when it is not `summary.to_dict()` (a
        rubrics-only rescore keeps the old run's, byte for byte)."""
        with self._errors():
            return self._finish(summary, stored)

    def _finish(self, summary: Summary, stored: dict[str, Any] | None = None) -> int:
        db = self._connection()
        try:
            self._flush()
            db.execute("COMMIT")
        except BaseException:
            self._close()
            raise
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT INTO main.content_chunks SELECT sha256, seq, data FROM temp.staged_chunks "
                "WHERE sha256 NOT IN (SELECT sha256 FROM main.contents)"
            )
            db.execute("INSERT OR IGNORE INTO main.contents SELECT * FROM temp.staged_contents")
            run_id = self._insert_run(db, summary, stored)
            db.execute(
                "INSERT INTO main.results "
                "SELECT ?, rowid - 1, case_id, passed, kind, plan, baselines, detail "
                "FROM temp.staged_results ORDER BY rowid",
                (run_id,),
            )
            if db.execute("SELECT 1 FROM temp.staged_rubrics LIMIT 1").fetchone() is not None:
                db.execute(COMMIT_STAGED, (run_id,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            self._close()
        self.run_id = run_id
        return run_id

    def _insert_run(
        self, db: sqlite3.Connection, summary: Summary, stored: dict[str, Any] | None
    ) -> int:
        meta = self.meta
        specs = meta.specs.describe()
        relaxations = [r.to_json() for r in meta.specs.relaxations]
        cursor = db.execute(
            """INSERT INTO main.runs (
                created, label, toolscore_version, git_revision, rescored_from,
                specs_path, specs_sha256, specs_version, tool_versions, relaxations,
                cases_path, cases_sha256, outputs_path, outputs_sha256,
                cases, passed, accuracy, name_accuracy, argument_accuracy,
                abstention_accuracy, summary
            ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                meta.created,
                meta.label,
                meta.toolscore_version,
                meta.git_revision,
                meta.rescored_from,
                meta.specs_file.path,
                meta.specs_file.sha256,
                specs["version"],
                orjson.dumps(specs["tools"]).decode(),
                orjson.dumps(relaxations).decode(),
                meta.cases_file.path,
                meta.cases_file.sha256,
                meta.outputs_file.path,
                meta.outputs_file.sha256,
                summary.cases,
                summary.passed,
                summary.accuracy,
                summary.name.value,
                summary.arguments.value,
                summary.abstention.value,
                pack_json(summary.to_dict() if stored is None else stored),
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _missing_contents(self, db: sqlite3.Connection) -> list[InputFile]:
        """The input files whose content the store does not have yet."""
        missing: dict[str, InputFile] = {}
        for item in (self.meta.specs_file, self.meta.cases_file, self.meta.outputs_file):
            if item.sha256 in missing or has_content(db, item.sha256):
                continue
            if not item.readable:
                raise InputError(str(self.path), f"the store lacks the content of {item.path}")
            missing[item.sha256] = item
        return list(missing.values())

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("use the writer as a context manager, and finish it only once")
        return self._db

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
