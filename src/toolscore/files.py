"""Write a file whole or not at all, with the permissions `open()` would have given it.

Reports and exports are written to a temporary file beside the target and renamed over it,
so a failed run leaves the old file (or none), never half a file. `tempfile.mkstemp` would
make that file readable by its owner only whatever the umask; here it is created as
`open(path, "w")` creates a file (0666 less the umask), and an existing target keeps its mode.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

from toolscore.errors import InputError

_ATTEMPTS = 100


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[IO[bytes]]:
    """A binary handle on a new file beside `path`, renamed over `path` when the block ends
    without an error and removed when it raises; OSError as `open` raises it. A target that
    exists and is not a regular file (a device such as /dev/null, a pipe) is written into,
    never replaced."""
    target = Path(path)
    if target.exists() and not target.is_file():
        with open(target, "wb") as stream:
            yield stream
        return
    fd, temporary = _create_beside(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_atomically(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` whole or not at all (OSError as `open` raises it)."""
    with atomic_file(path) as handle:
        handle.write(data)


def write_output(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` whole or not at all; a disk error is one InputError
    line naming the file."""
    try:
        write_atomically(path, text.encode("utf-8"))
    except OSError as error:
        raise InputError(str(path), f"cannot write: {error.strerror or error}") from None


def write_files(out_dir: str | Path, files: Mapping[str, str]) -> list[Path]:
    """Write each named text into `out_dir` (created if missing): all of them to temporary
    names first, then each renamed into place, so that a failure leaves none half-written.
    Returns the files written, in order; a disk error is one InputError line."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(str(out), f"cannot create: {error.strerror or error}") from None
    written: list[tuple[Path, Path]] = []
    try:
        for name, text in files.items():
            target = out / name
            temporary = out / f".{name}.tmp"
            written.append((temporary, target))
            try:
                temporary.write_text(text, encoding="utf-8")
            except OSError as error:
                raise InputError(str(target), f"cannot write: {error.strerror or error}") from None
    except BaseException:
        for temporary, _ in written:
            temporary.unlink(missing_ok=True)
        raise
    for temporary, target in written:
        os.replace(temporary, target)
    return [target for _, target in written]


def _create_beside(target: Path) -> tuple[int, Path]:
    """A new, empty file in `target`'s directory: 0666 less the umask, or `target`'s own
    mode when it exists."""
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mode = None
    for _ in range(_ATTEMPTS):
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        if mode is not None:
            try:
                os.chmod(temporary, mode)
            except BaseException:
                os.close(fd)
                temporary.unlink(missing_ok=True)
                raise
        return fd, temporary
    raise FileExistsError(f"no free temporary name beside {target}")
