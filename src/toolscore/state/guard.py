"""What SQL on a replay connection may do: work on its private in-memory copy, and no more.

A cases file's `setup` SQL is data, and a tool may run SQL built from an agent's arguments;
neither may reach a file or outlive its replay. Every replay connection gets an SQLite
authorizer that denies, at prepare time:

- ATTACH and DETACH: an attached database is a file (or, through a URI, an in-memory
  database shared with other connections). SQLite runs VACUUM and VACUUM INTO by attaching
  their target, so both are denied by the same rule (a test pins this).
- the SQL functions `load_extension` (extension loading is off unless code turns it on) and
  `fts3_tokenizer` (its two-argument form takes a raw pointer).
- setting the PRAGMAs that choose where SQLite writes files (`temp_store_directory`,
  `data_store_directory`, `temp_store`: the connection keeps temporary tables and sorts in
  memory), that let SQL corrupt the database or skip the journal that rolls back a failed
  call (`writable_schema`, `journal_mode`, `schema_version`), or that change limits for the
  whole process (`hard_heap_limit`, `soft_heap_limit`), or that move the size cap of the
  replay's database (`max_page_count`, `page_size`; `size`). Reading them is allowed.

A denied statement fails with SQLite's "not authorized"; the connection keeps what was
denied (`Guard.denied`), so that replay can say what was refused, and why.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

_ATTACH, _DETACH = sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH
_FUNCTION, _PRAGMA = sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_PRAGMA
_CHECKED = frozenset({_ATTACH, _DETACH, _FUNCTION, _PRAGMA})
_OK, _DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})
SIZE_PRAGMAS = frozenset({"max_page_count", "page_size"})
"""PRAGMAs that would move the size cap of a replay's database (`size`)."""
DENIED_PRAGMAS = frozenset(
    {
        "temp_store_directory",
        "data_store_directory",
        "temp_store",
        "writable_schema",
        "journal_mode",
        "schema_version",
        "hard_heap_limit",
        "soft_heap_limit",
        *SIZE_PRAGMAS,
    }
)
"""PRAGMAs a replay may read but not set (see the module docstring)."""
WHY = "a replay works on a private in-memory copy and never opens a file"
SIZE_WHY = "a replay's database holds at most the environment's max_size_mb"


class Guard:
    """A connection's authorizer, which keeps the first thing it denied since `denied` was
    last cleared. It holds no reference to its connection: a closed connection is freed at
    once, not at the next garbage collection."""

    __slots__ = ("denied",)

    def __init__(self) -> None:
        self.denied: str | None = None

    def authorize(
        self,
        action: int,
        arg1: str | None,
        arg2: str | None,
        schema: str | None,
        source: str | None,
    ) -> int:
        """SQLite's authorizer callback: OK, or DENY (noting what was denied), unless `first`
        answers before the checks."""
        answer = self.first(action, arg1, arg2, source)
        if answer is not None:
            return answer
        if action not in _CHECKED:
            return _OK
        refused = _refused(action, arg1, arg2)
        if refused is None:
            return _OK
        if self.denied is None:
            self.denied = refused
        return _DENY

    def first(
        self, action: int, arg1: str | None, arg2: str | None, source: str | None
    ) -> int | None:
        """What a kind of guard answers before the denials are checked (None: check them)."""
        return None


class ReplayConnection(sqlite3.Connection):
    """A replay's connection: an `sqlite3.Connection` (tools see no difference) with the
    guard that `guard` installed on it."""

    guard: Guard | None = None

    def begin_call(self) -> None:
        """Start a call's unit of work (nothing to do: SQLite's own transaction is the unit)."""

    def end_call(self, keep: bool) -> None:
        """End a call's unit of work: commit what it did (`keep`), or roll it back."""
        if self.in_transaction:
            self.commit() if keep else self.rollback()


def guard(db: ReplayConnection, *settings: str) -> None:
    """Keep temporary storage in memory and install the authorizer on `db`; `settings` are
    more PRAGMAs to apply first (one script runs them all: a statement costs more alone)."""
    db.executescript("; ".join(("PRAGMA temp_store = MEMORY", *settings)))
    db.guard = Guard()
    db.set_authorizer(db.guard.authorize)


def _refused(action: int, arg1: str | None, arg2: str | None) -> str | None:
    """What a checked action attempts, worded for an error message; None when allowed."""
    if action == _ATTACH:
        target = "a temporary database" if not arg1 else repr(arg1)
        return f"ATTACH or VACUUM of {target}"
    if action == _DETACH:
        return f"DETACH {arg1!r}"
    if action == _FUNCTION:
        name = (arg2 or "").lower()
        return f"the function {name}()" if name in DENIED_FUNCTIONS else None
    name = (arg1 or "").lower()
    if name in DENIED_PRAGMAS and arg2 is not None:
        return f"PRAGMA {name} = {arg2}"
    return None


@contextmanager
def trusted(db: sqlite3.Connection) -> Iterator[None]:
    """Run toolscore's own statements on `db` without the authorizer: reading states, and
    attaching a goal database to compare with (a no-op on a connection with no guard). No
    tool code runs meanwhile, and SQLite is spared a callback per column read."""
    if not isinstance(db, ReplayConnection) or db.guard is None:
        yield
        return
    sqlite3.Connection.set_authorizer(db, None)  # not a subclass's: this is no tool's doing
    try:
        yield
    finally:
        sqlite3.Connection.set_authorizer(db, db.guard.authorize)


class DeniedError(Exception):
    """Replayed SQL attempted what the guard denies (raised once the call or statement ends,
    even when the tool caught SQLite's error)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what

    def __str__(self) -> str:
        pragma = self.what.removeprefix("PRAGMA ").partition(" ")[0]
        why = SIZE_WHY if self.what.startswith("PRAGMA ") and pragma in SIZE_PRAGMAS else WHY
        return f"denied: {self.what} ({why})"


class refusing:  # noqa: N801 -- used as a `with` statement, like a function
    """Run the body (a call, a setup statement) on `db` and raise `DeniedError` at its end when
    the guard denied anything meanwhile, in place of whatever error the body raised."""

    __slots__ = ("guard",)

    def __init__(self, db: ReplayConnection) -> None:
        assert db.guard is not None
        self.guard = db.guard

    def __enter__(self) -> None:
        self.guard.denied = None

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        denied = self.guard.denied
        if denied is not None and (kind is None or issubclass(kind, Exception)):
            raise DeniedError(denied) from None
