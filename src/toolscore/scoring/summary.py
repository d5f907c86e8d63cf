"""A run's summary (docs/formats.md, metrics), and the builder that counts case results into
it as they come, in constant memory; builders of workers' chunks merge into one."""

from __future__ import annotations

import itertools
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolscore.core.model import Call, Case, CaseResult, Mismatch
from toolscore.errors import CaseError
from toolscore.inputs.missing import IdSample, JoinTally, check_policy
from toolscore.inputs.trials import TrialsTally
from toolscore.scoring.forbidden import ForbiddenTally
from toolscore.scoring.partial_tally import PartialTally
from toolscore.scoring.rates import CallRates
from toolscore.scoring.tallies import (
    BaselineTally,
    ClusteredAccuracy,
    OutcomeTally,
    Tally,
    accuracy_json,
)
from toolscore.scoring.turn_tally import TurnTally
from toolscore.scoring.variant_tally import VariantTally
from toolscore.specs.loading import SpecSet
from toolscore.stats.intervals import Rate, ratio
from toolscore.stats.records import fields_json

if TYPE_CHECKING:
    from toolscore.rubrics.summary import RubricTally


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
    call_rates: CallRates | None = None
    """The named call rates (`unknown_tool_rate`, ...); None for a stored run older than them."""
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
    forbidden: ForbiddenTally = field(default_factory=ForbiddenTally)
    """Forbidden calls (`forbidden_call`): the critical failures, apart from the accuracy."""
    partial: dict[str, Any] | None = None
    """The `partial` block (partial credit: micro and macro rates, per tool), when counted."""
    efficiency: dict[str, Any] | None = None
    """The `efficiency` block (extra, excused and repeated calls), when counted."""
    retries: dict[str, Any] | None = None
    """The `retries` block (retried calls, excused ones, per tool), when some call was retried."""
    turns: dict[str, Any] | None = None
    """The turn figures (`conversations`, `turn_accuracy`, `first_failed_turn`), when the run
    has conversation cases (`turn_tally`)."""
    variants: dict[str, Any] | None = None
    """The `variants` block (groups of cases sharing a `variant_of` id), when some case
    names a group (`variant_tally`)."""

    @property
    def accuracy(self) -> float | None:
        """Passed cases over all cases."""
        return ratio(self.passed, self.cases)

    def to_dict(self) -> dict[str, Any]:
        """The `summary` block of the report JSON, as a dict (`orjson.dumps` makes it text)."""
        return {
            "cases": self.cases,
            "passed": self.passed,
            **accuracy_json(self.passed, self.cases),
            **({"accuracy_clustered": self.clustered.to_json()} if self.clustered else {}),
            "name_accuracy": self.name.to_json(),
            "argument_accuracy": self.arguments.to_json(),
            "abstention_accuracy": self.abstention.to_json(),
            **fields_json(self, "missed_calls", "missing_outputs", "unmatched_outputs"),
            **self.join.to_json(),
            "unread_cases": self.unread_cases,
            "unread_parts": self.unread_parts,
            "ignored_keys": dict(sorted(self.ignored_keys.items())),
            "baselines": {k: v.to_json(self.cases) for k, v in self.baselines.items()},
            "codes": dict(self.codes.most_common()),
            "forbidden_calls": self.forbidden.to_json(self.cases),
            **(self.call_rates.to_json() if self.call_rates is not None else {}),
            "per_tool": {k: v.to_json() for k, v in sorted(self.per_tool.items())},
            "per_argument": {k: v.to_json() for k, v in sorted(self.per_argument.items())},
            **({"partial": self.partial} if self.partial is not None else {}),
            **({"efficiency": self.efficiency} if self.efficiency is not None else {}),
            **({"retries": self.retries} if self.retries is not None else {}),
            **({"state": self.outcomes.to_json()} if self.outcomes is not None else {}),
            **(self.outcomes.checks_json() if self.outcomes is not None else {}),
            **({"rubrics": self.rubrics.to_json()} if self.rubrics is not None else {}),
            **({"trials": self.trials.to_json()} if self.trials is not None else {}),
            **(self.turns if self.turns is not None else {}),
            **({"variants": self.variants} if self.variants is not None else {}),
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
        self._rates = CallRates()
        self._tools: dict[str, Tally] = {}
        self._args: dict[str, Tally] = {}
        self._arg_tallies: dict[str, dict[str, Tally]] = {}
        self._forbidden = ForbiddenTally()
        self.rubrics: RubricTally | None = None
        """Rubric results (`toolscore.scoring.rubric_run`), set by the runs that score rubrics."""
        self._partial = PartialTally(specs.extra_ok)
        self._turns: TurnTally | None = None
        self._variants: VariantTally | None = None

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
        self._rates.add(result)
        self._partial.add(result, case.plans)
        if case.extra and "variant_of" in case.extra:
            if self._variants is None:
                self._variants = VariantTally()
            extra = case.extra
            self._variants.add(extra["variant_of"], case.id, extra.get("variant"), passed)
        if case.turns:
            self._add_turns(case, result)
            return
        plan = case.plans[result.plan] if result.plan is not None else ()
        if passed:
            self._tally_passed(plan, result)
        else:
            self._tally_failed(plan, result)
            self._forbidden.add(result)

    def _add_turns(self, case: Case, result: CaseResult) -> None:
        """Count a conversation case: its turns, and each turn's calls in the per-tool and
        per-argument tallies against that turn's plan."""
        if self._turns is None:
            self._turns = TurnTally()
        self._turns.add(result)
        in_turns = 0
        for turn in result.turns:
            plans = case.turns[turn.turn].plans
            plan = plans[turn.plan] if turn.plan is not None else ()
            part = result._replace(pairs=turn.pairs, mismatches=turn.mismatches)
            if turn.passed:
                self._tally_passed(plan, part)
            else:
                self._tally_failed(plan, part)
            in_turns += len(turn.mismatches)
        self._codes.update(m.code for m in result.mismatches[in_turns:])
        if not result.passed:
            self._forbidden.add(result)

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
        self._forbidden.merge(other._forbidden)
        self._rates.merge(other._rates)
        self._partial.merge(other._partial)
        if other._turns is not None:
            if self._turns is None:
                self._turns = TurnTally()
            self._turns.merge(other._turns)
        if other._variants is not None:
            if self._variants is None:
                self._variants = VariantTally()
            self._variants.merge(other._variants)
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
            call_rates=CallRates(**vars(self._rates)),
            outcomes=self._outcomes,
            clustered=self._clustered(),
            rubrics=self.rubrics,
            trials=self._trials_tally(),
            join=self._join,
            forbidden=self._forbidden,
            partial=self._partial.partial_json(),
            efficiency=self._partial.efficiency_json(),
            retries=self._partial.retries_json() if self._partial.retries else None,
            turns=self._turns.to_json() if self._turns is not None else None,
            variants=self._variants.to_json() if self._variants is not None else None,
        )
