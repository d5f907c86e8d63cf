"""The scorer-bug rate of a labelled batch, with its 95% interval, and the bugs it implies
among all the run's disagreements, with theirs.

A batch is a stratified sample of the run's disagreements (equal allocation per deciding
rule), so the scaled estimate weighs each stratum by its size in the run: the stratified
estimator sum of N_h * p_h, with the normal interval of variance sum of
N_h^2 p_h (1 - p_h) / n_h, clipped to [0, N] (per-stratum Wilson bounds added up would not
be a 95% interval). A run with one stratum is a simple random sample: the Wilson interval
of the rate, times N. The estimator (`scaled_count`) also weighs right verdicts to the run
for `accuracy`, there with the finite-population correction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolscore.stats.intervals import Z95, ratio, wilson
from toolscore.stats.records import fields_json

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
        return fields_json(self, "stratum", "in_run", "labelled", "bugs", "estimated_bugs")


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
        return ratio(self.bugs, self.labelled)

    def to_json(self) -> dict[str, Any]:
        """The bug rate as `calibrate --json` shows it (`scorer_bug_rate`)."""
        return {
            **fields_json(self, "labelled", "bugs", "rate"),
            "interval": list(self.interval) if self.interval else None,
            "run_disagreements": self.in_run,
            "estimated_bugs": self.estimate,
            "estimated_bugs_interval": (
                list(self.estimate_interval) if self.estimate_interval else None
            ),
            "method": self.method,
            "uncovered_disagreements": self.uncovered,
        }


@dataclass(frozen=True)
class ScaledCount:
    """How many of a run's cases have some property (a scorer bug, a right verdict), as
    estimated from a stratified sample of them, with its 95% interval."""

    estimate: float
    interval: tuple[float, float]
    stratified: bool
    """False for a run of one stratum (a simple random sample: Wilson bounds times N)."""
    uncovered: int
    """Cases of the run in strata with no labelled case."""
    variance: float = 0.0
    """The estimated variance of `estimate` (stratified only)."""


def scaled_count(
    cells: Sequence[tuple[int, int, int]], z: float = Z95, fpc: bool = False
) -> ScaledCount | None:
    """The run's count of cases with a property, from each stratum's `(N_h, n_h, k_h)`: its
    cases in the run, its labelled cases and how many of those have the property. None
    when nothing is labelled.

    One stratum: k/n * N, its interval the Wilson bounds * N. Several: the stratified sum
    of N_h * p_h over the labelled strata, with a normal interval of variance
    sum N_h² (1 - f_h) p_h (1 - p_h) / n_h, where f_h = n_h / N_h with `fpc` (the
    finite-population correction, for a sample drawn without replacement), else 0; clipped
    to [0, N]. The cases of strata with nothing labelled are left out of the estimate and
    added to the interval's upper bound (any of them may have the property).
    """
    total = sum(in_run for in_run, _, _ in cells)
    covered = [(in_run, n, k) for in_run, n, k in cells if n]
    if not covered:
        return None
    uncovered = total - sum(in_run for in_run, _, _ in covered)
    if len(cells) == 1:
        ((_, n, k),) = covered
        bounds = wilson(k, n, z)
        assert bounds is not None
        return ScaledCount(k / n * total, (bounds[0] * total, bounds[1] * total), False, 0)
    estimate = math.fsum(in_run * k / n for in_run, n, k in covered)
    variance = math.fsum(
        in_run**2
        * (max(0.0, 1 - n / in_run) if fpc and in_run else 1.0)
        * (k / n)
        * (1 - k / n)
        / n
        for in_run, n, k in covered
    )
    half = z * math.sqrt(variance)
    bounds = (max(0.0, estimate - half), min(float(total), estimate + half + uncovered))
    return ScaledCount(estimate, bounds, True, uncovered, variance)


def bug_rate(strata: Sequence[StratumEstimate]) -> BugRate:
    """The bug rate of the labelled cases and its estimate scaled to the run (see the module
    docstring for the method)."""
    labelled = sum(s.labelled for s in strata)
    bugs = sum(s.bugs for s in strata)
    total = sum(s.in_run for s in strata)
    scaled = scaled_count([(s.in_run, s.labelled, s.bugs) for s in strata])
    if scaled is None:
        uncovered = total  # nothing labelled
        return BugRate(labelled, bugs, None, total, None, None, None, uncovered)
    if not scaled.stratified:
        method = WILSON_SCALED
    else:
        method = STRATIFIED + (UNCOVERED if scaled.uncovered else "")
    return BugRate(
        labelled, bugs, wilson(bugs, labelled), total, scaled.estimate, scaled.interval,
        method, scaled.uncovered,
    )  # fmt: skip
