"""Stream a JSON Lines file as (line number, parsed object), without loading it whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from toolscore.errors import InputError
from toolscore.inputs.bounds import max_line_bytes
from toolscore.inputs.lenient import Junk, LenientLine, loads
from toolscore.inputs.lines import bounded_lines
from toolscore.inputs.paths import close_input, open_input


class ByteCounter:
    """How many bytes of a file have been read so far, for a progress bar."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = 0


def iter_lines(
    path: str | Path, error: type[InputError] = InputError, counter: ByteCounter | None = None
) -> Iterator[tuple[int, bytes]]:
    """Yield (line number, raw line) for each non-blank line of a file (standard input for
    `-`); `error` if the file is unreadable or a line is longer than the line cap
    (`bounds.max_line_bytes`)."""
    source = str(path)
    cap = max_line_bytes(source)
    handle = open_input(path, error)
    try:
        for number, line in enumerate(bounded_lines(handle, source, cap, error), 1):
            if counter is not None:
                counter.done += len(line)
            if not line.isspace() and line:
                yield number, line
    finally:
        close_input(handle)


def parse_line(
    raw: bytes, source: str, number: int, error: type[InputError], *, lenient: bool = False
) -> dict[str, Any]:
    """One line as a JSON object; `error` naming the line when it is not one.

    With `lenient` (outputs lines, where the agent's values stand), a line orjson refuses only
    for values JSON does not allow (NaN, numbers beyond a double, lone surrogates) is read
    anyway, as a `LenientLine` holding markers where those values stood.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as failure:
        read = lenient and loads(raw)
        if not read:
            raise error(source, f"not valid JSON: {failure.msg}", line=number) from None
        value, junk = read
        if type(value) is Junk:
            raise error(source, f"not valid JSON: {value.reason}", line=number) from None
        if type(value) is not dict:
            raise error(source, "each line must be a JSON object", line=number) from None
        return LenientLine(value, junk)
    if type(value) is not dict:
        raise error(source, "each line must be a JSON object", line=number)
    return value


def read_jsonl(
    path: str | Path,
    error: type[InputError] = InputError,
    counter: ByteCounter | None = None,
    *,
    lenient: bool = False,
) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """Yield (line number, raw line, object) for each non-blank line; `error` for bad lines
    (`lenient` as for `parse_line`)."""
    source = str(path)
    for number, line in iter_lines(path, error, counter):
        yield number, line, parse_line(line, source, number, error, lenient=lenient)
