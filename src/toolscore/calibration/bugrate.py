"""The scorer-bug rate of a labelled batch, with its 95% interval, and the bugs it implies
among all the run's disagreements, with theirs.

A batch is a stratified sample of the run's disagreements (equal allocation per deciding
rule), so the scaled estimate weighs each stratum by its size in the run: the stratified
estimator sum of N_h * p_h, with the normal interval of variance sum of
N_h^2 p_h (1 - p_h) / n_h, clipped to [0, N] (per-stratum Wilson bounds added up would not
be a 95% interval). A run with one stratum is a simple random sample: the Wilson interval
of the rate, times N.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolscore.stats import Z95, wilson

WILSON_SCALED = "Wilson interval of the bug rate times the run's disagreements (one stratum)"
STRATIFIED = (
    "stratified: sum over strata of N_h * p_h; 95% normal interval, variance "
    "sum of N_h^2 * p_h * (1 - p_h) / n_h, clipped to [0, N]"
)
UNCOVERED = (
    "; strata with no labelled case are left out of the estimate, and their disagreements "
    "widen the interval's upper bound (any of them may be a bug)"
)


@dataclass(frozen=True)
class StratumEstimate:
    """One stratum: its disagreements in the run, how many were labelled, how many of those
    were scorer bugs, and the bugs that rate implies for the whole stratum."""

    stratum: str
    in_run: int
    labelled: int
    bugs: int

    @property
    def estimated_bugs(self) -> float | None:
        """Bugs expected among the stratum's disagreements in the run (None: none labelled)."""
        return self.bugs / self.labelled * self.in_run if self.labelled else None

    def to_json(self) -> dict[str, Any]:
        """The stratum as `calibrate --json` shows it."""
        return {
            "stratum": self.stratum,
            "in_run": self.in_run,
            "labelled": self.labelled,
            "bugs": self.bugs,
            "estimated_bugs": self.estimated_bugs,
        }


@dataclass(frozen=True)
class BugRate:
    """Scorer bugs among the labelled cases (the person says the rule scorer is wrong), and
    the count they imply among the run's disagreements; None where nothing is labelled."""

    labelled: int
    bugs: int
    interval: tuple[float, float] | None
    in_run: int
    """The run's disagreements."""
    estimate: float | None
    estimate_interval: tuple[float, float] | None
    method: str | None
    uncovered: int
    """Disagreements of the run in strata with no labelled case."""

    @property
    def rate(self) -> float | None:
        """The share of labelled cases that are scorer bugs."""
        return self.bugs / self.labelled if self.labelled else None

    def to_json(self) -> dict[str, Any]:
        """The bug rate as `calibrate --json` shows it (`scorer_bug_rate`)."""
        return {
            "labelled": self.labelled,
            "bugs": self.bugs,
            "rate": self.rate,
            "interval": list(self.interval) if self.interval else None,
            "run_disagreements": self.in_run,
            "estimated_bugs": self.estimate,
            "estimated_bugs_interval": (
                list(self.estimate_interval) if self.estimate_interval else None
            ),
            "method": self.method,
            "uncovered_disagreements": self.uncovered,
        }


def bug_rate(strata: Sequence[StratumEstimate]) -> BugRate:
    """The bug rate of the labelled cases and its estimate scaled to the run (see the module
    docstring for the method)."""
    labelled = sum(s.labelled for s in strata)
    bugs = sum(s.bugs for s in strata)
    total = sum(s.in_run for s in strata)
    covered = [s for s in strata if s.labelled]
    uncovered = total - sum(s.in_run for s in covered)
    if not covered:
        return BugRate(labelled, bugs, None, total, None, None, None, uncovered)
    interval = wilson(bugs, labelled)
    if len(strata) == 1:
        assert interval is not None
        low, high = interval
        return BugRate(
            labelled, bugs, interval, total, bugs / labelled * total,
            (low * total, high * total), WILSON_SCALED, 0,
        )  # fmt: skip
    estimate = math.fsum(s.in_run * s.bugs / s.labelled for s in covered)
    variance = math.fsum(
        s.in_run**2 * (s.bugs / s.labelled) * (1 - s.bugs / s.labelled) / s.labelled
        for s in covered
    )
    half = Z95 * math.sqrt(variance)
    bounds = (max(0.0, estimate - half), min(float(total), estimate + half + uncovered))
    method = STRATIFIED + (UNCOVERED if uncovered else "")
    return BugRate(labelled, bugs, interval, total, estimate, bounds, method, uncovered)
