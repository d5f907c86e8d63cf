"""Agreement between raters: observed agreement and Cohen's kappa, over paired labels.

Cohen's kappa (Cohen 1960, "A coefficient of agreement for nominal scales") corrects the
observed agreement p_o for the agreement p_e two raters would reach by chance with their own
label frequencies: kappa = (p_o - p_e) / (1 - p_e). It is undefined (None here) when chance
agreement is certain, as when both raters gave one and the same label to every case.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Agreement:
    """How often two raters agreed on the cases both rated, and kappa (None if undefined)."""

    n: int
    agreed: int
    kappa: float | None

    @property
    def rate(self) -> float | None:
        """The observed agreement (None with no cases)."""
        return self.agreed / self.n if self.n else None

    def to_json(self) -> dict[str, Any]:
        """The agreement as `calibrate --json` shows it."""
        return {"n": self.n, "agreed": self.agreed, "rate": self.rate, "kappa": self.kappa}


def agreement(pairs: Iterable[tuple[Hashable, Hashable]]) -> Agreement:
    """Observed agreement and Cohen's kappa of (first rater, second rater) label pairs."""
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return Agreement(0, 0, None)
    agreed = sum(1 for a, b in pairs if a == b)
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    chance = sum(first[label] * second[label] for label in first) / (n * n)
    if chance >= 1.0:
        return Agreement(n, agreed, None)
    observed = agreed / n
    return Agreement(n, agreed, (observed - chance) / (1.0 - chance))
