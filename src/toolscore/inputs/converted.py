"""Cases and outputs files that are not JSON Lines, turned into JSON Lines before they are read.

Every reader in toolscore reads JSON Lines, streaming and in parallel. A file in another
layout (Parquet, an Inspect eval log, an OpenTelemetry collector export, an MCP session
log) is recognised by its
first bytes and converted first, by the converter registered for it, into a temporary JSON
Lines file of one line per record of the source, in the source's order. So line N of the
conversion is record N of the source, and an input error found on it later is reported naming
the source file and its record (`logs.parquet: row 7: args: ...`), never the temporary file.
Converters live in their own modules, imported only when their format is met, since most
need an optional library or load provider readers; their sniffers are in `layouts`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from toolscore.errors import InputError
from toolscore.inputs import layouts
from toolscore.inputs.conversion import Conversion, Kind
from toolscore.inputs.paths import is_stream

__all__ = [  # with Conversion and Kind, which lived here and are still named from here
    "CONVERTERS",
    "HEAD_BYTES",
    "Conversion",
    "Converter",
    "Kind",
    "as_json_lines",
    "converted_inputs",
    "layout_of",
    "named_record",
    "register",
]

HEAD_BYTES = 65536
"""How much of a file the sniffers see."""


@dataclass(frozen=True)
class Converter:
    """A file layout other than JSON Lines: how to recognise it and where its converter is.

    `sniff(path, head)` says whether the file (its first bytes in `head`) is in this layout;
    `convert` names `module:function`, called as `function(path, conversion, out)`, which writes
    JSON Lines to `out` (one line per record, in order) and raises `InputError` naming `path`
    for a record it cannot read. `unit` names a record in messages (`row`, `sample`)."""

    name: str
    sniff: Callable[[str, bytes], bool]
    convert: str
    unit: str


CONVERTERS: list[Converter] = []
"""The registered layouts, tried in order; a file none of them claims is read as JSON Lines."""


def register(converter: Converter) -> None:
    """Add a layout (at import of this module: see the registrations at its end)."""
    CONVERTERS.append(converter)


def layout_of(path: str) -> Converter | None:
    """The layout that claims the file at `path`, or None for JSON Lines (and for streams,
    which are always read as JSON Lines)."""
    if is_stream(path):
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return None  # the reader reports it, naming the file
    return next((c for c in CONVERTERS if c.sniff(path, head)), None)


@contextlib.contextmanager
def as_json_lines(path: str, conversion: Conversion) -> Iterator[str]:
    """`path` itself for JSON Lines; otherwise a temporary JSON Lines conversion of it,
    removed when the block ends. An input error about the conversion raised in the block is
    raised again naming `path` and the record."""
    converter = layout_of(path)
    if converter is None:
        yield path
        return
    module, _, function = converter.convert.partition(":")
    convert: Callable[[str, Conversion, IO[bytes]], None] = getattr(
        importlib.import_module(module), function
    )
    import tempfile  # noqa: PLC0415 - for a file to convert only (start-up)

    fd, copy = tempfile.mkstemp(prefix=f"toolscore-{converter.name}-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as out:
            convert(path, conversion, out)
        yield copy
    except InputError as failure:
        if failure.source != copy:
            raise
        raise named_record(failure, path, converter.unit) from None
    finally:
        Path(copy).unlink(missing_ok=True)


def named_record(failure: InputError, path: str, unit: str) -> InputError:
    """`failure`, found on line N of the conversion, as an error about record N of `path`."""
    where = f"{unit} {failure.line}" if failure.line is not None else None
    field = ": ".join(part for part in (where, failure.field) if part) or None
    return type(failure)(path, failure.message, field=field)


@contextlib.contextmanager
def converted_inputs(
    cases: str, outputs: str, group_by: str | None = None
) -> Iterator[tuple[str, str]]:
    """A cases and an outputs file as JSON Lines (see `as_json_lines`)."""
    with (
        as_json_lines(cases, Conversion("cases")) as cases_lines,
        as_json_lines(outputs, Conversion("outputs", group_by)) as outputs_lines,
    ):
        yield cases_lines, outputs_lines


register(
    Converter("inspect-log", layouts.inspect_log, "toolscore.inputs.inspect_logs:convert", "sample")
)
register(
    Converter("otlp-json", layouts.otlp_export, "toolscore.inputs.otlp_export:convert", "group")
)
register(Converter("mcp-log", layouts.mcp_log, "toolscore.inputs.mcp_log:convert", "session"))
register(Converter("parquet", layouts.parquet, "toolscore.inputs.parquet:convert", "row"))
