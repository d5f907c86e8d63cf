"""Intervals for the rates of a summary, in closed form so that `toolscore score` starts
without scipy (issue 12's start-up budget); tests check them against scipy.stats.

- `wilson`: the Wilson score interval of a proportion, as
  `scipy.stats.binomtest(k, n).proportion_ci(0.95, method="wilson")` gives it.
- `clustered`: the interval of a mean of 0/1 outcomes that come in clusters (several cases
  per task or prompt template), with the clustered standard error of Miller (2024), "Adding
  Error Bars to Evals", computed exactly from per-cluster (n, passed) counts.
- `percent`, `points`, `interval_percents`: how a rate, a difference of rates and an
  interval are written for a person. The terminal, the HTML pages and the labelling page all
  write them with these, so that one number reads the same everywhere.
- `Rate` and `interval_json`: a proportion with its denominator, and its interval, as the
  report shows them (the scoring summary and the rubrics block both count in rates);
  `ratio` and `rounded`, the unmeasured-aware division and rounding every JSON rate shares.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

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


REPORT_DECIMALS = 4
"""The decimals the report JSON gives a rate, a bound of its interval or a difference."""


def percent_digits(value: float, decimals: int = 1) -> str:
    """A proportion as the digits of its percentage (`0.20655` -> `20.7`): the value is first
    rounded as the report JSON writes it (`REPORT_DECIMALS`), then its decimal text times 100
    is rounded half away from zero. A page that reads the report JSON and a terminal that
    holds the unrounded number so write the same digits; binary rounding of `100 * value`
    would write 0.2065 as 20.6 and 0.20655 as 20.7."""
    exact = Decimal(repr(round(value, REPORT_DECIMALS))) * 100
    shown = exact.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    return str(abs(shown) if shown == 0 else shown)  # never "-0.0"


def percent(value: float | None, dash: str = "-") -> str:
    """A proportion as a percentage with one decimal (`20.7%`), or `dash` when unmeasured."""
    return dash if value is None else percent_digits(value) + "%"


def points(value: float | None, dash: str = "-") -> str:
    """A difference of two proportions in percentage points, signed (`+15.0`, `-2.5`,
    `+0.0`), or `dash` when either side is unmeasured."""
    if value is None:
        return dash
    digits = percent_digits(value)
    return digits if digits.startswith("-") else "+" + digits


def interval_percents(bounds: Sequence[float]) -> tuple[str, str]:
    """The two bounds of a 95% interval as percentages: one decimal, or two where one would
    show two different bounds alike, or a bound short of 0% or 100% as 0.0% or 100.0%
    (0.9996 is `99.96%`, not `100.0%`). Two decimals are all the report JSON's four hold."""
    low, high = (round(bound, REPORT_DECIMALS) for bound in bounds)
    for decimals in (1, 2):
        shown = (percent_digits(low, decimals), percent_digits(high, decimals))
        edges = {percent_digits(0.0, decimals): 0.0, percent_digits(1.0, decimals): 1.0}
        blurred = (shown[0] == shown[1] and low != high) or any(
            text in edges and bound != edges[text]
            for text, bound in zip(shown, (low, high), strict=True)
        )
        if not blurred:
            break
    return shown[0] + "%", shown[1] + "%"


def ratio(part: float, whole: float) -> float | None:
    """part / whole, or None when whole is 0: a rate over nothing is unmeasured, not 0."""
    return part / whole if whole else None


def rounded(value: float | None) -> float | None:
    """A rate, mean or difference rounded as the report JSON writes it (`REPORT_DECIMALS`);
    None (unmeasured) stays None."""
    return None if value is None else round(value, REPORT_DECIMALS)


def interval_json(passed: int, n: int) -> list[float] | None:
    """The 95% Wilson interval of passed / n as the report shows it, `[low, high]` rounded
    like the rates, or None when n is 0 (a new list each time: callers may keep it)."""
    bounds = _rounded_interval(passed, n)
    return None if bounds is None else list(bounds)


@functools.lru_cache(maxsize=4096)
def _rounded_interval(passed: int, n: int) -> tuple[float, float] | None:
    """`interval_json`'s bounds, computed once per count: a report's per-tool and
    per-argument tallies repeat a few small counts (1 of 1, 0 of 1) hundreds of times."""
    bounds = wilson(passed, n)
    return None if bounds is None else (round(bounds[0], 4), round(bounds[1], 4))


@dataclass(frozen=True)
class Rate:
    """A proportion with its denominator: 1.0 over 2 cases is not 1.0 over 2,000."""

    passed: int
    n: int

    @property
    def value(self) -> float | None:
        """passed / n, or None when there is nothing to measure."""
        return ratio(self.passed, self.n)

    def to_json(self) -> dict[str, Any]:
        """The rate as the report shows it: value, denominator, numerator, 95% interval."""
        value = self.value
        return {
            "value": rounded(value),
            "n": self.n,
            "passed": self.passed,
            "ci95": interval_json(self.passed, self.n),
        }
