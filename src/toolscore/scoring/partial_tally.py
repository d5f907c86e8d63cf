"""The summary's partial credit and efficiency (docs/formats.md, partial credit): summed
counts for the micro rates, and for each macro mean the sum and the sum of squares of the
cases' rates, so that the tally takes constant memory and merges across workers."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolscore.core.model import Call, CaseResult
from toolscore.stats.intervals import normal_interval, ratio, rounded


def micro_json(matched: int, expected: int, produced: int) -> dict[str, float | None]:
    """Precision matched / produced, recall matched / expected and F1 2·matched /
    (expected + produced), each None when its denominator is 0, rounded as rates are."""
    precision, recall, f1 = _micro(matched, expected, produced)
    return {"precision": precision, "recall": recall, "f1": f1}


@functools.lru_cache(maxsize=4096)
def _micro(matched: int, expected: int, produced: int) -> tuple[float | None, ...]:
    """`micro_json`'s three figures, computed once per count: the summary's per-tool rows
    repeat a few small counts (1, 1, 1 above all) once per tool."""
    return (
        rounded(ratio(matched, produced)),
        rounded(ratio(matched, expected)),
        rounded(ratio(2 * matched, expected + produced)),
    )


def macro_interval(total: float, squares: float, n: int) -> list[float] | None:
    """The normal 95% interval of a mean of n values in [0, 1] from their sum and sum of
    squares: mean ± 1.96·s/√n, clipped to [0, 1]; None for fewer than 2 values."""
    if n < 2:
        return None
    mean = total / n
    variance = max(0.0, (squares - total * mean) / (n - 1))
    low, high = normal_interval(mean, math.sqrt(variance / n))
    return [round(low, 4), round(high, 4)]


def _tool_json(matched: int, expected: int, produced: int) -> dict[str, Any]:
    """One tool's row of the `partial` block: its counts and their micro rates."""
    precision, recall, f1 = _micro(matched, expected, produced)
    return {
        "matched": matched,
        "expected": expected,
        "produced": produced,
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


@dataclass
class PartialTally:
    """Partial credit and efficiency summed over cases (each trial a case)."""

    extra_ok: frozenset[str] = frozenset()
    """The tools a relaxation allows as extra calls (their unpaired calls are excused)."""
    cases: int = 0
    matched: int = 0
    expected: int = 0
    produced: int = 0
    sums: list[float] = field(default_factory=lambda: [0.0] * 6)
    """Of the cases' precision, recall and F1: each one's sum, then its sum of squares."""
    per_tool: dict[str, list[int]] = field(default_factory=dict)
    """Per tool: [matched, expected, produced] (a produced call counts for its tool, a match
    for the plan call's)."""
    extra: int = 0
    excused: int = 0
    repeated: int = 0
    tool_calls: int = 0
    """Produced calls of the tool cases whose calls were read (the ratio's numerator)."""
    tool_expected: int = 0
    """Expected calls of those cases (the ratio's denominator)."""
    retries: int = 0
    """Retried calls (`core.retries`), excused or not."""
    retries_excused: int = 0
    retries_per_tool: dict[str, int] = field(default_factory=dict)

    def add(self, result: CaseResult, plans: Sequence[Sequence[Call]]) -> None:
        """Count one scored case (nothing when it carries no partial credit)."""
        partial, efficiency = result.partial, result.efficiency
        if partial is None or efficiency is None:
            return
        self.cases += 1
        self.matched += partial.matched
        self.expected += partial.expected
        self.produced += partial.produced
        sums = self.sums
        p, r, f = partial.precision, partial.recall, partial.f1
        sums[0] += p
        sums[1] += r
        sums[2] += f
        sums[3] += p * p
        sums[4] += r * r
        sums[5] += f * f
        if result.retries:
            self._add_retries(result)
        self.extra += efficiency.extra
        self.excused += efficiency.excused
        self.repeated += efficiency.repeated
        if result.kind == "tool" and not result.missing_output and not result.unread:
            self.tool_calls += len(result.calls)
            self.tool_expected += partial.expected
        self._add_tools(result, plans[partial.plan] if partial.plan is not None else ())

    def _add_retries(self, result: CaseResult) -> None:
        per_tool = self.retries_per_tool
        for retry in result.retries:
            self.retries += 1
            self.retries_excused += retry.excused
            per_tool[retry.tool] = per_tool.get(retry.tool, 0) + 1

    def _add_tools(self, result: CaseResult, plan: Sequence[Call]) -> None:
        tools = self.per_tool
        partial = result.partial
        assert partial is not None
        if result.passed:
            for call in plan:  # matched, expected and produced alike, excused calls aside
                row = tools.get(call.name)
                if row is None:
                    row = tools[call.name] = [0, 0, 0]
                row[0] += 1
                row[1] += 1
                row[2] += 1
            return
        for call in plan:
            row = tools.get(call.name)
            if row is None:
                row = tools[call.name] = [0, 0, 0]
            row[1] += 1
        for i, _ in partial.pairs:
            tools[plan[i].name][0] += 1
        if not partial.produced:
            return
        efficiency = result.efficiency
        relaxed = self.extra_ok if efficiency is not None and efficiency.excused else frozenset()
        paired = {j for _, j in partial.pairs} if relaxed else set()
        retried = {r.call for r in result.retries if r.excused} if result.retries else ()
        for j, call in enumerate(result.calls):
            name = call.name
            if (name in relaxed and j not in paired) or j in retried:
                continue  # excused: left out of `produced`
            row = tools.get(name)
            if row is None:
                row = tools[name] = [0, 0, 0]
            row[2] += 1

    def merge(self, other: PartialTally) -> None:
        """Add the tally of another chunk of cases."""
        for name in (
            "cases", "matched", "expected", "produced", "extra", "excused", "repeated",
            "tool_calls", "tool_expected", "retries", "retries_excused",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for tool, count in other.retries_per_tool.items():
            self.retries_per_tool[tool] = self.retries_per_tool.get(tool, 0) + count
        self.sums = [a + b for a, b in zip(self.sums, other.sums, strict=True)]
        for tool, row in other.per_tool.items():
            mine = self.per_tool.setdefault(tool, [0, 0, 0])
            for k in range(3):
                mine[k] += row[k]

    def partial_json(self) -> dict[str, Any]:
        """The summary's `partial` block."""
        micro = micro_json(self.matched, self.expected, self.produced)
        n, sums = self.cases, self.sums
        data: dict[str, Any] = {}
        for k, name in enumerate(("precision", "recall", "f1")):
            data[name] = {
                "micro": micro[name],
                "macro": rounded(ratio(sums[k], n)),
                "macro_ci95": macro_interval(sums[k], sums[k + 3], n),
            }
        data["cases"] = n
        data["per_tool"] = {tool: _tool_json(*row) for tool, row in sorted(self.per_tool.items())}
        return data

    def efficiency_json(self) -> dict[str, Any]:
        """The summary's `efficiency` block."""
        return {
            "extra": self.extra,
            "excused": self.excused,
            "repeated": self.repeated,
            "retries": self.retries,
            "calls_per_expected_call": rounded(ratio(self.tool_calls, self.tool_expected)),
        }

    def retries_json(self) -> dict[str, Any]:
        """The summary's `retries` block: retried calls, those a relaxation excused, and the
        retried calls per tool (sorted by name)."""
        return {
            "calls": self.retries,
            "excused": self.retries_excused,
            "per_tool": dict(sorted(self.retries_per_tool.items())),
        }
