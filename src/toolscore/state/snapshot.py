"""Snapshots of a database's state, and the value rules that decide when two cells are equal.

A snapshot holds each table's rows as tuples, key columns first (the primary key, or the rowid
when none is declared), with the environment's ignored tables and columns left out, so that
diffs and hashes never see them. Cells compare as SQLite values, with two normalisations:
floats are equal when they agree to 12 significant digits (ledger sums computed in another
order differ in the last bits), and text holding a JSON object or array compares as that JSON.
This is `numbers: numeric`, the rule documents follow too (`pointer_diff.same_value`);
`numbers: typed` keeps an integer and a float apart and compares floats exactly.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import orjson

from toolscore.state.guard import trusted

GOAL = "toolscore_goal"
"""The schema name under which a goal database is attached to compare it in SQL."""


class Ignore(NamedTuple):
    """What the comparison leaves out: whole tables, and columns per table."""

    tables: frozenset[str] = frozenset()
    columns: Mapping[str, frozenset[str]] = {}


class ResidueSql(NamedTuple):
    """SQL reading the rows that differ between `main` and a goal attached as `GOAL`.

    For a table with a rowid: `pairs` reads each main row that has no equal row at the same
    rowid in the goal, with that goal row's values (NULLs and a 0 flag when there is none);
    `counts` counts the rows of both sides; `orphans` reads the goal rows whose rowid main
    lacks. For a table without one, `pairs` and `orphans` read every row of main and of goal.
    """

    pairs: str
    counts: str | None
    orphans: str


class TableShape(NamedTuple):
    """A table as compared: its key columns, then the other compared columns."""

    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    """Key columns first, then every column neither key nor ignored, in schema order."""
    all_columns: tuple[str, ...]
    """Every column of the table, ignored ones included (goal rows may name them)."""
    select: str
    """Reads the compared columns of every row."""
    residue: ResidueSql

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


class StoredTables(Mapping[str, TableState]):
    """The tables of a state that SQLite keeps, not Python: each table's rows are read when
    the table is asked for, and not kept, so that holding the state costs no row in memory
    (the environment's initial state: a million rows held as tuples weigh four times the
    store). Which tables there are, and their shapes, are known without reading a row."""

    __slots__ = ("_read", "shapes")

    def __init__(
        self, shapes: Mapping[str, TableShape], read: Callable[[TableShape], list[tuple[Any, ...]]]
    ) -> None:
        self.shapes = shapes
        self._read = read

    def __getitem__(self, name: str) -> TableState:
        shape = self.shapes[name]
        return TableState(shape, self._read(shape))

    def __contains__(self, name: object) -> bool:
        return name in self.shapes

    def __iter__(self) -> Iterator[str]:
        return iter(self.shapes)

    def __len__(self) -> int:
        return len(self.shapes)


def table_shape(snapshot: Snapshot, name: str) -> TableShape | None:
    """The shape of a table of `snapshot`, or None when it has none by that name (a stored
    state tells it without reading the table's rows)."""
    tables = snapshot.tables
    if isinstance(tables, StoredTables):
        return tables.shapes.get(name)
    state = tables.get(name)
    return None if state is None else state.shape


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
        select = f"SELECT {', '.join(map(quote, columns))} FROM main.{quote(name)}"
        residue = _residue_sql(name, columns, _rowid(db, name, all_columns))
        shapes[name] = TableShape(name, key, columns, all_columns, select, residue)
    return shapes


def _rowid(db: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> str | None:
    """A name that reads the table's rowid, or None (a WITHOUT ROWID table, or all shadowed)."""
    alias = next((a for a in ("rowid", "_rowid_", "oid") if a not in columns), None)
    if alias is None:
        return None
    try:
        db.execute(f"SELECT {alias} FROM main.{quote(table)} LIMIT 0")
    except sqlite3.OperationalError:
        return None
    return alias


def _residue_sql(table: str, columns: tuple[str, ...], rowid: str | None) -> ResidueSql:
    name = quote(table)
    final = ", ".join(f"s.{quote(c)}" for c in columns)
    goal = ", ".join(f"o.{quote(c)}" for c in columns)
    if rowid is None:
        return ResidueSql(
            f"SELECT {final} FROM main.{name} AS s", None, f"SELECT {goal} FROM {GOAL}.{name} AS o"
        )
    unequal = " OR ".join(f"s.{quote(c)} IS NOT o.{quote(c)} COLLATE BINARY" for c in columns)
    return ResidueSql(
        f"SELECT {final}, o.{rowid} IS NOT NULL, {goal} FROM main.{name} AS s "
        f"LEFT JOIN {GOAL}.{name} AS o ON o.{rowid} = s.{rowid} "
        f"WHERE o.{rowid} IS NULL OR {unequal}",
        f"SELECT (SELECT count(*) FROM main.{name}), (SELECT count(*) FROM {GOAL}.{name})",
        f"SELECT {goal} FROM {GOAL}.{name} AS o "
        f"WHERE NOT EXISTS (SELECT 1 FROM main.{name} AS s WHERE s.{rowid} = o.{rowid})",
    )


UNDECODABLE = "Could not decode to UTF-8"
"""The start of Python's complaint about stored text that is not UTF-8."""


class NotUtf8Error(Exception):
    """A table holds text that is not UTF-8 (a damaged store, or a tool that wrote bytes as
    text): no comparison can read it, and it is no agent's doing."""


def read_all(
    db: sqlite3.Connection, sql: str, parameters: tuple[Any, ...] = ()
) -> list[tuple[Any, ...]]:
    """Every row that `sql` (a SELECT) gives. Python reports text that is not UTF-8 as an
    `OperationalError`, which a replay would take for a failed statement of the agent's; it
    is raised here as `NotUtf8Error`."""
    try:
        return db.execute(sql, parameters).fetchall()
    except sqlite3.OperationalError as error:
        if str(error).startswith(UNDECODABLE):
            raise NotUtf8Error(str(error)) from None
        raise


def take_snapshot(db: sqlite3.Connection, shapes: Iterable[TableShape]) -> Snapshot:
    """Read every compared row of the given tables."""
    return Snapshot({shape.name: TableState(shape, read_all(db, shape.select)) for shape in shapes})


def residues(
    db: sqlite3.Connection, goal: bytes, shapes: Iterable[TableShape]
) -> tuple[Snapshot, Snapshot]:
    """The rows of the goal image and of `db` that the other side lacks, table by table.

    Both sides must have the schema of `shapes`. A row present on both sides, equal, at the
    same rowid, changes nothing in a diff matched by key, so diffing these residues gives the
    diff of the whole states, while SQLite, not Python, reads the rows that agree.
    """
    with trusted(db):
        db.execute(f"ATTACH ':memory:' AS {GOAL}")
        try:
            db.deserialize(goal, name=GOAL)
            final: dict[str, TableState] = {}
            wanted: dict[str, TableState] = {}
            for shape in shapes:
                final_rows, goal_rows = _table_residues(db, shape.residue, len(shape.columns))
                final[shape.name] = TableState(shape, final_rows)
                wanted[shape.name] = TableState(shape, goal_rows)
            return Snapshot(wanted), Snapshot(final)
        finally:
            db.execute(f"DETACH {GOAL}")


def _table_residues(
    db: sqlite3.Connection, sql: ResidueSql, width: int
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    if sql.counts is None:
        return read_all(db, sql.pairs), read_all(db, sql.orphans)
    final: list[tuple[Any, ...]] = []
    goal: list[tuple[Any, ...]] = []
    for row in read_all(db, sql.pairs):
        final.append(row[:width])
        if row[width]:
            goal.append(row[width + 1 :])
    in_final, in_goal = db.execute(sql.counts).fetchone()
    partnered = in_final - (len(final) - len(goal))
    if in_goal > partnered:
        goal.extend(read_all(db, sql.orphans))
    return final, goal


def schema_version(db: sqlite3.Connection, schema: str = "main") -> int:
    """The schema's version number: it changes whenever a table is created, altered or dropped."""
    version: int = db.execute(f"PRAGMA {schema}.schema_version").fetchone()[0]
    return version


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


def same(goal: Any, final: Any, typed: bool = False) -> bool:
    """Whether two cells hold the same value; `typed` (`numbers: typed`) keeps an integer and
    a float apart and compares floats exactly (text holding JSON still compares as JSON)."""
    if typed:
        if type(goal) is not type(final):
            return False
        return bool(goal == final) or (type(goal) is str and canonical(goal) == canonical(final))
    return bool(goal == final) or canonical(goal) == canonical(final)


def jsonable(value: Any) -> Any:
    """A cell as JSON: blobs become `{"$bytes": HEX}`."""
    return {"$bytes": value.hex()} if isinstance(value, bytes) else value


def sort_key(values: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    """An order over rows of SQLite values of mixed types (NULL, numbers, text, blobs)."""
    rank = {type(None): 0, int: 1, float: 1, str: 2, bytes: 3}
    return tuple((rank.get(type(v), 4), 0 if v is None else v) for v in values)


def state_hash(snapshot: Snapshot, typed: bool = False) -> str:
    """A sha256 of the whole normalised state: tables by name, each with its compared columns
    and its rows sorted, cells in canonical form (the `exact` comparison, as tau-bench's);
    `typed` leaves floats as they are, so that `2` and `2.0` hash apart."""
    digest = hashlib.sha256()
    for name in sorted(snapshot.tables):
        state = snapshot.tables[name]
        columns = [_hashable(column, typed) for column in zip(*state.rows, strict=True)]
        rows = list(zip(*columns, strict=True))
        try:
            rows.sort()
        except TypeError:  # keys of mixed types (SQLite allows it)
            rows.sort(key=lambda row: sort_key(row[: state.shape.width]))
        digest.update(orjson.dumps([name, state.shape.columns, rows]) + b"\n")
    return digest.hexdigest()


def _hashable(column: tuple[Any, ...], typed: bool = False) -> tuple[Any, ...]:
    """A column's cells in canonical form, blobs as `{"$bytes": HEX}`; the per-cell work is
    skipped for the columns that need none (checked at C speed, as it runs on whole states)."""
    kinds = set(map(type, column))
    if typed and float in kinds:  # floats as they are; text and blobs as below
        return tuple(v if type(v) is float else jsonable(canonical(v)) for v in column)
    if str in kinds and float not in kinds and bytes not in kinds:
        try:
            text = "\x00" + "\x00".join(column)
        except TypeError:  # NULLs among the text
            text = "\x00" + "\x00".join(v for v in column if type(v) is str)
        if "\x00{" not in text and "\x00[" not in text:
            return column
    elif not kinds & {float, bytes, str}:
        return column
    return tuple(map(jsonable, map(canonical, column)))
