"""The initial database of a SQLite environment, kept as a private file that replays copy.

The environment's database (a `.sql` script or a SQLite file) is built or copied once, at
load, into a file of toolscore's own in a new temporary folder, and never written again: the
user's file is only ever read, and what happens to it during the run changes nothing. Every
replay copies that image into a connection of its own in memory (`copy_into`, SQLite's
backup: page by page, no copy of the whole image in Python); the initial state's rows are
read from it when a comparison asks (`read_rows`). So the environment holds no copy of the
store in memory: a process replaying on its workspace holds one, the workspace itself.

A script runs in memory under the size cap, as a replay would, a statement at a time; a
SQLite file at rest is copied as bytes, a chunk at a time (its header set for a rollback
journal: a copy has no WAL); one with a `-wal` or `-journal` file beside it (changes in
flight) is read by SQLite itself from a read-only connection.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote as quote_uri

from toolscore.core.values import show
from toolscore.errors import InputError
from toolscore.state.size import MB, cap_length, oversize
from toolscore.state.snapshot import UNDECODABLE, TableShape, read_all

FIELD = "environment.database"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_CHUNK = 1 << 18


def new_folder() -> Path:
    """A new private folder for an environment's image."""
    return Path(tempfile.mkdtemp(prefix="toolscore-env-"))


def remove_when_freed(owner: object, folder: Path) -> None:
    """Remove `folder` when `owner` is freed or the process ends, in this process only (a
    forked worker that frees its inherited copy leaves the parent's folder alone)."""
    weakref.finalize(owner, _remove, folder, os.getpid())


def _remove(folder: Path, pid: int) -> None:
    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


def build_image(path: Path, target: Path, source: str, max_size_mb: int) -> str:
    """Write the initial database of `path` (a `.sql` script or a SQLite file) to `target`;
    return the sha256 of `path` (input errors name `source` and the field)."""
    if not path.is_file():
        raise InputError(source, f"no such file: {path}", field=FIELD)
    try:
        return _build(path, target, source, max_size_mb)
    except (OSError, sqlite3.Error) as error:  # a full disk, a file that cannot be read
        why = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(
            source, f"cannot copy {path} to {target.parent} (the replays' copy): {why}", field=FIELD
        ) from None


def _build(path: Path, target: Path, source: str, max_size_mb: int) -> str:
    if path.suffix.lower() == ".sql":
        template = sqlite3.connect(":memory:")
        try:
            (page_size,) = template.execute("PRAGMA page_size").fetchone()
            template.execute(f"PRAGMA max_page_count = {max_size_mb * MB // page_size}")
            cap_length(template, max_size_mb)
            run_script(template, path, source, max_size_mb)
            _backup(template, target)
        finally:
            template.close()
        return _sha256(path)
    return _copy_database(path, target, source)


def open_image(path: Path) -> sqlite3.Connection:
    """A read-only connection to an image (toolscore's own, never a replay's)."""
    return sqlite3.connect(f"file:{quote_uri(str(path))}?mode=ro&immutable=1", uri=True)


def copy_into(path: Path, db: sqlite3.Connection) -> None:
    """Copy the image at `path` into the (in-memory) database of `db`, as it is: the copy's
    schema version is set back to the image's (SQLite's backup moves it on, so that the
    copy's prepared statements are prepared again; `db` has none yet)."""
    image = open_image(path)
    try:
        (version,) = image.execute("PRAGMA schema_version").fetchone()
        image.backup(db)
    finally:
        image.close()
    db.execute(f"PRAGMA schema_version = {int(version)}")


def read_rows(path: Path, shape: TableShape) -> list[tuple[Any, ...]]:
    """Every compared row of one table of the image (`StoredTables` asks)."""
    image = open_image(path)
    try:
        return read_all(image, shape.select)
    finally:
        image.close()


def _backup(db: sqlite3.Connection, target: Path) -> None:
    copy = sqlite3.connect(target)
    try:
        db.backup(copy)
    finally:
        copy.close()


def _sha256(path: Path) -> str:
    """The file's sha256, read in chunks (never the whole file in memory at once)."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _copy_database(path: Path, target: Path, source: str) -> str:
    """Copy a SQLite file to `target` without writing to it or beside it; its sha256."""
    with path.open("rb") as file:
        magic = file.read(len(_SQLITE_MAGIC))
    if magic != _SQLITE_MAGIC:
        raise InputError(
            source,
            f"{path} is not a SQLite database (use a .sql script or a SQLite file)",
            field=FIELD,
        )
    try:
        if any(path.with_name(path.name + s).exists() for s in ("-wal", "-journal")):
            uri = f"file:{quote_uri(str(path.resolve()))}?mode=ro"
            original = sqlite3.connect(uri, uri=True)
            try:
                _backup(original, target)
            finally:
                original.close()
            digest = _sha256(path)
        else:
            digest = _copy_file(path, target)
        problem = _check_pages(target)
    except sqlite3.Error as error:
        raise InputError(source, f"cannot read the database {path}: {error}", field=FIELD) from None
    if problem is not None:
        raise InputError(
            source, f"cannot read the database {path}: it is damaged ({problem})", field=FIELD
        )
    return digest


_NOT_UTF8 = "its schema is not UTF-8 text"


def _check_pages(path: Path) -> str | None:
    """SQLite's first complaint about the pages of the database at `path` (`quick_check`,
    in C: about half a second for a million rows), or None. The rows are read only when a
    replay asks for them: a damaged page must be refused at load, in one line, and not fail
    a case later."""
    image = open_image(path)
    try:
        image.execute("SELECT name, tbl_name, sql FROM sqlite_schema").fetchall()
        (first,) = image.execute("PRAGMA quick_check(1)").fetchone()
    except sqlite3.OperationalError as error:
        if not str(error).startswith(UNDECODABLE):
            raise
        return _NOT_UTF8
    except UnicodeDecodeError:  # SQLite's complaint quotes the damaged schema
        return _NOT_UTF8
    finally:
        image.close()
    return None if first == "ok" else " ".join(str(first).split())


def _copy_file(path: Path, target: Path) -> str:
    """Copy the file a chunk at a time, hashing what it copies; mark the copy for a rollback
    journal (`without_wal`)."""
    digest = hashlib.sha256()
    with path.open("rb") as file, target.open("wb") as copy:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
            copy.write(chunk)
    with target.open("r+b") as copy:
        head = copy.read(20)
        if without_wal(head) != head:
            copy.seek(18)
            copy.write(b"\x01\x01")
    return digest.hexdigest()


def without_wal(image: bytes) -> bytes:
    """A database image marked for a rollback journal: in memory there is no WAL."""
    return image[:18] + b"\x01\x01" + image[20:] if image[18:20] == b"\x02\x02" else image


def run_script(db: sqlite3.Connection, path: Path, source: str, max_size_mb: int) -> None:
    """Run a SQL script statement by statement, so that an error names its line.

    The script is read as a stream, a statement at a time, never whole: a script of a
    million INSERTs holds one of them in memory, not its text and the list of its lines. A
    first pass checks that the whole file is UTF-8, so that a file that is not is refused
    before any of it runs, as when it was read whole.
    """
    try:
        _check_utf8(path)
        with path.open(encoding="utf-8") as file:  # newlines as `read_text` reads them
            for start, statement in statements(_lines(file)):
                _run_statement(db, path, start, statement, max_size_mb)
    except NulInScriptError as error:
        raise InputError(
            str(path), "a NUL character: SQL text cannot hold one", line=error.line, field=FIELD
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(source, f"cannot read {path}: {error}", field=FIELD) from None


def _check_utf8(path: Path) -> None:
    """Raise `UnicodeDecodeError` unless the file is UTF-8, reading it a chunk at a time (a
    file that is not is then read whole, for `read_text`'s own error, its position in the
    file and not in a chunk)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with path.open("rb") as file:
            while chunk := file.read(_CHUNK):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        path.read_text(encoding="utf-8")
        raise


def _lines(file: Iterable[str]) -> Iterator[str]:
    """The lines of a text file, split as `str.splitlines(keepends=True)` splits its whole
    text (a file's lines end at a newline only; splitlines also ends them at a form feed,
    a vertical tab, U+2028 and the like)."""
    for chunk in file:
        yield from chunk.splitlines(keepends=True)


def _run_statement(
    db: sqlite3.Connection, path: Path, start: int, statement: str, max_size_mb: int
) -> None:
    """Run one statement of a script; an error names the line it starts on."""
    try:
        db.executescript(statement)
    except sqlite3.Error as error:
        first = statement.strip().splitlines()[0]
        cap = f", over the cap of {max_size_mb} MB: raise max_size_mb" if oversize(error) else ""
        raise InputError(
            str(path), f"{error} (in the statement {show(first)}){cap}", line=start, field=FIELD
        ) from None


class NulInScriptError(ValueError):
    """A script's line holds a NUL character, which no SQL text may hold."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def statements(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Complete SQL statements with the line each starts on; a trailing fragment last."""
    buffer: list[str] = []
    start = 1
    for number, line in enumerate(lines, 1):
        if "\x00" in line:
            raise NulInScriptError(number)
        if not buffer:
            if not line.strip() or line.lstrip().startswith("--"):
                continue
            start = number
        buffer.append(line)
        if ";" in line and sqlite3.complete_statement("".join(buffer)):
            yield start, "".join(buffer)
            buffer = []
    if buffer:
        yield start, "".join(buffer)
