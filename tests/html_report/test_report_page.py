"""How the HTML report writes a rate and an interval: the digits the terminal writes for the
same number (one rounding, `toolscore.stats.intervals`), never two equal-looking bounds for two
different numbers, never 100.0% (or 0.0%) for a bound the report JSON writes short of 1 (or
above 0)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolscore.html_report.page import interval, percent, points
from toolscore.report import cells as terminal
from toolscore.stats.intervals import Rate, interval_json, percent_digits, wilson


@pytest.mark.parametrize(
    ("bounds", "shown"),
    [
        ([0.2, 0.8], "20.0% \u2013 80.0%"),
        ([0.9962, 1.0], "99.6% \u2013 100.0%"),
        ([0.9996, 1.0], "99.96% \u2013 100.00%"),
        ([0.0, 0.0001], "0.00% \u2013 0.01%"),
        ([0.1234, 0.1235], "12.3% \u2013 12.4%"),
        ([0.12341, 0.12344], "12.3% \u2013 12.3%"),  # one number at the report's 4 places
        ([0.2065, 1.0], "20.7% \u2013 100.0%"),
        ([1.0, 1.0], "100.0% \u2013 100.0%"),
        (None, "\u2013"),
    ],
)
def test_an_interval_has_the_decimals_that_tell_its_bounds_apart(
    bounds: list[float] | None, shown: str
) -> None:
    assert interval(bounds) == shown


@pytest.mark.parametrize(
    ("value", "digits"),
    [
        (0.2065, "20.7"),  # binary 0.2065 is 0.20649999...: `f"{100 * v:.1f}"` says 20.6
        (0.20654931437723745, "20.7"),  # the low bound of 1 of 1, unrounded
        (0.0615, "6.2"),
        (0.06149194472039615, "6.2"),  # the report JSON writes it 0.0615
        (0.0945, "9.5"),
        (0.00004, "0.0"),
        (-0.0004, "0.0"),  # never "-0.0"
        (-0.0245, "-2.5"),  # half away from zero, as for positive numbers
        (1.0, "100.0"),
    ],
)
def test_a_percentage_rounds_the_report_json_s_number_half_up(value: float, digits: str) -> None:
    assert percent_digits(value) == digits


def test_the_interval_of_one_pass_in_one_reads_the_same_in_the_terminal_and_the_page() -> None:
    # The reproducer: the terminal said 20.7% (from the unrounded bound), the page 20.6%
    # (from the report JSON's 0.2065, by binary rounding).
    raw = wilson(1, 1)
    assert raw is not None
    assert terminal.interval(raw) == "20.7% - 100.0%"
    assert interval(interval_json(1, 1)) == "20.7% \u2013 100.0%"


@given(st.integers(1, 10**6), st.data())
def test_the_terminal_and_the_page_write_every_rate_and_interval_alike(
    n: int, data: st.DataObject
) -> None:
    """The terminal formats the unrounded numbers; the page reads the report JSON's."""
    passed = data.draw(st.integers(0, n))
    written = Rate(passed, n).to_json()
    assert terminal.percent(passed / n) == percent(written["value"])
    bounds = wilson(passed, n)
    assert bounds is not None
    assert terminal.interval(bounds).replace(" - ", " \u2013 ") == interval(written["ci95"])


@given(st.floats(-1, 1))
def test_points_are_signed_and_never_minus_zero(value: float) -> None:
    shown = points(value)
    assert shown[0] in "+-"
    assert shown != "-0.0"
    assert shown[1:] == percent_digits(abs(value))


@given(st.integers(1, 10**7), st.data())
def test_a_bound_short_of_a_whole_run_is_never_shown_as_100_percent(
    n: int, data: st.DataObject
) -> None:
    passed = data.draw(st.integers(max(0, n - 3), n))
    found = interval_json(passed, n)
    assert found is not None
    low, high = found
    if low < 1.0:  # the report JSON's four places cannot tell 0.99996 from 1, by design
        assert not interval([low, high]).startswith("100.0")
