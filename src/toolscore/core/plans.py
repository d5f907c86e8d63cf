"""Whether produced calls carry out a plan: optimal, order-free pairing of calls to plan calls.

A plan is matched as a multiset by maximum bipartite matching, never greedily and never by
position; a plan whose calls are linked by `$ref` or `after` is searched through its links
(`dataflow.search_pairing`). This module says whether a plan passes and under which pairing;
why a plan fails is `diagnosis`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from toolscore.core.arguments import accepted_keys, call_matches, matches, max_matching
from toolscore.core.dataflow import (
    SearchGaveUpError,
    dependencies,
    has_unresolved,
    search_pairing,
    substitute,
)
from toolscore.core.model import MISSING, Call, Mismatch
from toolscore.core.rules import ObjectRule, Rule


class PlanVerdict(NamedTuple):
    """The outcome of matching the produced calls against one plan (or the best of several)."""

    plan: int | None
    passed: bool
    pairs: tuple[tuple[int, int], ...]
    mismatches: tuple[Mismatch, ...]
    fits: frozenset[tuple[int, int]] | None = None
    """For a failed unlinked plan whose diagnosis weighed every same-tool pair: the pairs
    (plan call, produced call) that fit, without a mismatch; None when it did not weigh
    them all. Partial credit matches on these instead of comparing the calls again."""


def plan_passes(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plan: Sequence[Call],
    calls: Sequence[Call],
    known: dict[tuple[int, int], bool] | None = None,
) -> tuple[tuple[int, int], ...] | None:
    """The pairing under which `calls` carry out `plan` exactly, or None when there is none.

    Every expected call must be paired with an equal produced call of the same tool, and
    every produced call paired too, except calls to tools in `extra_ok` (relaxed extras).
    A `$ref` in the plan is not compared here (see `linked_plan_passes`). `known` gathers
    whether each pair the search compared fits, for a diagnosis to reuse.
    """
    return cover(
        plan,
        calls,
        extra_ok,
        lambda i, j: call_matches(tools[plan[i].name], plan[i], calls[j]),
        lambda candidates: narrowed(tools, plan, calls, candidates),
        known,
    )


def cover(
    plan: Sequence[Call],
    calls: Sequence[Call],
    extra_ok: frozenset[str],
    fits: Callable[[int, int], bool],
    narrow: Callable[[list[list[int]]], list[list[int]]] | None = None,
    known: dict[tuple[int, int], bool] | None = None,
) -> tuple[tuple[int, int], ...] | None:
    """A pairing in which every plan call has a produced call of its tool that `fits` it and
    every produced call is paired (relaxed extras aside), or None when there is none.

    `narrow` may strike from each plan call's candidates (the produced calls of its tool, in
    order) some that do not fit it: the search skips those anyway, so it finds the same
    pairing, without asking `fits` about them. `known` (pair -> whether it fits) keeps what
    `fits` answered.
    """
    n, m = len(plan), len(calls)
    if n == 0:
        return () if m == 0 else None  # abstaining means no call at all, relaxed or not
    if m < n or (m > n and not extra_ok):
        return None
    if n == 1 and m == 1:
        return ((0, 0),) if plan[0].name == calls[0].name and fits(0, 0) else None
    by_name: dict[str, list[int]] = {}
    for j, call in enumerate(calls):
        by_name.setdefault(call.name, []).append(j)
    candidates = [by_name.get(e.name, []) for e in plan]
    if all(len(rights) == 1 for rights in candidates):
        # Each plan call has one possible partner: the pairing is forced, or there is none.
        pairs = tuple((i, rights[0]) for i, rights in enumerate(candidates))
        if len({j for _, j in pairs}) < n or not only_relaxed_left(calls, pairs, extra_ok):
            return None
        return pairs if all(fits(i, j) for i, j in pairs) else None
    if narrow is not None and n * m >= NARROW_FROM:
        candidates = narrow(candidates)
        if not all(candidates):
            return None  # a plan call that nothing fits
    memo: dict[tuple[int, int], bool] = {} if known is None else known

    def cached(i: int, j: int) -> bool:
        found = memo.get((i, j))
        if found is None:
            found = memo[i, j] = fits(i, j)
        return found

    strict = [j for j, call in enumerate(calls) if call.name not in extra_ok]
    if len(strict) > n:
        return None
    left_of: list[int | None] | None = None
    if len(strict) < m:
        # Match the produced calls that may not stay unpaired first, from their side; the
        # augmenting passes from the plan's side below keep them matched (Berge).
        reverse: list[list[int]] = [[] for _ in range(m)]
        for i, rights in enumerate(candidates):
            for j in rights:
                reverse[j].append(i)
        left_of = max_matching(reverse, n, lambda j, i: cached(i, j), order=strict)
        if any(left_of[j] is None for j in strict):
            return None
    right_of = max_matching(candidates, m, cached, left_of)
    if any(j is None for j in right_of) or len(set(right_of).intersection(strict)) < len(strict):
        return None
    return tuple((i, j) for i, j in enumerate(right_of) if j is not None)


NARROW_FROM = 36
"""Candidate pairs of one tool (plan calls x produced calls) from which `cover` looks the
produced calls up by an argument (`narrowed`); on fewer, trying each pair costs less."""


def narrowed(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    candidates: list[list[int]],
) -> list[list[int]]:
    """`candidates` (per plan call, the produced calls of its tool) without the calls whose
    value of one keyed argument (`Rule.key`) cannot equal the plan call's, order kept.

    Fifty refunds with fifty order ids then leave each plan call one or two candidates
    instead of fifty. The argument is the one whose produced values have the most keys.
    """
    rows_of: dict[str, list[int]] = {}
    for i, expected in enumerate(plan):
        rows_of.setdefault(expected.name, []).append(i)
    narrow = list(candidates)
    for name, rows in rows_of.items():
        cols = candidates[rows[0]]
        if len(rows) * len(cols) < NARROW_FROM:
            continue
        found = _keyed_index(tools[name], calls, cols)
        if found is None:
            continue
        index, anywhere, arg, rule, default = found
        for i in rows:
            args = plan[i].args
            keys = accepted_keys(rule, args.get(arg, default)) if type(args) is dict else None
            if keys is not None:
                narrow[i] = sorted([j for key in keys for j in index.get(key, ())] + anywhere)
    return narrow


def _keyed_index(
    rule: ObjectRule, calls: Sequence[Call], cols: Sequence[int]
) -> tuple[dict[Any, list[int]], list[int], str, Rule, Any] | None:
    """The produced calls `cols` by their key for the keyed argument with the most distinct
    keys, the calls that have no key for it (they stay candidates of every plan call), and
    the argument's name, rule and default; None when the tool has no keyed argument."""
    best = None
    for name, sub, default, _ in rule.compared_args:
        if not sub.keyed:
            continue
        index: dict[Any, list[int]] = {}
        anywhere: list[int] = []
        for j in cols:
            args = calls[j].args
            if args is None:
                continue  # unparsed arguments fit no plan call
            value = args.get(name, MISSING) if type(args) is dict else MISSING
            # An omitted value may be acceptable in ways a key does not say ($omitted).
            key = None if value is MISSING else sub.key(value)
            if key is None:
                anywhere.append(j)
            else:
                index.setdefault(key, []).append(j)
        if best is None or len(index) > len(best[0]):
            best = (index, anywhere, name, sub, default)
    return best


def only_relaxed_left(
    calls: Sequence[Call], pairs: Sequence[tuple[int, int]], extra_ok: frozenset[str]
) -> bool:
    """Whether every produced call that `pairs` leaves unpaired is a relaxed extra."""
    paired = {j for _, j in pairs}
    return all(j in paired or call.name in extra_ok for j, call in enumerate(calls))


def names_match(
    plans: Sequence[Sequence[Call]], calls: Sequence[Call], extra_ok: frozenset[str]
) -> bool:
    """True when the produced tool names equal some plan's as a multiset (relaxed extras aside)."""
    if not extra_ok:
        names = sorted(call.name for call in calls)
        return any(sorted(call.name for call in plan) == names for plan in plans)
    produced = Counter(call.name for call in calls)
    for plan in plans:
        surplus = produced.copy()
        surplus.subtract(call.name for call in plan)
        if all(count == 0 or (count > 0 and name in extra_ok) for name, count in surplus.items()):
            return True
    return False


def linked_plan_passes(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plan: Sequence[Call],
    calls: Sequence[Call],
) -> tuple[tuple[int, int], ...] | None:
    """Like `plan_passes`, for a plan whose calls are linked by `$ref` or `after`.

    A search over the links decides. The first time it fails to finish, it checks that the
    plan passes with its links ignored (a necessary test) and stops if not, so a missing call
    does not make it try every pairing of the sources. A search that gives up on a hostile
    plan counts as no pairing found (`best_plan` still passes the case when its diagnosis
    finds nothing wrong).
    """
    fits = link_fits(tools, plan, calls)
    deps = dependencies(plan)
    relaxed_checked = False

    def finish(
        assigned: Mapping[int, int], consumer_fits: Callable[[int, int], bool]
    ) -> tuple[tuple[int, int], ...] | None:
        nonlocal relaxed_checked
        rest_plan, rest_calls = left_over(len(plan), len(calls), assigned)

        def rest_fits(a: int, b: int) -> bool:
            i, j = rest_plan[a], rest_calls[b]
            if deps[i]:
                return consumer_fits(i, j)
            return call_matches(tools[plan[i].name], plan[i], calls[j])

        if rest_plan:
            rest = [plan[i] for i in rest_plan]
            found = cover(rest, [calls[j] for j in rest_calls], extra_ok, rest_fits)
            if found is not None:
                pairs = [(rest_plan[a], rest_calls[b]) for a, b in found]
                return tuple(sorted(pairs + list(assigned.items())))
        elif all(calls[j].name in extra_ok for j in rest_calls):
            return tuple(sorted(assigned.items()))  # what is left is relaxed extras only
        if not relaxed_checked:
            relaxed_checked = True
            if plan_passes(tools, extra_ok, plan, calls) is None:
                raise _NoPairingError
        return None

    try:
        return search_pairing(
            plan, calls, fits, finish, True, relaxed_fits(tools, plan, calls), deps=deps
        )
    except (SearchGaveUpError, _NoPairingError):
        return None


class _NoPairingError(Exception):
    """Not even the plan with its links ignored passes: no pairing of the links can."""


def link_fits(
    tools: Mapping[str, ObjectRule], plan: Sequence[Call], calls: Sequence[Call]
) -> Callable[[int, int, Mapping[str, Call]], bool]:
    """Whether plan call i can be produced call j, given the calls its labels are paired with:
    same tool, and the arguments, with each `$ref` resolved, equal under the rules."""

    def fits(i: int, j: int, sources: Mapping[str, Call]) -> bool:
        expected, produced = plan[i], calls[j]
        if produced.name != expected.name or produced.args is None:
            return False
        args = substitute(expected.args, sources)
        return not has_unresolved(args) and matches(tools[expected.name], args, produced.args)

    return fits


def left_over(n: int, m: int, assigned: Mapping[int, int]) -> tuple[list[int], list[int]]:
    """The plan calls and the produced calls that a link search's pairs leave unpaired."""
    taken = set(assigned.values())
    return [i for i in range(n) if i not in assigned], [j for j in range(m) if j not in taken]


def relaxed_fits(
    tools: Mapping[str, ObjectRule], plan: Sequence[Call], calls: Sequence[Call]
) -> Callable[[int, int], bool]:
    """Whether plan call i could be produced call j at all: same tool, equal arguments with
    every `$ref` left uncompared."""

    def could_fit(i: int, j: int) -> bool:
        expected, produced = plan[i], calls[j]
        return expected.name == produced.name and call_matches(
            tools[expected.name], expected, produced
        )

    return could_fit
