"""How close a case came and how many calls it wasted: partial credit and efficiency.

The verdict is all or nothing; these numbers stand beside it (docs/formats.md, partial
credit). `matched` is a maximum matching of a plan's calls to the produced calls under the
rules (the matcher `plan_passes` uses, `$ref` values not compared), so it depends neither on
the order of the calls nor on which of several fitting calls comes first. Repeated calls are
found by hashing each call's canonical form, in time linear in the calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from toolscore.core.arguments import call_matches, max_matching
from toolscore.core.canonical import MAPPED_KEPT, mapped_arguments, repeated_by_form
from toolscore.core.model import Call, Efficiency, Pairs, Partial
from toolscore.core.plans import NARROW_FROM, PlanVerdict, narrowed
from toolscore.core.rules import ExactRule, ObjectRule

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
    verdict: PlanVerdict,
) -> tuple[Partial, Efficiency]:
    """The partial credit and efficiency of `calls` against the best of `plans` (highest F1;
    ties: the verdict's plan, then the lowest index).

    A case that passed is credited from its verdict's pairs without matching anew: every
    plan call of the verdict's plan is matched and no unexcused call is left over. A failed
    case's verdict pairs that no mismatch is attached to fit, so the matching against the
    verdict's plan starts from them and searches only for the plan calls they leave, on the
    pairs the diagnosis found to fit when it weighed them all (`PlanVerdict.fits`).
    """
    verdict_plan, passed, pairs = verdict.plan, verdict.passed, verdict.pairs
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
        fits = verdict.fits if index == verdict_plan else None
        if index == verdict_plan and pairs:
            wrong = {(mismatch.plan_call, mismatch.call) for mismatch in verdict.mismatches}
            seeds = tuple(pair for pair in pairs if pair not in wrong)
        if (
            (index == verdict_plan and len(plan) == 1)
            or len(seeds) == len(plan)
            or not m
            or (fits is not None and len(fits) == len(seeds))
        ):
            # A one-call plan: the verdict paired it with its closest call of the tool (none
            # when there is none), so a mismatch there means that no call fits it. And where
            # the seeds are every pair that fits, none is left to add.
            found = seeds
        elif fits is not None:
            found = _matched_on(len(plan), m, fits, seeds)
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


def _matched_on(n: int, m: int, fits: frozenset[tuple[int, int]], seeds: Pairs) -> Pairs:
    """A maximum matching of `n` plan calls to `m` produced calls on the pairs `fits`,
    started from `seeds` (a subset of them)."""
    candidates: list[list[int]] = [[] for _ in range(n)]
    for i, j in sorted(fits):
        candidates[i].append(j)
    left_of: list[int | None] = [None] * m
    for i, j in seeds:
        left_of[j] = i
    right_of = max_matching(candidates, m, _always, left_of)
    return tuple((i, j) for i, j in enumerate(right_of) if j is not None)


def _always(i: int, j: int) -> bool:
    """Every candidate fits (`_matched_on` gives only the pairs that do)."""
    return True


def repeated_calls(tools: Mapping[str, ObjectRule], calls: Sequence[Call]) -> int:
    """How many calls equal an earlier call of `calls`: same tool, and the same arguments in
    the canonical form of the tool's rules (`core.canonical`).

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
    return 0 if len(told) == len(calls) else repeated_by_form(tools, calls)


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
        mapped = mapped_arguments(rule)
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
