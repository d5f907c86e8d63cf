"""The geometry of the HTML report's pictures, drawn as SVG by its template.

Each function turns summary numbers into plain values (lengths in the SVG's own units, a
heat class from 0 to 10): the template writes the elements, Jinja2 escaping every label, so
no text from a run is ever placed into markup here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolscore.stats.intervals import ratio
from toolscore.stats.paired import Table

BAR_WIDTH = 360.0
"""The length of a full bar in the SVG's units."""
ROW_HEIGHT = 22
MAX_HEAT_ROWS = 200
"""Per-tool or per-argument rows shown at most, the weakest first; the rest are counted."""


@dataclass(frozen=True)
class Bar:
    """One bar: its label, count, length and vertical position."""

    label: str
    count: int
    length: float
    y: int


@dataclass(frozen=True)
class BarChart:
    """A horizontal bar chart; `height` fits its bars."""

    bars: tuple[Bar, ...]
    width: float
    height: int


def bar_chart(counts: Mapping[str, int]) -> BarChart:
    """Bars for counts (mismatch codes), the largest first, scaled to the largest."""
    return ordered_bar_chart(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def ordered_bar_chart(counts: Sequence[tuple[str, int]]) -> BarChart:
    """Bars for counts in the order given (the first failing turn, turn by turn), scaled to
    the largest."""
    top = max((count for _, count in counts), default=0) or 1
    bars = tuple(
        Bar(label, count, round(BAR_WIDTH * count / top, 1), index * ROW_HEIGHT)
        for index, (label, count) in enumerate(counts)
    )
    return BarChart(bars, BAR_WIDTH, max(len(bars), 1) * ROW_HEIGHT)


@dataclass(frozen=True)
class Whisker:
    """A rate as a bar with its 95% interval: positions along a bar of `BAR_WIDTH`."""

    value: float | None
    low: float | None
    high: float | None

    @property
    def length(self) -> float:
        return 0.0 if self.value is None else round(BAR_WIDTH * self.value, 1)

    @property
    def from_x(self) -> float:
        return 0.0 if self.low is None else round(BAR_WIDTH * self.low, 1)

    @property
    def to_x(self) -> float:
        return 0.0 if self.high is None else round(BAR_WIDTH * self.high, 1)


def whisker(value: float | None, ci95: Sequence[float] | None) -> Whisker:
    """The bar of a rate and its interval (`None` parts are drawn as nothing)."""
    low, high = (ci95[0], ci95[1]) if ci95 else (None, None)
    return Whisker(value, low, high)


@dataclass(frozen=True)
class HeatRow:
    """One tool or argument: its counts, pass rate with interval, and a heat class (0 for
    none passing, 10 for all; -1 when nothing was counted)."""

    name: str
    passed: int
    failed: int
    extra: int
    rate: float | None
    ci95: tuple[float, float] | None
    heat: int
    top_codes: tuple[tuple[str, int], ...]


def heat_rows(tallies: Mapping[str, Mapping[str, Any]]) -> tuple[list[HeatRow], int]:
    """The rows of a heat table, the weakest first (lowest rate, then most failures), at
    most `MAX_HEAT_ROWS` of them, and how many were left out."""
    rows = []
    for name, tally in tallies.items():
        passed, failed = int(tally.get("passed", 0)), int(tally.get("failed", 0))
        total = passed + failed
        rate = ratio(passed, total)
        ci = tally.get("ci95")
        rows.append(
            HeatRow(
                name=name,
                passed=passed,
                failed=failed,
                extra=int(tally.get("extra", 0)),
                rate=rate,
                ci95=(ci[0], ci[1]) if ci else None,
                heat=-1 if rate is None else round(rate * 10),
                top_codes=tuple((str(c), int(n)) for c, n in tally.get("top_codes", ())),
            )
        )
    rows.sort(key=lambda r: (2.0 if r.rate is None else r.rate, -r.failed - r.extra, r.name))
    return rows[:MAX_HEAT_ROWS], max(len(rows) - MAX_HEAT_ROWS, 0)


def outcomes(state: Mapping[str, Any]) -> Table:
    """The 2x2 of call (A) and state (B) verdicts from the summary's `state` block: of the
    cases with a goal state, `state_accuracy.passed` passed on state, and the two
    off-diagonal counts are given; the diagonal follows."""
    n = int(state["state_accuracy"]["n"])
    state_passed = int(state["state_accuracy"]["passed"])
    calls_only = int(state["calls_passed_state_failed"])
    state_only = int(state["calls_failed_state_passed"])
    return Table(
        both=state_passed - state_only,
        a_only=calls_only,
        b_only=state_only,
        neither=n - state_passed - calls_only,
    )
