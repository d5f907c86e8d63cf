"""Paired comparison of two runs' verdicts on the same cases: is B really better than A?

Each case gives one pair of verdicts (A's, B's). The difference of the two pass rates gets a
percentile bootstrap interval that resamples cases (so each case's two verdicts stay
together), and the exact McNemar test asks whether the discordant cases (passed in one run
only) split evenly. Both come from scipy.stats (bootstrap, or multinomial draws of counts on
large runs; binomtest), imported when a comparison is computed so that starting the CLI
does not pay for it. All they need is the 2x2 table of paired verdicts (`Table`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from toolscore.stats.intervals import Z95, percent_digits, points
from toolscore.stats.records import fields_json

CONFIDENCE = 0.95
ALPHA = 0.05
"""McNemar p-values at or above this get a word of caution beside a bootstrap difference."""
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
_BATCH_CELLS = 4_000_000
"""Resampled case indexes held in memory at once (scipy's `batch`): bounds memory."""
RESAMPLING_BUDGET = 200_000_000
"""Above this many resampled cases (cases x resamples), the bootstrap draws each resample's
counts of -1, 0 and +1 differences from the multinomial distribution instead of resampling
case by case: the same distribution, at a cost that does not grow with the run (with the
default 10,000 resamples, runs of more than 20,000 shared cases)."""


class PairedTest(NamedTuple):
    """One metric of two runs over the cases both have: B - A with its bootstrap interval,
    and McNemar's exact test on the discordant cases."""

    metric: str
    n: int
    a: float
    b: float
    low: float | None
    high: float | None
    n01: int
    """Cases that failed in A and passed in B."""
    n10: int
    """Cases that passed in A and failed in B."""
    p_value: float
    seed: int
    resamples: int
    method: str
    """How the interval was drawn: `bootstrap` (scipy.stats.bootstrap over cases),
    `multinomial` (resample counts, for large runs) or `none` (one case, or no spread)."""
    unit: str = "case"
    """What `n`, `n01` and `n10` count: cases, or rubric entries (`entry`) whose cases are
    resampled together (`cluster_test`)."""

    @property
    def difference(self) -> float:
        """B's pass rate minus A's on the shared cases."""
        return self.b - self.a

    @property
    def detectable(self) -> bool:
        """True when the interval excludes zero (False without an interval)."""
        return excludes_zero(self.low, self.high)

    def sentence(self) -> str:
        """The result in plain words, with its numbers."""
        numbers = (
            f"B - A = {_points(self.difference)} over {self.n} shared "
            + _units(self.unit, self.n)
            + (
                f", 95% interval [{_points(self.low)}, {_points(self.high)}]"
                if self.low is not None and self.high is not None
                else " (too few cases for an interval)"
            )
            + f"; McNemar exact p = {self.p_value:.3g} (n01={self.n01}, n10={self.n10})"
        )
        if not self.detectable:
            return f"{self.metric}: no detectable difference: {numbers}"
        better, worse = ("B", "A") if self.difference > 0 else ("A", "B")
        caution = (
            f"; but McNemar's test does not reject equal rates at the {ALPHA:g} level "
            "(too few discordant cases to be sure)"
            if self.p_value >= ALPHA
            else ""
        )
        return (
            f"{self.metric}: {better} is better than {worse} by "
            f"{percent_digits(abs(self.difference))} points: {numbers}{caution}"
        )

    def to_json(self) -> dict[str, Any]:
        """The test as `compare --json` lists it (rates and bounds rounded to 4 places)."""
        return {
            "metric": self.metric,
            "n": self.n,
            "a": round(self.a, 4),
            "b": round(self.b, 4),
            "difference": round(self.difference, 4),
            "interval": None
            if self.low is None or self.high is None
            else [round(self.low, 4), round(self.high, 4)],
            "confidence": CONFIDENCE,
            **fields_json(self, "method", "seed", "resamples"),
            "mcnemar": {"n01": self.n01, "n10": self.n10, "p_value": self.p_value},
            "detectable": self.detectable,
            "sentence": self.sentence(),
        }


def excludes_zero(low: float | None, high: float | None) -> bool:
    """Whether an interval lies wholly above or below zero (False without an interval)."""
    return low is not None and high is not None and (low > 0 or high < 0)


def _units(unit: str, n: int) -> str:
    """`case`/`cases`, `entry`/`entries`."""
    if n == 1:
        return unit
    return unit[:-1] + "ies" if unit.endswith("y") else unit + "s"


def _points(value: float | None) -> str:
    """A rate difference in percentage points, signed (`stats.points`)."""
    return "-" if value is None else f"{points(value)} pts"


def mcnemar_exact(n01: int, n10: int) -> float:
    """Two-sided exact McNemar p-value: n01 out of n01 + n10 discordant cases against an even
    split (1.0 when no case is discordant)."""
    from scipy.stats import binomtest  # noqa: PLC0415 - scipy only when a comparison runs

    if n01 + n10 == 0:
        return 1.0
    return float(binomtest(n01, n01 + n10, 0.5).pvalue)


class Table(NamedTuple):
    """The 2x2 table of paired verdicts: how many cases passed in both runs, in A only, in B
    only, in neither. Everything the paired statistics need (the bootstrap of a mean of
    -1/0/+1 differences does not depend on the cases' order)."""

    both: int
    a_only: int
    """n10: passed in A, failed in B."""
    b_only: int
    """n01: failed in A, passed in B."""
    neither: int

    @property
    def n(self) -> int:
        """How many cases."""
        return self.both + self.a_only + self.b_only + self.neither

    @classmethod
    def of(cls, a: Sequence[bool], b: Sequence[bool]) -> Table:
        """The table of verdicts `a[i]`, `b[i]` of the same cases."""
        if len(a) != len(b):
            raise ValueError(f"{len(a)} verdicts of A against {len(b)} of B")
        counts = Counter(zip(map(bool, a), map(bool, b), strict=True))
        return cls(
            counts[True, True], counts[True, False], counts[False, True], counts[False, False]
        )


def paired_test(
    metric: str,
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    budget: int = RESAMPLING_BUDGET,
) -> PairedTest | None:
    """Compare the verdicts `a[i]`, `b[i]` of the same cases; None when there is no case."""
    return table_test(metric, Table.of(a, b), seed=seed, resamples=resamples, budget=budget)


def table_test(
    metric: str,
    table: Table,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    budget: int = RESAMPLING_BUDGET,
) -> PairedTest | None:
    """The paired test of a 2x2 table of verdicts; None when it counts no case.

    With one case, or when every case has the same difference, there is nothing to
    resample: the interval is absent (one case) or the observed difference (all equal).
    Up to `budget` resampled cases, scipy.stats.bootstrap resamples the cases; beyond,
    each resample is a multinomial draw of counts (`RESAMPLING_BUDGET`).
    """
    n = table.n
    if n == 0:
        return None
    low, high, method = _interval(table, seed, resamples, budget)
    return PairedTest(
        metric,
        n,
        (table.both + table.a_only) / n,
        (table.both + table.b_only) / n,
        low,
        high,
        table.b_only,
        table.a_only,
        mcnemar_exact(table.b_only, table.a_only),
        seed,
        resamples,
        method,
    )


def _interval(
    table: Table, seed: int, resamples: int, budget: int
) -> tuple[float | None, float | None, str]:
    """The percentile bootstrap interval of the mean per-case difference, and the method."""
    import numpy as np  # noqa: PLC0415 - numpy and scipy only when a comparison runs
    from scipy.stats import bootstrap, multinomial  # noqa: PLC0415

    n = table.n
    if n < 2:
        return None, None, "none"
    # The per-case differences B - A: -1 (A only), 0 (both or neither), +1 (B only).
    counts = np.array([table.a_only, table.both + table.neither, table.b_only])
    if np.count_nonzero(counts) == 1:
        value = float(np.flatnonzero(counts)[0] - 1)
        return value, value, "none"
    rng = np.random.default_rng(seed)
    if n * resamples > budget:
        # A resample's mean depends only on how many -1, 0 and +1 it drew: a multinomial
        # draw of n. The same distribution, without n-sized resamples.
        drawn = multinomial.rvs(n, counts / n, size=resamples, random_state=rng)
        means = (drawn[:, 2] - drawn[:, 0]) / n
        tail = 100 * (1 - CONFIDENCE) / 2
        low, high = np.percentile(means, [tail, 100 - tail])
        return float(low), float(high), "multinomial"
    differences = np.repeat(np.array([-1.0, 0.0, 1.0]), counts)
    result = bootstrap(
        (differences,),
        np.mean,
        n_resamples=resamples,
        batch=max(1, _BATCH_CELLS // n),
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=rng,
    )
    interval = result.confidence_interval
    return float(interval.low), float(interval.high), "bootstrap"


class Clusters(NamedTuple):
    """Paired pass/fail verdicts that come in clusters (a case's rubric entries): the counts
    McNemar's test and the rates need, and `patterns`, how many clusters have each
    (sum of B - A over the cluster's entries, entries in the cluster). The resampling unit
    is the cluster, so that the entries of one case move together."""

    a_passed: int
    b_passed: int
    n01: int
    """Entries that failed in A and passed in B."""
    n10: int
    """Entries that passed in A and failed in B."""
    patterns: tuple[tuple[int, int, int], ...]
    """(difference, entries, clusters): `clusters` clusters of `entries` entries each whose
    B - A passes add up to `difference`."""

    @property
    def n(self) -> int:
        """How many entries."""
        return sum(entries * count for _, entries, count in self.patterns)

    @property
    def clusters(self) -> int:
        """How many clusters (cases)."""
        return sum(count for *_, count in self.patterns)


def cluster_test(
    metric: str,
    clusters: Clusters,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    budget: int = RESAMPLING_BUDGET,
) -> PairedTest | None:
    """The paired test of verdicts in clusters; None when there is no entry.

    B - A is the difference of the two pass rates over every entry; its percentile bootstrap
    interval resamples clusters (the ratio of the resample's summed differences to its
    summed entries). McNemar's exact test counts discordant entries. With one cluster, or
    when every cluster has the same B - A per entry, the interval is absent or the observed
    difference. Above `budget` resampled clusters, each resample is a multinomial draw of
    how many clusters of each pattern it holds (the same distribution, as in `table_test`).
    """
    n = clusters.n
    if n == 0:
        return None
    low, high, method = _cluster_interval(clusters, seed, resamples, budget)
    return PairedTest(
        metric,
        n,
        clusters.a_passed / n,
        clusters.b_passed / n,
        low,
        high,
        clusters.n01,
        clusters.n10,
        mcnemar_exact(clusters.n01, clusters.n10),
        seed,
        resamples,
        method,
        "entry",
    )


def _cluster_interval(
    clusters: Clusters, seed: int, resamples: int, budget: int
) -> tuple[float | None, float | None, str]:
    """The percentile bootstrap interval of sum(differences) / sum(entries) over clusters."""
    import numpy as np  # noqa: PLC0415 - numpy and scipy only when a comparison runs
    from scipy.stats import bootstrap, multinomial  # noqa: PLC0415

    patterns = [p for p in sorted(clusters.patterns) if p[2] > 0]
    count = clusters.clusters
    if count < 2:
        return None, None, "none"
    differences = np.array([p[0] for p in patterns], dtype=float)
    entries = np.array([p[1] for p in patterns], dtype=float)
    weights = np.array([p[2] for p in patterns])
    ratios = differences / entries
    if np.all(ratios == ratios[0]):
        value = float(ratios[0])
        return value, value, "none"
    rng = np.random.default_rng(seed)
    tail = 100 * (1 - CONFIDENCE) / 2
    if count * resamples > budget:
        drawn = multinomial.rvs(count, weights / count, size=resamples, random_state=rng)
        means = (drawn @ differences) / (drawn @ entries)
        low, high = np.percentile(means, [tail, 100 - tail])
        return float(low), float(high), "multinomial"

    def ratio(d: Any, m: Any, axis: int = -1) -> Any:
        return d.sum(axis=axis) / m.sum(axis=axis)

    result = bootstrap(
        (np.repeat(differences, weights), np.repeat(entries, weights)),
        ratio,
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        batch=max(1, _BATCH_CELLS // count),
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=rng,
    )
    interval = result.confidence_interval
    return float(interval.low), float(interval.high), "bootstrap"


class MeanTest(NamedTuple):
    """The mean of a per-case score in [0, 1] (a case's F1) of two runs over the cases both
    have: B - A with its percentile bootstrap interval over cases (each case's two scores
    stay together)."""

    metric: str
    n: int
    a: float
    b: float
    low: float | None
    high: float | None
    seed: int
    resamples: int
    method: str
    """`bootstrap` (scipy.stats.bootstrap over cases), `normal` (mean -/+ 1.96 standard
    errors of the differences, above the resampling budget) or `none` (one case, or every
    case's difference the same)."""

    @property
    def difference(self) -> float:
        """B's mean minus A's on the shared cases."""
        return self.b - self.a

    @property
    def detectable(self) -> bool:
        """True when the interval excludes zero (False without an interval)."""
        return excludes_zero(self.low, self.high)

    def sentence(self) -> str:
        """The result in plain words, with its numbers (scores to three places)."""
        numbers = f"B - A = {self.difference:+.3f} over {self.n} shared {_units('case', self.n)}"
        if self.low is None or self.high is None:
            numbers += " (too few cases for an interval)"
        else:
            numbers += f", 95% interval [{self.low:+.3f}, {self.high:+.3f}]"
        if not self.detectable:
            return f"{self.metric}: no detectable difference: {numbers}"
        better, worse = ("B", "A") if self.difference > 0 else ("A", "B")
        return f"{self.metric}: {better} is better than {worse}: {numbers}"

    def to_json(self) -> dict[str, Any]:
        """The test as `compare --json` lists it (means and bounds rounded to 4 places)."""
        return {
            "metric": self.metric,
            "n": self.n,
            "a": round(self.a, 4),
            "b": round(self.b, 4),
            "difference": round(self.difference, 4),
            "interval": None
            if self.low is None or self.high is None
            else [round(self.low, 4), round(self.high, 4)],
            "confidence": CONFIDENCE,
            **fields_json(self, "method", "seed", "resamples"),
            "detectable": self.detectable,
            "sentence": self.sentence(),
        }


def mean_test(
    metric: str,
    sums: tuple[float, float],
    differences: Counter[float],
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    budget: int = RESAMPLING_BUDGET,
) -> MeanTest | None:
    """The paired test of a per-case score: `sums` are the two runs' sums over the shared
    cases and `differences` counts the cases of each B - A (a handful of distinct values for
    F1 on small plans); None when it counts no case."""
    import numpy as np  # noqa: PLC0415 - numpy and scipy only when a comparison runs
    from scipy.stats import bootstrap  # noqa: PLC0415

    n = sum(differences.values())
    if n == 0:
        return None
    a, b = sums[0] / n, sums[1] / n
    low: float | None = None
    high: float | None = None
    method = "none"
    values = sorted(differences)
    if n >= 2 and len(values) == 1:
        low = high = values[0]
    elif n >= 2:
        drawn = np.repeat(np.array(values), [differences[v] for v in values])
        if n * resamples > budget:
            spread = float(drawn.std(ddof=1)) / float(np.sqrt(n))
            mean = float(drawn.mean())
            low, high, method = mean - Z95 * spread, mean + Z95 * spread, "normal"
        else:
            result = bootstrap(
                (drawn,),
                np.mean,
                n_resamples=resamples,
                batch=max(1, _BATCH_CELLS // n),
                confidence_level=CONFIDENCE,
                method="percentile",
                rng=np.random.default_rng(seed),
            )
            interval = result.confidence_interval
            low, high, method = float(interval.low), float(interval.high), "bootstrap"
    return MeanTest(metric, n, a, b, low, high, seed, resamples, method)
