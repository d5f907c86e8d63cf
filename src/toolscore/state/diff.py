"""The difference between a goal state and the final state, table by table, row by row.

Rows are matched by key. `added` rows are in the final state and not in the goal (the agent
wrote something it should not have); `removed` rows are in the goal and not in the final
state (something the agent should have written, or deleted, is missing); `changed` rows exist
in both with different values in the listed columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from toolscore.core.values import show
from toolscore.state.snapshot import Snapshot, TableState, jsonable, same, sort_key


class RowChange(NamedTuple):
    """A row present in both states whose compared columns differ."""

    key: Mapping[str, Any]
    columns: Mapping[str, tuple[Any, Any]]
    """Column -> (goal value, final value)."""


class TableDiff(NamedTuple):
    """What differs in one table; `note` explains a difference of schema."""

    table: str
    key: tuple[str, ...]
    added: tuple[Mapping[str, Any], ...] = ()
    removed: tuple[Mapping[str, Any], ...] = ()
    changed: tuple[RowChange, ...] = ()
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The table's differences as reports show them."""
        found: dict[str, Any] = {
            "key": list(self.key),
            "added": [_row_json(row) for row in self.added],
            "removed": [_row_json(row) for row in self.removed],
            "changed": [
                {
                    "key": _row_json(change.key),
                    "columns": {
                        c: {"goal": jsonable(g), "final": jsonable(f)}
                        for c, (g, f) in change.columns.items()
                    },
                }
                for change in self.changed
            ],
        }
        if self.note is not None:
            found["note"] = self.note
        return found

    def lines(self) -> list[str]:
        """One line per added, removed or changed row (and one for a schema note)."""
        found = [f"{self.table}: {self.note}"] if self.note else []
        for row in self.added:
            found.append(
                f"{self.table}: added {self._where(row)}: {self._rest(row)} (not in the goal)"
            )
        for row in self.removed:
            found.append(
                f"{self.table}: removed {self._where(row)}: {self._rest(row)} "
                "(in the goal, missing from the final state)"
            )
        for change in self.changed:
            columns = "; ".join(
                f"{c}: goal {show(g)}, final {show(f)}" for c, (g, f) in change.columns.items()
            )
            found.append(f"{self.table}: changed {self._where(change.key)}: {columns}")
        return found

    def _where(self, row: Mapping[str, Any]) -> str:
        return ", ".join(f"{k}={show(row[k])}" for k in self.key)

    def _rest(self, row: Mapping[str, Any]) -> str:
        return ", ".join(f"{c}={show(v)}" for c, v in row.items() if c not in self.key) or "-"


class StateDiff(NamedTuple):
    """Every table that differs between the goal and the final state; empty when they agree."""

    tables: tuple[TableDiff, ...] = ()

    @property
    def passed(self) -> bool:
        """True when the final state equals the goal."""
        return not self.tables

    def to_json(self) -> dict[str, Any]:
        """`{"passed": bool, "tables": {name: table diff}}`."""
        return {"passed": self.passed, "tables": {t.table: t.to_json() for t in self.tables}}

    def lines(self) -> list[str]:
        """A readable account for terminals: one line per added, removed or changed row."""
        return [line for table in self.tables for line in table.lines()]


def diff_states(goal: Snapshot, final: Snapshot, typed: bool = False) -> StateDiff:
    """Compare two snapshots table by table, rows matched by key; `typed` keeps an integer
    and a float apart (`numbers: typed`, see `snapshot.same`)."""
    found: list[TableDiff] = []
    for name in sorted(goal.tables.keys() | final.tables.keys()):
        wanted, got = goal.tables.get(name), final.tables.get(name)
        if got is None:
            assert wanted is not None
            table = TableDiff(name, wanted.shape.key, (), _rows(wanted, _by_key(wanted)))
            found.append(table._replace(note="the table is missing from the final state"))
        elif wanted is None:
            table = TableDiff(name, got.shape.key, _rows(got, _by_key(got)))
            found.append(table._replace(note="the table is not in the goal state"))
        elif wanted.shape.columns != got.shape.columns:
            note = (
                f"columns differ: goal has {', '.join(wanted.shape.columns)}; "
                f"final has {', '.join(got.shape.columns)}"
            )
            found.append(TableDiff(name, got.shape.key, note=note))
        elif typed or wanted.rows != got.rows:  # typed: `==` calls 2 and 2.0 equal
            table = _table_diff(wanted, got, typed)
            if table.added or table.removed or table.changed:
                found.append(table)
    return StateDiff(tuple(found))


def _table_diff(goal: TableState, final: TableState, typed: bool = False) -> TableDiff:
    shape = goal.shape
    width = shape.width
    wanted = {row[:width]: row for row in goal.rows}
    got = {row[:width]: row for row in final.rows}
    changed: list[RowChange] = []
    for key in sorted(wanted.keys() & got.keys(), key=sort_key):
        before, after = wanted[key], got[key]
        if before == after and not typed:
            continue
        columns = {
            column: (g, f)
            for column, g, f in zip(
                shape.columns[width:], before[width:], after[width:], strict=True
            )
            if not same(g, f, typed)
        }
        if columns:
            changed.append(RowChange(dict(zip(shape.key, key, strict=True)), columns))
    added = [got[k] for k in sorted(got.keys() - wanted.keys(), key=sort_key)]
    removed = [wanted[k] for k in sorted(wanted.keys() - got.keys(), key=sort_key)]
    return TableDiff(
        shape.name, shape.key, _rows(final, added), _rows(goal, removed), tuple(changed)
    )


def _by_key(state: TableState) -> list[tuple[Any, ...]]:
    return sorted(state.rows, key=lambda row: sort_key(row[: state.shape.width]))


def _rows(state: TableState, rows: list[tuple[Any, ...]]) -> tuple[Mapping[str, Any], ...]:
    columns = state.shape.columns
    return tuple(dict(zip(columns, row, strict=True)) for row in rows)


def _row_json(row: Mapping[str, Any]) -> dict[str, Any]:
    return {column: jsonable(value) for column, value in row.items()}
