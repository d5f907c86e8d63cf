"""Intervals for the rates of a summary, in closed form so that `toolscore score` starts
without scipy (issue 12's start-up budget); tests check them against scipy.stats.

- `wilson`: the Wilson score interval of a proportion, as
  `scipy.stats.binomtest(k, n).proportion_ci(0.95, method="wilson")` gives it.
- `clustered`: the interval of a mean of 0/1 outcomes that come in clusters (several cases
  per task or prompt template), with the clustered standard error of Miller (2024), "Adding
  Error Bars to Evals", computed exactly from per-cluster (n, passed) counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

Z95 = 1.959963984540054
"""The 97.5th percentile of the standard normal distribution: two-sided 95%."""


def wilson(passed: float, n: float, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `passed` successes in `n` trials; None when n is 0.
    (`n` may be an effective sample size, not a whole number, with `passed` = rate * n.)"""
    if n <= 0:
        return None
    p = passed / n
    z2 = z * z
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # At k = 0 and k = n one bound is exactly 0 or 1; rounding error must not move it.
    low = 0.0 if passed == 0 else max(0.0, center - half)
    high = 1.0 if passed == n else min(1.0, center + half)
    return low, high


def clustered_se(clusters: Iterable[tuple[int, int]], passed: int, n: int) -> float | None:
    """The clustered standard error of the pass rate `passed / n`, from each cluster's
    `(n_c, passed_c)`: sqrt(sum over clusters of (sum of x_i - mean in c)^2) / n, where a
    cluster's inner sum is passed_c - n_c * mean. None when n is 0."""
    if n <= 0:
        return None
    mean = passed / n
    total = math.fsum((passed_c - n_c * mean) ** 2 for n_c, passed_c in clusters)
    return math.sqrt(total) / n


def normal_interval(mean: float, se: float, z: float = Z95) -> tuple[float, float]:
    """mean ± z·se, clipped to [0, 1] (the mean is a proportion)."""
    return max(0.0, mean - z * se), min(1.0, mean + z * se)
