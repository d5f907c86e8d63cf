"""Replay cases on one long-lived copy of the initial database, undoing each case's changes.

Copying the whole initial image for every replay makes a case cost in proportion to the
store. A `Workspace` instead loads the image once per process and runs each case inside a
transaction that is rolled back when the case ends, each replay of the case (the agent's,
each plan's) inside a savepoint rolled back when it ends; temporary triggers on every compared
table record the rowids that inserts, updates and deletes touch (`TOUCHED`), so that a final
state is read, and diffed, only where it may differ from the start. Each tool call opens a
nested savepoint, rolled back when the call fails (`end_call`); a tool's own `commit()`,
`rollback()`, `with db:` and `executescript` act on it, as they acted on the call's
transaction on a private copy.

What a savepoint cannot undo, or the triggers cannot see, is not emulated: the connection
notes it (`CaseGuard.unusual`), the case's work is thrown away and the case is replayed on
private full copies (`NeedsFullCopy`), and the connection is replaced. That is: SQL that
controls transactions (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE; SQLite is told to ignore
it, so it never ends the case's savepoint), setting a PRAGMA (PRAGMAs outlive a rollback),
changing the connection from Python (`isolation_level`, `create_function` and the like),
tampering with the capture, and a change of schema (CREATE, ALTER, DROP: the triggers would
miss the new tables). An environment whose schema has triggers of its own, deferred foreign
keys, virtual tables or compared tables without a rowid is always replayed on full copies:
capturing needs `recursive_triggers` on (so that REPLACE's deletions fire the triggers),
which would change the user's triggers, and a nested savepoint does not check deferred keys.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from random import Random
from typing import Any

from toolscore.core.model import Case
from toolscore.state.environment import Environment, ToolContext
from toolscore.state.guard import Guard, ReplayConnection, trusted
from toolscore.state.snapshot import Snapshot, TableShape, TableState, quote, read_all

TOUCHED = "toolscore_touched"
"""The temporary table of (table number, rowid) pairs that the capture triggers fill."""
_REPLAY, _CALL = "toolscore_replay", "toolscore_call"
_IGNORE, _OK = sqlite3.SQLITE_IGNORE, sqlite3.SQLITE_OK
_TRANSACTION, _SAVEPOINT = sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT
_WRITES = frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE})
_SCHEMA = {
    sqlite3.SQLITE_CREATE_INDEX: "CREATE INDEX",
    sqlite3.SQLITE_CREATE_TABLE: "CREATE TABLE",
    sqlite3.SQLITE_CREATE_TRIGGER: "CREATE TRIGGER",
    sqlite3.SQLITE_CREATE_VIEW: "CREATE VIEW",
    sqlite3.SQLITE_CREATE_VTABLE: "CREATE VIRTUAL TABLE",
    sqlite3.SQLITE_DROP_INDEX: "DROP INDEX",
    sqlite3.SQLITE_DROP_TABLE: "DROP TABLE",
    sqlite3.SQLITE_DROP_TRIGGER: "DROP TRIGGER",
    sqlite3.SQLITE_DROP_VIEW: "DROP VIEW",
    sqlite3.SQLITE_DROP_VTABLE: "DROP VIRTUAL TABLE",
    sqlite3.SQLITE_ALTER_TABLE: "ALTER TABLE",
    sqlite3.SQLITE_ANALYZE: "ANALYZE",
}
"""Changes of the main schema (temporary objects are undone by the rollback)."""
_NOTED = frozenset(
    {
        _TRANSACTION,
        _SAVEPOINT,
        sqlite3.SQLITE_PRAGMA,
        sqlite3.SQLITE_DROP_TEMP_TRIGGER,
        *_WRITES,
        *_SCHEMA,
    }
)
QUERY_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_info",
        "index_xinfo",
        "index_list",
        "foreign_key_list",
        "foreign_key_check",
        "integrity_check",
        "quick_check",
    }
)
"""PRAGMAs whose argument is what they read, not a setting."""
_DEFERRED = re.compile(r"\bINITIALLY\s+DEFERRED\b", re.IGNORECASE)


class NeedsFullCopy(Exception):  # noqa: N818 -- a signal, not an error
    """The case did what the workspace cannot undo or capture: replay it on full copies."""


Touched = dict[str, dict[int, tuple[Any, ...] | None]]
"""Per table, the rows at the touched rowids (None where no row is left)."""


class CaseGuard(Guard):
    """The guard of a workspace's connection, which also notes what forces a full copy."""

    __slots__ = ("own", "unusual")

    def __init__(self) -> None:
        super().__init__()
        self.unusual: str | None = None
        self.own = False
        """Set while toolscore runs its own statement (`CaseConnection.own`)."""

    def first(
        self, action: int, arg1: str | None, arg2: str | None, source: str | None
    ) -> int | None:
        """Toolscore's own statements pass; what forces a full copy is noted, and transaction
        control is made a no-op."""
        if self.own:
            return _OK
        if action in _NOTED:
            why = _unusual(action, arg1, arg2, source)
            if why is not None:
                self.unusual = self.unusual or why
                if action in (_TRANSACTION, _SAVEPOINT):
                    return _IGNORE
        return None


def _unusual(action: int, arg1: str | None, arg2: str | None, source: str | None) -> str | None:
    if action == _TRANSACTION:
        return f"the SQL {arg1} (transaction control)"
    if action == _SAVEPOINT:
        return f"the SQL savepoint {arg1} {arg2}"
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        return f"PRAGMA {name} = {arg2}" if arg2 is not None and name not in QUERY_PRAGMAS else None
    if action == sqlite3.SQLITE_DROP_TEMP_TRIGGER:
        return f"DROP TRIGGER {arg1}"
    if action in _SCHEMA:
        return f"a change of schema ({_SCHEMA[action]} {arg1})"
    if arg1 == TOUCHED and source is None:
        return f"a write to {TOUCHED}"
    return None


class CaseConnection(ReplayConnection):
    """A workspace's connection: tools see an `sqlite3.Connection`; while `capturing`, a
    call's unit of work is the savepoint `_CALL`, and what a rollback cannot undo is noted."""

    capturing = False
    call_open = False
    tag = ""

    def note(self, why: str) -> None:
        """Record what forces the case onto full copies (the first thing only)."""
        assert isinstance(self.guard, CaseGuard)
        self.guard.unusual = self.guard.unusual or why

    def own(self, sql: str) -> None:
        """Run toolscore's own statement, past the guard (cheaper than `trusted`).

        Python caches prepared statements by their text, and SQLite authorizes a statement
        when it is prepared: a tool's `ROLLBACK` must not reuse toolscore's. So toolscore's
        own statements end with a comment that no tool can guess (`tag`)."""
        assert isinstance(self.guard, CaseGuard)
        self.guard.own = True
        try:
            sqlite3.Connection.execute(self, sql + self.tag)
        finally:
            self.guard.own = False

    def begin_call(self) -> None:
        """Open the call's savepoint."""
        if not self.capturing:
            return super().begin_call()
        self.own(f"SAVEPOINT {_CALL}")
        self.call_open = True
        return None

    def end_call(self, keep: bool) -> None:
        """End the call: what it did stays (its savepoint stays open, a mere mark, until the
        replay's end) or, unless `keep`, is rolled back."""
        if not self.capturing:
            return super().end_call(keep)
        self.call_open = False
        if not keep:
            self.own(f"ROLLBACK TO {_CALL}")
            self.own(f"RELEASE {_CALL}")
        return None

    def commit(self) -> None:
        """A tool's commit: what the call did so far stays, even if the call then fails (a
        new mark that a failure rolls back to)."""
        if not self.capturing:
            return super().commit()
        if self.call_open:
            self.own(f"SAVEPOINT {_CALL}")
        return None

    def rollback(self) -> None:
        """A tool's rollback: what the call did since its last commit is undone."""
        if not self.capturing:
            return super().rollback()
        if self.call_open:
            self.own(f"ROLLBACK TO {_CALL}")
        return None

    def __exit__(self, kind: Any, *rest: Any) -> Any:
        if not self.capturing:
            return super().__exit__(kind, *rest)
        self.commit() if kind is None else self.rollback()
        return False

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        """Python commits before a script; here that is the call's commit, then each
        statement runs in the case's savepoint."""
        if not self.capturing:
            return super().executescript(script)
        self.commit()
        cursor = self.cursor()
        for statement in split_statements(script):
            cursor.execute(statement)
        return cursor

    def __setattr__(self, name: str, value: Any) -> None:
        if self.capturing and name in ("isolation_level", "autocommit"):
            self.note(f"the tool set db.{name}")
        super().__setattr__(name, value)


def _noting(name: str) -> Any:
    def method(self: CaseConnection, *args: Any, **kwargs: Any) -> Any:
        if self.capturing:
            self.note(f"the tool called db.{name}()")
        return getattr(sqlite3.Connection, name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"`sqlite3.Connection.{name}`, noted: it changes the connection for good."
    return method


for _name in (
    "create_function",
    "create_aggregate",
    "create_window_function",
    "create_collation",
    "set_authorizer",
    "set_progress_handler",
    "set_trace_callback",
    "enable_load_extension",
    "load_extension",
    "deserialize",
    "setlimit",
):
    if hasattr(sqlite3.Connection, _name):
        setattr(CaseConnection, _name, _noting(_name))


def _vacuum_noter(guard: CaseGuard) -> Any:
    """A trace callback noting VACUUM, which fails inside a transaction before the guard
    sees it (on a full copy the guard denies it; the authorizer has no code for VACUUM)."""

    def trace(sql: str) -> None:
        if sql.lstrip()[:6].upper() == "VACUUM":
            guard.unusual = guard.unusual or "VACUUM"

    return trace


def split_statements(script: str) -> Iterator[str]:
    """The complete statements of an SQL script, in order (a trailing fragment last)."""
    start = 0
    for end in (m.end() for m in re.finditer(";", script)):
        if sqlite3.complete_statement(script[start:end]):
            yield script[start:end]
            start = end
    if script[start:].strip():
        yield script[start:]


class Workspace:
    """The environment's initial database, loaded once in this process, and its capture."""

    def __init__(self, env: Environment, rowids: Mapping[str, str]) -> None:
        self._env = weakref.ref(env)  # the cache maps env to this: no cycle keeping env alive
        self.rowids = rowids
        """The name that reads each compared table's rowid."""
        self.tables = tuple(env.shapes.values())
        self.reads = {shape.name: self._read(shape) for shape in self.tables}
        """Per table: each touched rowid, 1 when a row is there, and the row's values."""
        self.db: CaseConnection | None = None

    def _read(self, shape: TableShape) -> str:
        columns = ", ".join(f"s.{quote(c)}" for c in shape.columns)
        rowid = self.rowids[shape.name]
        return (
            f"SELECT t.r, s.{rowid} IS NOT NULL, {columns} "
            f"FROM (SELECT DISTINCT r FROM temp.{TOUCHED} WHERE t = ?) AS t "
            f"LEFT JOIN main.{quote(shape.name)} AS s ON s.{rowid} = t.r"
        )

    @property
    def env(self) -> Environment:
        """The environment this workspace replays."""
        env = self._env()
        assert env is not None
        return env

    def connection(self) -> CaseConnection:
        """The long-lived connection, opened (and the capture installed) on first use."""
        if self.db is None:
            db = self.env.connect(CaseConnection)
            assert isinstance(db, CaseConnection)
            db.tag = f" -- toolscore {secrets.token_hex(16)}"
            db.guard = CaseGuard()
            sqlite3.Connection.set_authorizer(db, db.guard.authorize)
            sqlite3.Connection.set_trace_callback(db, _vacuum_noter(db.guard))
            with trusted(db):
                db.executescript(
                    f"PRAGMA recursive_triggers = ON; CREATE TEMP TABLE {TOUCHED}(t, r)"
                )
                for number, shape in enumerate(self.tables):
                    db.executescript(self._triggers(number, shape))
            db.capturing = True
            self.db = db
        return self.db

    def _triggers(self, number: int, shape: TableShape) -> str:
        rowid, table = self.rowids[shape.name], f"main.{quote(shape.name)}"
        record = f"INSERT INTO {TOUCHED} VALUES"
        return (
            f"CREATE TEMP TRIGGER toolscore_i{number} AFTER INSERT ON {table} BEGIN "
            f"{record} ({number}, NEW.{rowid}); END;"
            f"CREATE TEMP TRIGGER toolscore_u{number} AFTER UPDATE ON {table} BEGIN "
            f"{record} ({number}, OLD.{rowid}), ({number}, NEW.{rowid}); END;"
            f"CREATE TEMP TRIGGER toolscore_d{number} AFTER DELETE ON {table} BEGIN "
            f"{record} ({number}, OLD.{rowid}); END;"
        )

    def drop(self) -> None:
        """Close the connection; the next case opens a new one."""
        if self.db is not None:
            self.db.close()
            self.db = None

    @contextmanager
    def case(self, case: Case) -> Iterator[CaseRun]:
        """Run one case inside a transaction that is rolled back at its end, whatever happens.

        What the case did that forces a full copy turns whatever the case raised into
        `NeedsFullCopy`; the connection is then replaced.
        """
        db = self.connection()
        db.own("BEGIN")
        run = CaseRun(self, db, case)
        try:
            yield run
        except Exception:
            if self.unusual(db) is not None:
                raise NeedsFullCopy(self.unusual(db)) from None
            raise
        finally:
            self._end(db)

    def unusual(self, db: CaseConnection) -> str | None:
        """What the case being replayed did that forces full copies, if anything."""
        assert isinstance(db.guard, CaseGuard)
        return db.guard.unusual

    def _end(self, db: CaseConnection) -> None:
        try:
            db.call_open = False
            db.row_factory = None
            db.text_factory = str
            db.own("ROLLBACK")
        except sqlite3.Error:  # the tool closed the connection, or left it unusable
            self.drop()
            return
        if self.unusual(db) is not None:
            self.drop()


class CaseRun:
    """One case on the workspace: its setup applied once, then replays (the agent's, each
    plan's) that each start from the state after the setup (`begin`) and end by reading the
    touched rows and going back to that state (`finish`)."""

    def __init__(self, space: Workspace, db: CaseConnection, case: Case) -> None:
        self.space = space
        self.db = db
        self.case = case
        self.random = space.env.context(case.id).random

    def context(self) -> ToolContext:
        """The tools' context for the next replay: the clock, and the random source as the
        setup left it (each replay on a full copy ran the setup again, from the same seed)."""
        fresh = Random(0)
        fresh.setstate(self.random.getstate())
        return ToolContext(self.space.env.now, fresh, self.case.id)

    def after_setup(self, ctx: ToolContext) -> None:
        """Mark the state the setup left: each replay starts, and ends, there."""
        self.check()
        self.random.setstate(ctx.random.getstate())
        if "setup" in self.case.extra:
            self.db.own(f"DELETE FROM {TOUCHED}")
        self.db.own(f"SAVEPOINT {_REPLAY}")

    def check(self) -> None:
        """Raise `NeedsFullCopy` when the case has done what the workspace cannot follow."""
        unusual = self.space.unusual(self.db)
        if unusual is not None:
            raise NeedsFullCopy(unusual)

    def finish(self, whole: frozenset[str] | bool = frozenset()) -> tuple[Touched, Snapshot]:
        """The rows the replay touched, and every row of the tables in `whole` (True: of all
        compared tables); then the state goes back to where the setup left it."""
        self.check()
        db, space = self.db, self.space
        db.row_factory, db.text_factory = None, str
        touched: Touched = {}
        with trusted(db):
            numbers = [n for (n,) in db.execute(f"SELECT DISTINCT t FROM temp.{TOUCHED}")]
            for number in numbers:
                shape = space.tables[number]
                touched[shape.name] = {
                    row[0]: row[2:] if row[1] else None
                    for row in read_all(db, space.reads[shape.name], (number,))
                }
            full = Snapshot(
                {
                    s.name: TableState(s, read_all(db, s.select))
                    for s in space.tables
                    if whole is True or (whole and s.name in whole)
                }
            )
        db.own(f"ROLLBACK TO {_REPLAY}")
        return touched, full

    def base(self, table: str, rowids: list[int]) -> dict[int, tuple[Any, ...] | None]:
        """The rows of the state after the setup at the given rowids (between replays)."""
        shape = self.space.env.shapes[table]
        found: dict[int, tuple[Any, ...] | None] = dict.fromkeys(rowids)
        with trusted(self.db):
            found.update(self._rows(shape, "IN (SELECT value FROM json_each(?))", (str(rowids),)))
        return found

    def _rows(
        self, shape: TableShape, where: str, parameters: tuple[Any, ...]
    ) -> Iterator[tuple[int, tuple[Any, ...]]]:
        rowid = self.space.rowids[shape.name]
        sql = f"{shape.select.replace(' FROM ', f', {rowid} FROM ', 1)} WHERE {rowid} {where}"
        for row in read_all(self.db, sql, parameters):
            yield row[-1], row[:-1]


def residue_states(
    run: CaseRun, goal: Touched, final: Touched, shapes: Mapping[str, TableShape]
) -> tuple[Snapshot, Snapshot]:
    """The goal's and the final state's rows wherever either replay touched a row, the rows
    neither touched being the same on both sides (so that diffing these gives the whole diff);
    a side that did not touch a rowid has the setup's row there."""
    wanted: dict[str, TableState] = {}
    got: dict[str, TableState] = {}
    for table in sorted(goal.keys() | final.keys()):
        ours, theirs = goal.get(table, {}), final.get(table, {})
        missing = sorted((ours.keys() | theirs.keys()) - (ours.keys() & theirs.keys()))
        base = run.base(table, missing) if missing else {}
        rowids = sorted(ours.keys() | theirs.keys())
        sides = ({**base, **ours}, {**base, **theirs})
        shape = shapes[table]
        wanted[table] = TableState(shape, [r for i in rowids if (r := sides[0][i]) is not None])
        got[table] = TableState(shape, [r for i in rowids if (r := sides[1][i]) is not None])
    return Snapshot(wanted), Snapshot(got)


_spaces: weakref.WeakKeyDictionary[Environment, Workspace | None] = weakref.WeakKeyDictionary()
_full_copies = [False]


@contextmanager
def full_copies() -> Iterator[None]:
    """Replay every case on private full copies meanwhile (the fallback path; for tests and
    the benchmark's "before")."""
    _full_copies.append(True)
    try:
        yield
    finally:
        _full_copies.pop()


def workspace(env: Environment) -> Workspace | None:
    """This process's workspace for `env`, or None when its cases replay on full copies."""
    if _full_copies[-1]:
        return None
    if env not in _spaces:
        _spaces[env] = _eligible(env)
    return _spaces[env]


def _eligible(env: Environment) -> Workspace | None:
    """A workspace when the schema lets the capture see every change (the module docstring)."""
    schema = env.schema
    if any(kind == "trigger" or sql.upper().startswith("CREATE VIRTUAL") for kind, sql in schema):
        return None
    if any(_DEFERRED.search(sql) for _, sql in schema):
        return None
    rowids: dict[str, str] = {}
    for shape in env.shapes.values():
        if shape.residue.counts is None:  # WITHOUT ROWID, or every rowid name shadowed
            return None
        rowids[shape.name] = next(
            a for a in ("rowid", "_rowid_", "oid") if a not in shape.all_columns
        )
    return Workspace(env, rowids)
