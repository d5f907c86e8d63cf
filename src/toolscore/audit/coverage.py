"""Spec coverage (`toolscore coverage`): how much of a spec the cases exercise and, given
outputs, which of its rules decided a verdict.

Every tool, argument, rule option (each enum alias, a default, a tolerance, `coerce`, a
lenient kind such as `casefold`), relaxation and spec `forbid` entry is an item with a name
(`refund.unit:alias:euro`, `refund.amount:tol`, `get_weather.days:default`). An item is
*exercised* by a case whose plans give it something to judge, and *decides* a case where it
raised a mismatch or forgave a difference that exact JSON would have failed. Deciding is
found after scoring, by a re-check of the chosen pairs beside the verdicts (compare under
exact JSON, then under the rule with one option turned off), so the scoring hot path pays
nothing for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscore.core.arguments import iter_mismatches
from toolscore.core.forbid import call_forbidden
from toolscore.core.model import MISSING, OMITTED, AnyOf, Call, Case, CaseResult, Mismatch, Ref
from toolscore.core.rules import (
    BooleanRule,
    CasefoldRule,
    DateRule,
    DatetimeRule,
    EnumRule,
    ExactRule,
    IntegerRule,
    ListRule,
    NumberRule,
    ObjectRule,
    Rule,
)
from toolscore.core.values import enum_key, json_equal
from toolscore.inputs.cases import read_cases
from toolscore.inputs.join import join_groups_by_id
from toolscore.inputs.outputs import read_outputs
from toolscore.scoring.stream import score_trials
from toolscore.specs.loading import SpecSet, load_specs
from toolscore.store.rescore import stored_cases, stored_outputs

if TYPE_CHECKING:
    from toolscore.store.database import Store

KINDS = ("tool", "argument", "option", "relaxation", "forbid")
"""The kinds of item a coverage report lists, in the order it lists them."""

_CALL_LEVEL = frozenset({"missing_call", "extra_call", "unknown_tool", "wrong_tool"})
"""Mismatch codes about a whole call: they are decided by the tool's row."""

_OFF: dict[type[Rule], tuple[tuple[str, Any], ...]] = {
    NumberRule: (("tol", 0.0), ("rel_tol", 0.0), ("coerce", False)),
    IntegerRule: (("coerce", False),),
    BooleanRule: (("coerce", False),),
    DatetimeRule: (("tol", 0.0), ("naive_tz", None)),
    DateRule: (("formats", ()),),
}
"""Per kind, each option and the value that turns it off: the option that accounts for a
forgiven difference is the one without which the rule would have failed it."""


@dataclass
class Item:
    """One row of the report: what it is, how many cases exercise it, and (given outputs) in
    how many cases it raised a mismatch and forgave a difference exact JSON fails."""

    name: str
    kind: str
    cases: int = 0
    raised: int = 0
    forgave: int = 0
    decided: int = 0
    """The cases it raised a mismatch or forgave a difference in (a case where it did both
    counts once)."""
    compared: bool = True
    """False for a `text` or `ignored` argument, which decides nothing by design."""

    def to_json(self, scored: bool) -> dict[str, Any]:
        """The row as `coverage --json` lists it (`raised`, `forgave`, `decided` null when no
        outputs were scored)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "cases": self.cases,
            "raised": self.raised if scored else None,
            "forgave": self.forgave if scored else None,
            "decided": self.decided if scored else None,
            "compared": self.compared,
        }


@dataclass
class Coverage:
    """A coverage report: the items in spec order, how many cases were read and, when outputs
    were scored, how many of them (`scored`, None without outputs) and how many had no
    output line (`missing`)."""

    items: list[Item]
    cases: int = 0
    scored: int | None = None
    missing: int = 0
    unmatched_outputs: int = 0
    specs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def untested(self) -> list[str]:
        """The compared items other than tools that decided no verdict (given outputs) or
        that no case exercises (without)."""
        return [
            item.name
            for item in self.items
            if item.kind != "tool"
            and item.compared
            and (item.decided == 0 if self.scored is not None else item.cases == 0)
        ]

    @property
    def uncovered(self) -> list[str]:
        """The tools no case's plans call."""
        return [item.name for item in self.items if item.kind == "tool" and item.cases == 0]

    def to_json(self) -> dict[str, Any]:
        """The report as `coverage --json` writes it."""
        scored = self.scored is not None
        return {
            "specs": dict(self.specs),
            "cases": self.cases,
            "scored": self.scored,
            "missing_outputs": self.missing,
            "unmatched_outputs": self.unmatched_outputs,
            "items": [item.to_json(scored) for item in self.items],
            "untested": self.untested,
            "uncovered": self.uncovered,
        }


# --- the items of a spec --------------------------------------------------------------------


def spec_items(specs: SpecSet) -> list[Item]:
    """Every item of `specs`, in spec order: each tool, then its arguments and their
    options, then its relaxations; the spec's `forbid` entries last."""
    items: list[Item] = []
    for tool, rule in specs.rules.items():
        items.append(Item(tool, "tool"))
        for name, sub in rule.args.items():
            items += _argument_items(f"{tool}.{name}", sub)
        items += [
            Item(f"{tool}:relax:{relaxation.allow}", "relaxation")
            for relaxation in specs.relaxations
            if tool in relaxation.tools
        ]
    items += [Item(name, "forbid") for name in _forbid_names(specs).values()]
    return items


def _argument_items(name: str, rule: Rule) -> Iterator[Item]:
    yield Item(name, "argument", compared=rule.compared)
    if not rule.compared:
        return
    for option in _options(rule):
        yield Item(f"{name}:{option}", "option")
    if isinstance(rule, ObjectRule):
        for sub_name, sub in rule.args.items():
            yield from _argument_items(f"{name}.{sub_name}", sub)
    elif isinstance(rule, ListRule):
        yield from _argument_items(f"{name}[]", rule.items)


def _options(rule: Rule) -> list[str]:
    """The options of `rule` that can forgive a difference (or, for a default, stand in
    for an omitted value), by the names the report gives them."""
    found = ["default"] if rule.default is not MISSING else []
    if isinstance(rule, CasefoldRule):
        found.append("casefold")
    elif isinstance(rule, EnumRule):
        found += [f"alias:{alias}" for alias in rule.aliases]
    elif isinstance(rule, ListRule) and not rule.ordered:
        found.append("unordered")
    elif isinstance(rule, DateRule | DatetimeRule):
        found.append(rule.kind)
    for option, off in _OFF.get(type(rule), ()):
        if getattr(rule, option) != off:
            found.append(option)
    return found


def _forbid_names(specs: SpecSet) -> dict[int, str]:
    """The item name of each spec `forbid` entry (`wipe:forbid[0]`), by the entry's id."""
    return {id(entry): f"{entry.tool}:forbid[{i}]" for i, entry in enumerate(specs.forbid)}


# --- counting ---------------------------------------------------------------------------------


class _Marks:
    """The item names one case exercised, raised a mismatch with and forgave a difference
    with (a case counts once per item)."""

    __slots__ = ("cases", "forgave", "raised")

    def __init__(self) -> None:
        self.cases: set[str] = set()
        self.raised: set[str] = set()
        self.forgave: set[str] = set()


def coverage(
    specs: SpecSet,
    cases: Iterable[Case],
    outputs: Iterable[Any] | None = None,
    sources: tuple[str, str] = ("<cases>", "<outputs>"),
) -> Coverage:
    """The coverage of `specs` by `cases`; with `outputs` (trajectories, joined to the cases
    by id and scored as `score` scores them), what each item decided."""
    items = spec_items(specs)
    by_name = {item.name: item for item in items}
    report = Coverage(items, specs=specs.describe())
    if outputs is None:
        groups: Iterable[tuple[Case, list[Any] | None]] = ((case, None) for case in cases)
    else:
        report.scored = 0
        unmatched: list[str] = []
        groups = join_groups_by_id(
            cases,
            outputs,
            lambda case: (case.id, case.line),
            lambda trajectory: (trajectory.case_id, trajectory.line),
            unmatched.extend,
            sources,
        )
    for case, found in groups:
        report.cases += 1
        marks = _Marks()
        _exercised(specs, case, marks)
        if found is not None:
            assert report.scored is not None
            if not found:
                report.missing += 1
            for result in score_trials(specs, case, found, None, sources):
                report.scored += 1
                if not result.missing_output:
                    _decided(specs, case, result, marks)
        for name in marks.cases:
            by_name[name].cases += 1
        for name in marks.raised:
            by_name[name].raised += 1
        for name in marks.forgave:
            by_name[name].forgave += 1
        for name in marks.raised | marks.forgave:
            by_name[name].decided += 1
    if outputs is not None:
        report.unmatched_outputs = len(unmatched)
    return report


def _plans(case: Case) -> Iterator[Sequence[Call]]:
    yield from case.plans
    for turn in case.turns:
        yield from turn.plans


def _exercised(specs: SpecSet, case: Case, marks: _Marks) -> None:
    """Mark what the case's plans give the spec to judge."""
    marks.cases.update(_forbid_names(specs).values())  # every case is subject to them
    for plan in _plans(case):
        for call in plan:
            rule = specs.rules.get(call.name)
            if rule is None:
                continue
            marks.cases.add(call.name)
            for relaxation in specs.relaxations:
                if call.name in relaxation.tools:
                    marks.cases.add(f"{call.name}:relax:{relaxation.allow}")
            if isinstance(call.args, dict):
                _exercised_args(call.name, rule, call.args, marks)


def _exercised_args(prefix: str, rule: ObjectRule, args: Mapping[str, Any], marks: _Marks) -> None:
    for name, sub in rule.args.items():
        value = args.get(name, MISSING)
        if type(value) is AnyOf:
            value = next((v for v in value if v is not OMITTED), MISSING)
        item = f"{prefix}.{name}"
        if value is MISSING:
            if sub.default is not MISSING:
                marks.cases.update((item, f"{item}:default"))
            continue
        marks.cases.add(item)
        if not sub.compared or type(value) is Ref or value is None:
            continue
        for option in _options(sub):
            if option == "default":
                if json_equal(value, sub.default):
                    marks.cases.add(f"{item}:default")
            elif option.startswith("alias:"):
                assert isinstance(sub, EnumRule)
                target = sub.canonical(option.removeprefix("alias:"))
                if sub.canonical(value) is target:
                    marks.cases.add(f"{item}:{option}")
            else:
                marks.cases.add(f"{item}:{option}")
        if isinstance(sub, ObjectRule) and isinstance(value, dict):
            _exercised_args(item, sub, value, marks)
        elif isinstance(sub, ListRule) and isinstance(value, list) and value:
            marks.cases.add(f"{item}[]")


def _segments(
    case: Case, result: CaseResult
) -> Iterator[tuple[Sequence[Call] | None, tuple[tuple[int, int], ...], Sequence[Mismatch]]]:
    """Each scored part of a result: the chosen plan (None when none was), its pairs and its
    mismatches; one per turn of a conversation case."""
    if result.turns:
        for turn in result.turns:
            plans = case.turns[turn.turn].plans
            plan = None if turn.plan is None else plans[turn.plan]
            yield plan, turn.pairs, turn.mismatches
        return
    plan = None if result.plan is None else case.plans[result.plan]
    yield plan, result.pairs, result.mismatches


def _decided(specs: SpecSet, case: Case, result: CaseResult, marks: _Marks) -> None:
    """Mark what decided something in one scored result."""
    calls = result.calls
    paired: set[int] = set()
    for plan, pairs, mismatches in _segments(case, result):
        for mismatch in mismatches:
            if mismatch.code in _CALL_LEVEL:
                tool = _call_tool(mismatch, plan, calls)
                if tool in specs.rules:
                    marks.raised.add(tool)
        if plan is None:
            continue
        for plan_index, call_index in pairs:
            paired.add(call_index)
            expected, produced = plan[plan_index], calls[call_index]
            rule = specs.rules.get(expected.name)
            if rule is None or produced.args is None or not isinstance(expected.args, dict):
                continue
            _pair(expected.name, rule, expected.args, produced.args, marks)
    excused = {retry.call for retry in result.retries if retry.excused}
    for retry in result.retries:
        if retry.excused:
            marks.forgave.add(f"{retry.tool}:relax:retries")
    for index, call in enumerate(calls):
        if index not in paired and index not in excused and call.name in specs.extra_ok:
            marks.forgave.add(f"{call.name}:relax:extra_calls")
    _forbidden(specs, calls, marks)


def _call_tool(mismatch: Mismatch, plan: Sequence[Call] | None, calls: Sequence[Call]) -> str:
    if mismatch.call is not None and mismatch.call < len(calls):
        return calls[mismatch.call].name
    if mismatch.plan_call is not None and plan is not None and mismatch.plan_call < len(plan):
        return plan[mismatch.plan_call].name
    return ""


def _forbidden(specs: SpecSet, calls: Sequence[Call], marks: _Marks) -> None:
    """Mark the spec `forbid` entry that forbade each produced call (the first that
    matches, as the scorer names it)."""
    for call in calls:
        for entry in specs.forbidden.get(call.name, ()):
            if call_forbidden(specs.rules[call.name], entry, call):
                marks.raised.add(_forbid_names(specs)[id(entry)])
                break


def _pair(
    tool: str, rule: ObjectRule, expected: Mapping[str, Any], produced: Any, marks: _Marks
) -> None:
    if not isinstance(produced, dict):
        return
    _object_args(tool, rule, expected, produced, marks)
    unknown = [name for name in produced if name not in rule.args]
    if unknown:
        if rule.allow_unknown:
            marks.forgave.add(f"{tool}:relax:unknown_args")
        else:
            marks.raised.add(tool)


def _object_args(
    prefix: str, rule: ObjectRule, expected: Mapping[str, Any], produced: Mapping[str, Any],
    marks: _Marks,
) -> None:  # fmt: skip
    for name, sub in rule.args.items():
        if sub.compared:
            _argument(
                f"{prefix}.{name}",
                sub,
                expected.get(name, MISSING),
                produced.get(name, MISSING),
                marks,
            )


def _argument(item: str, rule: Rule, expected: Any, produced: Any, marks: _Marks) -> None:
    """Mark whether the argument's rule raised a mismatch, or forgave a difference exact JSON
    fails, and which option accounts for it."""
    if type(expected) is Ref or (expected is MISSING and produced is MISSING):
        return
    if _exact_same(expected, produced):
        return
    if produced is MISSING and type(expected) is AnyOf and OMITTED in expected:
        return
    wanted = rule.default if expected is MISSING else expected
    given = rule.default if produced is MISSING else produced
    omitted = expected is MISSING or produced is MISSING
    if wanted is MISSING or given is MISSING:
        marks.raised.add(item)
        return
    if next(iter_mismatches(rule, wanted, given, (), False), None) is not None:
        marks.raised.add(item)
        if omitted and rule.default is not MISSING:
            marks.raised.add(f"{item}:default")
        alias = _alias(rule, given)
        if alias is not None:
            marks.raised.add(f"{item}:alias:{alias}")
        _nested(item, rule, wanted, given, marks)
        return
    marks.forgave.add(item)
    if omitted:
        marks.forgave.add(f"{item}:default")
        return
    for option in _accounting(rule, wanted, given):
        marks.forgave.add(f"{item}:{option}")
    _nested(item, rule, wanted, given, marks)


def _exact_same(expected: Any, produced: Any) -> bool:
    """Whether exact JSON equality (or one `$any` alternative under it) passes the value."""
    if expected is MISSING or produced is MISSING:
        return False
    if type(expected) is AnyOf:
        return any(alt is not OMITTED and _exact_same(alt, produced) for alt in expected)
    return json_equal(expected, produced)


def _nested(item: str, rule: Rule, expected: Any, produced: Any, marks: _Marks) -> None:
    """Go on into an object's arguments and a list's items, for their own rows."""
    if type(expected) is AnyOf:
        expected = next(
            (a for a in expected if a is not OMITTED and _accepts(rule, a, produced)), None
        )
    if isinstance(rule, ObjectRule) and isinstance(expected, dict) and isinstance(produced, dict):
        _object_args(item, rule, expected, produced, marks)
    elif (
        isinstance(rule, ListRule)
        and rule.ordered
        and isinstance(expected, list)
        and isinstance(produced, list)
    ):
        for e, p in zip(expected, produced, strict=False):
            _argument(f"{item}[]", rule.items, e, p, marks)


def _accepts(rule: Rule, expected: Any, produced: Any) -> bool:
    return next(iter_mismatches(rule, expected, produced, (), False), None) is None


def _alias(rule: Rule, value: Any) -> Any:
    """The alias `value` is under an enum rule, or None."""
    if not isinstance(rule, EnumRule) or enum_key(value) is None:
        return None
    for alias in rule.aliases:
        if enum_key(alias) == enum_key(value):
            return alias
    return None


def _accounting(rule: Rule, expected: Any, produced: Any) -> list[str]:
    """The options without which `rule` would fail the difference it forgave; the kind's
    own name when no single option does (a date written another way, letter case under
    `casefold`)."""
    if type(expected) is AnyOf:
        expected = next(
            (a for a in expected if a is not OMITTED and _accepts(rule, a, produced)), None
        )
    if isinstance(rule, EnumRule):
        found = [a for a in (_alias(rule, produced), _alias(rule, expected)) if a is not None]
        return [f"alias:{alias}" for alias in dict.fromkeys(found)] or [rule.kind]
    if isinstance(rule, CasefoldRule):
        return ["casefold"] if not _accepts(ExactRule(), expected, produced) else []
    if isinstance(rule, ListRule):
        if not rule.ordered and not _accepts(replace(rule, ordered=True), expected, produced):
            return ["unordered"]
        return []
    if isinstance(rule, ObjectRule):
        return []
    found = [
        option
        for option, off in _OFF.get(type(rule), ())
        if getattr(rule, option) != off
        and not _accepts(replace(rule, **{option: off}), expected, produced)
    ]
    if found:
        return found
    return [rule.kind] if isinstance(rule, DateRule | DatetimeRule) else []


# --- inputs -----------------------------------------------------------------------------------


def coverage_files(
    specs_path: str | Path, cases_path: str | Path, outputs_path: str | Path | None = None
) -> Coverage:
    """The coverage of the spec file by the cases file, with what each item decided when an
    outputs file is given."""
    specs = load_specs(specs_path)
    cases = read_cases(cases_path, specs)
    outputs = None if outputs_path is None else read_outputs(outputs_path)
    return coverage(specs, cases, outputs, (str(cases_path), str(outputs_path)))


def coverage_of_run(
    store: Store,
    run_ref: int | str,
    specs_path: str | Path | None = None,
    cases_path: str | Path | None = None,
) -> Coverage:
    """The coverage of a stored run: its outputs scored against its cases under its spec
    set, or under the spec file and against the cases file given instead."""
    run = store.run(run_ref)
    specs = store.specs(run) if specs_path is None else load_specs(specs_path)
    stored = f"(stored with run {run.id})"
    if cases_path is None:
        source = f"{run.cases_path} {stored}"
        cases: Iterable[Case] = stored_cases(store, run.cases_sha256, specs, source)
    else:
        source = str(cases_path)
        cases = read_cases(cases_path, specs)
    outputs_source = f"{run.outputs_path} {stored}"
    outputs = stored_outputs(store, run.outputs_sha256, outputs_source)
    return coverage(specs, cases, outputs, (source, outputs_source))
