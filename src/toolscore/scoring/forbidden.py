"""The count of forbidden calls over a run (the summary's `forbidden_calls`): how many calls
were forbidden, in how many cases, and to which tools. It is kept apart from the accuracy as
the "critical failures" a report shows first."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolscore.core.model import CaseResult
from toolscore.stats.intervals import Rate


@dataclass
class ForbiddenTally:
    """Forbidden calls, the cases that made any, and the calls per tool (constant memory)."""

    calls: int = 0
    cases: int = 0
    per_tool: Counter[str] = field(default_factory=Counter)

    def add(self, result: CaseResult) -> None:
        """Count the `forbidden_call` mismatches of one failed case result."""
        found = 0
        for mismatch in result.mismatches:
            if mismatch.code == "forbidden_call":
                found += 1
                call = mismatch.call
                name = (
                    result.calls[call].name
                    if call is not None and call < len(result.calls)
                    else "?"
                )
                self.per_tool[name] += 1
        if found:
            self.calls += found
            self.cases += 1

    def merge(self, other: ForbiddenTally) -> None:
        """Add the counts of another chunk of cases."""
        self.calls += other.calls
        self.cases += other.cases
        self.per_tool.update(other.per_tool)

    @classmethod
    def from_json(cls, node: Mapping[str, Any] | None) -> ForbiddenTally:
        """The tally whose `to_json` is `node` (none counted for a summary without one)."""
        if node is None:
            return cls()
        return cls(node["calls"], node["cases"], Counter(node["per_tool"]))

    def to_json(self, cases: int) -> dict[str, Any]:
        """The summary block: `rate` is the cases with a forbidden call over all `cases`."""
        return {
            "calls": self.calls,
            "cases": self.cases,
            "rate": Rate(self.cases, cases).to_json(),
            "per_tool": dict(sorted(self.per_tool.items())),
        }
