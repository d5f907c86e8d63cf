"""Rubric results of two stored runs side by side: per rubric and per `tool.argument`, the
pass rates on the entries both runs scored, B - A with a paired bootstrap interval that
resamples cases (a case's entries move together), the mean score difference, McNemar's exact
test on the discordant entries, and how many entries each run left unscored.

An entry is the same in both runs when its case, plan call, argument and rubric are; only
entries that both runs scored are paired. Everything is counted in SQL, so that a run of a
million cases is read as a few rows per rubric.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from toolscore.paired import CONFIDENCE, Clusters, PairedTest, cluster_test
from toolscore.store.database import RunInfo
from toolscore.store.rubrics import has_rubric_table

_SCORED = "a.passed IS NOT NULL AND a.score IS NOT NULL"

_PAIRS_SAME_CASES = "SELECT seq, seq FROM results WHERE run_id = ?"
_PAIRS_OTHER_CASES = """SELECT a.seq, b.seq FROM results AS a
    JOIN temp.rubric_ids AS b ON b.case_id = a.case_id WHERE a.run_id = ?"""

_SHARED = """
    SELECT {key}, count(*), sum(a.passed), sum(b.passed),
           sum(a.passed = 0 AND b.passed = 1), sum(a.passed = 1 AND b.passed = 0),
           sum(a.score), sum(b.score)
    FROM rubric_results AS a
    JOIN temp.rubric_pairs AS p ON p.seq_a = a.seq
    JOIN rubric_results AS b ON b.run_id = ? AND b.seq = p.seq_b AND b.plan_call = a.plan_call
         AND b.argument = a.argument AND b.rubric = a.rubric
    WHERE a.run_id = ? AND {scored} AND b.passed IS NOT NULL AND b.score IS NOT NULL
    GROUP BY 1
"""
"""Per group: shared scored entries, passes in A and B, n01, n10, score sums."""

_PATTERNS = """
    SELECT name, difference, entries, count(*) FROM (
        SELECT {key} AS name, a.seq, sum(b.passed - a.passed) AS difference,
               count(*) AS entries
        FROM rubric_results AS a
        JOIN temp.rubric_pairs AS p ON p.seq_a = a.seq
        JOIN rubric_results AS b ON b.run_id = ? AND b.seq = p.seq_b
             AND b.plan_call = a.plan_call AND b.argument = a.argument AND b.rubric = a.rubric
        WHERE a.run_id = ? AND {scored} AND b.passed IS NOT NULL AND b.score IS NOT NULL
        GROUP BY 1, 2
    ) GROUP BY 1, 2, 3
"""
"""Per group: how many cases have each (sum of B - A passes, entries) pattern."""

_EACH_RUN = """
    SELECT {key}, count(*), sum(a.passed IS NULL OR a.score IS NULL)
    FROM rubric_results AS a WHERE a.run_id = ? GROUP BY 1
"""
"""Per group: a run's entries and how many it left unscored (all its cases)."""

_KEYS = {"per_rubric": "a.rubric", "per_argument": "a.tool || '.' || a.argument"}


@dataclass(frozen=True)
class RubricMove:
    """One rubric (or the rubrics on one `tool.argument`) in both runs."""

    name: str
    entries: tuple[int, int]
    """The rubric entries of run A and run B (all their cases)."""
    unscored: tuple[int, int]
    """Of those, the entries each run left unscored."""
    cases: int
    """Cases holding the shared scored entries (the bootstrap's resampling unit)."""
    test: PairedTest | None
    """The paired test on the entries both runs scored (None when they share none)."""
    mean_scores: tuple[float, float] | None
    """Mean score of the shared scored entries in A and in B."""

    @property
    def score_difference(self) -> float | None:
        """B's mean score minus A's on the shared scored entries."""
        return None if self.mean_scores is None else self.mean_scores[1] - self.mean_scores[0]

    def sentence(self, label: str) -> str:
        """The paired result in plain words, or why there is none."""
        if self.test is not None:
            return self.test.sentence()
        return f"{label}: no entry scored in both runs: nothing to pair"

    def to_json(self, key: str) -> dict[str, Any]:
        """The move as `compare --json` lists it under `rubrics.per_rubric` or
        `rubrics.per_argument` (`key` is `rubric` or `argument`)."""
        test, means = self.test, self.mean_scores
        label = f"rubric {self.name}" if key == "rubric" else f"rubrics on {self.name}"
        return {
            key: self.name,
            "entries": {"a": self.entries[0], "b": self.entries[1]},
            "unscored": {"a": self.unscored[0], "b": self.unscored[1]},
            "n": 0 if test is None else test.n,
            "cases": self.cases,
            "a": None if test is None else round(test.a, 4),
            "b": None if test is None else round(test.b, 4),
            "difference": None if test is None else round(test.difference, 4),
            "interval": None
            if test is None or test.low is None or test.high is None
            else [round(test.low, 4), round(test.high, 4)],
            "confidence": CONFIDENCE,
            "method": None if test is None else test.method,
            "mcnemar": None
            if test is None
            else {"n01": test.n01, "n10": test.n10, "p_value": test.p_value},
            "detectable": False if test is None else test.detectable,
            "mean_score": None
            if means is None
            else {
                "a": round(means[0], 4),
                "b": round(means[1], 4),
                "difference": round(means[1] - means[0], 4),
            },
            "sentence": self.sentence(label),
        }


@dataclass(frozen=True)
class RubricComparison:
    """Every rubric and every `tool.argument` with a rubric in either run."""

    per_rubric: list[RubricMove]
    per_argument: list[RubricMove]
    seed: int
    resamples: int

    def to_json(self) -> dict[str, Any]:
        """The `rubrics` block of `compare --json`."""
        return {
            "seed": self.seed,
            "resamples": self.resamples,
            "per_rubric": [move.to_json("rubric") for move in self.per_rubric],
            "per_argument": [move.to_json("argument") for move in self.per_argument],
        }


def compare_rubrics(
    db: sqlite3.Connection, a: RunInfo, b: RunInfo, *, seed: int, resamples: int
) -> RubricComparison | None:
    """The rubric results of runs `a` and `b` compared; None when neither has any."""
    if not has_rubric_table(db):
        return None
    held = db.execute(
        "SELECT 1 FROM rubric_results WHERE run_id IN (?, ?) LIMIT 1", (a.id, b.id)
    ).fetchone()
    if held is None:
        return None
    db.execute("DROP TABLE IF EXISTS temp.rubric_pairs")
    db.execute("CREATE TEMP TABLE rubric_pairs (seq_a INTEGER PRIMARY KEY, seq_b INTEGER)")
    try:
        _pair_cases(db, a, b)
        groups = {group: _moves(db, a, b, group, seed=seed, resamples=resamples) for group in _KEYS}
    finally:
        db.execute("DROP TABLE temp.rubric_pairs")
    return RubricComparison(groups["per_rubric"], groups["per_argument"], seed, resamples)


def _pair_cases(db: sqlite3.Connection, a: RunInfo, b: RunInfo) -> None:
    """Fill `temp.rubric_pairs` with the positions of each case both runs have."""
    if a.cases_sha256 == b.cases_sha256:
        db.execute(f"INSERT INTO temp.rubric_pairs {_PAIRS_SAME_CASES}", (a.id,))
        return
    db.execute("DROP TABLE IF EXISTS temp.rubric_ids")
    db.execute("CREATE TEMP TABLE rubric_ids (case_id TEXT PRIMARY KEY, seq INTEGER)")
    try:
        db.execute(
            "INSERT INTO temp.rubric_ids SELECT case_id, seq FROM results WHERE run_id = ?",
            (b.id,),
        )
        db.execute(f"INSERT INTO temp.rubric_pairs {_PAIRS_OTHER_CASES}", (a.id,))
    finally:
        db.execute("DROP TABLE temp.rubric_ids")


def _moves(
    db: sqlite3.Connection, a: RunInfo, b: RunInfo, group: str, *, seed: int, resamples: int
) -> list[RubricMove]:
    key = _KEYS[group]
    runs = [
        {row[0]: (row[1], row[2]) for row in db.execute(_EACH_RUN.format(key=key), (run.id,))}
        for run in (a, b)
    ]
    shared = {
        row[0]: row[1:] for row in db.execute(_SHARED.format(key=key, scored=_SCORED), (b.id, a.id))
    }
    patterns: dict[str, list[tuple[int, int, int]]] = {}
    for name, difference, entries, count in db.execute(
        _PATTERNS.format(key=key, scored=_SCORED), (b.id, a.id)
    ):
        patterns.setdefault(name, []).append((difference, entries, count))
    moves = []
    for name in sorted(runs[0].keys() | runs[1].keys()):
        entries_a, unscored_a = runs[0].get(name, (0, 0))
        entries_b, unscored_b = runs[1].get(name, (0, 0))
        test, means, cases = None, None, 0
        if name in shared:
            n, passed_a, passed_b, n01, n10, score_a, score_b = shared[name]
            clusters = Clusters(passed_a, passed_b, n01, n10, tuple(patterns[name]))
            cases = clusters.clusters
            label = f"rubric {name}" if group == "per_rubric" else f"rubrics on {name}"
            test = cluster_test(f"{label} pass rate", clusters, seed=seed, resamples=resamples)
            means = (score_a / n, score_b / n)
        moves.append(
            RubricMove(name, (entries_a, entries_b), (unscored_a, unscored_b), cases, test, means)
        )
    return moves
