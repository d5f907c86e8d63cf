"""Statistics of a run's rates: closed-form intervals (Wilson, clustered) and `Rate`
(`intervals`, importable without scipy), and paired comparisons of two runs (`paired`)."""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
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

__getattr__, __dir__, _lazy = lazy_loader.attach(
    __name__,
    submod_attrs={
        "intervals": [
            "Rate",
            "clustered_se",
            "interval_json",
            "interval_percents",
            "normal_interval",
            "percent",
            "wilson",
        ],
        "paired": ["PairedTest", "cluster_test", "mcnemar_exact", "paired_test"],
    },
)

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
