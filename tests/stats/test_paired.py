"""The paired statistics of `compare` against values worked out by hand."""

from __future__ import annotations

import math
import random

import pytest

from toolscore.stats.paired import Table, mcnemar_exact, paired_test, table_test


@pytest.mark.parametrize(
    ("n01", "n10", "expected"),
    [
        (0, 5, 2 / 32),  # 2 * 0.5**5
        (5, 0, 2 / 32),
        (1, 4, 2 * 6 / 32),  # 2 * (C(5,0) + C(5,1)) / 2**5
        (3, 3, 1.0),
        (0, 1, 1.0),
        (0, 0, 1.0),  # no discordant pair: nothing against an even split
    ],
)
def test_mcnemar_exact_on_small_tables(n01: int, n10: int, expected: float) -> None:
    assert mcnemar_exact(n01, n10) == pytest.approx(expected)


def test_counts_rates_and_discordant_pairs() -> None:
    a = [True, True, False, False, True]
    b = [True, False, True, True, True]
    test = paired_test("accuracy", a, b)
    assert test is not None
    assert (test.n, test.a, test.b) == (5, 0.6, 0.8)
    assert (test.n01, test.n10) == (2, 1)
    assert test.difference == pytest.approx(0.2)
    assert test.p_value == pytest.approx(1.0)  # 2 * P(X <= 1 | n=3) = 2 * 4/8, capped at 1


def _runs(n: int, seed: int) -> tuple[list[bool], list[bool]]:
    draw = random.Random(seed)
    a = [draw.random() < 0.6 for _ in range(n)]
    b = [x if draw.random() < 0.8 else not x for x in a]
    return a, b


def test_bootstrap_is_deterministic_for_a_seed_and_contains_the_difference() -> None:
    a, b = _runs(300, 7)
    first = paired_test("accuracy", a, b, seed=3, resamples=2000)
    again = paired_test("accuracy", a, b, seed=3, resamples=2000)
    other = paired_test("accuracy", a, b, seed=4, resamples=2000)
    assert first is not None
    assert again is not None
    assert other is not None
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)
    assert first.low is not None
    assert first.high is not None
    assert first.low < first.difference < first.high


def test_bootstrap_spread_matches_the_normal_approximation() -> None:
    """On many cases the 95% interval is about difference +- 1.96 standard errors, the
    standard error being the per-case differences' standard deviation over sqrt(n)."""
    a, b = _runs(2000, 11)
    test = paired_test("accuracy", a, b, resamples=4000)
    assert test is not None
    assert test.low is not None
    assert test.high is not None
    diffs = [int(y) - int(x) for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / len(diffs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
    half_width = 1.96 * sd / math.sqrt(len(diffs))
    assert (test.high - test.low) / 2 == pytest.approx(half_width, rel=0.1)
    assert (test.low + test.high) / 2 == pytest.approx(mean, abs=half_width / 5)


def test_the_sentence_says_no_detectable_difference_when_zero_is_inside() -> None:
    a, b = _runs(200, 1)
    test = paired_test("accuracy", a, b)
    assert test is not None
    assert test.low is not None
    assert test.high is not None
    assert test.low < 0 < test.high
    assert not test.detectable
    sentence = test.sentence()
    assert sentence.startswith("accuracy: no detectable difference: B - A = ")
    assert f"McNemar exact p = {test.p_value:.3g} (n01={test.n01}, n10={test.n10})" in sentence


def test_the_sentence_names_the_better_run() -> None:
    a = [False] * 60 + [True] * 40
    b = [True] * 30 + [False] * 30 + [True] * 40  # 30 fixed, none broken
    test = paired_test("accuracy", a, b)
    assert test is not None
    assert test.detectable
    assert test.sentence().startswith("accuracy: B is better than A by 30.0 points: ")
    worse = paired_test("accuracy", b, a)
    assert worse is not None
    assert worse.sentence().startswith("accuracy: A is better than B by 30.0 points: ")
    assert (worse.n01, worse.n10) == (0, 30)


def test_equal_differences_give_a_zero_width_interval() -> None:
    same = paired_test("accuracy", [True, False, True], [True, False, True])
    assert same is not None
    assert (same.low, same.high, same.difference, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert "no detectable difference" in same.sentence()
    all_fixed = paired_test("accuracy", [False] * 4, [True] * 4)
    assert all_fixed is not None
    assert (all_fixed.low, all_fixed.high) == (1.0, 1.0)
    assert all_fixed.p_value == pytest.approx(2 / 16)


def test_one_case_has_no_interval_and_no_case_no_test() -> None:
    one = paired_test("accuracy", [True], [False])
    assert one is not None
    assert (one.low, one.high, one.n10, one.p_value) == (None, None, 1, 1.0)
    assert "too few cases for an interval" in one.sentence()
    assert one.to_json()["interval"] is None
    assert paired_test("accuracy", [], []) is None


def test_verdict_lists_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="2 verdicts of A against 1 of B"):
        paired_test("accuracy", [True, False], [True])


def test_a_bootstrap_difference_mcnemar_does_not_confirm_is_flagged() -> None:
    """Six cases, three broken: the percentile interval excludes zero, yet the exact test
    (p = 2 * 0.5**3 = 0.25) cannot tell; the sentence says both."""
    test = paired_test("accuracy", [True] * 3 + [False] * 3, [False] * 6)
    assert test is not None
    assert test.detectable
    assert test.p_value == pytest.approx(0.25)
    sentence = test.sentence()
    assert sentence.startswith("accuracy: A is better than B by 50.0 points: ")
    assert sentence.endswith(
        "but McNemar's test does not reject equal rates at the 0.05 level "
        "(too few discordant cases to be sure)"
    )
    clear = paired_test("accuracy", [False] * 60 + [True] * 40, [True] * 100)
    assert clear is not None
    assert clear.p_value < 0.05
    assert "McNemar's test does not reject" not in clear.sentence()


def test_large_runs_draw_counts_and_agree_with_resampling_cases() -> None:
    """Past the resampling budget the interval comes from multinomial counts: on the same
    cases it matches scipy.stats.bootstrap's to within a fraction of a point."""
    a, b = _runs(5000, 3)
    cases = paired_test("accuracy", a, b, resamples=4000)
    counts = paired_test("accuracy", a, b, resamples=4000, budget=1000)
    assert cases is not None
    assert counts is not None
    assert (cases.method, counts.method) == ("bootstrap", "multinomial")
    assert cases.low is not None
    assert cases.high is not None
    assert counts.low == pytest.approx(cases.low, abs=0.003)
    assert counts.high == pytest.approx(cases.high, abs=0.003)
    assert counts == paired_test("accuracy", a, b, resamples=4000, budget=1000)
    assert counts.to_json()["method"] == "multinomial"
    assert paired_test("accuracy", [True], [False]).to_json()["method"] == "none"  # type: ignore[union-attr]


def test_the_table_counts_pairs_and_the_order_of_cases_does_not_matter() -> None:
    a, b = _runs(400, 5)
    table = Table.of(a, b)
    assert table.n == 400
    assert table.both == sum(x and y for x, y in zip(a, b, strict=True))
    assert table.a_only == sum(x and not y for x, y in zip(a, b, strict=True))
    order = list(range(400))
    random.Random(2).shuffle(order)
    shuffled = paired_test("accuracy", [a[i] for i in order], [b[i] for i in order])
    assert shuffled == paired_test("accuracy", a, b)
    assert shuffled == table_test("accuracy", table)
    assert table_test("accuracy", Table(0, 0, 0, 0)) is None
