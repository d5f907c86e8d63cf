"""Statistics of a run's rates: closed-form intervals (Wilson, clustered) and `Rate`
(`intervals`, importable without scipy), and paired comparisons of two runs (`paired`)."""

from toolscore.stats.intervals import (
    Rate,
    clustered_se,
    interval_json,
    interval_percents,
    normal_interval,
    percent,
    wilson,
)
from toolscore.stats.paired import PairedTest, cluster_test, mcnemar_exact, paired_test

__all__ = [
    "PairedTest",
    "Rate",
    "cluster_test",
    "clustered_se",
    "interval_json",
    "interval_percents",
    "mcnemar_exact",
    "normal_interval",
    "paired_test",
    "percent",
    "wilson",
]
