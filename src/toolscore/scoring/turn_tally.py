"""The turns block of a run's summary: turn accuracy over the turns of conversation cases,
with its interval clustered by case, and where conversations first failed.

It keeps sums, not clusters, so its memory is constant: the clustered variance
sum_c (p_c - n_c m)^2 expands into sums of p_c^2, p_c n_c and n_c^2 (exact integers).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from toolscore.core.model import CaseResult
from toolscore.stats.intervals import Rate, normal_interval

TURN_KEYS = ("conversations", "turn_accuracy", "first_failed_turn")
"""The summary keys of the turn figures, in the order the summary gives them."""


@dataclass
class TurnTally:
    """Conversation cases counted turn by turn (`SummaryBuilder` adds each)."""

    conversations: int = 0
    turns: int = 0
    passed: int = 0
    first_failed: Counter[int] = field(default_factory=Counter)
    _sums: list[int] = field(default_factory=lambda: [0, 0, 0])
    """Over conversations: sum of passed^2, passed * turns, turns^2."""

    def add(self, result: CaseResult) -> None:
        """Count one conversation case's turns."""
        n = len(result.turns)
        p = sum(turn.passed for turn in result.turns)
        self.conversations += 1
        self.turns += n
        self.passed += p
        sums = self._sums
        sums[0] += p * p
        sums[1] += p * n
        sums[2] += n * n
        if result.first_failed_turn is not None:
            self.first_failed[result.first_failed_turn] += 1

    def merge(self, other: TurnTally) -> None:
        """Add the counts of a worker's chunk."""
        self.conversations += other.conversations
        self.turns += other.turns
        self.passed += other.passed
        self.first_failed.update(other.first_failed)
        self._sums = [a + b for a, b in zip(self._sums, other._sums, strict=True)]

    def clustered_se(self) -> float | None:
        """The standard error of the turn accuracy clustered by case (as
        `stats.intervals.clustered_se` computes it from every case's counts)."""
        n, p = self.turns, self.passed
        if n <= 0:
            return None
        squares, products, sizes = self._sums
        scaled = n * n * squares - 2 * p * n * products + p * p * sizes  # times n^2, exact
        return math.sqrt(max(scaled, 0)) / (n * n)

    def to_json(self) -> dict[str, Any]:
        """The `turns` block of the summary."""
        rate = Rate(self.passed, self.turns).to_json()
        se = self.clustered_se()
        if se is None or not self.turns:
            rate["clustered"] = {"by": "case", "se": None, "ci95": None}
        else:
            low, high = normal_interval(self.passed / self.turns, se)
            rate["clustered"] = {
                "by": "case",
                "se": round(se, 6),
                "ci95": [round(low, 4), round(high, 4)],
            }
        return {  # the keys of `TURN_KEYS`, in order
            "conversations": self.conversations,
            "turn_accuracy": rate,
            "first_failed_turn": {str(k): v for k, v in sorted(self.first_failed.items())},
        }
