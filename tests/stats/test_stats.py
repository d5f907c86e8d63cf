"""The closed-form intervals of `toolscore.stats.intervals` against scipy.stats and textbook
values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, norm

from toolscore.stats.intervals import (
    Z95,
    clustered_se,
    interval_json,
    normal_interval,
    ratio,
    rounded,
    wilson,
)


def test_z_is_the_normal_quantile() -> None:
    assert norm.ppf(0.975) == pytest.approx(Z95, abs=1e-15)


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 100_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_equals_scipy(kn: tuple[int, int]) -> None:
    passed, n = kn
    expected = binomtest(passed, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = wilson(passed, n) or (math.nan, math.nan)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)


@pytest.mark.parametrize(
    ("passed", "n", "low", "high"),
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
    # the score method without continuity correction.
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611),
     (1, 29, 0.0061, 0.1718)],
)  # fmt: skip
def test_wilson_textbook_values(passed: int, n: int, low: float, high: float) -> None:
    bounds = wilson(passed, n)
    assert bounds is not None
    assert (round(bounds[0], 4), round(bounds[1], 4)) == (low, high)


def test_wilson_degenerate_cases() -> None:
    assert wilson(0, 0) is None
    low, high = wilson(0, 7) or (-1.0, -1.0)
    assert low == 0.0
    assert 0 < high < 1
    low, high = wilson(7, 7) or (-1.0, -1.0)
    assert high == 1.0
    assert 0 < low < 1
    low, high = wilson(1, 1) or (-1.0, -1.0)
    assert (round(low, 4), high) == (0.2065, 1.0)


def test_clustered_se_of_three_clusters_by_hand() -> None:
    # clusters of (cases, passed): (4, 3), (3, 0), (2, 2): mean 5/9; the clusters' sums of
    # deviations are 7/9, -15/9 and 8/9, their squares add up to 338/81.
    se = clustered_se([(4, 3), (3, 0), (2, 2)], 5, 9)
    assert se == pytest.approx(math.sqrt(338 / 81) / 9, rel=1e-12)
    low, high = normal_interval(5 / 9, se or 0.0)
    assert low == pytest.approx(5 / 9 - Z95 * math.sqrt(338) / 81, rel=1e-12)
    assert high == 1.0  # 5/9 + 1.96 * 0.227 is above 1: clipped


def test_clustered_se_of_singletons_is_the_plain_standard_error() -> None:
    # each case its own cluster: sqrt(sum (x - mean)^2) / n = sqrt(p (1 - p) / n)
    outcomes = [1, 1, 0, 1, 0, 0, 1, 1]
    se = clustered_se([(1, x) for x in outcomes], sum(outcomes), len(outcomes))
    p = sum(outcomes) / len(outcomes)
    assert se == pytest.approx(math.sqrt(p * (1 - p) / len(outcomes)), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=6), min_size=1, max_size=12))
def test_clustered_se_from_counts_equals_the_sum_over_cases(
    clusters: list[list[bool]],
) -> None:
    cases = [x for cluster in clusters for x in cluster]
    mean = sum(cases) / len(cases)
    direct = math.sqrt(sum(sum(x - mean for x in c) ** 2 for c in clusters)) / len(cases)
    counts = [(len(c), sum(c)) for c in clusters]
    assert clustered_se(counts, sum(cases), len(cases)) == pytest.approx(direct, abs=1e-12)


def test_clustered_se_of_nothing() -> None:
    assert clustered_se([], 0, 0) is None


def test_a_rate_over_nothing_is_unmeasured_not_zero() -> None:
    assert ratio(0, 0) is None
    assert ratio(0.0, 0.0) is None
    assert ratio(0, 4) == 0.0
    assert ratio(3, 4) == 0.75
    assert rounded(None) is None
    assert rounded(2 / 3) == 0.6667
    assert rounded(0.0) == 0.0


@given(passed=st.integers(0, 50), extra=st.integers(0, 50))
def test_interval_json_is_the_rounded_wilson_interval_and_a_fresh_list(
    passed: int, extra: int
) -> None:
    """`interval_json` is computed once per count (cached); each call still gives the rounded
    Wilson bounds, in a list of its own that a caller may change."""
    n = passed + extra
    first = interval_json(passed, n)
    bounds = wilson(passed, n)
    if bounds is None:
        assert first is None
        return
    assert first == [round(bounds[0], 4), round(bounds[1], 4)]
    assert first is not None
    first.append(99.0)
    assert interval_json(passed, n) == [round(bounds[0], 4), round(bounds[1], 4)]
