"""The summary's `rubrics` block: per tool.argument and per rubric, how many texts were
scored, their mean score, the pass rate with its 95% Wilson interval, and the unscored ones
with their reasons; tallies merge, so that workers' chunks add up to the same block."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolscore.rubrics.entries import RubricEntry
from toolscore.stats.intervals import Rate, ratio, rounded

REASONS_KEPT = 50
"""Distinct unscored reasons a tally keeps; the rest are counted under `OTHER_REASONS`
(remote errors can word each failure differently)."""
OTHER_REASONS = "(other reasons)"


@dataclass
class RubricStats:
    """The results of one rubric, or of the rubrics on one argument."""

    n: int = 0
    """Texts scored (unscored ones are counted apart)."""
    passed: int = 0
    score_sum: float = 0.0
    unscored: Counter[str] = field(default_factory=Counter)

    def count_unscored(self, reason: str, count: int) -> None:
        """Count `count` texts left unscored for `reason` (a few dozen reasons are kept)."""
        if reason not in self.unscored and len(self.unscored) >= REASONS_KEPT:
            reason = OTHER_REASONS
        self.unscored[reason] += count

    def merge(self, other: RubricStats) -> None:
        """Add another tally's counts to this one."""
        self.n += other.n
        self.passed += other.passed
        self.score_sum += other.score_sum
        for reason, count in other.unscored.items():
            self.count_unscored(reason, count)

    @property
    def mean(self) -> float | None:
        """The mean score of the scored texts, or None when none was scored."""
        return ratio(self.score_sum, self.n)

    def to_json(self) -> dict[str, Any]:
        """n, mean score, pass rate (with its interval) and the unscored count and reasons."""
        mean = self.mean
        return {
            "n": self.n,
            "mean_score": rounded(mean),
            "pass_rate": Rate(self.passed, self.n).to_json(),
            "unscored": {
                "count": sum(self.unscored.values()),
                "reasons": dict(self.unscored.most_common()),
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RubricStats:
        """The tally whose `to_json()` is `data` (the mean's sum rebuilt from its rounding)."""
        n = data["n"]
        mean = data["mean_score"]
        return cls(
            n=n,
            passed=data["pass_rate"]["passed"],
            score_sum=0.0 if mean is None else mean * n,
            unscored=Counter(data["unscored"]["reasons"]),
        )


class RubricTally:
    """Every rubric result of a run, per `tool.argument` and per rubric, and the tokens the
    remote rubrics spent. Results are counted per (tool, argument, rubric) as they come (one
    dictionary look-up a result), and added up per argument and per rubric when asked."""

    def __init__(self) -> None:
        self.cells: dict[tuple[str, str, str], RubricStats] = {}
        self.tokens = 0
        self._restored: tuple[dict[str, RubricStats], dict[str, RubricStats]] | None = None

    def add(self, entry: RubricEntry) -> None:
        """Count one rubric result."""
        # entry[2:5] is (tool, argument, rubric)
        self.count(entry[2:5], entry.score, entry.passed, entry.unscored or entry.reason)
        self.tokens += entry.tokens

    def count(
        self, key: tuple[str, str, str], score: float | None, passed: bool | None, why: str
    ) -> None:
        """Count one result of rubric `key[2]` on argument `key[1]` of tool `key[0]`: scored
        when it has a score and a pass, else unscored for the reason `why`."""
        stats = self.cells.get(key)
        if stats is None:
            stats = self.cells[key] = RubricStats()
        if passed is None or score is None:
            stats.count_unscored(why, 1)
        else:
            stats.n += 1
            stats.passed += passed
            stats.score_sum += score

    def merge(self, other: RubricTally) -> None:
        """Add another run part's results (a worker's chunk) to these."""
        for key, stats in other.cells.items():
            mine = self.cells.get(key)
            if mine is None:
                mine = self.cells[key] = RubricStats()
            mine.merge(stats)
        self.tokens += other.tokens

    @property
    def per_argument(self) -> dict[str, RubricStats]:
        """The results of the rubrics on each `tool.argument`."""
        if self._restored is not None:
            return self._restored[0]
        return self._sums(lambda tool, argument, rubric: f"{tool}.{argument}")

    @property
    def per_rubric(self) -> dict[str, RubricStats]:
        """The results of each rubric, on every argument it scores."""
        if self._restored is not None:
            return self._restored[1]
        return self._sums(lambda tool, argument, rubric: rubric)

    def _sums(self, group: Callable[[str, str, str], str]) -> dict[str, RubricStats]:
        sums: dict[str, RubricStats] = {}
        for key in sorted(self.cells):
            sums.setdefault(group(*key), RubricStats()).merge(self.cells[key])
        return sums

    def to_json(self) -> dict[str, Any]:
        """The summary's `rubrics` block."""
        return {
            "per_argument": {k: v.to_json() for k, v in sorted(self.per_argument.items())},
            "per_rubric": {k: v.to_json() for k, v in sorted(self.per_rubric.items())},
            "tokens": self.tokens,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RubricTally:
        """The tally whose `to_json()` is `data` (a stored run's summary): it shows the
        sums, and cannot be merged."""
        tally = cls()
        tally.tokens = data["tokens"]
        tally._restored = (
            {k: RubricStats.from_json(v) for k, v in data["per_argument"].items()},
            {k: RubricStats.from_json(v) for k, v in data["per_rubric"].items()},
        )
        return tally
