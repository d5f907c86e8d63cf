"""The tallies a run's summary is made of: pass/fail counts per tool and per argument, each
baseline beside the rules, state beside calls, and the clustered interval of the accuracy.
Each tally merges, so that workers' chunks add up to the same summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from toolscore.inputs.missing import IdSample
from toolscore.stats.intervals import (
    Rate,
    clustered_se,
    interval_json,
    normal_interval,
    ratio,
    rounded,
)

MOST_FAILED_CHECKS = 10
"""How many state checks the summary's `state_checks_most_failed` lists."""
DISAGREEMENT_IDS_KEPT = 10_000
"""How many ids of cases where a baseline and the rules disagree the summary keeps."""


def accuracy_json(passed: int, cases: int) -> dict[str, Any]:
    """`accuracy`, passed / cases rounded as the report rounds rates (None for no case), and
    its 95% interval `accuracy_ci95`: the run's and each baseline's."""
    return {
        "accuracy": rounded(ratio(passed, cases)),
        "accuracy_ci95": interval_json(passed, cases),
    }


def empty_counter() -> Counter[str]:
    """A new, empty Counter, made without `Counter.__init__` (a Python-level call to
    `update`): a summary makes one per tool and argument it meets, which on a file with a
    tool per case (BFCL's) is several per case, and most stay empty."""
    return Counter.__new__(Counter)


@dataclass
class Tally:
    """Pass/fail counts and mismatch codes for one tool or one argument."""

    passed: int = 0
    failed: int = 0
    extra: int = 0
    codes: Counter[str] = field(default_factory=empty_counter)

    def merge(self, other: Tally) -> None:
        """Add another tally's counts to this one."""
        self.passed += other.passed
        self.failed += other.failed
        self.extra += other.extra
        self.codes.update(other.codes)

    def to_json(self, top: int = 3) -> dict[str, Any]:
        """Counts, the most common mismatch codes, and the 95% interval of the pass rate
        passed / (passed + failed)."""
        passed, failed = self.passed, self.failed
        if not self.extra and not self.codes:  # most tallies of a run: built in one go
            return {
                "passed": passed,
                "failed": failed,
                "top_codes": [],
                "ci95": interval_json(passed, passed + failed),
            }
        data: dict[str, Any] = {"passed": passed, "failed": failed}
        if self.extra:
            data["extra"] = self.extra
        codes = self.codes
        data["top_codes"] = [[code, n] for code, n in codes.most_common(top)] if codes else []
        data["ci95"] = interval_json(passed, passed + failed)
        return data


@dataclass
class BaselineTally:
    """How a baseline scorer did, and where it disagreed with the rules."""

    passed: int = 0
    only_rules_pass: int = 0
    only_baseline_passes: int = 0
    ids: list[str] = field(default_factory=list)
    tool_cases: IdSample | None = None
    """The tool cases the baseline passes, for the do-nothing baseline (None for others)."""

    def add(self, case_id: str, baseline: bool, rules: bool, kind: str = "tool") -> None:
        """Count one case's baseline verdict beside the rules' verdict."""
        self.passed += baseline
        if baseline and self.tool_cases is not None and kind != "abstention":
            self.tool_cases.add(case_id)
        if baseline != rules:
            if rules:
                self.only_rules_pass += 1
            else:
                self.only_baseline_passes += 1
            if len(self.ids) < DISAGREEMENT_IDS_KEPT:
                self.ids.append(case_id)

    def merge(self, other: BaselineTally) -> None:
        """Add the tally of the cases that came after this one's."""
        self.passed += other.passed
        self.only_rules_pass += other.only_rules_pass
        self.only_baseline_passes += other.only_baseline_passes
        self.ids.extend(other.ids[: DISAGREEMENT_IDS_KEPT - len(self.ids)])
        if self.tool_cases is not None and other.tool_cases is not None:
            self.tool_cases.merge(other.tool_cases)

    def to_json(self, cases: int) -> dict[str, Any]:
        """Passes, accuracy and disagreements with the rules, ids included (capped)."""
        disagreements = self.only_rules_pass + self.only_baseline_passes
        tools = self.tool_cases
        return {
            "passed": self.passed,
            **accuracy_json(self.passed, cases),
            "disagreements": disagreements,
            "only_rules_pass": self.only_rules_pass,
            "only_baseline_passes": self.only_baseline_passes,
            "disagreement_ids": self.ids,
            "disagreement_ids_truncated": disagreements > len(self.ids),
            **(
                {
                    "tool_cases_passed": tools.count,
                    "tool_case_ids": tools.ids,
                    "tool_case_ids_truncated": tools.truncated,
                }
                if tools is not None
                else {}
            ),
        }


@dataclass
class OutcomeTally:
    """State accuracy beside call accuracy, and the cases where the two disagree."""

    state_n: int = 0
    state_ok: int = 0
    outputs_n: int = 0
    outputs_ok: int = 0
    calls_passed_state_failed: int = 0
    calls_failed_state_passed: int = 0
    checks: dict[str, list[int]] = field(default_factory=dict)
    """Per state check name: [passed, judged], over the cases with a check of that name."""

    def add(self, calls_passed: bool, state: Any) -> None:
        """Count one case's state verdict (a `state.StateVerdict`) beside its call verdict."""
        if state.passed is not None:
            self.state_n += 1
            self.state_ok += state.passed
            if calls_passed and not state.passed:
                self.calls_passed_state_failed += 1
            elif state.passed and not calls_passed:
                self.calls_failed_state_passed += 1
        if state.outputs_passed is not None:
            self.outputs_n += 1
            self.outputs_ok += state.outputs_passed
        for check in state.checks:
            counts = self.checks.setdefault(check.name, [0, 0])
            counts[0] += check.passed
            counts[1] += 1

    def merge(self, other: OutcomeTally) -> None:
        """Add another tally's counts to this one."""
        for name in self.__dataclass_fields__:
            if name != "checks":
                setattr(self, name, getattr(self, name) + getattr(other, name))
        for name, (passed, n) in other.checks.items():
            counts = self.checks.setdefault(name, [0, 0])
            counts[0] += passed
            counts[1] += n

    def check_rates(self) -> dict[str, Rate]:
        """Each state check's pass rate over the cases that have it, by name."""
        return {name: Rate(passed, n) for name, (passed, n) in sorted(self.checks.items())}

    def most_failed(self, limit: int = MOST_FAILED_CHECKS) -> list[tuple[str, Rate]]:
        """The checks that failed somewhere: most failures first, then the lowest pass rate,
        then by name; at most `limit`."""
        failing = [
            (name, rate) for name, rate in self.check_rates().items() if rate.passed < rate.n
        ]
        failing.sort(key=lambda item: (item[1].passed - item[1].n, item[1].value, item[0]))
        return failing[:limit]

    def checks_json(self) -> dict[str, Any]:
        """The summary's `state_checks` and `state_checks_most_failed` (none without checks)."""
        if not self.checks:
            return {}
        return {
            "state_checks": {name: rate.to_json() for name, rate in self.check_rates().items()},
            "state_checks_most_failed": [
                {"name": name, "failed": rate.n - rate.passed, "n": rate.n}
                for name, rate in self.most_failed()
            ],
        }

    def to_json(self) -> dict[str, Any]:
        """The `state` block of the summary."""
        return {
            "state_accuracy": Rate(self.state_ok, self.state_n).to_json(),
            "required_outputs": Rate(self.outputs_ok, self.outputs_n).to_json(),
            "calls_passed_state_failed": self.calls_passed_state_failed,
            "calls_failed_state_passed": self.calls_failed_state_passed,
        }


@dataclass(frozen=True)
class ClusteredAccuracy:
    """The interval of the case accuracy when cases come in clusters (`--cluster-by`): the
    clustered standard error (Miller 2024, "Adding Error Bars to Evals") and accuracy ±
    1.96 of it, clipped to [0, 1]. A case lacking the field is a cluster of its own."""

    field: str
    clusters: int
    se: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(
        cls, field: str, counts: Iterable[tuple[int, int]], clusters: int, passed: int, n: int
    ) -> ClusteredAccuracy:
        """From each cluster's (n, passed) counts and the run's totals."""
        se = clustered_se(counts, passed, n)
        if se is None:
            return cls(field, clusters, None, None, None)
        low, high = normal_interval(passed / n, se)
        return cls(field, clusters, se, low, high)

    def to_json(self) -> dict[str, Any]:
        """The `accuracy_clustered` block of the summary."""
        bounds = None if self.low is None or self.high is None else [self.low, self.high]
        return {
            "field": self.field,
            "clusters": self.clusters,
            "se": None if self.se is None else round(self.se, 6),
            "ci95": None if bounds is None else [round(b, 4) for b in bounds],
        }
