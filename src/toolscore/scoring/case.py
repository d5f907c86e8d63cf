"""Score cases against what the agent produced: one verdict per case, streamed, and a summary.

Every case is scored four ways in the same pass: by the rules, by exact JSON comparison with
the first plan, by the lowercase scorer (every string casefolded, omissions ignored), so
that the report shows what the rules changed, and as if the agent had done nothing, so that
it shows the cases that measure nothing (docs/formats.md, metrics). A case without an output
line fails (`toolscore.inputs.missing`), unless the run leaves such cases out (`missing="exclude"`).
"""

from __future__ import annotations

import itertools
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolscore.core.diagnosis import best_plan
from toolscore.core.model import MISSING, Call, Case, CaseResult, Mismatch, Trajectory
from toolscore.core.plans import names_match
from toolscore.core.values import json_equal, show
from toolscore.errors import CaseError
from toolscore.inputs.join import join_groups_by_id
from toolscore.inputs.missing import (
    IdSample,
    JoinTally,
    check_policy,
    missing_result,
    nothing_calls,
)
from toolscore.inputs.trials import TrialsTally, ordered_trials
from toolscore.specs.loading import SpecSet
from toolscore.stats.intervals import Rate as Rate  # noqa: PLC0414 - re-exported: it lived here
from toolscore.stats.intervals import clustered_se, normal_interval
from toolscore.stats.intervals import interval_json as interval_json  # noqa: PLC0414 - as Rate

if TYPE_CHECKING:
    from toolscore.rubrics.entries import RubricEntry
    from toolscore.rubrics.summary import RubricTally
    from toolscore.scoring.rubric_run import Pending, RubricRunner
    from toolscore.state import AnyEnvironment as Environment

DISAGREEMENT_IDS_KEPT = 10_000
"""How many ids of cases where a baseline and the rules disagree the summary keeps."""


def exact_baseline(plans: Sequence[Sequence[Call]], calls: Sequence[Call]) -> bool:
    """The naive scorer: the produced calls equal the first plan as parsed JSON, by position."""
    plan = plans[0] if plans else ()
    if len(plan) != len(calls):
        return False
    for index, e in enumerate(plan):
        p = calls[index]
        if e.name != p.name or p.args is None or _python_unequal(e.args, p.args):
            return False  # Python's == is coarser than JSON's, so unequal here is unequal
        if not json_equal(e.args, p.args):
            return False
    return True


def _python_unequal(a: Any, b: Any) -> bool:
    """`a != b` as Python compares (fast, in C); False, leaving it to `json_equal`, when the
    values are nested deeper than Python's comparison recurses."""
    try:
        return bool(a != b)
    except RecursionError:
        return False


def exact_difference(plans: Sequence[Sequence[Call]], calls: Sequence[Call]) -> str | None:
    """Why the exact baseline fails a case, in a few words (None when it passes)."""
    plan = plans[0] if plans else ()
    if len(plan) != len(calls):
        return f"{len(calls)} calls made, the first plan has {len(plan)}"
    for index, (e, p) in enumerate(zip(plan, calls, strict=True)):
        if e.name != p.name:
            return f"call {index} is {p.name!r}, the first plan has {e.name!r} there"
        if p.args is None:
            return f"call {index}: arguments could not be parsed"
        for key in sorted(set(e.args or {}) | set(p.args)):
            want, got = (e.args or {}).get(key, MISSING), p.args.get(key, MISSING)
            if want is MISSING or got is MISSING or not json_equal(want, got):
                return f"call {index} /{key}: {show(got)} where the plan has {show(want)}"
    return None


def agent_calls(case: Case, trajectory: Trajectory) -> tuple[Call, ...]:
    """The calls to score: those after the transcript's last user message, unless the case
    says `"score_turns": "all"` (a plain `calls` list is always scored whole)."""
    if trajectory.final_turn == 0 or case.extra.get("score_turns") == "all":
        return trajectory.calls
    return tuple(call for call in trajectory.calls if call.turn == trajectory.final_turn)


def score_case(specs: SpecSet, case: Case, trajectory: Trajectory) -> CaseResult:
    """The verdict on one case: best plan, pairing, mismatches, and the baselines (a case
    without an output line fails with `missing_output`)."""
    if trajectory.missing:
        return missing_result(case)
    calls = agent_calls(case, trajectory)
    linked = case.linked
    verdict = best_plan(specs.rules, specs.extra_ok, case.plans, calls, linked=linked)
    name_ok = verdict.passed or names_match(case.plans, calls, specs.extra_ok)
    # Under any rules a plan passes only with the tool names it calls for: when no plan's
    # names match, the lowercase scorer fails too, without being asked.
    lowercase = verdict.passed or (
        name_ok
        and best_plan(
            specs.lowercase_rules, specs.extra_ok, case.plans, calls, diagnose=False, linked=linked
        ).passed
    )
    mismatches, exact = verdict.mismatches, exact_baseline(case.plans, calls)
    if trajectory.unread:
        # What was not read may hold a call: no scorer can pass the case.
        mismatches += unread_mismatches(trajectory.unread)
        lowercase = exact = False
    return CaseResult(
        id=case.id,
        passed=verdict.passed and not trajectory.unread,
        kind=case.kind,
        plan=verdict.plan,
        mismatches=mismatches,
        baselines={"exact": exact, "lowercase": lowercase, "nothing": nothing_calls(case)},
        name_ok=name_ok,
        pairs=verdict.pairs,
        produced_calls=len(calls),
        missing_output=trajectory.missing,
        calls=calls,
        format=trajectory.format,
        notes=trajectory.notes,
        unread=trajectory.unread,
        trace=trajectory.trace,
        ignored=trajectory.ignored,
    )


def unread_mismatches(unread: Sequence[str]) -> tuple[Mismatch, ...]:
    """One `transcript_unread` mismatch for each part of a transcript its reader skipped."""
    return tuple(
        Mismatch("transcript_unread", message=f"not read from the transcript: {part}")
        for part in unread
    )


@dataclass
class Tally:
    """Pass/fail counts and mismatch codes for one tool or one argument."""

    passed: int = 0
    failed: int = 0
    extra: int = 0
    codes: Counter[str] = field(default_factory=Counter)

    def merge(self, other: Tally) -> None:
        """Add another tally's counts to this one."""
        self.passed += other.passed
        self.failed += other.failed
        self.extra += other.extra
        self.codes.update(other.codes)

    def to_json(self, top: int = 3) -> dict[str, Any]:
        """Counts, the most common mismatch codes, and the 95% interval of the pass rate
        passed / (passed + failed)."""
        data: dict[str, Any] = {"passed": self.passed, "failed": self.failed}
        if self.extra:
            data["extra"] = self.extra
        codes = self.codes.most_common(top) if self.codes else ()
        data["top_codes"] = [[code, count] for code, count in codes]
        data["ci95"] = interval_json(self.passed, self.passed + self.failed)
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
            "accuracy": round(self.passed / cases, 4) if cases else None,
            "accuracy_ci95": interval_json(self.passed, cases),
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

    def merge(self, other: OutcomeTally) -> None:
        """Add another tally's counts to this one."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

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


@dataclass
class Summary:
    """The metrics of a scoring run (docs/formats.md), each with its denominator."""

    cases: int = 0
    passed: int = 0
    name: Rate = field(default_factory=lambda: Rate(0, 0))
    arguments: Rate = field(default_factory=lambda: Rate(0, 0))
    abstention: Rate = field(default_factory=lambda: Rate(0, 0))
    missed_calls: int = 0
    missing_outputs: int = 0
    unmatched_outputs: int = 0
    unread_cases: int = 0
    """Cases whose transcript was not fully read (each failed with `transcript_unread`)."""
    unread_parts: int = 0
    """The transcript parts those cases left unread."""
    ignored_keys: Counter[str] = field(default_factory=Counter)
    """Keys of outputs lines that no reader uses, by how many lines had each."""
    baselines: dict[str, BaselineTally] = field(default_factory=dict)
    per_tool: dict[str, Tally] = field(default_factory=dict)
    per_argument: dict[str, Tally] = field(default_factory=dict)
    codes: Counter[str] = field(default_factory=Counter)
    outcomes: OutcomeTally | None = None
    """State and required-output verdicts, when the run replayed calls against a store."""
    clustered: ClusteredAccuracy | None = None
    """The clustered interval of the accuracy, when the run was asked for one."""
    rubrics: RubricTally | None = None
    """Rubric results, apart from every call metric, when the run scored rubrics."""
    trials: TrialsTally | None = None
    """Cases by trials read and passed, when some outputs line gave a `trial`."""
    join: JoinTally = field(default_factory=JoinTally)
    """The ids of cases without output and of outputs without case, and the missing policy."""

    @property
    def accuracy(self) -> float | None:
        """Passed cases over all cases."""
        return self.passed / self.cases if self.cases else None

    def to_dict(self) -> dict[str, Any]:
        """The `summary` block of the report JSON, as a dict (`orjson.dumps` makes it text)."""
        accuracy = self.accuracy
        return {
            "cases": self.cases,
            "passed": self.passed,
            "accuracy": None if accuracy is None else round(accuracy, 4),
            "accuracy_ci95": interval_json(self.passed, self.cases),
            **({"accuracy_clustered": self.clustered.to_json()} if self.clustered else {}),
            "name_accuracy": self.name.to_json(),
            "argument_accuracy": self.arguments.to_json(),
            "abstention_accuracy": self.abstention.to_json(),
            "missed_calls": self.missed_calls,
            "missing_outputs": self.missing_outputs,
            "unmatched_outputs": self.unmatched_outputs,
            **self.join.to_json(),
            "unread_cases": self.unread_cases,
            "unread_parts": self.unread_parts,
            "ignored_keys": dict(sorted(self.ignored_keys.items())),
            "baselines": {k: v.to_json(self.cases) for k, v in self.baselines.items()},
            "codes": dict(self.codes.most_common()),
            "per_tool": {k: v.to_json() for k, v in sorted(self.per_tool.items())},
            "per_argument": {k: v.to_json() for k, v in sorted(self.per_argument.items())},
            **({"state": self.outcomes.to_json()} if self.outcomes is not None else {}),
            **({"rubrics": self.rubrics.to_json()} if self.rubrics is not None else {}),
            **({"trials": self.trials.to_json()} if self.trials is not None else {}),
        }

    def to_json(self) -> dict[str, Any]:
        """Deprecated alias of `to_dict` (it returns a dict, not JSON text), kept for one
        release."""
        warnings.warn(
            "Summary.to_json() is deprecated: it returns a dict; call Summary.to_dict()",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.to_dict()


CLUSTER_TAGS = "tag"
"""`--cluster-by tag`: a case's cluster is its list of tags (cases with the same tags, in
any order, form one cluster)."""


def cluster_key(case: Case, field_name: str, source: str = "<cases>") -> bytes | None:
    """The key of `case`'s cluster under `--cluster-by field_name`: its tags (`tag`), its
    prompt (`prompt`), or the value of that top-level key of its line, as canonical JSON;
    None when the case lacks the field (null, or no tags), making it a cluster of its own."""
    if field_name == CLUSTER_TAGS:
        value: Any = sorted(case.tags) or None
    elif field_name == "prompt":
        value = case.prompt
    else:
        value = case.extra.get(field_name)
    if value is None:
        return None
    import orjson  # noqa: PLC0415 - only runs with --cluster-by

    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, RecursionError):
        raise CaseError(
            source, "nested too deep to be a cluster key", line=case.line, field=field_name
        ) from None


class SummaryBuilder:
    """Accumulates case results into a `Summary` in constant memory (but for capped id lists).

    It runs once per case, so it keeps plain counters and one tally object per tool and
    argument, made the first time the tool is met (a spec may hold hundreds of tools that a
    chunk of cases never calls), rather than building keys or counters per case.
    """

    def __init__(
        self,
        specs: SpecSet,
        cluster_by: str | None = None,
        source: str = "<cases>",
        missing: str = "fail",
    ) -> None:
        self._specs = specs
        self._cluster_by = cluster_by
        self._source = source
        self._clusters: dict[bytes, list[int]] = {}
        """Each cluster's [cases, passed], under `cluster_by`."""
        self._lone = [0, 0]
        """[cases, passed] of the cases lacking the field: each a cluster of its own."""
        self.cases = self.passed = self.missing = 0
        self.tool_cases = self.name_ok = self.missed_calls = 0
        self.abstention_n = self.abstention_ok = 0
        self.arg_n = self.arg_ok = 0
        self.unmatched_outputs = 0
        self.unread_cases = self.unread_parts = 0
        self.ignored_keys = Counter[str]()
        self._exact = BaselineTally()
        self._lowercase = BaselineTally()
        self._nothing = BaselineTally(tool_cases=IdSample())
        self._join = JoinTally(check_policy(missing))
        """Cases without output (under `exclude`, left out of every count) and outputs without
        case; `missing` below counts the former only under `fail`."""
        self._outcomes: OutcomeTally | None = None
        self._trials = TrialsTally()
        """The cases counted by `add_case` one by one (trials, or an outcome judged)."""
        self._tallied = [0, 0, 0, 0]
        """Of those: entries, entries passed, missing outputs, missing outputs passed; the
        other cases (one line, no trial, no outcome) are tallied from the totals at the end."""
        self.missing_passed = 0
        self._codes = Counter[str]()
        self._tools: dict[str, Tally] = {}
        self._args: dict[str, Tally] = {}
        self._arg_tallies: dict[str, dict[str, Tally]] = {}
        self.rubrics: RubricTally | None = None
        """Rubric results (`toolscore.scoring.rubric_run`), set by the runs that score rubrics."""

    def _tallies_of(self, tool: str) -> dict[str, Tally]:
        """The tallies of a spec tool's compared arguments, made on first use."""
        tallies = self._arg_tallies.get(tool)
        if tallies is None:
            tallies = self._arg_tallies[tool] = {
                arg: self._args.setdefault(f"{tool}.{arg}", Tally())
                for arg, rule in self._specs.tools[tool].args.args.items()
                if rule.compared
            }
        return tallies

    def add(self, case: Case, result: CaseResult) -> None:
        """Count one case: its verdict, metrics, per-tool and per-argument tallies (a case
        without an output line under the `exclude` policy: only its id, apart)."""
        passed = result.passed
        if result.missing_output:
            self._join.missing.add(result.id)
            if self._join.policy == "exclude":
                return
            self.missing += 1
            self.missing_passed += passed
        self.cases += 1
        self.passed += passed
        if result.unread:
            self.unread_cases += 1
            self.unread_parts += len(result.unread)
        if result.ignored:
            self.ignored_keys.update(result.ignored)
        if self._cluster_by is not None:
            self._add_to_cluster(case, passed)
        self._exact.add(result.id, result.baselines["exact"], passed)
        self._lowercase.add(result.id, result.baselines["lowercase"], passed)
        self._nothing.add(result.id, result.baselines["nothing"], passed, result.kind)
        if result.kind == "abstention":
            self.abstention_n += 1
            self.abstention_ok += passed
        else:
            self.tool_cases += 1
            self.name_ok += result.name_ok
            if not passed and result.produced_calls == 0 and not result.missing_output:
                self.missed_calls += 1
        if result.state is not None:
            if self._outcomes is None:
                self._outcomes = OutcomeTally()
            self._outcomes.add(passed, result.state)
        plan = case.plans[result.plan] if result.plan is not None else ()
        if passed:
            self._tally_passed(plan, result)
        else:
            self._tally_failed(plan, result)

    def add_case(self, case: Case, results: Sequence[CaseResult], lines: int) -> None:
        """Count one case's trials (`results`, one per outputs line, or the one result of a
        case without output, `lines` 0): each as a case, and the case in the trials tally."""
        first = results[0]
        if first.missing_output and self._join.policy == "exclude":
            self.add(case, first)  # left out: nothing else of the case is counted
            return
        if len(results) == 1 and first.trial is None and first.state is None:
            self.add(case, first)  # the usual case: tallied from the totals (`_trials_tally`)
            return
        for result in results:
            self.add(case, result)
        if first.trial is not None:
            self._trials.seen = True
        passed = sum(r.passed for r in results)
        tallied = self._tallied
        tallied[0] += len(results)
        tallied[1] += passed
        if first.missing_output:
            tallied[2] += 1
            tallied[3] += first.passed
        outcomes = [r.state.outcome_passed for r in results if r.state is not None]
        checked = [o for o in outcomes if o is not None]
        self._trials.add(lines, passed, sum(checked) if checked else None)

    def _trials_tally(self) -> TrialsTally | None:
        """The trials tally with the cases `add_case` did not count one by one (one line or
        none, no trial, no outcome judged), from the totals; None for a run without trials."""
        if not self._trials.seen:
            return None
        tally = TrialsTally(exclude_missing=self._join.policy == "exclude")
        tally.merge(self._trials)
        entries, passed, missing, missing_passed = self._tallied
        plain_missing = self.missing - missing
        plain_missing_passed = self.missing_passed - missing_passed
        plain_lines = self.cases - entries - plain_missing
        plain_passed = self.passed - passed - plain_missing_passed
        for key, count in (
            ((0, 0, None), plain_missing - plain_missing_passed),
            ((0, 1, None), plain_missing_passed),
            ((1, 0, None), plain_lines - plain_passed),
            ((1, 1, None), plain_passed),
        ):
            if count:
                tally.counts[key] += count
        return tally

    def _add_to_cluster(self, case: Case, passed: bool) -> None:
        key = cluster_key(case, self._cluster_by or "", self._source)
        counts = self._lone if key is None else self._clusters.setdefault(key, [0, 0])
        counts[0] += 1
        counts[1] += passed

    def _clustered(self) -> ClusteredAccuracy | None:
        if self._cluster_by is None:
            return None
        lone_n, lone_passed = self._lone
        counts = itertools.chain(
            ((n, p) for n, p in self._clusters.values()),
            itertools.repeat((1, 1), lone_passed),
            itertools.repeat((1, 0), lone_n - lone_passed),
        )
        clusters = len(self._clusters) + lone_n
        return ClusteredAccuracy.of(self._cluster_by, counts, clusters, self.passed, self.cases)

    def _tally_passed(self, plan: Sequence[Call], result: CaseResult) -> None:
        calls = result.calls
        self.arg_n += len(result.pairs)
        self.arg_ok += len(result.pairs)
        for i, j in result.pairs:
            expected, produced = plan[i], calls[j]
            self._tool(expected.name).passed += 1
            tallies = self._tallies_of(expected.name)
            for name in expected.args or ():
                tally = tallies.get(name)
                if tally is not None:
                    tally.passed += 1
            for name in produced.args or ():
                if name not in (expected.args or ()):
                    tally = tallies.get(name)
                    if tally is not None:
                        tally.passed += 1

    def _tally_failed(self, plan: Sequence[Call], result: CaseResult) -> None:
        calls = result.calls
        by_pair: dict[tuple[int | None, int | None], list[Mismatch]] = {}
        for mismatch in result.mismatches:
            self._codes[mismatch.code] += 1
            by_pair.setdefault((mismatch.plan_call, mismatch.call), []).append(mismatch)
        for i, j in result.pairs:
            expected, produced = plan[i], calls[j]
            found = by_pair.get((i, j), ())
            self.arg_n += 1
            self.arg_ok += not found
            tool = self._tool(expected.name)
            if found:
                tool.failed += 1
                tool.codes.update(m.code for m in found)
            else:
                tool.passed += 1
            self._tally_arguments(expected, produced, found)
        for mismatch in result.mismatches:
            if mismatch.code in ("missing_call", "wrong_tool") and mismatch.plan_call is not None:
                tool = self._tool(plan[mismatch.plan_call].name)
                tool.failed += 1
                tool.codes[mismatch.code] += 1
            if (
                mismatch.code in ("extra_call", "wrong_tool", "unknown_tool")
                and mismatch.call is not None
            ):
                tool = self._tool(calls[mismatch.call].name)
                tool.extra += 1
                if mismatch.code != "wrong_tool":
                    tool.codes[mismatch.code] += 1

    def _tally_arguments(self, expected: Call, produced: Call, found: Sequence[Mismatch]) -> None:
        if produced.args is None:
            return  # arguments that could not be read are judged by no argument's tally
        tallies = self._tallies_of(expected.name)
        failing = {m.path[0]: m.code for m in found if m.path}
        names = set(expected.args or ())
        names.update(produced.args)
        for name in names:
            tally = tallies.get(name)
            if tally is None:
                if name not in failing:
                    continue  # a text or ignored argument: never compared
                tally = self._args.setdefault(f"{expected.name}.{name}", Tally())
            code = failing.get(name)
            if code is None:
                tally.passed += 1
            else:
                tally.failed += 1
                tally.codes[code] += 1

    def merge(self, other: SummaryBuilder) -> None:
        """Add the tallies of the cases that came after this builder's (a worker's chunk)."""
        for name in (
            "cases", "passed", "missing", "missing_passed", "tool_cases", "name_ok", "missed_calls",
            "abstention_n", "abstention_ok", "arg_n", "arg_ok", "unread_cases", "unread_parts",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self._exact.merge(other._exact)
        self._lowercase.merge(other._lowercase)
        self._nothing.merge(other._nothing)
        self._join.merge(other._join)
        for cluster, (n, passed) in other._clusters.items():
            counts = self._clusters.setdefault(cluster, [0, 0])
            counts[0] += n
            counts[1] += passed
        self._lone[0] += other._lone[0]
        self._lone[1] += other._lone[1]
        if other._outcomes is not None:
            if self._outcomes is None:
                self._outcomes = OutcomeTally()
            self._outcomes.merge(other._outcomes)
        self._codes.update(other._codes)
        self.ignored_keys.update(other.ignored_keys)
        self._trials.merge(other._trials)
        self._tallied = [a + b for a, b in zip(self._tallied, other._tallied, strict=True)]
        for name, tally in other._tools.items():
            self._tool(name).merge(tally)
        for key, tally in other._args.items():
            self._args.setdefault(key, Tally()).merge(tally)
        if other.rubrics is not None:
            if self.rubrics is None:
                self.rubrics = type(other.rubrics)()
            self.rubrics.merge(other.rubrics)

    def set_unmatched(self, ids: Sequence[str], count: int | None = None) -> None:
        """The ids of the output lines that match no case, in file order (`count` of them,
        when `ids` holds only the first ones)."""
        sample = self._join.unmatched = IdSample()
        sample.extend(ids)
        if count is not None:
            sample.count = count
        self.unmatched_outputs = sample.count

    @property
    def missing_policy(self) -> str:
        """What a case without an output line is: `fail` or `exclude` (`inputs.missing`)."""
        return self._join.policy

    def _tool(self, name: str) -> Tally:
        tally = self._tools.get(name)
        if tally is None:
            tally = self._tools[name] = Tally()
        return tally

    def _baselines(self) -> dict[str, BaselineTally]:
        return {"exact": self._exact, "lowercase": self._lowercase, "nothing": self._nothing}

    def finish(self) -> Summary:
        """The summary of everything added so far (tools and arguments never seen left out)."""
        if self.unmatched_outputs != self._join.unmatched.count:  # set as a count alone
            self._join.unmatched.count = self.unmatched_outputs
        return Summary(
            cases=self.cases,
            passed=self.passed,
            name=Rate(self.name_ok, self.tool_cases),
            arguments=Rate(self.arg_ok, self.arg_n),
            abstention=Rate(self.abstention_ok, self.abstention_n),
            missed_calls=self.missed_calls,
            missing_outputs=self._join.missing.count,
            unmatched_outputs=self.unmatched_outputs,
            unread_cases=self.unread_cases,
            unread_parts=self.unread_parts,
            ignored_keys=self.ignored_keys.copy(),
            baselines=self._baselines(),
            per_tool={k: v for k, v in self._tools.items() if v.passed or v.failed or v.extra},
            per_argument={k: v for k, v in self._args.items() if v.passed or v.failed},
            codes=self._codes,
            outcomes=self._outcomes,
            clustered=self._clustered(),
            rubrics=self.rubrics,
            trials=self._trials_tally(),
            join=self._join,
        )


def score_trials(
    specs: SpecSet,
    case: Case,
    outputs: Sequence[Trajectory],
    env: Environment | None = None,
    sources: tuple[str, str] = ("<cases>", "<outputs>"),
) -> list[CaseResult]:
    """Score one case against each of its outputs (its trials, in trial order; none: one
    missing output scored as no call). Each trial's result carries its `trial` and, when
    trials are given, how many the case has and how many passed on calls."""
    if len(outputs) == 1 and outputs[0].trial is None:  # the usual case, kept cheap
        result = score_case(specs, case, outputs[0])
        if env is not None:
            result = with_state(env, case, outputs[0], result, sources[0])
        return [result]
    if not outputs:
        trajectories = [Trajectory(case.id, (), missing=True)]
    else:
        trajectories = ordered_trials(outputs, sources[1])
    results = []
    for trajectory in trajectories:
        result = score_case(specs, case, trajectory)
        if env is not None:
            result = with_state(env, case, trajectory, result, sources[0])
        results.append(result)
    if trajectories[0].trial is None:
        return results
    counts = (len(results), sum(r.passed for r in results))
    return [
        r._replace(trial=t.trial, trials=counts) for r, t in zip(results, trajectories, strict=True)
    ]


class Scoring:
    """A scoring run: iterate it for case results as they are decided, then ask for `summary()`."""

    def __init__(
        self,
        specs: SpecSet,
        cases: Iterable[Case],
        outputs: Iterable[Trajectory],
        sources: tuple[str, str] = ("<cases>", "<outputs>"),
        env: Environment | None = None,
        cluster_by: str | None = None,
        rubrics: RubricRunner | None = None,
        rubric_tally: RubricTally | None = None,
        missing: str = "fail",
    ) -> None:
        self.specs = specs
        self.env = env
        self.sources = sources
        self.unmatched_output_ids: list[str] = []
        self._builder = SummaryBuilder(specs, cluster_by, sources[0], missing)
        self._groups = join_groups_by_id(
            cases,
            outputs,
            lambda case: (case.id, case.line),
            lambda trajectory: (trajectory.case_id, trajectory.line),
            self._unmatched,
            sources,
        )
        self._done = False
        self._rubrics = rubrics
        self._entries: list[tuple[str, list[RubricEntry]]] = []
        self._builder.rubrics = rubric_tally if rubrics is not None else None

    def _unmatched(self, ids: list[str]) -> None:
        self.unmatched_output_ids = ids
        self._builder.set_unmatched(ids)

    def __iter__(self) -> Iterator[CaseResult]:
        """The case results in case order; under the `exclude` policy, without the cases that
        have no output line (the summary counts and names them)."""
        specs, builder, env = self.specs, self._builder, self.env
        exclude = builder.missing_policy == "exclude"
        for case, outputs in self._groups:
            results = score_trials(specs, case, outputs, env, self.sources)
            builder.add_case(case, results, len(outputs))
            if exclude and not outputs:
                continue
            if self._rubrics is not None:
                self._run_rubrics(case, results)
            yield from results
        self._done = True

    def _run_rubrics(self, case: Case, results: Sequence[CaseResult]) -> None:
        """Run the rubrics on each result (each trial's) and count them; keep the entries of
        a case without trials (the store keys rubric results by case id, as `score` does)."""
        assert self._rubrics is not None
        for result in results:
            entries = self._rubrics.run(case, result, self._builder.rubrics)
            if entries and result.trial is None:
                self._entries.append((case.id, entries))

    def take_rubrics(self) -> list[tuple[str, list[RubricEntry]]]:
        """The rubric entries (by case id) of the cases yielded since the last call: the
        deterministic ones, and the unscored ones of remote rubrics."""
        taken, self._entries = self._entries, []
        return taken

    @property
    def pending(self) -> list[Pending]:
        """The targets waiting for remote rubrics (`rubrics.run.run_remote`), once iterated."""
        return [] if self._rubrics is None else self._rubrics.pending

    def add_rubrics(self, found: Mapping[str, Sequence[RubricEntry]]) -> None:
        """Count the remote rubrics' entries (by case id) in the summary."""
        tally = self._builder.rubrics
        if tally is None:
            return
        for entries in found.values():
            for entry in entries:
                tally.add(entry)

    def summary(self) -> Summary:
        """Finish the run (scoring whatever was not iterated yet) and return its summary."""
        if not self._done:
            for _ in self:
                pass
        return self._builder.finish()


def score(
    specs: SpecSet,
    cases: Iterable[Case],
    outputs: Iterable[Trajectory],
    sources: tuple[str, str] = ("<cases>", "<outputs>"),
    env: Environment | None = None,
    cluster_by: str | None = None,
    rubrics: RubricRunner | None = None,
    rubric_tally: RubricTally | None = None,
    missing: str = "fail",
) -> Scoring:
    """Score `cases` against `outputs` (joined by id) under `specs`, lazily and in one pass.

    `sources` names the two inputs in error messages (duplicate ids). With `env`, each case
    is also replayed against the environment's store and judged on its final state. With
    `cluster_by`, the summary also gives the accuracy's clustered interval (`cluster_key`).
    With `rubrics` (a `RubricRunner` of `specs`), each case's rubrics are run apart from its
    verdict and counted in `rubric_tally`, the summary's `rubrics` block: see
    `Scoring.take_rubrics`, `pending` and `add_rubrics`. A case without an output line fails
    with `missing_output`; with `missing="exclude"` (a partial run) it is left out of the
    results and of every rate, and the summary counts and names it instead.
    """
    return Scoring(specs, cases, outputs, sources, env, cluster_by, rubrics, rubric_tally, missing)


def outcome_passed(result: CaseResult) -> bool:
    """Whether a case passed on calls and, when its state was judged, on state and outputs."""
    state = result.state
    if state is None:
        return result.passed
    return result.passed and state.passed is not False and state.outputs_passed is not False


def with_state(
    env: Environment, case: Case, trajectory: Trajectory, result: CaseResult, source: str
) -> CaseResult:
    """`result` with the outcome verdict: every call of the trajectory (all turns change the
    store) replayed against `env`, the final state compared with the case's goal (a case
    without an output line fails each check, unreplayed). Where the case has outcome checks,
    they decide its do-nothing baseline too (`state.unreplayed.nothing_outcome`)."""
    from toolscore.state import check_state  # noqa: PLC0415 - only runs with --env replay
    from toolscore.state.unreplayed import missing_state, nothing_outcome  # noqa: PLC0415

    if trajectory.missing:
        state = missing_state(case)
    else:
        state = check_state(
            env, case, trajectory.calls, trajectory.response, source=source, said=trajectory.said
        )
    nothing = nothing_outcome(env, case, source)
    if nothing is None:
        return result._replace(state=state)
    return result._replace(state=state, baselines={**result.baselines, "nothing": nothing})
