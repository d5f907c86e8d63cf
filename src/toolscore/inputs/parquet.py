"""Parquet cases and outputs files, converted row by row into JSON Lines (through pyarrow).

A Parquet file holds one case (or one output) per row, its columns the keys of a JSON Lines
line. A column may hold its value nested (structs, lists, maps) or, for the keys whose value
is a list or an object in JSON Lines, as JSON text in a string column (`JSON_TEXT`): such a
string is parsed, and one that does not parse is an input error naming the row and the
column (`goal_state` and `setup` strings only when they begin with `{` or `[`: else they are
`"plan"` and SQL). Any other string column is kept as text (`prompt`, `response`, an output
call's raw `args`). A null is an absent key: a null column value, and a null field of a
struct (a struct has the same fields on every row, so a tool's arguments struct carries the
other tools' arguments as nulls). Nulls in lists and map values stay null. In a cases file,
a plan call's `args` held as a string is JSON text too (cases need an object there).

The file is read by record batch, so memory is bounded by a batch (and pyarrow's row group
buffers), not by the file; a batch becomes Python values a few rows at a time. A Parquet file
is recognised by its first bytes, `PAR1` (see the registration in `converted.py`); pyarrow is
imported here only, when such a file is met.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from collections import Counter
from collections.abc import Callable, Iterator
from typing import IO, Any, Final

import orjson

from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.conversion import Conversion

BATCH_ROWS: Final = 1024
"""Rows read at once, held in Arrow's compact form."""
PYTHON_ROWS: Final = 64
"""Rows of a batch turned into Python values at once: the bound on the memory the conversion
holds beyond the batch (a row may hold a long transcript)."""
MAX_ROW_GROUP_BYTES: Final = 4 << 30
"""The most a row group may hold uncompressed (4 GiB): the bound on what one crafted row
group can make pyarrow decompress into memory."""
MAX_RATIO: Final = 1000
"""The largest compression ratio a row group may claim (encoded data compresses far less)."""
EXTRA: Final = "reading Parquet files needs pyarrow: pip install 'toolscore[parquet]'"

JSON_TEXT: Final = {
    "cases": frozenset({"plans", "tags", "required_outputs", "goal_state", "setup"}),
    "outputs": frozenset(
        {"calls", "messages", "items", "contents", "spans", "resourceSpans", "mcp"}
    ),
}
"""The columns whose string values are JSON text, by kind of file: the keys whose value in
JSON Lines is a list or an object. Every other string column is kept as a string."""
TEXT_OR_JSON: Final = frozenset({"goal_state", "setup"})
"""Keys whose value may also be a plain string (`"plan"`, SQL): a string of theirs is JSON
text only when it begins with `{` or `[`."""


def convert(path: str, conversion: Conversion, out: IO[bytes]) -> None:
    """Write each row of the Parquet file at `path` to `out` as one JSON Lines line, in
    order; an input error (naming the row and the column) for a row that cannot be one."""
    error = CaseError if conversion.kind == "cases" else OutputError
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # noqa: PLC0415
    except ImportError:
        raise error(path, EXTRA) from None
    try:
        reader = pq.ParquetFile(path)
        schema = reader.schema_arrow
    except Exception as failure:  # pyarrow's errors (ArrowInvalid, OSError) carry no common base
        raise error(path, f"not a readable Parquet file: {_first_line(failure)}") from None
    if "id" not in schema.names:
        raise error(path, "the Parquet file has no 'id' column", field="id")
    repeated = next((n for n, count in Counter(schema.names).items() if count > 1), None)
    if repeated is not None:
        raise error(path, "the Parquet file has two columns of this name", field=repeated)
    _check_sizes(reader.metadata, path, error)
    rows = _Rows(schema, JSON_TEXT[conversion.kind], conversion.kind == "cases", path, error)
    for line in rows.lines(_batches(reader, path, error)):
        out.write(line)


def _check_sizes(metadata: Any, path: str, error: type[InputError]) -> None:
    """Refuse a row group whose pages claim more than `MAX_ROW_GROUP_BYTES`, or more than
    `MAX_RATIO` times their compressed size, before pyarrow decompresses it into memory (a
    crafted file, the Parquet form of a zip bomb)."""
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        plain = group.total_byte_size
        packed = sum(group.column(j).total_compressed_size for j in range(group.num_columns))
        if plain > MAX_ROW_GROUP_BYTES or plain > MAX_RATIO * max(packed, 1):
            message = (
                f"row group {index} claims {plain:,} bytes from {packed:,} compressed: refused "
                f"(over {MAX_ROW_GROUP_BYTES:,} bytes or {MAX_RATIO}:1: a crafted file?)"
            )
            raise error(path, message)


def _batches(reader: Any, path: str, error: type[InputError]) -> Iterator[list[dict[str, Any]]]:
    """The file's rows, a few at a time, as Python values (maps as (key, value) pairs)."""
    batches = reader.iter_batches(batch_size=BATCH_ROWS)
    done = 0
    while True:
        try:
            batch = next(batches, None)
        except Exception as failure:  # a corrupt page or row group, found when it is read
            message = f"cannot read the Parquet file after row {done}: {_first_line(failure)}"
            raise error(path, message) from None
        if batch is None:
            return
        for start in range(0, batch.num_rows, PYTHON_ROWS):
            yield batch.slice(start, PYTHON_ROWS).to_pylist()
        done += batch.num_rows


def _first_line(failure: BaseException) -> str:
    text = str(failure).strip()
    return text.splitlines()[0] if text else type(failure).__name__


Convert = Callable[[Any], Any]
"""Turns a non-null Python value of one Arrow type (as pyarrow gives it) into JSON."""


class _UnfitError(Exception):
    """A value with no JSON form; `path` says where inside its column, innermost part first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


class _Rows:
    """Turns rows (as pyarrow gives them) into JSON Lines, guided by the file's schema: each
    column that needs it gets a converter made once for its Arrow type."""

    def __init__(
        self,
        schema: Any,
        json_text: frozenset[str],
        cases: bool,
        path: str,
        error: type[InputError],
    ) -> None:
        import pyarrow as pa  # noqa: PLC0415

        self.types = pa.types
        self.path = path
        self.error = error
        self.cases = cases
        self.json_text = {name for name in schema.names if name in json_text}
        self.non_finite = False
        self.converters: dict[str, Convert] = {}
        for name in schema.names:
            convert = self._converter(schema.field(name).type)
            if convert is not None:
                self.converters[name] = convert

    def _converter(self, kind: Any) -> Convert | None:
        """The converter of values of `kind`; None when pyarrow's own value is JSON already
        (strings, integers, booleans, and lists of them). Structs drop their null fields
        (absent keys), maps become objects, floats are checked for NaN and infinities, and
        types JSON lacks are turned into text or numbers."""
        types = self.types
        if types.is_struct(kind):
            return self._struct([(f.name, self._converter(f.type)) for f in kind])
        if types.is_map(kind):
            return self._map(kind.key_type, self._converter(kind.item_type))
        if types.is_dictionary(kind):
            return self._converter(kind.value_type)
        if _is_list(types, kind):
            item = self._converter(kind.value_type)
            return None if item is None else self._list(item)
        if types.is_floating(kind):
            return self._float
        if (
            types.is_string(kind)
            or types.is_large_string(kind)
            or types.is_integer(kind)
            or types.is_boolean(kind)
            or types.is_null(kind)
        ):
            return None
        return lambda value: _scalar(value, kind)

    def _struct(self, fields: list[tuple[str, Convert | None]]) -> Convert:
        def struct(value: dict[str, Any]) -> dict[str, Any]:
            found = {}
            for name, convert in fields:
                item = value[name]
                if item is not None:
                    found[name] = item if convert is None else _inside(convert, item, f".{name}")
            return found

        return struct

    def _list(self, convert: Convert) -> Convert:
        def items(value: list[Any]) -> list[Any]:
            return [
                None if item is None else _inside(convert, item, f"[{i}]")
                for i, item in enumerate(value)
            ]

        return items

    def _map(self, key_type: Any, convert: Convert | None) -> Convert:
        def pairs(value: list[tuple[Any, Any]]) -> dict[str, Any]:
            found: dict[str, Any] = {}
            for key, item in value:
                if not isinstance(key, str):
                    raise _UnfitError(
                        f"a map's keys must be strings to stand for an object, got {key_type}"
                    )
                if key in found:
                    raise _UnfitError(f"the map repeats the key {key!r}")
                found[key] = (
                    item if item is None or convert is None else _inside(convert, item, f".{key}")
                )
            return found

        return pairs

    def _float(self, value: float) -> float:
        if not math.isfinite(value):
            self.non_finite = True
        return value

    def lines(self, batches: Iterator[list[dict[str, Any]]]) -> Iterator[bytes]:
        """The JSON line of every row, in order (rows are numbered from 1 in messages)."""
        number = 0
        for batch in batches:
            for row in batch:
                number += 1
                yield self.line(row, number)

    def line(self, row: dict[str, Any], number: int) -> bytes:
        """One row as a JSON line: nulls dropped, JSON text parsed, nested values as JSON."""
        data: dict[str, Any] = {}
        self.non_finite = False
        for name, value in row.items():
            if value is not None:
                data[name] = self._column(name, value, number)
        if self.non_finite:  # orjson would write NaN as null; the readers judge it as written
            return json.dumps(data, ensure_ascii=False, allow_nan=True).encode() + b"\n"
        return orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)

    def _column(self, name: str, value: Any, number: int) -> Any:
        convert = self.converters.get(name)
        if convert is not None:
            try:
                value = convert(value)
            except _UnfitError as unfit:
                where = f"row {number}: {name}{''.join(reversed(unfit.path))}"
                raise self.error(self.path, unfit.message, field=where) from None
        if name in self.json_text and isinstance(value, str):
            if name in TEXT_OR_JSON and not value.lstrip().startswith(("{", "[")):
                return value
            return self._parse(value, f"row {number}: {name}")
        if self.cases and name == "plans":
            return self._plan_args(value, number)
        return value

    def _parse(self, text: str, where: str) -> Any:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as failure:
            message = f"a JSON text column that does not parse: {failure.msg}"
            raise self.error(self.path, message, field=where) from None

    def _plan_args(self, plans: Any, number: int) -> Any:
        """A cases file's plans with each call's `args` parsed where it is JSON text."""
        if not isinstance(plans, list):
            return plans
        for p, plan in enumerate(plans):
            for c, call in enumerate(plan if isinstance(plan, list) else ()):
                if isinstance(call, dict) and isinstance(call.get("args"), str):
                    where = f"row {number}: plans[{p}][{c}].args"
                    call["args"] = self._parse(call["args"], where)
        return plans


def _inside(convert: Convert, value: Any, part: str) -> Any:
    """`convert(value)` for a value nested at `part`, which an error's path then includes."""
    try:
        return convert(value)
    except _UnfitError as unfit:
        unfit.path.append(part)
        raise


def _scalar(value: Any, kind: Any) -> Any:
    """Values of types JSON lacks: dates and times as ISO 8601 text, durations as seconds,
    decimals as numbers, bytes as their UTF-8 text."""
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        try:
            return value.decode()
        except UnicodeDecodeError:
            raise _UnfitError(
                f"binary data that is not UTF-8 text ({kind}) has no JSON form"
            ) from None
    if isinstance(value, (str, int, bool)):
        return value
    raise _UnfitError(f"a column of type {kind} has no JSON form")


def _is_list(types: Any, kind: Any) -> bool:
    return bool(
        types.is_list(kind)
        or types.is_large_list(kind)
        or types.is_fixed_size_list(kind)
        or types.is_list_view(kind)
        or types.is_large_list_view(kind)
    )
