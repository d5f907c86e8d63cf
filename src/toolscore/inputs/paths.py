"""Input files as the command line names them: a path, or `-` for standard input.

A cases or outputs file may be a stream (`-`, `/dev/stdin`, a pipe, `<(...)`): the readers
go over it once, line by line. Where a command must read an input twice (a saved run hashes
its inputs before scoring and stores their content after), `rereadable` copies a stream to
a temporary file first, so memory stays flat either way.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from toolscore.errors import InputError

STDIN = "-"
"""The path that means standard input."""


def open_input(path: str | Path, error: type[InputError] = InputError) -> IO[bytes]:
    """The file at `path` opened for reading bytes, or standard input for `-`; `error`
    naming the file when it cannot be opened. Close it with `close_input`."""
    if str(path) == STDIN:
        return sys.stdin.buffer
    try:
        return open(path, "rb")  # the caller closes it with close_input
    except OSError as failure:
        raise error(str(path), f"cannot read: {failure.strerror or failure}") from None


def close_input(handle: IO[bytes]) -> None:
    """Close what `open_input` opened (standard input stays open)."""
    if handle is not sys.stdin.buffer:
        handle.close()


def is_stream(path: str | Path) -> bool:
    """Whether `path` is standard input or another file that can be read only once (a pipe,
    a terminal, a character device), as opposed to a regular file."""
    if str(path) == STDIN:
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def input_size(path: str | Path) -> int | None:
    """The size of a regular file in bytes; None for a stream (its size is not known)."""
    if is_stream(path):
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def check_inputs(*given: tuple[str, str | None]) -> None:
    """Check `(option, path)` pairs before reading any: each path exists and is not a
    directory, and at most one of them is standard input (a stream is read only once)."""
    streams: list[str] = []
    for option, path in given:
        if path is None:
            continue
        if path != STDIN:
            target = Path(path)
            if not target.exists():
                raise InputError(path, "no such file")
            if target.is_dir():
                raise InputError(path, "is a directory, not a file")
        if path == STDIN or _is_stdin(path):
            streams.append(option)
    if len(streams) > 1:
        raise InputError(
            " and ".join(streams), "cannot both read standard input (a stream is read once)"
        )


def _is_stdin(path: str) -> bool:
    """Whether `path` names this process's standard input (`/dev/stdin`, `/dev/fd/0`)."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdin.fileno()))
    except (OSError, ValueError, AttributeError):  # also a stdin with no file descriptor
        return False


@contextlib.contextmanager
def rereadable(path: str, error: type[InputError] = InputError) -> Iterator[str]:
    """`path` itself for a regular file; for a stream, a temporary copy of it (removed when
    the block ends), for commands that read an input more than once. An input error about
    the copy raised in the block is raised again naming `path`."""
    if not is_stream(path):
        yield path
        return
    import shutil  # noqa: PLC0415 - for a stream only (tempfile and shutil: ~5 ms of start-up)
    import tempfile  # noqa: PLC0415

    handle = open_input(path, error)
    fd, copy = tempfile.mkstemp(prefix="toolscore-input-")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(handle, out)
        close_input(handle)
        yield copy
    except InputError as failure:
        if failure.source != copy:
            raise
        raise type(failure)(path, failure.message, line=failure.line, field=failure.field) from None
    finally:
        close_input(handle)
        Path(copy).unlink(missing_ok=True)
