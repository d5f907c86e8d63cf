"""Stream a JSON Lines file as (line number, parsed object), without loading it whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from toolscore.errors import InputError
from toolscore.inputs import close_input, open_input


class ByteCounter:
    """How many bytes of a file have been read so far, for a progress bar."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = 0


def iter_lines(
    path: str | Path, error: type[InputError] = InputError, counter: ByteCounter | None = None
) -> Iterator[tuple[int, bytes]]:
    """Yield (line number, raw line) for each non-blank line of a file (standard input for
    `-`); `error` if the file is unreadable."""
    handle = open_input(path, error)
    try:
        for number, line in enumerate(handle, 1):
            if counter is not None:
                counter.done += len(line)
            if not line.isspace() and line:
                yield number, line
    finally:
        close_input(handle)


def parse_line(raw: bytes, source: str, number: int, error: type[InputError]) -> dict[str, Any]:
    """One line as a JSON object; `error` naming the line when it is not one."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as failure:
        raise error(source, f"not valid JSON: {failure.msg}", line=number) from None
    if type(value) is not dict:
        raise error(source, "each line must be a JSON object", line=number)
    return value


def read_jsonl(
    path: str | Path, error: type[InputError] = InputError, counter: ByteCounter | None = None
) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """Yield (line number, raw line, object) for each non-blank line; `error` for bad lines."""
    source = str(path)
    for number, line in iter_lines(path, error, counter):
        yield number, line, parse_line(line, source, number, error)
