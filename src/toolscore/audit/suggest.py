"""`toolscore suggest RUN`: single-argument rule changes that a stored run's evidence points
to, each written as the spec lines to add, never applied (docs/formats.md, "toolscore
suggest").

The evidence: the run's cases that the lowercase baseline passes and the rules fail, the
scorer bugs of a labelled batch (cases the person calls correct that the rules fail), and
`audit`'s wrong identifiers forgiven by `casefold`. From each argument's failures a change is
proposed (`casefold` where every failure is letter case, an alias for a value repeatedly
given for another member, a tolerance, a default, an `extra_calls` relaxation for a read
tool, `exact` for a forgiving identifier). Each is checked as `spec-diff` sees it
(`store.specdiff`) and by scoring the run's stored cases again under the changed spec: the
cases it flips, and of those the person labelled, how many the person agrees with and how
many wrong answers it would let through. A suggestion the labels reject is not proposed; it
is listed as rejected, with its counts.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import orjson

from toolscore.audit.audit_run import audit_cases
from toolscore.audit.planted import is_identifier, is_write_tool
from toolscore.calibration.batches import Batches
from toolscore.calibration.disagreements import wanted_cases, wanted_outputs
from toolscore.core.model import MISSING, Case, CaseResult, Mismatch, Trajectory
from toolscore.core.rules import CasefoldRule, EnumRule, ExactRule, NumberRule, Rule
from toolscore.core.rules.base import fold_case
from toolscore.core.values import json_equal
from toolscore.errors import InputError
from toolscore.inputs.join import join_groups_by_id
from toolscore.scoring.case import score_case
from toolscore.specs.loading import Relaxation, SpecSet
from toolscore.store.specdiff import spec_diff

if TYPE_CHECKING:
    from toolscore.store.database import RunInfo, Store

REPEATED = 2
"""How many times a value (an alias, a default, an extra call) must recur to be proposed."""
MAX_RELATIVE_GAP = Decimal("0.01")
"""A tolerance is proposed only for numbers at most 1% apart (larger gaps are other values)."""
REASON_LINE = "reason:   # yours to fill: why is this difference harmless?"
TIGHTEN_LINE = "reason:   # yours to fill: why must this be exact?"


@dataclass
class Suggestion:
    """One proposed change: to `tool`'s `argument` (None for a relaxation), what it changes
    (`change`: casefold, alias, tol, default, relax, exact), the spec lines to add, where the
    evidence came from, what `spec-diff` says of it, and what it does to the run's cases."""

    tool: str
    argument: str | None
    change: str
    spec_lines: str
    sources: list[str]
    evidence: int
    spec_diff: list[str]
    flips: list[str] = field(default_factory=list)
    fail_to_pass: int = 0
    pass_to_fail: int = 0
    labelled: int = 0
    agreed: int = 0
    let_through: int = 0

    def to_json(self) -> dict[str, Any]:
        """The suggestion as `suggest --json` writes it."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Suggestions:
    """What `suggest` proposes, and what it left out because the labels reject it."""

    run: int
    batch: int | None
    proposed: list[Suggestion]
    rejected: list[Suggestion]
    evidence_cases: int

    def to_json(self) -> dict[str, Any]:
        """The `--json` document."""
        return {
            "run": self.run,
            "batch": self.batch,
            "evidence_cases": self.evidence_cases,
            "suggestions": [s.to_json() for s in self.proposed],
            "rejected": [s.to_json() for s in self.rejected],
        }


@dataclass
class _Candidate:
    """A change before it is checked: the spec set with it, and what it changes."""

    tool: str
    argument: str | None
    change: str
    specs: SpecSet
    lines: str
    sources: set[str]
    evidence: int


def suggest_run(
    store: Store, run_ref: int | str, batch_ref: int | str | None = None, audit: bool = True
) -> Suggestions:
    """Propose rule changes for a stored run, from its lowercase disagreements, `audit`'s
    findings on its cases (unless `audit` is False), and a labelled batch of the run."""
    run = store.run(run_ref)
    if "trials" in store.summary(run.id):
        raise InputError(str(store.path), f"run {run.id} has trials: no suggestions made")
    specs = store.specs(run)
    labels: dict[str, str] = {}
    batch_id = None
    if batch_ref is not None:
        batches = Batches.of(store)
        batch_id = batches.resolve(batch_ref)
        info = batches.info(batch_id)
        if info.run_id != run.id:
            raise InputError(
                str(store.path), f"batch {batch_id} samples run {info.run_id}, not run {run.id}"
            )
        labels = majority_labels((label.case_id, label.label) for label in batches.labels(batch_id))
    pairs = list(_stored_pairs(store, run, specs))
    results = {case.id: score_case(specs, case, trajectory) for case, trajectory in pairs}
    evidence: dict[str, set[str]] = {}
    for case_id, result in results.items():
        if result.passed:
            continue
        if result.baselines.get("lowercase"):
            evidence.setdefault(case_id, set()).add("lowercase")
        if labels.get(case_id) == "correct":
            evidence.setdefault(case_id, set()).add("labels")
    cases = {case.id: case for case, _ in pairs}
    candidates = list(_loosenings(specs, cases, results, evidence))
    if audit:
        candidates += _tightenings(specs, [case for case, _ in pairs])
    proposed, rejected = [], []
    for candidate in candidates:
        suggestion = _checked(specs, candidate, pairs, results, labels)
        if not suggestion.flips:
            continue
        if suggestion.let_through and suggestion.let_through >= suggestion.agreed:
            rejected.append(suggestion)
        else:
            proposed.append(suggestion)
    proposed.sort(key=lambda s: (-len(s.flips), s.tool, s.argument or "", s.change))
    return Suggestions(run.id, batch_id, proposed, rejected, len(evidence))


def majority_labels(labels: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each case's label: the most given (`unsure` on a tie between correct and incorrect)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for case_id, label in labels:
        counts[case_id][label] += 1
    chosen = {}
    for case_id, count in counts.items():
        ranked = count.most_common()
        tie = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
        chosen[case_id] = "unsure" if tie else ranked[0][0]
    return chosen


def _stored_pairs(store: Store, run: RunInfo, specs: SpecSet) -> Iterable[tuple[Case, Trajectory]]:
    """Every case of the run with its stored output (a missing output as missing)."""
    sources = (
        f"{run.cases_path} (stored with run {run.id})",
        f"{run.outputs_path} (stored with run {run.id})",
    )

    class _All:
        def __contains__(self, item: object) -> bool:
            return True

    everything: Any = _All()
    cases = wanted_cases(store.content_lines(run.cases_sha256), specs, sources[0], everything)
    outputs = wanted_outputs(store.content_lines(run.outputs_sha256), sources[1], everything)
    groups = join_groups_by_id(
        cases, outputs, lambda c: (c.id, c.line), lambda t: (t.case_id, t.line), sources=sources
    )
    for case, found in groups:
        yield case, found[0] if found else Trajectory(case.id, (), missing=True)


def _where(case: Case, result: CaseResult, mismatch: Mismatch) -> tuple[str | None, str | None]:
    """The tool and top-level argument a mismatch concerns (argument None for a call)."""
    tool = None
    if mismatch.plan_call is not None and result.plan is not None:
        tool = case.plans[result.plan][mismatch.plan_call].name
    elif mismatch.call is not None and mismatch.call < len(result.calls):
        tool = result.calls[mismatch.call].name
    argument = mismatch.path[0] if mismatch.path else None
    return tool, argument if isinstance(argument, str) else None


def _loosenings(
    specs: SpecSet,
    cases: Mapping[str, Case],
    results: Mapping[str, CaseResult],
    evidence: Mapping[str, set[str]],
) -> Iterable[_Candidate]:
    """A change per argument (or read tool) whose failures in the evidence cases one rule
    change would forgive."""
    failures: dict[tuple[str, str], list[tuple[Mismatch, set[str]]]] = defaultdict(list)
    extra: dict[str, list[set[str]]] = defaultdict(list)
    every: dict[tuple[str, str], list[Mismatch]] = defaultdict(list)
    for case_id, result in results.items():
        for mismatch in result.mismatches:
            tool, argument = _where(cases[case_id], result, mismatch)
            if tool is None or tool not in specs.tools:
                continue
            if argument is not None:
                every[tool, argument].append(mismatch)
            if case_id not in evidence:
                continue
            if argument is not None:
                failures[tool, argument].append((mismatch, evidence[case_id]))
            elif mismatch.code == "extra_call" and not is_write_tool(tool):
                extra[tool].append(evidence[case_id])
    for (tool, argument), found in sorted(failures.items()):
        rule = specs.tools[tool].args.args.get(argument)
        if rule is None:
            continue
        sources = set().union(*(s for _, s in found))
        mismatches = [m for m, _ in found]
        yield from _argument_changes(specs, tool, argument, rule, mismatches, every, sources)
    for tool, hits in sorted(extra.items()):
        if len(hits) >= REPEATED and tool not in specs.extra_ok:
            relax = Relaxation("extra_calls", (tool,), "(suggested)")
            changed = replace(specs, relaxations=(*specs.relaxations, relax))
            lines = f"relax:\n  - allow: extra_calls\n    tools: [{_json(tool)}]\n    {REASON_LINE}"
            yield _Candidate(tool, None, "relax", changed, lines, set().union(*hits), len(hits))


def _argument_changes(
    specs: SpecSet,
    tool: str,
    argument: str,
    rule: Rule,
    mismatches: list[Mismatch],
    every: Mapping[tuple[str, str], list[Mismatch]],
    sources: set[str],
) -> Iterable[_Candidate]:
    def candidate(change: str, new: Rule, reason: str = REASON_LINE) -> _Candidate:
        changed = _with_rule(specs, tool, argument, new)
        return _Candidate(
            tool, argument, change, changed, _rule_lines(tool, argument, new, reason), sources,
            len(mismatches),
        )  # fmt: skip

    values = [m for m in mismatches if m.code == "value_mismatch"]
    if type(rule) is ExactRule and all(_case_only(m) for m in every[tool, argument]):
        yield candidate("casefold", CasefoldRule(rule.default))
    if isinstance(rule, EnumRule):
        given = Counter(
            (orjson.dumps(m.produced), orjson.dumps(rule.canonical(m.expected)))
            for m in values
            if rule.canonical(m.produced) is MISSING and rule.canonical(m.expected) is not MISSING
        )
        for (produced, member), n in sorted(given.items()):
            alias, target = orjson.loads(produced), orjson.loads(member)
            if n >= REPEATED and isinstance(alias, str | int | float | bool):
                aliases = {**rule.aliases, alias: target}
                yield candidate("alias", replace(rule, aliases=aliases))
    if isinstance(rule, NumberRule) and values:
        gaps = [_gap(m) for m in values]
        if all(gap is not None for gap in gaps):
            widest = max(g for g in gaps if g is not None)
            yield candidate("tol", replace(rule, tol=_round_up(widest)))
    missing = [m for m in mismatches if m.code == "missing_argument"]
    if missing and rule.default is MISSING and len(missing) >= REPEATED:
        first = missing[0].expected
        if all(json_equal(m.expected, first) for m in missing):
            yield candidate("default", replace(rule, default=first))


def _tightenings(specs: SpecSet, cases: list[Case]) -> Iterable[_Candidate]:
    """`exact` for each identifier argument under `casefold` that `audit` finds forgiving
    wrong identifiers (a changed letter case) in the run's cases."""
    found = audit_cases(specs, cases)
    for row in found.bad_rows():
        if row.kind != "wrong_id_case" or not row.wrong or row.argument is None:
            continue
        rule = specs.tools[row.tool].args.args.get(row.argument)
        if isinstance(rule, CasefoldRule) and is_identifier(row.argument):
            new = ExactRule(rule.default)
            changed = _with_rule(specs, row.tool, row.argument, new)
            lines = _rule_lines(row.tool, row.argument, new, TIGHTEN_LINE)
            yield _Candidate(row.tool, row.argument, "exact", changed, lines, {"audit"}, row.wrong)


def _checked(
    specs: SpecSet,
    candidate: _Candidate,
    pairs: list[tuple[Case, Trajectory]],
    results: Mapping[str, CaseResult],
    labels: Mapping[str, str],
) -> Suggestion:
    """The candidate as a suggestion: what spec-diff says of it, and the cases it flips when
    the run's cases are scored again under it (with what the labels say of them)."""
    suggestion = Suggestion(
        candidate.tool,
        candidate.argument,
        candidate.change,
        candidate.lines,
        sorted(candidate.sources),
        candidate.evidence,
        [str(change) for change in spec_diff(specs, candidate.specs) if not change.warning],
    )
    for case, trajectory in pairs:
        before = results[case.id].passed
        after = score_case(candidate.specs, case, trajectory).passed
        if after == before:
            continue
        suggestion.flips.append(case.id)
        if after:
            suggestion.fail_to_pass += 1
        else:
            suggestion.pass_to_fail += 1
        label = labels.get(case.id)
        if label in ("correct", "incorrect"):
            suggestion.labelled += 1
            if (label == "correct") == after:
                suggestion.agreed += 1
            elif after:
                suggestion.let_through += 1
    return suggestion


def _case_only(mismatch: Mismatch) -> bool:
    """A value mismatch between two strings that differ only in letter case."""
    e, p = mismatch.expected, mismatch.produced
    return (
        mismatch.code == "value_mismatch"
        and isinstance(e, str)
        and isinstance(p, str)
        and fold_case(e) == fold_case(p)
    )


def _gap(mismatch: Mismatch) -> Decimal | None:
    """How far apart a number mismatch's values are, when at most MAX_RELATIVE_GAP."""
    e, p = mismatch.expected, mismatch.produced
    if type(e) not in (int, float) or type(p) not in (int, float):
        return None
    if not (math.isfinite(e) and math.isfinite(p)):
        return None
    a, b = Decimal(repr(e)), Decimal(repr(p))
    gap = abs(a - b)
    scale = max(abs(a), abs(b))
    return gap if scale and gap <= MAX_RELATIVE_GAP * scale else None


def _round_up(gap: Decimal) -> float:
    """A tolerance that covers `gap`, at one significant digit (0.0031 -> 0.004)."""
    exponent = gap.adjusted()
    unit = Decimal(1).scaleb(exponent)
    return float((gap / unit).to_integral_value(rounding="ROUND_CEILING") * unit)


def _with_rule(specs: SpecSet, tool: str, argument: str, rule: Rule) -> SpecSet:
    """The spec set with one argument's rule replaced."""
    spec = specs.tools[tool]
    args = replace(spec.args, args={**spec.args.args, argument: rule})
    return replace(specs, tools={**specs.tools, tool: replace(spec, args=args)})


def _rule_lines(tool: str, argument: str, rule: Rule, reason: str) -> str:
    """The spec lines of a tool argument's new rule, with its `reason:` left to fill."""
    lines = [
        "tools:",
        f"  {_json(tool)}:",
        "    args:",
        f"      {_json(argument)}:",
        f"        kind: {rule.kind}",
    ]
    lines += [f"        {name}: {_json(value)}" for name, value in rule_options(rule).items()]
    lines.append(f"        {reason}")
    return "\n".join(lines)


def rule_options(rule: Rule) -> dict[str, Any]:
    """A scalar rule's options as a spec writes them (those that differ from the kind's
    defaults), and its default when it has one."""
    options: dict[str, Any] = {}
    for f in fields(rule):
        if f.name.startswith("_") or f.name in ("default", "reason", "fold", "rubric"):
            continue
        value = getattr(rule, f.name)
        if isinstance(value, Mapping):
            value = dict(value)
        elif isinstance(value, tuple):
            value = list(value)
        if value in ({}, [], 0, 0.0, False, None):
            continue
        options[f.name] = value
    if rule.default is not MISSING:
        options["default"] = rule.default
    return options


def _json(value: Any) -> str:
    """A value written as JSON, which YAML reads as the same value (and which escapes every
    control character an agent's text may hold)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
