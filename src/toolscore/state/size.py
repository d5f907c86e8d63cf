"""How large a replay's database may grow (`max_size_mb`), and what reaching the cap means.

The time limit cannot stop one SQLite step, and one `randomblob(900000000)` is one step: a
`setup` statement could fill the machine's memory long before its timer fires. So every
replay connection caps its main and temp databases at `max_size_mb` each (`max_page_count`,
from each database's page size) and the length of any one string or blob at the same size
(`SQLITE_LIMIT_LENGTH`). SQL past the cap fails with SQLite's "database or disk is full" or
"string or blob too big"; the guard denies setting `max_page_count` and `page_size`, which
would move the cap. A case's setup or plan past the cap stops its replay (the case's state
error); an agent's call past it is that call's error.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from toolscore.core.values import show

DEFAULT_MAX_SIZE_MB = 256
"""The most megabytes (MiB) each replay database, main and temp, may hold by default."""
MAX_SIZE_MB_LIMIT = 1 << 20
"""The largest `max_size_mb` accepted (1 TiB; SQLite's own page count ends near there)."""
MB = 1 << 20
_LENGTH_CEILING = 1_000_000_000  # SQLite's compiled maximum length of a string or blob
_OVERSIZE_CODES = frozenset({13, 18})  # SQLITE_FULL, SQLITE_TOOBIG


def size_problem(value: Any) -> str | None:
    """Why `value` is not a valid `max_size_mb`; None when it is."""
    if type(value) is not int or not 1 <= value <= MAX_SIZE_MB_LIMIT:
        top = f"{MAX_SIZE_MB_LIMIT:,}"
        return f"must be a whole number of megabytes from 1 to {top}, got {show(value)}"
    return None


def size_settings(template: sqlite3.Connection, max_size_mb: int) -> tuple[str, ...]:
    """The PRAGMAs that cap a copy of `template` (each database's page count: the cap over
    its page size); temp's page size is the build's default, which the guard keeps."""
    pages = []
    for schema in ("main", "temp"):
        (page_size,) = template.execute(f"PRAGMA {schema}.page_size").fetchone()
        pages.append(f"PRAGMA {schema}.max_page_count = {max_size_mb * MB // page_size}")
    return tuple(pages)


def cap_length(db: sqlite3.Connection, max_size_mb: int) -> None:
    """Cap the length of any one string or blob on `db` at `max_size_mb` (or SQLite's own
    maximum, when lower)."""
    limit = min(max_size_mb * MB, _LENGTH_CEILING)
    sqlite3.Connection.setlimit(db, sqlite3.SQLITE_LIMIT_LENGTH, limit)  # no subclass's


def oversize(error: BaseException) -> bool:
    """Whether `error` (or the error it was raised from) is SQLite's refusal to grow past the
    cap: the database full, or a string or blob too long."""
    seen: BaseException | None = error
    for _ in range(3):
        if seen is None:
            return False
        if isinstance(seen, sqlite3.Error) and seen.sqlite_errorcode in _OVERSIZE_CODES:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class OversizeError(Exception):
    """Replayed SQL reached the size cap of the replay's database."""

    def __init__(self, max_size_mb: int, cause: str) -> None:
        super().__init__(max_size_mb, cause)
        self.max_size_mb = max_size_mb
        self.cause = cause
        """SQLite's error, as one line."""

    def __str__(self) -> str:
        return (
            f"over the size cap: {self.cause} (a replay's database holds at most "
            f"{self.max_size_mb} MB: the environment's max_size_mb)"
        )
