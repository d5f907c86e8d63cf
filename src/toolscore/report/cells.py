"""The cells the terminal's tables share: a proportion as a percentage, a 95% interval, and a
rate's row (label, value, passed/n, interval), written with the digits the HTML report uses."""

from __future__ import annotations

from toolscore.stats.intervals import Rate, interval_percents, wilson
from toolscore.stats.intervals import percent as percent_of


def percent(value: float | None) -> str:
    """A proportion as a percentage, or a dash when nothing was measured (`stats.percent`:
    the digits the HTML report writes for the same number)."""
    return percent_of(value)


def interval(bounds: tuple[float, float] | None) -> str:
    """A 95% interval as two percentages, or a dash when nothing was measured
    (`stats.interval_percents`, as the HTML report writes it)."""
    return "-" if bounds is None else " - ".join(interval_percents(bounds))


def rate_row(label: str, rate: Rate) -> tuple[str, str, str, str]:
    """A rate's row: its label, percentage, passed/n and Wilson interval."""
    return (
        label, percent(rate.value), f"{rate.passed}/{rate.n}", interval(wilson(rate.passed, rate.n))
    )  # fmt: skip
