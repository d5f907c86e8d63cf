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

from toolscore.stats.paired import CONFIDENCE, Clusters, PairedTest, cluster_test
from toolscore.store.database import RunInfo
from toolscore.store.rubrics import has_rubric_table

_PAIRS_SAME_CASES = "SELECT seq, seq FROM results WHERE run_id = ?"
_PAIRS_OTHER_CASES = """SELECT a.seq, b.seq FROM results AS a
    JOIN temp.rubric_ids AS b ON b.case_id = a.case_id WHERE a.run_id = ?"""

_CELLS = """
    CREATE TEMP TABLE rubric_cells AS
    SELECT a.rubric AS rubric, a.tool || '.' || a.argument AS argument, a.seq AS seq,
           sum(b.passed - a.passed) AS difference, count(*) AS entries,
           sum(a.passed) AS passed_a, sum(b.passed) AS passed_b,
           sum(a.passed = 0 AND b.passed = 1) AS n01, sum(a.passed = 1 AND b.passed = 0) AS n10,
           sum(a.score) AS score_a, sum(b.score) AS score_b
    FROM rubric_results AS a
    JOIN temp.rubric_pairs AS p ON p.seq_a = a.seq
    JOIN rubric_results AS b ON b.run_id = ? AND b.seq = p.seq_b AND b.plan_call = a.plan_call
         AND b.argument = a.argument AND b.rubric = a.rubric
    WHERE a.run_id = ? AND a.passed IS NOT NULL AND a.score IS NOT NULL
          AND b.passed IS NOT NULL AND b.score IS NOT NULL
    GROUP BY a.seq, a.rubric, a.tool, a.argument
"""
"""The entries both runs scored, joined once and summed per case and (rubric, argument)."""

_PATTERNS = """
    SELECT name, difference, entries, count(*), sum(passed_a), sum(passed_b), sum(n01),
           sum(n10), sum(score_a), sum(score_b)
    FROM (
        SELECT {key} AS name, seq, sum(difference) AS difference, sum(entries) AS entries,
               sum(passed_a) AS passed_a, sum(passed_b) AS passed_b, sum(n01) AS n01,
               sum(n10) AS n10, sum(score_a) AS score_a, sum(score_b) AS score_b
        FROM temp.rubric_cells GROUP BY 1, 2
    ) GROUP BY 1, 2, 3
"""
"""Per rubric (or argument): how many cases have each (sum of B - A passes, entries)
pattern, with the sums the rates, McNemar's counts and the mean scores need."""

_EACH_RUN = """
    SELECT rubric, tool || '.' || argument, count(*), sum(passed IS NULL OR score IS NULL)
    FROM rubric_results WHERE run_id = ? GROUP BY 1, 2
"""
"""A run's entries and how many it left unscored (all its cases), per rubric and argument."""

_GROUPS = {"per_rubric": ("rubric", 0), "per_argument": ("argument", 1)}
"""Each grouping: its column in `rubric_cells`, and its place in an `_EACH_RUN` row."""


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
    db: sqlite3.Connection,
    a: RunInfo,
    b: RunInfo,
    *,
    seed: int,
    resamples: int,
    same_positions: bool | None = None,
) -> RubricComparison | None:
    """The rubric results of runs `a` and `b` compared; None when neither has any.
    `same_positions` says the runs hold each case at the same position (`Store.same_positions`;
    None: when they were scored from the same cases file)."""
    if not has_rubric_table(db):
        return None
    held = db.execute(
        "SELECT 1 FROM rubric_results WHERE run_id IN (?, ?) LIMIT 1", (a.id, b.id)
    ).fetchone()
    if held is None:
        return None
    db.execute("DROP TABLE IF EXISTS temp.rubric_pairs")
    db.execute("DROP TABLE IF EXISTS temp.rubric_cells")
    db.execute("CREATE TEMP TABLE rubric_pairs (seq_a INTEGER PRIMARY KEY, seq_b INTEGER)")
    try:
        if same_positions is None:
            same_positions = a.cases_sha256 == b.cases_sha256
        _pair_cases(db, a, b, same_positions)
        db.execute(_CELLS, (b.id, a.id))
        runs = [list(db.execute(_EACH_RUN, (run.id,))) for run in (a, b)]
        groups = {
            group: _moves(db, runs, group, seed=seed, resamples=resamples) for group in _GROUPS
        }
    finally:
        db.execute("DROP TABLE IF EXISTS temp.rubric_cells")
        db.execute("DROP TABLE temp.rubric_pairs")
    return RubricComparison(groups["per_rubric"], groups["per_argument"], seed, resamples)


def _pair_cases(db: sqlite3.Connection, a: RunInfo, b: RunInfo, same_positions: bool) -> None:
    """Fill `temp.rubric_pairs` with the positions of each case both runs have."""
    if same_positions:
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
    db: sqlite3.Connection,
    runs: list[list[tuple[Any, ...]]],
    group: str,
    *,
    seed: int,
    resamples: int,
) -> list[RubricMove]:
    """The moves of one grouping (`per_rubric` or `per_argument`), by name."""
    column, place = _GROUPS[group]
    counts: list[dict[str, list[int]]] = [{}, {}]
    for mine, rows in zip(counts, runs, strict=True):
        for row in rows:
            both = mine.setdefault(row[place], [0, 0])
            both[0] += row[2]
            both[1] += row[3]
    patterns: dict[str, list[tuple[Any, ...]]] = {}
    for name, *sums in db.execute(_PATTERNS.format(key=column)):
        patterns.setdefault(name, []).append(tuple(sums))
    moves = []
    for name in sorted(counts[0].keys() | counts[1].keys()):
        entries_a, unscored_a = counts[0].get(name, (0, 0))
        entries_b, unscored_b = counts[1].get(name, (0, 0))
        test, means, cases = None, None, 0
        if name in patterns:
            rows = patterns[name]
            passed_a, passed_b, n01, n10 = (sum(row[i] for row in rows) for i in range(3, 7))
            score_a, score_b = (sum(row[i] for row in rows) for i in (7, 8))
            clusters = Clusters(
                passed_a, passed_b, n01, n10, tuple((row[0], row[1], row[2]) for row in rows)
            )
            cases, n = clusters.clusters, clusters.n
            label = f"rubric {name}" if group == "per_rubric" else f"rubrics on {name}"
            test = cluster_test(f"{label} pass rate", clusters, seed=seed, resamples=resamples)
            means = (score_a / n, score_b / n)
        moves.append(
            RubricMove(name, (entries_a, entries_b), (unscored_a, unscored_b), cases, test, means)
        )
    return moves
