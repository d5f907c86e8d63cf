"""Compress a run's input files on a thread beside the scorer, for the store to keep.

Hashing and zlib do their work without holding Python's global lock, so the input files the
store lacks are compressed while the run is scored, into a temporary file (memory stays
flat); `ContentSpool.stage` then copies the compressed chunks into the writer's staging
tables. Only this thread's own file is shared: the SQLite connection stays on the caller's.
"""

from __future__ import annotations

import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import IO

from toolscore.store.content import compressed_chunks
from toolscore.store.meta import InputFile

StagedRow = tuple[int, str, int, str, int | None, int | None, bytes | None]
"""A `codec.ResultRow` with its position in the run."""

TABLES = (
    """CREATE TEMP TABLE staged_results (
        seq INTEGER PRIMARY KEY, case_id TEXT, passed INTEGER, kind TEXT, plan INTEGER,
        baselines INTEGER, detail BLOB
    )""",
    "CREATE TEMP TABLE staged_contents (sha256 TEXT PRIMARY KEY, size INTEGER, chunks INTEGER)",
    "CREATE TEMP TABLE staged_chunks (sha256 TEXT, seq INTEGER, data BLOB)",
)
"""The writer's staging tables (temporary: they vanish with its connection)."""


class ContentSpool:
    """Compresses `missing` input files on a thread of its own, as soon as it is made."""

    def __init__(self, missing: list[InputFile]) -> None:
        self._spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self._pieces: list[tuple[str, int, int]] = []
        """(sha256, offset, length) of each compressed piece in the spool, in order."""
        self._error: BaseException | None = None
        self._cancel = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(missing,), name="toolscore-compress", daemon=True
        )
        self._missing = missing
        self._thread.start()

    def _run(self, missing: list[InputFile]) -> None:
        try:
            for item in missing:
                for piece in compressed_chunks(item.path, item.sha256):
                    if self._cancel.is_set():
                        return
                    if piece:
                        self._pieces.append((item.sha256, self._spool.tell(), len(piece)))
                        self._spool.write(piece)
        except BaseException as error:  # handed over to the caller's thread by stage()
            self._error = error

    def stage(self, db: sqlite3.Connection) -> None:
        """Wait for the compression, then copy its chunks into the staging tables; raise
        what failed on the thread (an input file changed since it was hashed, ...)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        self._spool.seek(0)
        chunks: dict[str, int] = {}
        for sha256, offset, length in self._pieces:
            self._spool.seek(offset)
            db.execute(
                "INSERT INTO temp.staged_chunks VALUES (?, ?, ?)",
                (sha256, chunks.get(sha256, 0), self._spool.read(length)),
            )
            chunks[sha256] = chunks.get(sha256, 0) + 1
        for item in self._missing:
            db.execute(
                "INSERT INTO temp.staged_contents VALUES (?, ?, ?)",
                (item.sha256, Path(item.path).stat().st_size, chunks.get(item.sha256, 0)),
            )
        self.stop()

    def stop(self) -> None:
        """End the thread after its current piece, and drop the spool."""
        self._cancel.set()
        self._thread.join()
        self._spool.close()
