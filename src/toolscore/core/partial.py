"""How close a case came and how many calls it wasted: partial credit and efficiency.

The verdict is all or nothing; these numbers stand beside it (docs/formats.md, partial
credit). `matched` is a maximum matching of a plan's calls to the produced calls under the
rules (the matcher `plan_passes` uses, `$ref` values not compared), so it depends neither on
the order of the calls nor on which of several fitting calls comes first. Repeated calls are
found by hashing each call's canonical form, in time linear in the calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolscore.core.arguments import call_matches, max_matching
from toolscore.core.model import Call, Efficiency, Mismatch, Pairs, Partial
from toolscore.core.plans import NARROW_FROM, narrowed
from toolscore.core.rules import ExactRule, ListRule, ObjectRule, Rule

NO_EFFICIENCY = Efficiency(0, 0, 0)


def no_credit(plans: Sequence[Sequence[Call]], plan: int | None) -> Partial:
    """The partial credit of a case whose output is missing or was not read whole: nothing
    matched or produced, every rate 0, against `plan` (else the first plan, if any)."""
    if plan is None and plans:
        plan = 0
    expected = len(plans[plan]) if plan is not None else 0
    return Partial(plan, 0, expected, 0, 0.0, 0.0, 0.0)


def rates(matched: int, expected: int, produced: int) -> tuple[float, float, float]:
    """Precision, recall and F1 of `matched` calls: precision 1.0 when nothing was produced,
    recall 1.0 when nothing was expected, F1 0.0 when both rates are 0."""
    precision = matched / produced if produced else 1.0
    recall = matched / expected if expected else 1.0
    total = precision + recall
    return precision, recall, (2 * precision * recall / total if total else 0.0)


def partial_credit(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plans: Sequence[Sequence[Call]],
    calls: Sequence[Call],
    verdict_plan: int | None,
    passed: bool = False,
    pairs: Pairs = (),
    mismatches: Sequence[Mismatch] = (),
) -> tuple[Partial, Efficiency]:
    """The partial credit and efficiency of `calls` against the best of `plans` (highest F1;
    ties: `verdict_plan`, then the lowest index).

    A case that `passed` is credited from its verdict's `pairs` without matching anew: every
    plan call of the verdict's plan is matched and no unexcused call is left over. A failed
    case's verdict `pairs` that no mismatch is attached to fit, so the matching against the
    verdict's plan starts from them and searches only for the plan calls they leave.
    """
    m = len(calls)
    if m == 1 and verdict_plan == 0 and not passed and len(plans) == 1 and len(plans[0]) == 1:
        # Had the one call fitted the one plan call, the case would have passed.
        return (FAILED_ONE, ONE_EXTRA) if calls[0].name not in extra_ok else EXCUSED_ONE
    repeated = repeated_calls(tools, calls) if m > 1 else 0
    if passed:
        extra = m - len(pairs)
        if extra == 0 and verdict_plan == 0 and m == 1 and not repeated:
            return PASSED_ONE, NO_EFFICIENCY  # the commonest case of all
        n = len(plans[verdict_plan]) if verdict_plan is not None else 0
        efficiency = Efficiency(extra, extra, repeated) if extra or repeated else NO_EFFICIENCY
        return Partial(verdict_plan, n, n, n, 1.0, 1.0, 1.0, pairs), efficiency
    by_name: dict[str, list[int]] | None = None
    best: tuple[tuple[float, bool, int], Partial, int] | None = None
    for index, plan in enumerate(plans) if plans else [(None, ())]:
        seeds: Pairs = ()
        if index == verdict_plan and pairs:
            wrong = {(mismatch.plan_call, mismatch.call) for mismatch in mismatches}
            seeds = tuple(pair for pair in pairs if pair not in wrong)
        if (index == verdict_plan and len(plan) == 1) or len(seeds) == len(plan) or not m:
            # A one-call plan: the verdict paired it with its closest call of the tool (none
            # when there is none), so a mismatch there means that no call fits it.
            found = seeds
        else:
            if by_name is None:
                by_name = {}
                for j, call in enumerate(calls):
                    by_name.setdefault(call.name, []).append(j)
            found = plan_pairs(tools, plan, calls, by_name, seeds)
        # With an empty plan no call is extra: abstaining means no call at all, relaxed or not.
        excused = 0
        if plan and extra_ok:
            paired = {j for _, j in found}
            excused = sum(
                1 for j, call in enumerate(calls) if j not in paired and call.name in extra_ok
            )
        matched, produced = len(found), m - excused
        precision, recall, f1 = rates(matched, len(plan), produced)
        rank = (-f1, index != verdict_plan, index or 0)
        if best is None or rank < best[0]:
            credit = Partial(index, matched, len(plan), produced, precision, recall, f1, found)
            best = (rank, credit, excused)
    assert best is not None
    _, credit, excused = best
    return credit, Efficiency(m - credit.matched, excused, repeated)


PASSED_ONE = Partial(0, 1, 1, 1, 1.0, 1.0, 1.0, ((0, 0),))
"""The credit of a case passed by one call for its first plan's one call."""
FAILED_ONE = Partial(0, 0, 1, 1, 0.0, 0.0, 0.0)
ONE_EXTRA = Efficiency(1, 0, 0)
EXCUSED_ONE = Partial(0, 0, 1, 0, 1.0, 0.0, 0.0), Efficiency(1, 1, 0)
"""The credit of a case failed by one call for a plan of one call (a relaxed one: excused)."""


def plan_pairs(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    by_name: Mapping[str, list[int]],
    seeds: Pairs = (),
) -> Pairs:
    """A maximum matching of `plan`'s calls to produced calls of the same tool whose
    arguments equal theirs under the rules (`$ref` values not compared), as (i, j) pairs;
    `seeds` are pairs known to fit, which the matching starts from (augmenting keeps them
    matched or trades them for others, never lowering the count)."""
    n = len(plan)
    if not n or not calls or len(seeds) == n:
        return seeds
    if n == 1:
        expected = plan[0]
        rule = tools[expected.name]
        for j in by_name.get(expected.name, ()):
            if call_matches(rule, expected, calls[j]):
                return ((0, j),)
        return ()
    candidates = [by_name.get(e.name, []) for e in plan]
    if (n - len(seeds)) * len(calls) >= NARROW_FROM:  # only the plan calls left are searched
        candidates = narrowed(tools, plan, calls, candidates)
    left_of: list[int | None] = [None] * len(calls)
    for i, j in seeds:
        left_of[j] = i
    right_of = max_matching(
        candidates,
        len(calls),
        lambda i, j: call_matches(tools[plan[i].name], plan[i], calls[j]),
        left_of,
    )
    return tuple((i, j) for i, j in enumerate(right_of) if j is not None)


def repeated_calls(tools: Mapping[str, ObjectRule], calls: Sequence[Call]) -> int:
    """How many calls equal an earlier call of `calls`: same tool, and the same arguments in
    the canonical form of the tool's rules (`canonical_call`).

    Most calls differ in one argument's plain value (an order id): calls are first told apart
    by their tool and that value (`_told_apart_by`), and only when two share both are the
    calls' whole forms compared.
    """
    if len(calls) < 2:
        return 0
    by = _told_apart_by(tools)
    try:
        # Equal keys are only a maybe (`1` equals `true` here, an absent value `null`).
        told = {(call.name, call.args.get(by.get(call.name))) for call in calls}  # type: ignore[union-attr, arg-type]
    except (AttributeError, TypeError):  # unparsed arguments, a value that is not hashable
        told = set()
    return 0 if len(told) == len(calls) else _repeated_by_form(tools, calls)


def _repeated_by_form(tools: Mapping[str, ObjectRule], calls: Sequence[Call]) -> int:
    """`repeated_calls`, comparing every call's whole canonical form."""
    forms: set[Any] = set()
    try:
        for call in calls:
            args, rule = call.args, tools.get(call.name)
            if (
                rule is not None
                and type(args) is dict
                and _mapped(rule).isdisjoint(args)
                and set(map(type, args.values())) <= _SCALARS
            ):
                # Strings and numbers outside keyed kinds other than `exact`: their own form.
                forms.add((call.name, frozenset(args.items())))
            else:
                forms.add(canonical_call(rule, call))
    except RecursionError:
        return _repeated_one_by_one(tools, calls)
    return len(calls) - len(forms)


_TOLD_APART: dict[int, tuple[Mapping[str, ObjectRule], dict[str, str]]] = {}
"""For each spec's rules met (by id, kept alive beside it): `_told_apart_by`'s answer."""


def _told_apart_by(tools: Mapping[str, ObjectRule]) -> dict[str, str]:
    """For each tool, an argument whose canonical form is its plain value (an `exact` one
    first): two calls whose plain values of it differ cannot be the same call."""
    found = _TOLD_APART.get(id(tools))
    if found is not None and found[0] is tools:
        return found[1]
    chosen: dict[str, str] = {}
    for name, rule in tools.items():
        mapped = _mapped(rule)
        plain = [
            (type(sub) is not ExactRule, arg)
            for arg, sub in rule.args.items()
            if arg not in mapped and sub.compared
        ]
        if plain:
            chosen[name] = min(plain)[1]
    if len(_TOLD_APART) < MAPPED_KEPT:
        _TOLD_APART[id(tools)] = (tools, chosen)
    return chosen


_SCALARS = frozenset({str, int, float})
"""The values that are their own canonical form (`1` and `1.0` alike; a NaN equals nothing)."""


def _repeated_one_by_one(tools: Mapping[str, ObjectRule], calls: Sequence[Call]) -> int:
    """`repeated_calls` when some call is nested too deep to compare: that one repeats none."""
    seen: set[Any] = set()
    repeated = 0
    for j, call in enumerate(calls):
        try:
            form = canonical_call(tools.get(call.name), call)
        except RecursionError:
            form = ("deep", j)
        if form in seen:
            repeated += 1
        else:
            seen.add(form)
    return repeated


def canonical_call(rule: ObjectRule | None, call: Call) -> Any:
    """A hashable form of a call: two calls have the same form when they name the same tool
    and their arguments have the same canonical form (`canonical`); unparsed arguments by
    their raw text. `rule` is the tool's, None for a tool the spec lacks (plain JSON)."""
    args = call.args
    if args is None:
        return (call.name, "raw", call.raw_args)
    if rule is None or type(args) is not dict:
        return (call.name, plain_form(args))
    return (call.name, _object_form(rule, args))


_MAPPED: dict[int, tuple[ObjectRule, frozenset[str]]] = {}
"""For each object rule met (by id, the rule kept alive beside it): its arguments whose
canonical form is not their plain JSON form (`_mapped`)."""


def _mapped(rule: ObjectRule) -> frozenset[str]:
    """The arguments of `rule` whose values need their rule to be put in canonical form: a
    keyed kind other than `exact` (whose key is the plain value's), an object or a list."""
    found = _MAPPED.get(id(rule))
    if found is not None and found[0] is rule:
        return found[1]
    names = frozenset(
        name
        for name, sub in rule.args.items()
        if (sub.keyed and type(sub) is not ExactRule) or type(sub) in (ObjectRule, ListRule)
    )
    if len(_MAPPED) < MAPPED_KEPT:
        _MAPPED[id(rule)] = (rule, names)
    return names


MAPPED_KEPT = 10_000
"""How many object rules `_mapped` remembers (a spec's tools and their object arguments)."""


def _object_form(rule: ObjectRule, value: dict[str, Any]) -> frozenset[tuple[str, Any]]:
    """An object's canonical form: its (argument, canonical form) pairs, as a set."""
    mapped = _mapped(rule)
    forms = []
    for name, item in value.items():
        if name in mapped:
            forms.append((name, canonical(rule.args[name], item)))
            continue
        kind = type(item)
        if kind is str or kind is int or kind is float:
            forms.append((name, item))
        else:
            forms.append((name, plain_form(item)))
    return frozenset(forms)


def canonical(rule: Rule, value: Any) -> Any:
    """`value`'s canonical form under `rule`: a keyed rule's key (`Rule.key`) where the value
    has one, objects by argument, lists item by item (as a multiset when unordered), and
    anything else as plain JSON (`plain_form`)."""
    if rule.keyed:
        key = rule.key(value)
        if key is not None:
            return key
    if type(rule) is ObjectRule and type(value) is dict:
        return ("object", _object_form(rule, value))
    if type(rule) is ListRule and type(value) is list:
        items = [canonical(rule.items, item) for item in value]
        return ("array", tuple(items) if rule.ordered else tuple(sorted(items, key=repr)))
    return plain_form(value)


def plain_form(value: Any) -> Any:
    """A hashable form of a JSON value: objects with sorted keys, numbers compared as numbers
    (`1` is `1.0`) but never as booleans (a NaN equals nothing, not even itself)."""
    kind = type(value)
    if kind is dict:
        return ("object", frozenset([(k, plain_form(v)) for k, v in value.items()]))
    if kind is list or kind is tuple:
        return ("array", tuple(plain_form(v) for v in value))
    if kind is bool:
        return ("boolean", value)
    return value
