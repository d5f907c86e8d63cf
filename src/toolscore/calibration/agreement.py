"""Agreement between raters: observed agreement and Cohen's kappa, over paired labels.

Cohen's kappa (Cohen 1960, "A coefficient of agreement for nominal scales") corrects the
observed agreement p_o for the agreement p_e two raters would reach by chance with their own
label frequencies: kappa = (p_o - p_e) / (1 - p_e). When one rater gives the same label to
every case, p_e equals p_o whatever the other rater does, so kappa is 0 by construction (or
0/0 when both do): it says nothing, and is reported as undefined (None) with the reason.
This is the usual case on a sample made only of disagreements, where a scorer's verdict is
the same for every case.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from toolscore.stats.intervals import ratio
from toolscore.stats.records import fields_json

UNDEFINED = "so kappa is undefined: chance agreement explains all of it"


class Rater(NamedTuple):
    """How the reason for an undefined kappa names a rater and what it gives ("verdict")."""

    name: str
    gives: str = "label"


FIRST = Rater("the first rater")
SECOND = Rater("the second rater")


@dataclass(frozen=True)
class Agreement:
    """How often two raters agreed on the cases both rated, and kappa (None if undefined,
    with the reason in one sentence)."""

    n: int
    agreed: int
    kappa: float | None
    kappa_undefined: str | None = None

    @property
    def rate(self) -> float | None:
        """The observed agreement (None with no cases)."""
        return ratio(self.agreed, self.n)

    def to_json(self) -> dict[str, Any]:
        """The agreement as `calibrate --json` shows it."""
        return fields_json(self, "n", "agreed", "rate", "kappa", "kappa_undefined")


def agreement(
    pairs: Iterable[tuple[Hashable, Hashable]], first: Rater = FIRST, second: Rater = SECOND
) -> Agreement:
    """Observed agreement and Cohen's kappa of (first rater, second rater) label pairs."""
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return Agreement(0, 0, None, "no case was rated by both, " + UNDEFINED)
    agreed = sum(1 for a, b in pairs if a == b)
    first_counts = Counter(a for a, _ in pairs)
    second_counts = Counter(b for _, b in pairs)
    constant = [r for r, c in ((first, first_counts), (second, second_counts)) if len(c) == 1]
    if len(constant) == 2:
        reason = f"{first.name} and {second.name} each gave one {first.gives} to every case"
        return Agreement(n, agreed, None, f"{reason}, {UNDEFINED}")
    if constant:
        (rater,) = constant
        reason = f"{rater.name} gave the same {rater.gives} on every labelled case"
        return Agreement(n, agreed, None, f"{reason}, {UNDEFINED}")
    chance = sum(first_counts[label] * second_counts[label] for label in first_counts) / (n * n)
    observed = agreed / n
    return Agreement(n, agreed, (observed - chance) / (1.0 - chance))
