"""Trials: several attempts at one case, and the pass^k and pass@k metrics over them.

An outputs line may carry `trial` (an integer or a non-empty string): several lines with the
same case id and different trials are each scored. Per case, with c of its n trials a
success, the unbiased estimators (Chen et al. 2021 for pass@k; Yao et al. 2024, tau-bench,
for pass^k) are

- pass^k = C(c, k) / C(n, k): the chance that k trials drawn without replacement all succeed;
- pass@k = 1 - C(n - c, k) / C(n, k): the chance that at least one of them does.

The run's n is the largest number of trials any case has; a case with fewer lines has its
absent trials counted as failures (fail closed, as tau-bench does), unless the run leaves
missing outputs out (`missing="exclude"`): then each case's estimators use its own number of
trials, and the average at k is over the cases with at least k trials. The summary averages
each estimator over cases, with a 95% normal interval over the per-case estimates (cases
independent, a case's trials not: the clustered interval of Miller 2024, "Adding Error Bars
to Evals", with the case as the cluster).

Only counts are kept: how many cases had each (lines, calls passed, outcome passed), so the
tally merges across workers and its memory does not grow with the run.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolscore.core.model import Trajectory
from toolscore.core.values import show
from toolscore.errors import OutputError
from toolscore.stats.intervals import normal_interval

MAX_TRIAL = 2**63 - 1
"""The largest integer `trial` (the store and other readers keep 64-bit integers)."""


def read_trial(data: Mapping[str, Any], source: str, line: int | None) -> int | str | None:
    """The `trial` of an outputs line: an integer or a non-empty string; None when absent."""
    if "trial" not in data or data["trial"] is None:
        return None
    trial = data["trial"]
    if type(trial) is int and -MAX_TRIAL <= trial <= MAX_TRIAL:
        return trial
    if type(trial) is str and trial:
        return trial
    raise OutputError(
        source,
        f"must be an integer or a non-empty string, got {show(trial)}",
        line=line,
        field="trial",
    )


def _order(trial: int | str | None) -> tuple[int, int, str]:
    """Integers first, by value, then strings, by code point."""
    if isinstance(trial, int):
        return (0, trial, "")
    return (1, 0, trial or "")


def ordered_trials(group: Sequence[Trajectory], source: str = "<outputs>") -> list[Trajectory]:
    """The outputs of one case in trial order, each (id, trial) once.

    Several lines for one case are trials only when each says which: a line without `trial`
    beside another line of its case is a duplicate output (as without trials), and so is a
    line repeating a trial of its case. Either error names the later line.
    """
    if len(group) == 1:
        return list(group)
    in_file = sorted(group, key=lambda t: t.line or 0)
    if all(t.trial is None for t in in_file):  # as without trials: the second line is refused
        raise OutputError(
            source, f"duplicate output for case {in_file[1].case_id!r}", line=in_file[1].line,
            field="id",
        )  # fmt: skip
    seen: set[tuple[type, int | str]] = set()
    for trajectory in in_file:
        trial = trajectory.trial
        if trial is None:
            raise OutputError(
                source,
                f"duplicate output for case {trajectory.case_id!r}: other lines of this case "
                "give a `trial`, and several outputs of one case must each give theirs",
                line=trajectory.line,
                field="trial",
            )
        key = (type(trial), trial)
        if key in seen:
            raise OutputError(
                source,
                f"duplicate output for case {trajectory.case_id!r} trial {show(trial)}",
                line=trajectory.line,
                field="trial",
            )
        seen.add(key)
    return sorted(group, key=lambda t: _order(t.trial))


def pass_hat(c: int, n: int, k: int) -> float:
    """pass^k of one case: C(c, k) / C(n, k), the chance that k of its n trials, drawn
    without replacement, all succeed (k <= n)."""
    return math.comb(c, k) / math.comb(n, k)


def pass_at(c: int, n: int, k: int) -> float:
    """pass@k of one case: 1 - C(n - c, k) / C(n, k), the chance that at least one of k of
    its n trials, drawn without replacement, succeeds (k <= n)."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean_interval(values: Iterable[tuple[float, int]]) -> tuple[float, list[float] | None]:
    """The mean of per-case estimates given as (value, cases with it), and its 95% normal
    interval mean ± 1.96 s / sqrt(N) (s the sample standard deviation), clipped to [0, 1];
    no interval for a single case."""
    pairs = list(values)
    count = sum(w for _, w in pairs)
    mean = math.fsum(v * w for v, w in pairs) / count
    if count < 2:
        return mean, None
    variance = math.fsum(w * (v - mean) ** 2 for v, w in pairs) / (count - 1)
    low, high = normal_interval(mean, math.sqrt(variance / count))
    return mean, [round(low, 4), round(high, 4)]


def _curve(counts: Mapping[tuple[int, int], int], n: int, own: bool = False) -> dict[str, Any]:
    """pass^k and pass@k for k = 1..n over cases given as {(c, n_i): cases}: each case's
    absent trials failed (out of n), or, with `own`, each case out of its own n_i and the
    average at k over the cases with n_i >= k (each entry then says how many, `cases`)."""
    hat: list[dict[str, Any]] = []
    at: list[dict[str, Any]] = []
    for k in range(1, n + 1):
        for estimator, out in ((pass_hat, hat), (pass_at, at)):
            if not own:
                values = [(estimator(c, n, k), w) for (c, _), w in counts.items()]
                mean, bounds = mean_interval(values)
                out.append({"k": k, "value": round(mean, 4), "ci95": bounds})
                continue
            values = [(estimator(c, m, k), w) for (c, m), w in counts.items() if m >= k]
            mean, bounds = mean_interval(values)
            cases = sum(w for _, w in values)
            out.append({"k": k, "value": round(mean, 4), "ci95": bounds, "cases": cases})
    return {"cases": sum(counts.values()), "pass_hat_k": hat, "pass_at_k": at}


class TrialsTally:
    """How many cases had each (trials read, trials passed on calls, trials passed on
    outcome), and whether any outputs line gave a `trial` at all."""

    def __init__(self, exclude_missing: bool = False) -> None:
        self.seen = False
        """True once an outputs line gave a `trial`: only then does the summary show trials."""
        self.counts: Counter[tuple[int, int, int | None]] = Counter()
        self.exclude_missing = exclude_missing
        """Absent trials are left out (`missing="exclude"`), not counted as failures."""

    def add(self, lines: int, passed: int, outcome: int | None) -> None:
        """One case: its outputs lines (0 for a missing output), how many passed on calls,
        and how many passed their outcome checks (None when the case has none)."""
        self.counts[(lines, passed, outcome)] += 1

    @property
    def missing_trials(self) -> int:
        """The absent trials: for each case, how many fewer lines it has than the most any
        case has."""
        n = max((lines for lines, _, _ in self.counts), default=0)
        return sum((n - lines) * cases for (lines, _, _), cases in self.counts.items())

    def merge(self, other: TrialsTally) -> None:
        """Add another tally's cases (a worker's chunk) to this one."""
        self.seen = self.seen or other.seen
        self.counts.update(other.counts)

    def to_json(self) -> dict[str, Any]:
        """The summary's `trials` block."""
        n = max((lines for lines, _, _ in self.counts), default=0)
        n = max(n, 1)
        calls: Counter[tuple[int, int]] = Counter()
        outcome: Counter[tuple[int, int]] = Counter()
        missing = 0
        for (lines, passed, state), cases in self.counts.items():
            calls[(passed, lines)] += cases
            missing += (n - lines) * cases
            if state is not None:
                outcome[(state, lines)] += cases
        own = self.exclude_missing
        block: dict[str, Any] = {
            "n": n,
            "cases": sum(self.counts.values()),
            "missing_trials": missing,
            **({"missing_trials_excluded": True} if own else {}),
            "interval": "normal",
            "calls": _curve(calls, n, own) if calls else None,
        }
        if outcome:
            block["state"] = _curve(outcome, n, own)
        block["distribution"] = [
            {"trials": lines, "passed": passed, "state_passed": state, "cases": cases}
            for (lines, passed, state), cases in sorted(
                self.counts.items(), key=lambda item: (item[0][0], item[0][1], item[0][2] or -1)
            )
        ]
        return block

    @classmethod
    def from_json(cls, block: Mapping[str, Any]) -> TrialsTally:
        """The tally whose `to_json()` is `block` (a stored run's summary)."""
        tally = cls(exclude_missing=bool(block.get("missing_trials_excluded")))
        tally.seen = True
        for row in block["distribution"]:
            tally.counts[(row["trials"], row["passed"], row["state_passed"])] += row["cases"]
        return tally
