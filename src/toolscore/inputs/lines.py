"""Lines of an input file, each read with a bound on its length, so that no line is held
whole past the cap (`bounds.max_line_bytes`, 64 MiB by default): a file of one 5 GB line is
refused after reading 64 MiB of it, not read into memory.

Every reader of a user's JSON Lines file reads through here (`jsonl.iter_lines`, the
chunked join's `join.LineReader`, the collector export's converter).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from toolscore.errors import InputError
from toolscore.inputs.bounds import LINE_BYTES_VAR


class Readable(Protocol):
    """What the reader needs of a file: a plain or gzip file, standard input's buffer."""

    def readline(self, size: int = -1, /) -> bytes:
        """At most `size` bytes of the next line."""
        ...


def line_error(source: str, number: int, cap: int, error: type[InputError]) -> InputError:
    """The one-line refusal of line `number`, longer than the cap."""
    message = (
        f"the line is longer than {cap:,} bytes, the most a line may hold "
        f"(set {LINE_BYTES_VAR} to a larger number of bytes to read it)"
    )
    return error(source, message, line=number)


def bounded_lines(
    handle: Readable, source: str, cap: int, error: type[InputError] = InputError
) -> Iterator[bytes]:
    """Each line of `handle` with its newline, in order; `error` naming the line when one is
    longer than `cap` bytes (read no further than one byte past the cap)."""
    readline = handle.readline
    number = 0
    while line := readline(cap + 1):
        number += 1
        if len(line) > cap and line[-1:] != b"\n":  # it did not end within the cap
            raise line_error(source, number, cap, error)
        yield line
