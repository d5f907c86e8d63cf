"""`toolscore store recover`: copy what a damaged results store still holds into a new one.

The damaged file is opened read-only and never written. The new store is made the normal
way (every migration), then filled table by table in foreign-key order, a row at a time:
each scan runs by key ascending and, when it meets damage, again descending from the end,
so that the rows after the damage are reached too. What cannot be read whole is left out
rather than copied in part, because a partial run would give wrong numbers: a run whose
results (or rubric results) are not all readable, a batch whose cases are not, a stored
file whose chunks are not (the runs that need it are kept, their numbers being whole, and
flagged: re-scoring them is refused for want of the file). Everything left out is listed.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.errors import InputError
from toolscore.store.connection import connect_read_only
from toolscore.store.database import open_store
from toolscore.store.integrity import first_problem, is_damage
from toolscore.store.migrations import checked_version

_FILE_COLUMNS = (("specs_sha256", "spec"), ("cases_sha256", "cases"), ("outputs_sha256", "outputs"))


class Scan:
    """The rows of one table (under `where`) by `key`, ascending, then, after damage,
    descending from the end back to the last row read: `damaged` says a gap was left."""

    def __init__(
        self,
        db: sqlite3.Connection,
        table: str,
        columns: Sequence[str],
        key: Sequence[str],
        where: str = "",
        params: Sequence[Any] = (),
    ) -> None:
        self.db = db
        self.table = table
        self.columns = list(columns)
        self.key = list(key)
        self.where = where
        self.params = tuple(params)
        self.read = 0
        self.damaged = False

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        """Each readable row once (columns as given, then the key's columns)."""
        last: tuple[Any, ...] | None = None
        width = len(self.columns)
        for row in self._rows("ASC", None):
            last = row[width:]
            self.read += 1
            yield row[:width]
        if not self.damaged:
            return
        for row in self._rows("DESC", last):
            self.read += 1
            yield row[:width]

    def _rows(self, order: str, after: tuple[Any, ...] | None) -> Iterator[tuple[Any, ...]]:
        conditions = [self.where] if self.where else []
        params = list(self.params)
        if after is not None:
            conditions.append(f"({', '.join(self.key)}) > ({', '.join('?' * len(after))})")
            params.extend(after)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        keys = ", ".join(f"{name} {order}" for name in self.key)
        query = (
            f"SELECT {', '.join(self.columns + self.key)} FROM {self.table}{where} ORDER BY {keys}"
        )
        try:
            for row in self.db.execute(query, params):
                yield tuple(row)
        except sqlite3.DatabaseError as error:
            if not is_damage(error):
                raise
            self.damaged = True


@dataclass
class Recovery:
    """What a recovery copied and what it left out."""

    source: str
    target: str
    copied: dict[str, int] = field(default_factory=dict)
    """Rows copied, per table."""
    runs_seen: int = 0
    batches_seen: int = 0
    labels_seen: int = 0
    lost: list[str] = field(default_factory=list)
    """One line per run, batch, stored file or gap left out."""
    flagged: list[str] = field(default_factory=list)
    """Runs kept whole whose stored input files were lost (they cannot be re-scored)."""
    check: str = "ok"
    """`PRAGMA quick_check` of the new store."""

    @property
    def runs_lost(self) -> int:
        """Runs that were seen (a row or results) but not copied."""
        return self.runs_seen - self.copied.get("runs", 0)

    def summary(self) -> str:
        """The closing line: what was recovered of what was found."""
        copied = self.copied
        return (
            f"recovered {copied.get('runs', 0)} of {self.runs_seen} runs, "
            f"{copied.get('batches', 0)} of {self.batches_seen} batches, "
            f"{copied.get('labels', 0)} of {self.labels_seen} labels, "
            f"{copied.get('judgments', 0)} judgments, {copied.get('contents', 0)} stored files "
            f"into {self.target} (quick_check: {self.check})"
        )

    def to_json(self) -> dict[str, Any]:
        """The recovery as `toolscore store recover --json` prints it."""
        return {
            "source": self.source,
            "target": self.target,
            "runs": {"seen": self.runs_seen, "recovered": self.copied.get("runs", 0)},
            "batches": {"seen": self.batches_seen, "recovered": self.copied.get("batches", 0)},
            "labels": {"seen": self.labels_seen, "recovered": self.copied.get("labels", 0)},
            "copied": dict(sorted(self.copied.items())),
            "lost": self.lost,
            "flagged": self.flagged,
            "quick_check": self.check,
        }


def recover(damaged: str | Path, target: str | Path) -> Recovery:
    """Copy every whole thing `damaged` still holds into a new store at `target`.

    InputError when `target` exists or `damaged` is no readable results store; the new
    store is removed again if the copy fails for another reason.
    """
    source, new = Path(damaged), Path(target)
    if not source.is_file():
        raise InputError(str(source), "no results store here")
    if new.exists():
        raise InputError(str(new), "already exists: recover into a new file")
    db = connect_read_only(source)
    try:
        try:
            checked_version(db, str(source))
            tables = _tables(db)
        except sqlite3.DatabaseError as error:
            if not is_damage(error):
                raise
            raise InputError(str(source), f"not a readable results store ({error})") from None
        if "runs" not in tables:
            raise InputError(str(source), "not a toolscore results store (no runs table)")
        try:
            return _copy(db, tables, source, new)
        except BaseException:
            for leftover in (
                new,
                new.with_name(new.name + "-wal"),
                new.with_name(new.name + "-shm"),
            ):
                leftover.unlink(missing_ok=True)
            raise
    finally:
        db.close()


def _tables(db: sqlite3.Connection) -> dict[str, list[str]]:
    """The damaged store's tables and their columns."""
    names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {name: [row[1] for row in db.execute(f"PRAGMA table_info({name})")] for name in names}


class _Copier:
    """Rows from the damaged store's connection into the new store's, in its columns."""

    def __init__(self, old: sqlite3.Connection, new: sqlite3.Connection, report: Recovery,
                 tables: dict[str, list[str]]) -> None:  # fmt: skip
        self.old = old
        self.new = new
        self.report = report
        self.columns = {
            name: [c for c in (row[1] for row in new.execute(f"PRAGMA table_info({name})"))
                   if c in tables.get(name, ())]
            for name in tables
        }  # fmt: skip

    def scan(
        self, table: str, key: Sequence[str], where: str = "", params: Sequence[Any] = ()
    ) -> Scan:
        """A scan of `table` giving the columns both stores have."""
        return Scan(self.old, table, self.columns.get(table, []), key, where, params)

    def insert(self, table: str, rows: Iterator[tuple[Any, ...]] | Scan) -> int:
        """Insert rows (streamed) into the new store's `table`; how many went in."""
        columns = self.columns[table]
        before = self.new.total_changes
        self.new.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            rows,
        )
        return self.new.total_changes - before

    def count(self, table: str, added: int) -> None:
        self.report.copied[table] = self.report.copied.get(table, 0) + added

    @contextlib.contextmanager
    def unit(self) -> Iterator[list[bool]]:
        """A savepoint kept when the block leaves `keep[0]` true, rolled back otherwise."""
        keep = [True]
        self.new.execute("SAVEPOINT unit")
        try:
            yield keep
        except BaseException:
            self.new.execute("ROLLBACK TO unit")
            self.new.execute("RELEASE unit")
            raise
        if not keep[0]:
            self.new.execute("ROLLBACK TO unit")
        self.new.execute("RELEASE unit")


def _copy(
    old: sqlite3.Connection, tables: dict[str, list[str]], source: Path, new_path: Path
) -> Recovery:
    report = Recovery(str(source), str(new_path))
    with open_store(new_path) as store:
        new = store.db
        copier = _Copier(old, new, report, tables)
        new.execute("BEGIN")
        lost_files = _contents(copier) if "contents" in tables else {}
        lost_runs = _runs(copier, lost_files)
        if "batches" in tables:
            _batches(copier, lost_runs)
        if "judgments" in tables:
            scan = copier.scan("judgments", ["key"])
            copier.count("judgments", copier.insert("judgments", scan))
            if scan.damaged:
                report.lost.append(
                    f"judgments: some unreadable ({scan.read} read); they will be asked again"
                )
        new.execute("COMMIT")
        report.check = first_problem(new) or "ok"
    return report


def _contents(copier: _Copier) -> dict[str, str]:
    """Copy each stored file whose chunks are all readable and inflate to its hash; the
    hashes of the others, with why."""
    lost: dict[str, str] = {}
    scan = copier.scan("contents", ["sha256"])
    for sha256, size, chunks in _as_rows(scan, 3):
        why = _copy_content(copier, sha256, size, chunks)
        if why is not None:
            lost[sha256] = why
    for sha256, why in lost.items():
        copier.report.lost.append(f"stored file {sha256[:12]}: lost ({why})")
    if scan.damaged:
        copier.report.lost.append(f"stored files: some unreadable ({scan.read} read)")
    return lost


def _copy_content(copier: _Copier, sha256: str, size: int, chunks: int) -> str | None:
    """Copy one stored file if it is whole (its chunks inflate to its size and hash);
    else copy nothing and say why."""
    pieces = copier.scan("content_chunks", ["seq"], "sha256 = ?", (sha256,))
    digest, inflater = hashlib.sha256(), zlib.decompressobj()
    length = 0

    def inflated(rows: Scan) -> Iterator[tuple[Any, ...]]:
        nonlocal length
        for row in rows:
            with contextlib.suppress(zlib.error, TypeError):
                piece = inflater.decompress(row[2])
                digest.update(piece)
                length += len(piece)
            yield row

    with copier.unit() as keep:
        copier.insert("contents", iter([(sha256, size, chunks)]))
        copier.insert("content_chunks", inflated(pieces))
        with contextlib.suppress(zlib.error):
            rest = inflater.flush()
            digest.update(rest)
            length += len(rest)
        whole = not pieces.damaged and pieces.read == chunks
        if whole and digest.hexdigest() == sha256 and length == size:
            copier.count("contents", 1)
            copier.count("content_chunks", pieces.read)
            return None
        keep[0] = False
    if not whole:
        return f"{pieces.read} of {chunks} chunks readable"
    return "its chunks do not inflate to its size and hash"


def _as_rows(scan: Scan, width: int) -> Iterator[tuple[Any, ...]]:
    """The scan's rows, checked to have the columns the caller reads."""
    for row in scan:
        if len(row) == width:
            yield row


def _runs(copier: _Copier, lost_files: dict[str, str]) -> set[int]:
    """Copy each run whose results and rubric results are all readable; the ids of the
    runs left out."""
    report = copier.report
    columns = copier.columns["runs"]
    id_at, cases_at = columns.index("id"), columns.index("cases")
    files_at = [(columns.index(name), what) for name, what in _FILE_COLUMNS]
    lost: set[int] = set()
    scan = copier.scan("runs", ["id"])
    for row in scan:
        run_id, cases = row[id_at], row[cases_at]
        report.runs_seen += 1
        with copier.unit() as keep:
            copier.insert("runs", iter([row]))
            results = copier.scan("results", ["seq"], "run_id = ?", (run_id,))
            copier.insert("results", results)
            rubrics = None
            if "rubric_results" in copier.columns:
                key = ["seq", "plan_call", "argument", "rubric"]
                rubrics = copier.scan("rubric_results", key, "run_id = ?", (run_id,))
            if rubrics is not None:
                copier.insert("rubric_results", rubrics)
            if (
                results.damaged
                or results.read != cases
                or (rubrics is not None and rubrics.damaged)
            ):
                keep[0] = False
                lost.add(run_id)
                rubric_note = ""
                if rubrics is not None:
                    some_not = " (some not)" if rubrics.damaged else ""
                    rubric_note = f", {rubrics.read} rubric results readable{some_not}"
                report.lost.append(
                    f"run {run_id}: lost ({results.read} of {cases} results readable{rubric_note})"
                )
                continue
            copier.count("runs", 1)
            copier.count("results", results.read)
            copier.count("rubric_results", rubrics.read if rubrics is not None else 0)
        missing = [what for at, what in files_at if row[at] in lost_files]
        if missing:
            report.flagged.append(
                f"run {run_id}: kept (its results are whole) but its stored {', '.join(missing)} "
                "file is lost: it cannot be re-scored"
            )
    if scan.damaged:
        report.lost.append(
            f"runs: some run rows unreadable ({scan.read} read); those runs are lost"
        )
    return lost


def _batches(copier: _Copier, lost_runs: set[int]) -> None:
    """Copy each batch of a recovered run whose cases are all readable, with its labels."""
    report = copier.report
    columns = copier.columns["batches"]
    id_at, run_at = columns.index("id"), columns.index("run_id")
    scan = copier.scan("batches", ["id"])
    for row in scan:
        batch_id = row[id_at]
        report.batches_seen += 1
        labels = copier.scan("labels", ["case_id", "labeller"], "batch_id = ?", (batch_id,))
        with copier.unit() as keep:
            copier.insert("batches", iter([row]))
            cases = copier.scan("batch_cases", ["position"], "batch_id = ?", (batch_id,))
            copier.insert("batch_cases", cases)
            added = copier.insert("labels", labels)
            report.labels_seen += labels.read
            why = None
            if row[run_at] in lost_runs:
                why = f"its run {row[run_at]} is lost"
            elif cases.damaged:
                why = f"{cases.read} cases readable, some not"
            if why is not None:
                keep[0] = False
                report.lost.append(f"batch {batch_id}: lost ({why}), with its {labels.read} labels")
                continue
            copier.count("batches", 1)
            copier.count("batch_cases", cases.read)
            copier.count("labels", added)
            if labels.damaged:
                report.lost.append(f"batch {batch_id}: some labels unreadable ({labels.read} read)")
    if scan.damaged:
        report.lost.append(f"batches: some unreadable ({scan.read} read); those batches are lost")
