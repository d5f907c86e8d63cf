"""The tables a run is staged in before it is committed, and how input files get there.

They are temporary tables of the writer's own connection: SQLite keeps them in a file that
vanishes with the connection (so memory does not grow with the run, and a killed save
leaves nothing behind), and `RunWriter.finish` copies them into the store in one go.
Staging runs on the scorer's thread: compressing beside it on a second thread was measured
to slow scoring by more than it saved.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from toolscore.store.content import compressed_bytes, compressed_chunks
from toolscore.store.meta import InputFile
from toolscore.store.rubrics import STAGED as STAGED_RUBRICS

TABLES = (
    # The rowid numbers the results from 1 in the order they were added.
    """CREATE TEMP TABLE staged_results (
        case_id TEXT, passed INTEGER, kind TEXT, plan INTEGER, baselines INTEGER, detail BLOB
    )""",
    "CREATE TEMP TABLE staged_contents (sha256 TEXT PRIMARY KEY, size INTEGER, chunks INTEGER)",
    "CREATE TEMP TABLE staged_chunks (sha256 TEXT, seq INTEGER, data BLOB)",
    STAGED_RUBRICS,
)
INSERT_RESULT = "INSERT INTO temp.staged_results VALUES (?, ?, ?, ?, ?, ?)"


def stage_content(db: sqlite3.Connection, item: InputFile) -> None:
    """Compress an input file into the staging tables (InputError if it changed since it
    was hashed, or cannot be read)."""
    seq = 0
    pieces = (
        compressed_bytes(item.content)
        if item.content is not None
        else compressed_chunks(item.content_path, item.sha256)
    )
    for piece in pieces:
        if piece:
            db.execute("INSERT INTO temp.staged_chunks VALUES (?, ?, ?)", (item.sha256, seq, piece))
            seq += 1
    db.execute(
        "INSERT INTO temp.staged_contents VALUES (?, ?, ?)",
        (item.sha256, _size(item), seq),
    )


def _size(item: InputFile) -> int:
    """The input's size in bytes."""
    return len(item.content) if item.content is not None else Path(item.content_path).stat().st_size
