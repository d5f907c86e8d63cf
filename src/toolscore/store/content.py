"""Files kept in the store by content: hashed, zlib-compressed in chunks, read back as lines.

A run keeps the exact bytes of its spec, cases and outputs files, so that it can be re-scored
when the original files are gone. Identical contents are stored once, keyed by sha256.
Reading and writing go chunk by chunk, so memory does not grow with the file.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path

from toolscore.errors import InputError

CHUNK_BYTES = 4 << 20
"""Bytes of the original file per stored chunk."""
LEVEL = 1
"""zlib level: JSON Lines shrink about 9x at level 1, at three times the speed of level 6."""


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, read in chunks; InputError when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
    except OSError as error:
        raise InputError(str(path), f"cannot read: {error.strerror or error}") from None
    return digest.hexdigest()


def has_content(db: sqlite3.Connection, sha256: str) -> bool:
    """Whether the store on `db` has the content with this hash."""
    row = db.execute("SELECT 1 FROM main.contents WHERE sha256 = ?", (sha256,)).fetchone()
    return row is not None


def compressed_chunks(path: str | Path, sha256: str) -> Iterator[bytes]:
    """A file's content as zlib-compressed pieces, checking at the end that it still has the
    hash it had when it was scored (a file that changed since would be stored under the
    wrong name, so that is an input error)."""
    digest = hashlib.sha256()
    compressor = zlib.compressobj(LEVEL)
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
                yield compressor.compress(chunk)
    except OSError as error:
        raise InputError(str(path), f"cannot read: {error.strerror or error}") from None
    yield compressor.flush()
    if digest.hexdigest() != sha256:
        raise InputError(str(path), "the file changed while it was being scored; score it again")


def compressed_bytes(content: bytes) -> Iterator[bytes]:
    """Bytes held in memory (a bundled spec) as zlib-compressed pieces, as `compressed_chunks`
    gives a file's."""
    compressor = zlib.compressobj(LEVEL)
    for start in range(0, len(content), CHUNK_BYTES):
        yield compressor.compress(content[start : start + CHUNK_BYTES])
    yield compressor.flush()


def iter_content(db: sqlite3.Connection, sha256: str) -> Iterator[bytes]:
    """The stored content with this hash, decompressed, in pieces of about CHUNK_BYTES."""
    decompressor = zlib.decompressobj()
    seq = 0
    while True:
        # One query per chunk: no cursor stays open between pieces, so a caller that
        # stops early leaves no read transaction behind.
        row = db.execute(
            "SELECT data FROM content_chunks WHERE sha256 = ? AND seq = ?", (sha256, seq)
        ).fetchone()
        if row is None:
            break
        piece = decompressor.decompress(row[0])
        if piece:
            yield piece
        seq += 1
    rest = decompressor.flush()
    if rest:
        yield rest


def read_content(db: sqlite3.Connection, sha256: str) -> bytes:
    """The whole stored content with this hash (for small files such as specs)."""
    return b"".join(iter_content(db, sha256))


def iter_content_lines(db: sqlite3.Connection, sha256: str) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for each non-blank line of stored content, as `jsonl.iter_lines`."""
    number = 0
    tail = b""
    for piece in iter_content(db, sha256):
        lines = (tail + piece).split(b"\n")
        tail = lines.pop()
        for line in lines:
            number += 1
            if line and not line.isspace():
                yield number, line + b"\n"
    if tail:
        number += 1
        if not tail.isspace():
            yield number, tail
