"""A damaged results store: found before a run is written into it, and named when a read fails.

A store whose file was overwritten in part (a bad disk, a copy cut short, a stray write)
must not take new runs, labels, batches or judgments, nor fail with a traceback: SQLite's
`quick_check` is run once when the store is opened for writing, before anything is written
(it reads every page once, without the cross-checks of `integrity_check`),
and a read that fails on damage (SQLITE_CORRUPT, SQLITE_NOTADB) becomes one input error
naming the store and saying how to get back what can still be read (`store/recovery.py`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from toolscore.errors import InputError

QUICK_CHECK = "PRAGMA quick_check(1)"
"""Stops at the first problem: a damaged store is refused on the first one."""
DAMAGE_CODES = frozenset((sqlite3.SQLITE_CORRUPT, getattr(sqlite3, "SQLITE_NOTADB", 26)))
"""The primary SQLite result codes that mean the file itself is damaged."""


def is_damage(error: BaseException) -> bool:
    """Whether a sqlite3 error says the store's file is damaged (not locked, full, ...)."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in DAMAGE_CODES
    return "malformed" in str(error) or "not a database" in str(error)


def first_problem(db: sqlite3.Connection) -> str | None:
    """The first problem `quick_check` finds in the store, or None when it finds none."""
    try:
        row = db.execute(QUICK_CHECK).fetchone()
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            raise
        return str(error)
    if row is None or row[0] == "ok":
        return None
    lines = [line for line in str(row[0]).splitlines() if not line.startswith("***")]
    return "; ".join(lines) or str(row[0])  # without its "*** in database main ***"


def recovery_hint(path: Path | str) -> str:
    """How to get back what a damaged store still holds, without writing to it."""
    return (
        f"restore it from a backup, or recover what can be read into a new store with "
        f"`toolscore store recover {path} --to recovered.db` and use that one "
        "(--db recovered.db)"
    )


def damaged(path: Path | str, problem: str, *, writing: bool) -> InputError:
    """The one-line error for a damaged store (`writing`: something was about to be
    written: a run, a label, a batch, a judgment, a migration)."""
    refusal = "refusing to write into it; " if writing else ""
    return InputError(
        str(path), f"the results store is damaged ({problem}): {refusal}{recovery_hint(path)}"
    )


def check_before_writing(db: sqlite3.Connection, path: Path | str) -> None:
    """Refuse (InputError) to write into a store `quick_check` finds damaged: every writer
    calls it once, where it opens the store for writing (`open_store`)."""
    problem = first_problem(db)
    if problem is not None:
        raise damaged(path, problem, writing=True)


def read_error(db: sqlite3.Connection | None, path: Path | str, error: BaseException) -> InputError:
    """A read that failed on damage as one input error, with the first problem found by
    `quick_check` when it names one more precisely than the error itself."""
    problem = str(error)
    if db is not None:
        with contextlib.suppress(sqlite3.Error):  # the error itself says enough then
            problem = first_problem(db) or problem
    return damaged(path, problem, writing=False)
