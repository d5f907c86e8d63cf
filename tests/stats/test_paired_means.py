"""`mean_test`: the paired difference of a per-case score (a case's F1) of two runs, with
the percentile bootstrap interval over cases, from the two sums and the counted
differences."""

from __future__ import annotations

from collections import Counter

import pytest

from toolscore.stats.paired import mean_test


def test_no_case_gives_no_test() -> None:
    assert mean_test("macro F1", (0.0, 0.0), Counter()) is None


def test_one_case_has_no_interval() -> None:
    test = mean_test("macro F1", (0.5, 1.0), Counter({0.5: 1}))
    assert test is not None
    assert (test.n, test.a, test.b, test.difference) == (1, 0.5, 1.0, 0.5)
    assert (test.low, test.high, test.method) == (None, None, "none")
    assert not test.detectable
    assert test.sentence().endswith("over 1 shared case (too few cases for an interval)")


def test_equal_differences_give_a_zero_width_interval() -> None:
    test = mean_test("macro F1", (2.0, 3.0), Counter({0.25: 4}))
    assert test is not None
    assert (test.low, test.high, test.method) == (0.25, 0.25, "none")
    assert test.detectable
    assert test.sentence().startswith("macro F1: B is better than A: B - A = +0.250")


def test_the_bootstrap_interval_holds_the_mean_difference_and_is_seeded() -> None:
    differences = Counter({-0.5: 3, 0.0: 10, 1.0: 7})
    test = mean_test("macro F1", (10.0, 15.5), differences, resamples=2_000)
    again = mean_test("macro F1", (10.0, 15.5), differences, resamples=2_000)
    assert test is not None
    assert test == again
    assert test.method == "bootstrap"
    assert test.difference == pytest.approx(0.275)
    assert test.low is not None
    assert test.high is not None
    assert test.low < 0.275 < test.high
    data = test.to_json()
    assert data["interval"] == [round(test.low, 4), round(test.high, 4)]
    assert data["difference"] == 0.275


def test_beyond_the_budget_the_interval_is_normal() -> None:
    differences = Counter({-1.0: 50, 1.0: 50})
    test = mean_test("macro F1", (50.0, 50.0), differences, resamples=100, budget=1_000)
    assert test is not None
    assert test.method == "normal"
    # mean 0, sample sd 100/99 ** 0.5, standard error about 0.1005
    assert test.low == pytest.approx(-0.19699, abs=1e-4)
    assert test.high == pytest.approx(0.19699, abs=1e-4)
