"""Which cases a one-file HTML report embeds, and what it keeps of each.

A run can hold a million cases; the page cannot. Failing cases come first, then passing
cases where a baseline disagrees with the rules, then the other passing ones, under two
stated caps: `max_cases` in all and `max_passing` of the passing ones. The selection reads
the cases as a stream and keeps no more than the caps allow, and it stops reading as soon
as every bucket is full. The counts a page shows come from the summary, which is complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_CASES = 5_000
DEFAULT_MAX_PASSING = 500
DEFAULT_MAX_BYTES = 12_000_000
"""The embedded cases' JSON stops growing past this many bytes (with the rest of the page, a
file well under 20 MB whatever the cases hold)."""


@dataclass(frozen=True)
class Caps:
    """How many cases a report embeds: `max_cases` in all, `max_passing` of them passing,
    and no more case data than `max_bytes` of JSON."""

    max_cases: int = DEFAULT_MAX_CASES
    max_passing: int = DEFAULT_MAX_PASSING
    max_bytes: int = DEFAULT_MAX_BYTES


NAIVE_SCORERS = ("exact", "lowercase")
"""The baselines whose disagreement with the rules says what the rules decided."""


def disagrees(case: Mapping[str, Any]) -> bool:
    """Whether a naive scorer's verdict differs from the rules' on this case, or a tool case
    passes doing nothing (a case that measures nothing)."""
    baselines = case.get("baselines") or {}
    passed = bool(case.get("passed"))
    if any(bool(baselines.get(name, passed)) != passed for name in NAIVE_SCORERS):
        return True
    return bool(baselines.get("nothing")) and case.get("kind") != "abstention"


@dataclass
class Selection:
    """The cases chosen for a page, in the order it lists them, and how many were read."""

    failing: list[dict[str, Any]] = field(default_factory=list)
    passing_disagreeing: list[dict[str, Any]] = field(default_factory=list)
    passing: list[dict[str, Any]] = field(default_factory=list)
    read: int = 0
    complete: bool = True
    """Whether every case was read (False when reading stopped early, the caps being met)."""

    def cases(self, caps: Caps) -> list[dict[str, Any]]:
        """Failing first, then passing cases that a baseline disagrees with, then the rest,
        within the caps."""
        passing = (self.passing_disagreeing + self.passing)[: caps.max_passing]
        failing = self.failing[: max(caps.max_cases - len(passing), 0)]
        return failing + passing[: caps.max_cases - len(failing)]


def select_cases(cases: Iterable[dict[str, Any]], caps: Caps) -> Selection:
    """Read `cases` (report JSON entries, in run order) and keep what a page with these caps
    can show; stop once nothing more could be kept."""
    chosen = Selection()
    for case in cases:
        chosen.read += 1
        if not case.get("passed"):
            bucket, limit = chosen.failing, caps.max_cases
        elif disagrees(case):
            bucket, limit = chosen.passing_disagreeing, caps.max_passing
        else:
            bucket, limit = chosen.passing, caps.max_passing
        if len(bucket) < limit:
            bucket.append(case)
        elif _full(chosen, caps):
            chosen.complete = False
            break
    return chosen


def _full(chosen: Selection, caps: Caps) -> bool:
    return (
        len(chosen.failing) >= caps.max_cases
        and len(chosen.passing_disagreeing) >= caps.max_passing
        and len(chosen.passing) >= caps.max_passing
    )
