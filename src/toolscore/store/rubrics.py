"""Rubric results in the results store: a row per rubric entry of a case (table
`rubric_results`), staged with the run and read back into each case's report JSON."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolscore.rubrics.entries import RubricEntry

STAGED = """CREATE TEMP TABLE staged_rubrics (
    case_id TEXT, plan_call INTEGER, argument TEXT, rubric TEXT, call INTEGER, tool TEXT,
    score REAL, passed INTEGER, reason TEXT, cached INTEGER, unscored TEXT, tokens INTEGER
)"""
INSERT_STAGED = "INSERT INTO temp.staged_rubrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
COMMIT_STAGED = (
    # A case's position (`seq`) is its staged row's; case ids are unique within a run.
    "INSERT INTO main.rubric_results SELECT ?, s.rowid - 1, r.plan_call, r.argument, r.rubric, "
    "r.call, r.tool, r.score, r.passed, r.reason, r.cached, r.unscored, r.tokens "
    "FROM temp.staged_rubrics AS r JOIN temp.staged_results AS s ON s.case_id = r.case_id"
)
_COLUMNS = "call, plan_call, tool, argument, rubric, score, passed, reason, cached, unscored"
_ORDER = "ORDER BY seq, plan_call, argument, rubric"

RubricRow = tuple[Any, ...]


def rubric_rows(case_id: str, entries: Iterable[RubricEntry]) -> Iterator[RubricRow]:
    """The staged rows of one case's rubric entries."""
    for e in entries:
        yield (
            case_id, e.plan_call, e.argument, e.rubric, e.call, e.tool, e.score,
            None if e.passed is None else int(e.passed), e.reason, int(e.cached), e.unscored,
            e.tokens,
        )  # fmt: skip


def _entry(row: tuple[Any, ...]) -> dict[str, Any]:
    call, plan_call, tool, argument, rubric, score, passed, reason, cached, unscored = row
    return {
        "call": call,
        "plan_call": plan_call,
        "tool": tool,
        "argument": argument,
        "rubric": rubric,
        "score": None if score is None else round(score, 4),
        "passed": None if passed is None else bool(passed),
        "reason": reason,
        "cached": bool(cached),
        "unscored": unscored,
    }


def has_rubric_table(db: sqlite3.Connection) -> bool:
    """Whether the store has the table (a store opened read-only may predate it)."""
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rubric_results'"
    ).fetchone()
    return row is not None


def with_rubrics(
    db: sqlite3.Connection,
    run_id: int,
    cases: Iterable[tuple[int, dict[str, Any]]],
    only: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Each case's report JSON (given with its `seq`, in order) with its `rubrics` list
    added when it has rubric results, as `score --json` wrote it; `only` names the one
    case's `seq` when a single case is read."""
    if not has_rubric_table(db):
        for _, case in cases:
            yield case
        return
    where, parameters = "run_id = ?", [run_id]
    if only is not None:
        where, parameters = "run_id = ? AND seq = ?", [run_id, only]
    rows = db.execute(
        f"SELECT seq, {_COLUMNS} FROM rubric_results WHERE {where} {_ORDER}", parameters
    )
    pending = next(rows, None)
    for seq, case in cases:
        while pending is not None and pending[0] < seq:
            pending = next(rows, None)
        entries = []
        while pending is not None and pending[0] == seq:
            entries.append(_entry(pending[1:]))
            pending = next(rows, None)
        if entries:
            case["rubrics"] = entries
        yield case
