"""Minimum-cost assignment of rows to columns, solved here for small problems.

A failed case's diagnosis pairs plan calls with produced calls at least cost. Most such
problems are a few calls wide, where importing `scipy.optimize` (a third of a second) costs
far more than solving them, so `assign` solves them in pure Python and hands only large ones
to scipy. Both give the same answer, ties included: `shortest_augmenting_path` is the
algorithm scipy implements (Crouse 2016, "On implementing 2D rectangular assignment
algorithms"), scanning columns in the same order and breaking ties by the same rule, which
the property tests check against scipy on random matrices with ties.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

SCIPY_FROM = 100 * 200
"""Entries (rows x columns) from which scipy solves the problem. A diagnosis of n plan calls
solves an n x 2n matrix: at n = 100 the pure-Python solver takes 2-5 ms against scipy's
0.4 ms, so the 0.36 s import pays for itself after about a hundred such cases; below that
size it does not (bench/RESULTS.md, issue 12), and counting the mismatches of the n^2
candidate pairs costs more than either solver anyway."""


def assign(cost: Sequence[Sequence[float]] | npt.NDArray[Any]) -> list[int]:
    """The column of each row in a minimum-cost assignment, as `linear_sum_assignment` gives.

    `cost` is a list of rows, or a NumPy array when it is large (it then goes to scipy as it is).

    Every row is assigned when there are no more rows than columns; otherwise every column is
    (the rows left without one get -1). Raises ValueError when no assignment of finite cost
    exists.
    """
    rows = len(cost)
    if rows and rows * len(cost[0]) >= SCIPY_FROM:
        from scipy.optimize import linear_sum_assignment  # noqa: PLC0415 - large problems only

        found = [-1] * rows
        row_index, col_index = linear_sum_assignment(cost)
        for r, c in zip(row_index.tolist(), col_index.tolist(), strict=True):
            found[r] = c
        return found
    return shortest_augmenting_path(cost if isinstance(cost, Sequence) else cost.tolist())


def shortest_augmenting_path(cost: Sequence[Sequence[float]]) -> list[int]:
    """`assign` in pure Python: O(rows^2 x columns) with the rows the shorter side.

    A tall matrix is solved transposed, as scipy does, so that ties break the same way.
    """
    rows = len(cost)
    cols = len(cost[0]) if rows else 0
    if rows == 0 or cols == 0:
        return [-1] * rows
    if rows > cols:
        by_column = _solve([[cost[i][j] for i in range(rows)] for j in range(cols)])
        found = [-1] * rows
        for j, i in enumerate(by_column):
            found[i] = j
        return found
    return _solve(cost)


def _solve(cost: Sequence[Sequence[float]]) -> list[int]:
    """Rows added one at a time, each by the shortest augmenting path from it (Dijkstra on
    reduced costs, with row duals `u` and column duals `v`); needs rows <= columns."""
    rows, cols = len(cost), len(cost[0])
    if not all(map(_valid, cost)):
        raise ValueError("matrix contains invalid numeric entries")
    u = [0.0] * rows
    v = [0.0] * cols
    col_of = [-1] * rows
    row_of = [-1] * cols
    via = [-1] * cols  # the row from which the shortest path reaches each column
    for start in range(rows):
        distance = [math.inf] * cols
        seen_rows: list[int] = []
        seen_cols: list[int] = []
        shortest = _shortest_path(cost, u, v, row_of, via, distance, start, seen_rows, seen_cols)
        u[start] += shortest
        for i in seen_rows:
            if i != start:
                u[i] += shortest - distance[col_of[i]]
        for j in seen_cols:
            v[j] -= shortest - distance[j]
        j = seen_cols[-1]  # the free column the path ends at
        while True:
            i = via[j]
            row_of[j] = i
            col_of[i], j = j, col_of[i]
            if i == start:
                break
    return col_of


def _shortest_path(
    cost: Sequence[Sequence[float]],
    u: list[float],
    v: list[float],
    row_of: list[int],
    via: list[int],
    distance: list[float],
    start: int,
    seen_rows: list[int],
    seen_cols: list[int],
) -> float:
    """Grow the shortest paths from row `start` until one reaches a free column: fills
    `distance`, `via` and the rows and columns reached (the free one last); its length."""
    # Columns left to reach, scanned in this order; a reached column is replaced by the last
    # one. Starting from the highest makes a constant matrix give the identity.
    remaining = list(range(len(v) - 1, -1, -1))
    inf = math.inf
    shortest = 0.0
    i = start
    while True:
        seen_rows.append(i)
        lowest = inf
        best = -1
        row_cost, ui = cost[i], u[i]
        for j in remaining:
            d = distance[j]
            reduced = shortest + row_cost[j] - ui - v[j]
            if reduced < d:
                via[j] = i
                distance[j] = d = reduced
            # Among equally near columns, a free one ends the path now.
            if d < lowest or (d == lowest and row_of[j] == -1):
                lowest = d
                best = j
        shortest = lowest
        if shortest == inf:
            raise ValueError("cost matrix is infeasible")
        seen_cols.append(best)
        if row_of[best] == -1:
            return shortest
        i = row_of[best]
        remaining[remaining.index(best)] = remaining[-1]
        remaining.pop()


def _valid(row: Sequence[float]) -> bool:
    """No NaN and no minus infinity in `row`. Its sum says so at C speed, unless the sum is
    NaN or minus infinity: only then is the row checked value by value."""
    total = sum(row)
    if not math.isnan(total) and total != -math.inf:
        return True
    return not any(math.isnan(value) or value == -math.inf for value in row)
