"""Where the results store lives and how a connection to it is set up.

Every connection that may write uses write-ahead logging, so that readers never wait for a
writer and a killed writer leaves the last committed state, and a generous busy timeout, so
that two processes saving at once take turns instead of failing. Commands that only read
connect read-only, so that a store on read-only media (or a file they may not write) can
still be listed and shown.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from toolscore.errors import InputError

DEFAULT_PATH = Path(".toolscore") / "results.db"
ENV_VAR = "TOOLSCORE_DB"
BUSY_TIMEOUT_SECONDS = 300.0
"""How long a save waits for another process's save to commit before giving up."""
WAL_LIMIT_BYTES = 64 << 20
"""The write-ahead log is truncated back to this size after a large run is checkpointed."""


def store_path(path: str | Path | None = None) -> Path:
    """The store's file: `path`, else $TOOLSCORE_DB, else ./.toolscore/results.db."""
    if path is not None and str(path) != "":
        return Path(path)
    from_env = os.environ.get(ENV_VAR)
    return Path(from_env) if from_env else DEFAULT_PATH


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), set up for the store."""
    try:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    except sqlite3.Error as error:
        raise InputError(str(path), f"cannot open the results store: {error}") from None
    try:
        _use_wal(db)
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT_BYTES}")
    except sqlite3.OperationalError as error:
        db.close()
        raise InputError(str(path), f"cannot use the results store: {error}") from None
    except sqlite3.DatabaseError as error:
        db.close()
        raise InputError(str(path), f"not a toolscore results store ({error})") from None
    return db


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes the file (nor creates it): SQLite's read-only mode,
    or, where even that cannot start because the directory is read-only too (a WAL store
    needs its `-shm` file), the file opened as immutable, as on read-only media. A store
    whose write-ahead log still holds data is refused then: immutable would not read it."""
    uri = path.resolve().as_uri()
    try:
        return _checked(
            path,
            sqlite3.connect(
                f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None
            ),
        )
    except sqlite3.OperationalError as error:
        failure = error
    log = path.with_name(path.name + "-wal")
    if log.exists() and log.stat().st_size:
        raise InputError(
            str(path),
            f"cannot open the results store read-only ({failure}) while {log.name} holds "
            "data: open it once where it can be written, then copy it",
        )
    try:
        return _checked(
            path, sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None)
        )
    except sqlite3.OperationalError as error:
        raise InputError(str(path), f"cannot open the results store: {error}") from None


def _checked(path: Path, db: sqlite3.Connection) -> sqlite3.Connection:
    """`db` once a first read has worked (SQLite opens files lazily)."""
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        db.close()
        raise
    except sqlite3.DatabaseError as error:
        db.close()
        raise InputError(str(path), f"not a toolscore results store ({error})") from None
    return db


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch the file to write-ahead logging (once: the mode is kept in the file).

    Switching needs the file to itself, and SQLite does not wait for that when another
    process opens a new store at the same moment, so this waits here.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            db.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
