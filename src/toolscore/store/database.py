"""The results store: open it (migrating an older one), save runs, and read them back."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson
import yaml

from toolscore.errors import InputError, SpecError
from toolscore.specs.loading import Relaxation, SpecSet, bundled_specs, parse_specs
from toolscore.specs.parsing import safe_loader
from toolscore.store.codec import case_json, unpack_json
from toolscore.store.connection import connect, connect_read_only, store_path
from toolscore.store.content import iter_content_lines, read_content
from toolscore.store.integrity import check_before_writing, is_damage, read_error
from toolscore.store.meta import RunMeta
from toolscore.store.migrations import SCHEMA_VERSION, checked_version, migrate
from toolscore.store.rubrics import with_rubrics
from toolscore.store.writer import RunWriter

if TYPE_CHECKING:
    from toolscore.store.judgments import StoredJudgments

_RESULT_COLUMNS = "case_id, passed, kind, plan, baselines, detail"


class PreviousScore(NamedTuple):
    """An earlier run of the same cases and outputs: which specs scored it, and how it did."""

    run_id: int
    specs_sha256: str
    specs_version: str | None
    accuracy: float | None


@dataclass(frozen=True)
class RunInfo:
    """A stored run's provenance and headline metrics (its `runs` row, summary aside)."""

    id: int
    created: str
    label: str | None
    toolscore_version: str
    git_revision: str | None
    rescored_from: int | None
    specs_path: str
    specs_sha256: str
    specs_version: str | None
    tool_versions: dict[str, Any]
    relaxations: list[dict[str, Any]]
    cases_path: str
    cases_sha256: str
    outputs_path: str
    outputs_sha256: str
    cases: int
    passed: int
    accuracy: float | None
    name_accuracy: float | None
    argument_accuracy: float | None
    abstention_accuracy: float | None

    def to_json(self) -> dict[str, Any]:
        """The run as `toolscore runs --json` lists it."""
        return asdict(self)

    def heading(self) -> str:
        """One line naming the run: id, time, label, git revision, what it re-scored, and
        its inputs (raw: a view makes it printable)."""
        parts = [f"run {self.id}", self.created]
        if self.label:
            parts.append(f"label {self.label!r}")
        if self.git_revision:
            parts.append(f"git {self.git_revision[:12]}")
        if self.rescored_from is not None:
            parts.append(f"re-scored from run {self.rescored_from}")
        parts.append(f"cases {self.cases_path}, outputs {self.outputs_path}")
        return " · ".join(parts)

    def spec_stand_in(self) -> SpecSet:
        """A spec set with this run's provenance and relaxations but no tools: what the
        terminal report prints about specs, without parsing the stored spec file."""
        return SpecSet(
            tools={},
            relaxations=tuple(
                Relaxation(r["allow"], tuple(r["tools"]), r["reason"]) for r in self.relaxations
            ),
            version=self.specs_version,
            source=self.specs_path,
            sha256=self.specs_sha256,
        )


_RUN_FIELDS = tuple(
    name for name in RunInfo.__dataclass_fields__ if name not in ("tool_versions", "relaxations")
)
_RUN_COLUMNS = ", ".join(_RUN_FIELDS)


def open_store(
    path: str | Path | None = None, *, create: bool = True, read_only: bool = False
) -> Store:
    """Open the results store at `path` (default: $TOOLSCORE_DB, else ./.toolscore/results.db).

    An older store is migrated to the current schema; a newer one is refused (InputError).
    A store opened to be written (not `read_only`), or to be migrated, is checked first
    (`integrity.check_before_writing`): a damaged one is refused with one InputError.
    With `create=False` a missing store is an input error instead of a new, empty one.
    `read_only` is for commands that only read (it implies `create=False`): a store this
    process may not write (read-only media, another user's file) is then opened without
    writing to it, and refused with an InputError saying so if it needs a migration.
    """
    where = store_path(path)
    if where.is_dir():
        raise InputError(str(where), "is a directory, not a results store file")
    if not where.exists():
        if not create or read_only:
            raise InputError(
                str(where), "no results store here (save a run with `toolscore score --save`)"
            )
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(str(where), f"cannot create: {error.strerror or error}") from None
    elif read_only and not _writable(where):
        return _open_read_only(where)
    db = connect(where)
    try:
        if not read_only or checked_version(db, str(where)) < SCHEMA_VERSION:
            check_before_writing(db, where)  # once, before a migration or any other write
        migrate(db, str(where))
    except sqlite3.OperationalError as error:  # the disk is full or read-only, say
        db.close()
        raise InputError(str(where), f"cannot prepare the results store: {error}") from None
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            db.close()
            raise
        problem = read_error(db, where, error)
        db.close()
        raise problem from None
    except BaseException:
        db.close()
        raise
    return Store(db, where, checked=not read_only)


def _open_read_only(where: Path) -> Store:
    """The store opened without writing to it; InputError when it needs a migration."""
    db = connect_read_only(where)
    try:
        version = checked_version(db, str(where))
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            db.close()
            raise
        problem = read_error(db, where, error)
        db.close()
        raise problem from None
    except BaseException:
        db.close()
        raise
    if version < SCHEMA_VERSION:
        db.close()
        raise InputError(
            str(where),
            f"this results store has schema version {version} and needs migrating to version "
            f"{SCHEMA_VERSION} before this toolscore can read it, but it is read-only: "
            "copy it somewhere writable and use the copy",
        )
    return Store(db, where)


def _writable(where: Path) -> bool:
    """Whether this process may write the store file and create its journal beside it (a
    read-only file system counts as not writable)."""
    directory = where.parent if str(where.parent) else Path(".")
    return os.access(where, os.W_OK) and os.access(directory, os.W_OK)


class Store:
    """A results store: runs with their provenance, summaries and every case result."""

    def __init__(self, db: sqlite3.Connection, path: Path, *, checked: bool = False) -> None:
        self.db = db
        """The sqlite3 connection (autocommit mode); `compare` queries it directly."""
        self.path = path
        self.checked = checked
        """Whether `quick_check` passed when the store was opened for writing."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: object, error: BaseException | None, *_: object) -> None:
        """Close the store; a read that failed because the file is damaged leaves the
        block as one input error saying so (not a sqlite3 traceback)."""
        if error is not None and is_damage(error):
            problem = self.damage_error(error)
            self.close()
            raise problem from None
        self.close()

    def damage_error(self, error: BaseException) -> InputError:
        """The input error for a read of this store that failed on a damaged file."""
        return read_error(self.db, self.path, error)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @property
    def judgments(self) -> StoredJudgments:
        """The judgments of remote rubrics kept here (a `rubrics.cache.JudgmentCache`)."""
        from toolscore.store.judgments import StoredJudgments  # noqa: PLC0415 - rubric runs only

        return StoredJudgments(self.db, str(self.path))

    def begin_run(self, meta: RunMeta) -> RunWriter:
        """A writer for a new run: `with store.begin_run(meta) as writer: writer.add(result)
        ...; writer.finish(summary)` stores the run whole, or nothing if the block fails."""
        return RunWriter(self.path, meta, check=not self.checked)

    def previous_scores(self, cases_sha256: str, outputs_sha256: str) -> list[PreviousScore]:
        """Earlier runs of exactly these cases and outputs, oldest first."""
        rows = self.db.execute(
            "SELECT id, specs_sha256, specs_version, accuracy FROM runs "
            "WHERE cases_sha256 = ? AND outputs_sha256 = ? ORDER BY id",
            (cases_sha256, outputs_sha256),
        )
        return [PreviousScore(*row) for row in rows]

    def runs(self, limit: int | None = None) -> list[RunInfo]:
        """The stored runs, newest last (the last `limit` of them when given)."""
        query = f"SELECT {_RUN_COLUMNS}, tool_versions, relaxations FROM runs ORDER BY id DESC"
        rows = self.db.execute(query + (" LIMIT ?" if limit else ""), (limit,) if limit else ())
        return [_run_info(row) for row in reversed(rows.fetchall())]

    def run(self, ref: int | str) -> RunInfo:
        """The run with this id (`latest` for the newest; -N for the N-th newest)."""
        run_id = self.resolve(ref)
        row = self.db.execute(
            f"SELECT {_RUN_COLUMNS}, tool_versions, relaxations FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        return _run_info(row)

    def resolve(self, ref: int | str) -> int:
        """The id of a stored run given as an id, `latest`, or -N (the N-th newest)."""
        text = str(ref).strip()
        if text == "latest":
            text = "-1"
        try:
            number = int(text)
        except ValueError:
            raise InputError(
                str(self.path), f"{ref!r} is not a run id (a number or 'latest')"
            ) from None
        if number < 0:
            row = self.db.execute(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (-number - 1,)
            ).fetchone()
        else:
            row = self.db.execute("SELECT id FROM runs WHERE id = ?", (number,)).fetchone()
        if row is None:
            count = self.db.execute("SELECT count(*), min(id), max(id) FROM runs").fetchone()
            known = f"runs {count[1]} to {count[2]}" if count[0] else "no runs yet"
            raise InputError(str(self.path), f"no run {ref} in this store ({known})")
        return int(row[0])

    def summary(self, run_id: int) -> dict[str, Any]:
        """The run's summary, exactly as `Summary.to_dict()` gave it."""
        row = self.db.execute("SELECT summary FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise InputError(str(self.path), f"no run {run_id} in this store")
        data: dict[str, Any] = unpack_json(row[0])
        return data

    def same_positions(self, a: RunInfo, b: RunInfo) -> bool:
        """Whether two runs hold each case at the same position of their results: scored
        from the same cases file, neither leaving out the cases without output (a run under
        `--missing exclude` keeps no row for those)."""

        def left_out(run: RunInfo) -> bool:
            summary = self.summary(run.id)
            return summary.get("missing_policy") == "exclude" and summary["missing_outputs"] > 0

        return a.cases_sha256 == b.cases_sha256 and not left_out(a) and not left_out(b)

    def cases(self, run_id: int, failed_only: bool = False) -> Iterator[dict[str, Any]]:
        """Each case's report JSON, in the order of the cases file."""
        where = "run_id = ? AND passed = 0" if failed_only else "run_id = ?"
        rows = self.db.execute(
            f"SELECT seq, {_RESULT_COLUMNS} FROM results WHERE {where} ORDER BY seq", (run_id,)
        )
        yield from with_rubrics(self.db, run_id, ((row[0], case_json(*row[1:])[0]) for row in rows))

    def case(self, run_id: int, case_id: str) -> dict[str, Any] | None:
        """One case's report JSON, or None when the run has no case with this id."""
        row = self.db.execute(
            f"SELECT seq, {_RESULT_COLUMNS} FROM results WHERE run_id = ? AND case_id = ?",
            (run_id, case_id),
        ).fetchone()
        if row is None:
            return None
        return next(with_rubrics(self.db, run_id, [(row[0], case_json(*row[1:])[0])], row[0]))

    def content_lines(self, sha256: str) -> Iterator[tuple[int, bytes]]:
        """(line number, line) of a stored file, for re-scoring it."""
        return iter_content_lines(self.db, sha256)

    def specs(self, run: RunInfo) -> SpecSet:
        """The run's spec set, parsed again from the stored spec file (never executed: YAML
        is read with the safe loader, and an environment block is kept as data)."""
        note = f" (stored with run {run.id})"
        source = f"{run.specs_path}{note}"
        content = read_content(self.db, run.specs_sha256)
        bundled = bundled_specs(content, note)  # a side rules file and its definitions
        if bundled is not None:
            return bundled
        try:
            if run.specs_path.endswith(".json"):
                data = orjson.loads(content)
            else:
                data = yaml.load(content, Loader=safe_loader())  # libyaml's, where present
        except (orjson.JSONDecodeError, yaml.YAMLError) as error:
            raise SpecError(source, f"cannot be read again: {error}") from None
        specs, problems = parse_specs(data, source, run.specs_sha256)
        if problems:
            raise problems[0]
        assert specs is not None
        return specs


def _run_info(row: tuple[Any, ...]) -> RunInfo:
    *columns, tool_versions, relaxations = row
    return RunInfo(
        **dict(zip(_RUN_FIELDS, columns, strict=True)),
        tool_versions=orjson.loads(tool_versions),
        relaxations=orjson.loads(relaxations),
    )
