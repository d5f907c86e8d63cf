"""Partial credit of two stored runs, paired on the cases both have: the difference of the
macro precision, recall and F1 (the mean of the cases' values) with its bootstrap interval.

Each case's partial credit is kept in its stored report JSON (`partial`). A run saved before
partial credit existed has none: it is named as such and no number is given for it (never a
0 that would read as an agent that matched nothing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from toolscore.stats.paired import DEFAULT_RESAMPLES, DEFAULT_SEED, MeanTest, mean_test
from toolscore.store.codec import unpack_json
from toolscore.store.database import RunInfo, Store

MEASURES = (("f1", "macro F1"), ("precision", "macro precision"), ("recall", "macro recall"))
"""The case's partial-credit figures compared, by key, and the metric each mean is."""

_SAME_CASES = """
    SELECT a.case_id, a.detail, b.detail FROM results AS a
    JOIN results AS b ON b.run_id = ? AND b.seq = a.seq
    WHERE a.run_id = ? ORDER BY a.seq
"""
_OTHER_CASES = """
    SELECT a.case_id, a.detail, b.detail FROM results AS a
    JOIN temp.compare_partial_ids AS other ON other.case_id = a.case_id
    JOIN results AS b ON b.run_id = ? AND b.seq = other.seq
    WHERE a.run_id = ? ORDER BY a.seq
"""


def _partial(detail: bytes | None) -> dict[str, Any] | None:
    """The stored case's `partial` block, or None when it was saved without one."""
    if detail is None:
        return None
    node = unpack_json(detail).get("partial")
    return node if isinstance(node, dict) else None


def partial_tests(
    store: Store,
    a: RunInfo,
    b: RunInfo,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> tuple[list[MeanTest], list[str]]:
    """The paired tests of macro F1, precision and recall over the shared cases, and a note
    for each run that kept no partial credit ("F1 not stored for run N": then no test)."""
    sums = {key: [0.0, 0.0] for key, _ in MEASURES}
    differences: dict[str, Counter[float]] = {key: Counter() for key, _ in MEASURES}
    missing = [False, False]
    for _, detail_a, detail_b in shared_details(store, a, b):
        node_a, node_b = _partial(detail_a), _partial(detail_b)
        missing[0] = missing[0] or node_a is None
        missing[1] = missing[1] or node_b is None
        if node_a is None or node_b is None:
            continue
        for key, _ in MEASURES:
            value_a, value_b = float(node_a[key]), float(node_b[key])
            sums[key][0] += value_a
            sums[key][1] += value_b
            differences[key][round(value_b - value_a, 10)] += 1
    notes = [
        f"F1 not stored for run {run.id} (saved before partial credit): no F1 difference"
        for run, absent in zip((a, b), missing, strict=True)
        if absent
    ]
    if notes:
        return [], notes
    tests = [
        mean_test(
            metric, (sums[key][0], sums[key][1]), differences[key], seed=seed, resamples=resamples
        )
        for key, metric in MEASURES
    ]
    return [test for test in tests if test is not None], []


def shared_details(store: Store, a: RunInfo, b: RunInfo) -> Iterator[tuple[str, Any, Any]]:
    """The id and both runs' stored detail of each case they share, a row at a time, in run
    a's order (read to the end: the index of run b's ids is dropped then)."""
    db = store.db
    if store.same_positions(a, b):
        yield from db.execute(_SAME_CASES, (b.id, a.id))
        return
    db.execute("DROP TABLE IF EXISTS temp.compare_partial_ids")
    db.execute("CREATE TEMP TABLE compare_partial_ids (case_id TEXT PRIMARY KEY, seq INTEGER)")
    try:
        db.execute(
            "INSERT INTO temp.compare_partial_ids SELECT case_id, seq FROM results "
            "WHERE run_id = ?",
            (b.id,),
        )
        yield from db.execute(_OTHER_CASES, (b.id, a.id))
    finally:
        db.execute("DROP TABLE temp.compare_partial_ids")
