"""How the HTML report writes an interval: never two equal-looking bounds for two different
numbers, never 100.0% (or 0.0%) for a bound that is not 100% (or 0%)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolscore.html_report.page import interval
from toolscore.stats import wilson


@pytest.mark.parametrize(
    ("bounds", "shown"),
    [
        ([0.2, 0.8], "20.0% \u2013 80.0%"),
        ([0.9962, 1.0], "99.6% \u2013 100.0%"),
        ([0.999996, 1.0], "99.9996% \u2013 100.0000%"),
        ([0.0, 0.00001], "0.000% \u2013 0.001%"),
        ([0.12345, 0.12346], "12.345% \u2013 12.346%"),
        ([1.0, 1.0], "100.0% \u2013 100.0%"),
        (None, "\u2013"),
    ],
)
def test_an_interval_has_the_decimals_that_tell_its_bounds_apart(
    bounds: list[float] | None, shown: str
) -> None:
    assert interval(bounds) == shown


@given(st.integers(1, 10**7), st.data())
def test_a_bound_short_of_a_whole_run_is_never_shown_as_100_percent(
    n: int, data: st.DataObject
) -> None:
    passed = data.draw(st.integers(max(0, n - 3), n))
    found = wilson(passed, n)
    assert found is not None
    low, high = found
    if low < 0.999999:  # beyond four decimals the page cannot tell, by design
        assert not interval([low, high]).startswith("100.0")
