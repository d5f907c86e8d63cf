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
from collections.abc import Iterator
from typing import IO, Any, Final

import orjson

from toolscore.converted import Conversion
from toolscore.errors import CaseError, InputError, OutputError

BATCH_ROWS: Final = 1024
"""Rows read at once, held in Arrow's compact form."""
PYTHON_ROWS: Final = 64
"""Rows of a batch turned into Python values at once: the bound on the memory the conversion
holds beyond the batch (a row may hold a long transcript)."""
EXTRA: Final = "reading Parquet files needs pyarrow: pip install 'toolscore[parquet]'"

JSON_TEXT: Final = {
    "cases": frozenset({"plans", "tags", "required_outputs", "goal_state", "setup"}),
    "outputs": frozenset({"calls", "messages", "items", "contents", "spans", "resourceSpans"}),
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
    rows = _Rows(schema, JSON_TEXT[conversion.kind], conversion.kind == "cases", path, error)
    for line in rows.lines(_batches(reader, path, error)):
        out.write(line)


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


class _Rows:
    """Turns rows (as pyarrow gives them) into JSON Lines, guided by the file's schema."""

    def __init__(
        self,
        schema: Any,
        json_text: frozenset[str],
        cases: bool,
        path: str,
        error: type[InputError],
    ) -> None:
        import pyarrow as pa  # noqa: PLC0415

        self.pa = pa
        self.path = path
        self.error = error
        self.cases = cases
        self.types = {name: schema.field(name).type for name in schema.names}
        self.json_text = {name for name in schema.names if name in json_text}
        self.walked = {name for name, kind in self.types.items() if self._needs_walk(kind)}
        self.non_finite = False

    def _needs_walk(self, kind: Any) -> bool:
        """Whether values of `kind` need more than pyarrow's own conversion: structs (nulls
        are absent keys), maps (pairs become objects), floats (NaN and infinities), and
        types JSON lacks (dates, decimals, bytes)."""
        types = self.pa.types
        if types.is_struct(kind):
            return True
        if types.is_map(kind) or types.is_floating(kind) or types.is_decimal(kind):
            return True
        if types.is_dictionary(kind):
            return self._needs_walk(kind.value_type)
        if _is_list(types, kind):
            return self._needs_walk(kind.value_type)
        return not (
            types.is_string(kind)
            or types.is_large_string(kind)
            or types.is_integer(kind)
            or types.is_boolean(kind)
            or types.is_null(kind)
        )

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
        where = f"row {number}: {name}"
        if name in self.walked:
            value = self._value(value, self.types[name], where)
        if name in self.json_text and isinstance(value, str):
            if name in TEXT_OR_JSON and not value.lstrip().startswith(("{", "[")):
                return value
            return self._parse(value, where)
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

    def _value(self, value: Any, kind: Any, where: str) -> Any:
        """A Python value from pyarrow as JSON, by its Arrow type."""
        if value is None:
            return None
        types = self.pa.types
        if types.is_struct(kind):
            return {
                field.name: self._value(value[field.name], field.type, f"{where}.{field.name}")
                for field in kind
                if value.get(field.name) is not None
            }
        if types.is_map(kind):
            return self._map(value, kind, where)
        if types.is_dictionary(kind):
            return self._value(value, kind.value_type, where)
        if _is_list(types, kind):
            item = kind.value_type
            return [self._value(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, float):
            self.non_finite = self.non_finite or not math.isfinite(value)
            return value
        return self._scalar(value, kind, where)

    def _map(self, pairs: list[tuple[Any, Any]], kind: Any, where: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, item in pairs:
            if not isinstance(key, str):
                message = (
                    f"a map's keys must be strings to stand for an object, got {kind.key_type}"
                )
                raise self.error(self.path, message, field=where)
            if key in found:
                raise self.error(self.path, f"the map repeats the key {key!r}", field=where)
            found[key] = self._value(item, kind.item_type, f"{where}.{key}")
        return found

    def _scalar(self, value: Any, kind: Any, where: str) -> Any:
        """Values of types JSON lacks: dates and times as ISO 8601 text, decimals as numbers,
        bytes as their UTF-8 text."""
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
                message = f"binary data that is not UTF-8 text ({kind}) has no JSON form"
                raise self.error(self.path, message, field=where) from None
        if isinstance(value, (str, int, bool)):
            return value
        raise self.error(self.path, f"a column of type {kind} has no JSON form", field=where)


def _is_list(types: Any, kind: Any) -> bool:
    return bool(
        types.is_list(kind)
        or types.is_large_list(kind)
        or types.is_fixed_size_list(kind)
        or types.is_list_view(kind)
        or types.is_large_list_view(kind)
    )
