"""Read a case's annotated goal state: `goal_state: {table: [row objects]}`.

The tables listed must hold exactly those rows at the end (matched by key); the tables not
listed must be as they were at the start. A row names every compared column (ignored columns
may be given or left out; a table without a declared primary key is keyed by `rowid`, which
the row must give). Values are JSON: `true`/`false` stand for SQLite's 1/0, and an object or
array stands for text holding that JSON.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from typing import Any

import orjson

from toolscore.core.values import show, suggest
from toolscore.state.replay import Fail
from toolscore.state.snapshot import Ignore, Snapshot, TableShape, TableState, table_shape

GOAL_FORMS = 'either "plan" or a mapping of table names to lists of rows'


def annotated_goal(node: Any, start: Snapshot, ignore: Ignore, fail: Fail) -> Snapshot:
    """The goal snapshot: the start state with the listed tables replaced by their rows (the
    other tables are the start's own, not read here: a stored start reads them when used)."""
    if not isinstance(node, Mapping) or not node:
        raise fail("goal_state", f"must be {GOAL_FORMS}")
    tables: dict[str, TableState] = {}
    for name, rows in node.items():
        where = f"goal_state.{name}"
        shape = table_shape(start, name)
        if shape is None:
            if name in ignore.tables:
                raise fail(where, f"the environment ignores table {name!r} ('*')")
            hint = suggest(str(name), list(start.tables))
            raise fail(where, f"no table {name!r} in the database{hint}")
        if not isinstance(rows, list):
            raise fail(where, "must be a list of row objects (every row the table must hold)")
        tables[name] = TableState(shape, _rows(rows, shape, where, fail))
    return Snapshot(ChainMap(tables, start.tables))  # type: ignore[arg-type]


def _rows(rows: list[Any], shape: TableShape, where: str, fail: Fail) -> list[tuple[Any, ...]]:
    known = set(shape.all_columns) | set(shape.key)
    found: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for i, row in enumerate(rows):
        at = f"{where}[{i}]"
        if not isinstance(row, dict):
            raise fail(at, "a row must be an object of column values")
        for column in row:
            if column not in known:
                hint = suggest(str(column), sorted(known))
                raise fail(f"{at}.{column}", f"table {shape.name!r} has no column {column!r}{hint}")
        for column in shape.columns:
            if column not in row:
                raise fail(
                    at,
                    f"the row lacks column {column!r} (give every column, or ignore it in "
                    "the environment)",
                )
        values = tuple(cell(row[c], f"{at}.{c}", fail) for c in shape.columns)
        key = values[: shape.width]
        if key in found:
            raise fail(at, f"two rows have the key {', '.join(map(show, key))}")
        found[key] = values
    return list(found.values())


def cell(value: Any, where: str, fail: Fail) -> Any:
    """A JSON value as a SQLite cell, as goal rows give them: `true`/`false` as 1/0, an
    object or array as text holding that JSON (anything else is an input error at `where`)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, dict | list):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    if value is None or isinstance(value, str | int | float):
        return value
    raise fail(where, f"not a JSON value: {show(value)}")
