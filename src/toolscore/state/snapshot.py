"""Snapshots of a database's state, and the value rules that decide when two cells are equal.

A snapshot holds each table's rows as tuples, key columns first (the primary key, or the rowid
when none is declared), with the environment's ignored tables and columns left out, so that
diffs and hashes never see them. Cells compare as SQLite values, with two normalisations:
floats are equal when they agree to 12 significant digits (ledger sums computed in another
order differ in the last bits), and text holding a JSON object or array compares as that JSON.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import orjson


class Ignore(NamedTuple):
    """What the comparison leaves out: whole tables, and columns per table."""

    tables: frozenset[str] = frozenset()
    columns: Mapping[str, frozenset[str]] = {}


class TableShape(NamedTuple):
    """A table as compared: its key columns, then the other compared columns."""

    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    """Key columns first, then every column neither key nor ignored, in schema order."""
    all_columns: tuple[str, ...]
    """Every column of the table, ignored ones included (goal rows may name them)."""
    select: str

    @property
    def width(self) -> int:
        """How many leading values of a row form its key."""
        return len(self.key)


class TableState(NamedTuple):
    """One table's compared rows, in storage order."""

    shape: TableShape
    rows: list[tuple[Any, ...]]


class Snapshot(NamedTuple):
    """The compared state of a database: its tables by name."""

    tables: Mapping[str, TableState]

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        """Every table as a list of row objects (compared columns only), sorted by key."""
        return {
            name: [
                {c: jsonable(v) for c, v in zip(state.shape.columns, row, strict=True)}
                for row in sorted(state.rows, key=lambda row: sort_key(row[: state.shape.width]))
            ]
            for name, state in sorted(self.tables.items())
        }


def quote(name: str) -> str:
    """An SQL identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'


def read_shapes(db: sqlite3.Connection, ignore: Ignore) -> dict[str, TableShape]:
    """The shape of every user table of `db` (SQLite's own tables and ignored tables aside)."""
    names = [
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
    ]
    shapes: dict[str, TableShape] = {}
    for name in names:
        if name in ignore.tables:
            continue
        info = db.execute("SELECT name, pk FROM pragma_table_info(?)", (name,)).fetchall()
        all_columns = tuple(column for column, _ in info)
        key = tuple(column for column, pk in sorted(info, key=lambda c: c[1]) if pk)
        if not key:
            key = (next(a for a in ("rowid", "_rowid_", "oid") if a not in all_columns),)
        skipped = ignore.columns.get(name, frozenset())
        rest = tuple(c for c in all_columns if c not in key and c not in skipped)
        columns = key + rest
        select = f"SELECT {', '.join(map(quote, columns))} FROM {quote(name)}"
        shapes[name] = TableShape(name, key, columns, all_columns, select)
    return shapes


def take_snapshot(db: sqlite3.Connection, shapes: Iterable[TableShape]) -> Snapshot:
    """Read every compared row of the given tables."""
    return Snapshot(
        {shape.name: TableState(shape, db.execute(shape.select).fetchall()) for shape in shapes}
    )


def canonical(value: Any) -> Any:
    """The form in which a cell is compared and hashed (see the module docstring)."""
    if type(value) is float:
        rounded = float(f"{value:.12g}")
        return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded
    if type(value) is str and value[:1] in ("{", "["):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
        return orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS).decode()
    return value


def same(goal: Any, final: Any) -> bool:
    """Whether two cells hold the same value."""
    return bool(goal == final) or canonical(goal) == canonical(final)


def jsonable(value: Any) -> Any:
    """A cell as JSON: blobs become `{"$bytes": HEX}`."""
    return {"$bytes": value.hex()} if isinstance(value, bytes) else value


def sort_key(values: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    """An order over rows of SQLite values of mixed types (NULL, numbers, text, blobs)."""
    rank = {type(None): 0, int: 1, float: 1, str: 2, bytes: 3}
    return tuple((rank.get(type(v), 4), 0 if v is None else v) for v in values)


def state_hash(snapshot: Snapshot) -> str:
    """A sha256 of the whole normalised state: tables by name, each with its compared columns
    and its rows sorted, cells in canonical form (the `exact` comparison, as tau-bench's)."""
    digest = hashlib.sha256()
    for name in sorted(snapshot.tables):
        state = snapshot.tables[name]
        digest.update(orjson.dumps([name, state.shape.columns]))
        lines = sorted(orjson.dumps([jsonable(canonical(v)) for v in row]) for row in state.rows)
        for line in lines:
            digest.update(b"\n" + line)
        digest.update(b"\n\n")
    return digest.hexdigest()
