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
from toolscore.core.model import Call, Efficiency, Pairs, Partial
from toolscore.core.plans import NARROW_FROM, narrowed
from toolscore.core.rules import ListRule, ObjectRule, Rule

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
) -> tuple[Partial, Efficiency]:
    """The partial credit and efficiency of `calls` against the best of `plans` (highest F1;
    ties: `verdict_plan`, then the lowest index).

    A case that `passed` is credited from its verdict's `pairs` without matching anew: every
    plan call of the verdict's plan is matched and no unexcused call is left over.
    """
    repeated = repeated_calls(tools, calls)
    m = len(calls)
    if passed:
        plan = plans[verdict_plan] if verdict_plan is not None else ()
        n = len(plan)
        extra = m - len(pairs)
        return Partial(verdict_plan, n, n, n, 1.0, 1.0, 1.0, pairs), Efficiency(
            extra, extra, repeated
        )
    by_name: dict[str, list[int]] = {}
    for j, call in enumerate(calls):
        by_name.setdefault(call.name, []).append(j)
    best: tuple[tuple[float, bool, int], Partial, int] | None = None
    for index, plan in enumerate(plans) if plans else [(None, ())]:
        found = plan_pairs(tools, plan, calls, by_name)
        paired = {j for _, j in found}
        # With an empty plan no call is extra: abstaining means no call at all, relaxed or not.
        excused = (
            sum(1 for j, call in enumerate(calls) if j not in paired and call.name in extra_ok)
            if plan and extra_ok
            else 0
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


def plan_pairs(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    by_name: Mapping[str, list[int]],
) -> Pairs:
    """A maximum matching of `plan`'s calls to produced calls of the same tool whose
    arguments equal theirs under the rules (`$ref` values not compared), as (i, j) pairs."""
    if not plan or not calls:
        return ()
    candidates = [by_name.get(e.name, []) for e in plan]
    if len(plan) * len(calls) >= NARROW_FROM:
        candidates = narrowed(tools, plan, calls, candidates)
    right_of = max_matching(
        candidates, len(calls), lambda i, j: call_matches(tools[plan[i].name], plan[i], calls[j])
    )
    return tuple((i, j) for i, j in enumerate(right_of) if j is not None)


def repeated_calls(tools: Mapping[str, ObjectRule], calls: Sequence[Call]) -> int:
    """How many calls equal an earlier call of `calls`: same tool, and the same arguments in
    the canonical form of the tool's rules (`canonical_call`)."""
    if len(calls) < 2:
        return 0
    seen: set[Any] = set()
    repeated = 0
    for j, call in enumerate(calls):
        try:
            form = canonical_call(tools.get(call.name), call)
        except RecursionError:
            form = ("deep", j)  # nested too deep to compare: counted as no repeat
        if form in seen:
            repeated += 1
        else:
            seen.add(form)
    return repeated


def canonical_call(rule: ObjectRule | None, call: Call) -> Any:
    """A hashable form of a call: two calls have the same form when they name the same tool
    and their arguments have the same canonical form (`canonical`); unparsed arguments by
    their raw text. `rule` is the tool's, None for a tool the spec lacks (plain JSON)."""
    if call.args is None:
        return (call.name, "raw", call.raw_args)
    if rule is None:
        return (call.name, plain_form(call.args))
    return (call.name, canonical(rule, call.args))


def canonical(rule: Rule, value: Any) -> Any:
    """`value`'s canonical form under `rule`: a keyed rule's key (`Rule.key`) where the value
    has one, objects by sorted argument, lists item by item (sorted when unordered), and
    anything else as plain JSON (`plain_form`)."""
    if rule.keyed:
        key = rule.key(value)
        if key is not None:
            return ("key", key)
    if type(rule) is ObjectRule and type(value) is dict:
        args = rule.args
        return (
            "object",
            tuple(
                sorted(
                    (name, canonical(args[name], item) if name in args else plain_form(item))
                    for name, item in value.items()
                )
            ),
        )
    if type(rule) is ListRule and type(value) is list:
        items = [canonical(rule.items, item) for item in value]
        return ("array", tuple(items) if rule.ordered else tuple(sorted(items, key=repr)))
    return plain_form(value)


def plain_form(value: Any) -> Any:
    """A hashable form of a JSON value: objects with sorted keys, numbers compared as numbers
    (`1` is `1.0`) but never as booleans, and every NaN alike."""
    kind = type(value)
    if kind is dict:
        return ("object", tuple(sorted((k, plain_form(v)) for k, v in value.items())))
    if kind is list or kind is tuple:
        return ("array", tuple(plain_form(v) for v in value))
    if kind is bool:
        return ("boolean", value)
    if kind is float and value != value:  # noqa: PLR0124 - true for NaN only
        return ("nan",)
    return value
