"""The named call rates of a run's summary (docs/formats.md, 7.6): of produced calls, the
share naming a tool the spec lacks; of paired calls, the share missing an argument and the
share giving one the tool lacks. Counted from what each case result already carries (its
mismatches, pairs and scored calls), in five counters that merge across workers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolscore.core.model import CaseResult
from toolscore.stats.intervals import Rate

RATE_KEYS = ("unknown_tool_rate", "missing_argument_rate", "unexpected_argument_rate")
"""The summary's keys of the three rates, in the order the report gives them."""


@dataclass
class CallRates:
    """The counts behind `unknown_tool_rate`, `missing_argument_rate` and
    `unexpected_argument_rate`: their numerators and their two denominators."""

    produced: int = 0
    """Scored calls of the cases counted (a case without an output line has none)."""
    paired: int = 0
    """Pairs (plan call, produced call) of the chosen pairings, passed cases included."""
    unknown_tool: int = 0
    """Produced calls with an `unknown_tool` mismatch."""
    missing_argument: int = 0
    """Pairs with at least one `missing_argument` mismatch."""
    unexpected_argument: int = 0
    """Pairs with at least one `unexpected_argument` mismatch."""

    def add(self, result: CaseResult) -> None:
        """Count one case result. A passed case has no mismatch, so its calls and pairs are
        all there is to count: its mismatches are read only when it failed."""
        self.produced += result.produced_calls
        pairs = result.pairs
        self.paired += len(pairs)
        if result.passed or not result.mismatches:
            return
        unknown: set[int] = set()
        missing: set[tuple[int | None, int | None]] = set()
        unexpected: set[tuple[int | None, int | None]] = set()
        for mismatch in result.mismatches:
            code = mismatch.code
            if code == "unknown_tool":
                if mismatch.call is not None:
                    unknown.add(mismatch.call)
            elif code == "missing_argument":
                missing.add((mismatch.plan_call, mismatch.call))
            elif code == "unexpected_argument":
                unexpected.add((mismatch.plan_call, mismatch.call))
        self.unknown_tool += len(unknown)
        if missing:
            self.missing_argument += sum(pair in missing for pair in pairs)
        if unexpected:
            self.unexpected_argument += sum(pair in unexpected for pair in pairs)

    def merge(self, other: CallRates) -> None:
        """Add the counts of the cases that came after this tally's (a worker's chunk)."""
        self.produced += other.produced
        self.paired += other.paired
        self.unknown_tool += other.unknown_tool
        self.missing_argument += other.missing_argument
        self.unexpected_argument += other.unexpected_argument

    def rates(self) -> dict[str, Rate]:
        """The three rates by their summary keys, each with its denominator."""
        return {
            "unknown_tool_rate": Rate(self.unknown_tool, self.produced),
            "missing_argument_rate": Rate(self.missing_argument, self.paired),
            "unexpected_argument_rate": Rate(self.unexpected_argument, self.paired),
        }

    def to_json(self) -> dict[str, Any]:
        """The three keys of the summary, each `{"value", "n", "passed", "ci95"}` (`passed`
        is the count of calls with the fault, as every rate names its numerator)."""
        return {key: rate.to_json() for key, rate in self.rates().items()}

    @classmethod
    def from_json(cls, summary: Mapping[str, Any]) -> CallRates | None:
        """The tally whose `to_json()` is in `summary`; None for a summary written before the
        rates existed (a stored run), so that none is made up."""
        if not all(key in summary for key in RATE_KEYS):
            return None
        unknown, missing, unexpected = (summary[key] for key in RATE_KEYS)
        return cls(
            produced=unknown["n"],
            paired=missing["n"],
            unknown_tool=unknown["passed"],
            missing_argument=missing["passed"],
            unexpected_argument=unexpected["passed"],
        )
