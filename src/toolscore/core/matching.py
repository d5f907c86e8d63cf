"""Argument comparison and optimal, order-free matching of produced calls to plans.

`iter_mismatches` is the one walk every verdict is built on: it descends objects
and lists, applies defaults, handles `$any`, and asks scalar rules to judge. Plans are matched
as a multiset by maximum bipartite matching, never greedily and never by position.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import orjson

from toolscore.core.assignment import assign
from toolscore.core.dataflow import (
    SearchGaveUpError,
    dependencies,
    has_unresolved,
    is_linked,
    link_problems,
    search_pairing,
    substitute,
)
from toolscore.core.model import MISSING, OMITTED, AnyOf, Call, Mismatch, Ref
from toolscore.core.rules import ListRule, ObjectRule, Rule
from toolscore.core.values import show
from toolscore.escape import printable

Path = tuple[str | int, ...]


_MARKERS = frozenset({AnyOf, Ref})
"""Expected values that are not plain values: the walk handles them, not the rule."""

FOUND = Mismatch("value_mismatch", message="(not explained)")
"""What the walk yields when asked only *whether* values differ (`explain=False`)."""


def iter_mismatches(
    rule: Rule, expected: Any, produced: Any, path: Path = (), explain: bool = True
) -> Iterator[Mismatch]:
    """Yield every reason why `produced` differs from `expected` under `rule`, with its path.

    With `explain=False` it yields `FOUND` instead of building a described mismatch, for
    callers that only need to know whether there is one (`matches`).
    """
    if not rule.compared or type(expected) is Ref:
        return  # a `$ref` is resolved and reported by `dataflow`, not compared here
    if type(expected) is AnyOf:
        yield from _any_of(rule, expected, produced, path, explain)
        return
    if (expected is None or produced is None) and not rule.judges_null:
        if expected is not produced:
            yield _null_mismatch(rule, expected, produced, path) if explain else FOUND
        return
    if rule.scalar:
        verdict = rule.judge(expected, produced)
        if verdict is not None:
            yield _described(rule, verdict, expected, produced, path) if explain else FOUND
    elif type(rule) is ObjectRule:
        yield from _object(rule, expected, produced, path, explain)
    elif type(rule) is ListRule:
        yield from _list(rule, expected, produced, path, explain)


def matches(rule: Rule, expected: Any, produced: Any) -> bool:
    """True when `produced` equals `expected` under `rule` (the walk finds nothing)."""
    if type(rule) is ObjectRule and isinstance(expected, dict) and isinstance(produced, dict):
        return next(_object(rule, expected, produced, (), False), None) is None  # one frame less
    return next(iter_mismatches(rule, expected, produced, (), False), None) is None


def value_problem(rule: Rule, value: Any) -> str | None:
    """Why `rule` rejects `value` even compared with itself, or None when it is acceptable."""
    for mismatch in iter_mismatches(rule, value, value):
        return f"{mismatch.pointer}: {mismatch.message}" if mismatch.path else mismatch.message
    return None


def _described(
    rule: Rule, verdict: tuple[str, Callable[[], str]], expected: Any, produced: Any, path: Path
) -> Mismatch:
    return Mismatch(verdict[0], path, rule.describe(), expected, produced, verdict[1]())


def _null_mismatch(rule: Rule, expected: Any, produced: Any, path: Path) -> Mismatch:
    message = f"{show(produced)} does not equal {show(expected)}"
    return Mismatch("value_mismatch", path, rule.describe(), expected, produced, message)


def _any_of(
    rule: Rule, alternatives: AnyOf, produced: Any, path: Path, explain: bool
) -> Iterator[Mismatch]:
    first: Mismatch | None = None
    for alternative in alternatives:
        if alternative is OMITTED:
            continue  # the argument is present: its omission is not what happened
        mismatch = next(iter_mismatches(rule, alternative, produced, path, explain), None)
        if mismatch is None:
            return
        first = first or mismatch
    if not explain:
        yield FOUND
        return
    shown = ", ".join(show(a) for a in alternatives)
    code = first.code if first is not None and len(alternatives) == 1 else "value_mismatch"
    if first is None:
        code = "unexpected_argument"  # the only acceptable answer was to leave it out
    yield Mismatch(
        code,
        path,
        rule.describe(),
        list(alternatives),
        produced,
        f"{show(produced)} matches none of the acceptable values {shown}",
    )


def _object(
    rule: ObjectRule, expected: Any, produced: Any, path: Path, explain: bool
) -> Iterator[Mismatch]:
    if not isinstance(produced, dict) or not isinstance(expected, dict):
        side = "expected value" if isinstance(produced, dict) else "value"
        message = f"the {side} is not an object: {show(produced)}"
        yield Mismatch("type_mismatch", path, "object", expected, produced, message)
        return
    given = 0  # how many produced keys the loop met, to skip the unknown-key scan
    for name, sub, default, plain in rule.compared_args:
        e = expected.get(name, default)
        p = produced.get(name, MISSING)
        if p is MISSING:
            if type(e) is AnyOf and OMITTED in e:
                continue  # leaving it out is one of the acceptable answers
            p = default
        else:
            given += 1
        if e is MISSING or p is MISSING:
            if e is p or rule.ignore_missing:
                continue
            yield _omission(name, sub, e, p, path) if explain else FOUND
        elif plain and e is not None and p is not None and type(e) not in _MARKERS:
            verdict = sub.judge(e, p)
            if verdict is not None:
                yield _described(sub, verdict, e, p, (*path, name)) if explain else FOUND
        else:
            yield from iter_mismatches(sub, e, p, (*path, name), explain)
    if len(produced) > given and not rule.allow_unknown:
        for name in produced:
            if name not in rule.args:
                yield (
                    Mismatch(
                        "unexpected_argument",
                        (*path, name),
                        None,
                        MISSING,
                        produced[name],
                        f"argument {name!r} is not in the spec",
                    )
                    if explain
                    else FOUND
                )


def _omission(name: str, rule: Rule, expected: Any, produced: Any, path: Path) -> Mismatch:
    """An argument present on one side only, with no default to stand in for it."""
    if produced is MISSING:
        message = f"argument {name!r} is missing (expected {show(expected)})"
        return Mismatch(
            "missing_argument", (*path, name), rule.describe(), expected, MISSING, message
        )
    message = (
        f"argument {name!r} was given ({show(produced)}) "
        "but the plan omits it and it has no default"
    )
    return Mismatch(
        "unexpected_argument", (*path, name), rule.describe(), MISSING, produced, message
    )


def _list(
    rule: ListRule, expected: Any, produced: Any, path: Path, explain: bool
) -> Iterator[Mismatch]:
    if not isinstance(produced, list) or not isinstance(expected, list):
        side = "expected value" if isinstance(produced, list) else "value"
        message = f"the {side} is not an array: {show(produced)}"
        yield Mismatch("type_mismatch", path, rule.describe(), expected, produced, message)
        return
    if rule.ordered:
        for index, (e, p) in enumerate(zip(expected, produced, strict=False)):
            yield from iter_mismatches(rule.items, e, p, (*path, index), explain)
        if len(expected) != len(produced):
            message = f"expected {len(expected)} items, got {len(produced)}"
            yield (
                Mismatch("value_mismatch", path, rule.describe(), expected, produced, message)
                if explain
                else FOUND
            )
        return
    items = rule.items
    every = [range(len(produced))] * len(expected)
    paired = max_matching(
        every, len(produced), lambda i, j: matches(items, expected[i], produced[j])
    )
    unmatched = sum(1 for j in paired if j is None)
    if unmatched or len(expected) != len(produced):
        message = (
            f"as a multiset: {unmatched} of {len(expected)} expected items have no equal, "
            f"{len(produced)} items given"
        )
        yield (
            Mismatch("value_mismatch", path, rule.describe(), expected, produced, message)
            if explain
            else FOUND
        )


def max_matching(
    candidates: Sequence[Sequence[int]],
    n_right: int,
    fits: Callable[[int, int], bool],
    left_of: list[int | None] | None = None,
    order: Sequence[int] | None = None,
) -> list[int | None]:
    """Maximum bipartite matching by augmenting paths (Kuhn): the right partner of each left.

    `candidates[left]` lists the rights that may fit; `fits(left, right)` decides, and is
    asked only for the pairs the search reaches (it is usually a full argument comparison).
    `left_of` (right -> left) may hold a starting matching; augmenting keeps every vertex that
    is already matched matched, which `plan_passes` relies on. Written here rather than taken
    from scipy because plans are small and a sparse matrix's overhead would dominate.
    """
    left_of = [None] * n_right if left_of is None else left_of
    right_of: list[int | None] = [None] * len(candidates)
    for right, left in enumerate(left_of):
        if left is not None:
            right_of[left] = right

    def augment(start: int, seen: list[bool]) -> bool:
        # Depth first from `start`. Most paths end at the first level, so that level is a
        # plain loop; deeper ones go on with a stack (a path can be as long as the plan).
        rights = iter(candidates[start])
        for right in rights:
            if seen[right] or not fits(start, right):
                continue
            seen[right] = True
            owner = left_of[right]
            if owner is None:
                left_of[right] = start
                right_of[start] = right
                return True
            return deeper([(start, rights), (owner, iter(candidates[owner]))], [right], seen)
        return False

    def deeper(stack: list[tuple[int, Iterator[int]]], path: list[int], seen: list[bool]) -> bool:
        # Each level: a left, the rights it has still to try, and (in `path`) the right that
        # led to the next level. A free right reached flips every pair on the path.
        while stack:
            left, rights = stack[-1]
            for right in rights:
                if seen[right] or not fits(left, right):
                    continue
                seen[right] = True
                path.append(right)
                owner = left_of[right]
                if owner is None:
                    for (on_path, _), taken in zip(stack, path, strict=True):
                        left_of[taken] = on_path
                        right_of[on_path] = taken
                    return True
                stack.append((owner, iter(candidates[owner])))
                break
            else:
                stack.pop()
                if path:
                    path.pop()  # the right that led here: its owner found no other
        return False

    for left in range(len(candidates)) if order is None else order:
        if right_of[left] is None:
            augment(left, [False] * n_right)
    return right_of


class PlanVerdict(NamedTuple):
    """The outcome of matching the produced calls against one plan (or the best of several)."""

    plan: int | None
    passed: bool
    pairs: tuple[tuple[int, int], ...]
    mismatches: tuple[Mismatch, ...]


def _call_mismatches(rule: ObjectRule, expected: Call, produced: Call) -> list[Mismatch]:
    if produced.args is None:
        return [
            Mismatch(
                "arguments_unparseable",
                (),
                None,
                MISSING,
                produced.raw_args,
                f"arguments could not be parsed: {produced.args_error}",
            )
        ]
    if isinstance(expected.args, dict) and isinstance(produced.args, dict):
        return list(_object(rule, expected.args, produced.args, (), True))  # one frame less
    return list(iter_mismatches(rule, expected.args, produced.args))


def _call_matches(rule: ObjectRule, expected: Call, produced: Call) -> bool:
    return produced.args is not None and matches(rule, expected.args, produced.args)


def plan_passes(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plan: Sequence[Call],
    calls: Sequence[Call],
) -> tuple[tuple[int, int], ...] | None:
    """The pairing under which `calls` carry out `plan` exactly, or None when there is none.

    Every expected call must be paired with an equal produced call of the same tool, and
    every produced call paired too, except calls to tools in `extra_ok` (relaxed extras).
    A `$ref` in the plan is not compared here (see `linked_plan_passes`).
    """
    return cover(
        plan,
        calls,
        extra_ok,
        lambda i, j: _call_matches(tools[plan[i].name], plan[i], calls[j]),
        lambda candidates: narrowed(tools, plan, calls, candidates),
    )


def cover(
    plan: Sequence[Call],
    calls: Sequence[Call],
    extra_ok: frozenset[str],
    fits: Callable[[int, int], bool],
    narrow: Callable[[list[list[int]]], list[list[int]]] | None = None,
) -> tuple[tuple[int, int], ...] | None:
    """A pairing in which every plan call has a produced call of its tool that `fits` it and
    every produced call is paired (relaxed extras aside), or None when there is none.

    `narrow` may strike from each plan call's candidates (the produced calls of its tool, in
    order) some that do not fit it: the search skips those anyway, so it finds the same
    pairing, without asking `fits` about them.
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
        if len({j for _, j in pairs}) < n or not _only_relaxed_left(calls, pairs, extra_ok):
            return None
        return pairs if all(fits(i, j) for i, j in pairs) else None
    if narrow is not None and n * m >= NARROW_FROM:
        candidates = narrow(candidates)
        if not all(candidates):
            return None  # a plan call that nothing fits
    known: dict[tuple[int, int], bool] = {}

    def cached(i: int, j: int) -> bool:
        found = known.get((i, j))
        if found is None:
            found = known[i, j] = fits(i, j)
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
            keys = _accepted_keys(rule, args.get(arg, default)) if type(args) is dict else None
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


def _accepted_keys(rule: Rule, expected: Any) -> frozenset[Any] | None:
    """The keys of the present values that can equal `expected` under a keyed `rule`: its own
    key, or those of its `$any` alternatives. None when some such value has no key."""
    if type(expected) is AnyOf:
        keys = [rule.key(value) for value in expected if value is not OMITTED]
    elif expected is MISSING:
        return None
    else:
        keys = [rule.key(expected)]
    return None if None in keys else frozenset(keys)


def diagnose_plan(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plan: Sequence[Call],
    calls: Sequence[Call],
    linked: bool = False,
) -> tuple[tuple[tuple[int, int], ...], list[Mismatch]]:
    """The best pairing for a plan the calls do not carry out, and the mismatches it leaves.

    Best means most same-tool pairs, then fewest mismatches (a minimum-cost assignment), so
    the reasons shown do not depend on the order of the calls. For a linked plan, a pairing
    that satisfies every link is preferred (the fault is then elsewhere); failing that, the
    pairing is chosen on the arguments alone and its links are checked.
    """
    kept = _links_kept(tools, plan, calls) if linked else None
    if kept is None:
        found = _best_pairing(tools, plan, calls)
        assert found is not None  # no call is required to pair, so a pairing always exists
        pairs, pair_mismatches = found
    else:
        pairs = kept
        pair_mismatches = [
            _call_mismatches(tools[plan[i].name], plan[i], calls[j]) for i, j in pairs
        ]
    if linked:
        checked = link_problems(plan, calls, pairs)
        for k, (i, j) in enumerate(pairs):
            if (i, j) in checked and calls[j].args is not None:
                args, problems = checked[i, j]
                rule = tools[plan[i].name]
                pair_mismatches[k] = problems + list(iter_mismatches(rule, args, calls[j].args))
    return pairs, _explain_pairing(tools, extra_ok, plan, calls, pairs, pair_mismatches)


def _explain_pairing(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plan: Sequence[Call],
    calls: Sequence[Call],
    pairs: Sequence[tuple[int, int]],
    pair_mismatches: Sequence[Sequence[Mismatch]],
) -> list[Mismatch]:
    """Every mismatch of a chosen pairing: those of each pair (`pair_mismatches`, placed at
    their calls), then a `wrong_tool` or `missing_call` for each plan call left unpaired and
    an `unknown_tool` or `extra_call` for each produced call left over."""
    mismatches: list[Mismatch] = []
    for (i, j), described in zip(pairs, pair_mismatches, strict=True):
        mismatches.extend(mm.at(j, i) for mm in described)
    paired_plan = {i for i, _ in pairs}
    paired_calls = {j for _, j in pairs}
    leftover_plan = [i for i in range(len(plan)) if i not in paired_plan]
    leftover_calls = [j for j in range(len(calls)) if j not in paired_calls]
    known_extras = [
        j for j in leftover_calls if calls[j].name in tools and calls[j].name not in extra_ok
    ]
    if leftover_plan and len(known_extras) > 1:
        rank = {j: r for r, j in enumerate(canonical_order(calls))}
        known_extras.sort(key=rank.__getitem__)
    for i in leftover_plan:
        e = plan[i]
        if known_extras:
            j = known_extras.pop(0)
            leftover_calls.remove(j)
            mismatches.append(
                Mismatch(
                    "wrong_tool",
                    (),
                    None,
                    e.name,
                    calls[j].name,
                    f"called {calls[j].name!r} where {e.name!r} was expected",
                    j,
                    i,
                )
            )
        else:
            mismatches.append(
                Mismatch(
                    "missing_call",
                    (),
                    None,
                    e.name,
                    MISSING,
                    f"expected a call to {e.name!r}, none was made",
                    None,
                    i,
                )
            )
    for j in leftover_calls:
        name = calls[j].name
        if name not in tools:
            known = ", ".join(sorted(tools))
            mismatches.append(
                Mismatch(
                    "unknown_tool",
                    (),
                    None,
                    MISSING,
                    name,
                    f"{name!r} is not a tool in the spec (tools: {known})",
                    j,
                    None,
                )
            )
        elif name not in extra_ok or not plan:
            mismatches.append(
                Mismatch(
                    "extra_call",
                    (),
                    None,
                    MISSING,
                    name,
                    f"call to {name!r} is not in the plan",
                    j,
                    None,
                )
            )
    return mismatches


def _link_fits(
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


def _links_kept(
    tools: Mapping[str, ObjectRule], plan: Sequence[Call], calls: Sequence[Call]
) -> tuple[tuple[int, int], ...] | None:
    """A pairing in which every linked call fits its sources (after them if possible), the
    rest paired as well as they can be; None when no such pairing exists (or the search for
    one gave up on a hostile plan)."""

    fits = _link_fits(tools, plan, calls)
    deps = dependencies(plan)

    def finish(
        assigned: Mapping[int, int], consumer_fits: Callable[[int, int], bool]
    ) -> tuple[tuple[int, int], ...] | None:
        rest_plan, rest_calls = _left_over(len(plan), len(calls), assigned)
        consumers = {a for a, i in enumerate(rest_plan) if deps[i]}
        found = _best_pairing(
            tools,
            [plan[i] for i in rest_plan],
            [calls[j] for j in rest_calls],
            lambda a, b: consumer_fits(rest_plan[a], rest_calls[b]),
            consumers,
        )
        if found is None:
            return None
        pairs = [(rest_plan[a], rest_calls[b]) for a, b in found[0]]
        return tuple(sorted(pairs + list(assigned.items())))

    could_fit = _relaxed_fits(tools, plan, calls)
    try:
        in_order = search_pairing(plan, calls, fits, finish, True, could_fit, deps=deps)
        if in_order is not None:
            return in_order
        return search_pairing(plan, calls, fits, finish, False, could_fit, deps=deps)
    except SearchGaveUpError:
        return None


def _left_over(n: int, m: int, assigned: Mapping[int, int]) -> tuple[list[int], list[int]]:
    """The plan calls and the produced calls that a link search's pairs leave unpaired."""
    taken = set(assigned.values())
    return [i for i in range(n) if i not in assigned], [j for j in range(m) if j not in taken]


def _relaxed_fits(
    tools: Mapping[str, ObjectRule], plan: Sequence[Call], calls: Sequence[Call]
) -> Callable[[int, int], bool]:
    """Whether plan call i could be produced call j at all: same tool, equal arguments with
    every `$ref` left uncompared."""

    def could_fit(i: int, j: int) -> bool:
        expected, produced = plan[i], calls[j]
        return expected.name == produced.name and _call_matches(
            tools[expected.name], expected, produced
        )

    return could_fit


def canonical_order(calls: Sequence[Call]) -> list[int]:
    """Positions of `calls` sorted by content, so that ties in a diagnosis are broken the same
    way whatever order the agent made the calls in."""
    if len(calls) < 2:
        return list(range(len(calls)))
    return sorted(range(len(calls)), key=lambda j: _content_key(calls[j]))


def _content_key(call: Call) -> tuple[str, str]:
    """What `canonical_order` sorts by: the tool name, then the arguments as sorted JSON."""
    if call.args is None:
        return call.name, "\x00" + (call.raw_args or "")
    try:
        text = orjson.dumps(call.args, option=orjson.OPT_SORT_KEYS, default=str).decode()
    except orjson.JSONEncodeError:  # nested too deep to write: all such calls tie
        text = "\x01"
    return call.name, text


def _best_pairing(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    allowed: Callable[[int, int], bool] | None = None,
    required: frozenset[int] | set[int] = frozenset(),
) -> tuple[tuple[tuple[int, int], ...], list[list[Mismatch]]] | None:
    """Most same-tool pairs, then fewest mismatches; ties broken by content, not position.

    The plan calls in `required` must each be paired with a produced call that `allowed`
    accepts (a consumer of a linked plan and what its sources allow); None when they cannot.
    """
    same_tool = [
        (i, j)
        for i, e in enumerate(plan)
        for j, p in enumerate(calls)
        if e.name == p.name and (i not in required or (allowed is not None and allowed(i, j)))
    ]
    paired_plan = {i for i, _ in same_tool}
    if not paired_plan.issuperset(required):
        return None  # a call that must be paired has no candidate
    if len(paired_plan) == len(same_tool) == len({j for _, j in same_tool}):
        # No two candidate pairs share a call, so the pairing is forced: a pair always costs
        # less than leaving its two calls unpaired, and every optimum takes them all.
        return tuple(same_tool), [
            _call_mismatches(tools[plan[i].name], plan[i], calls[j]) for i, j in same_tool
        ]
    if len(paired_plan) == 1:
        return _best_single(tools, plan, calls, same_tool, required)
    if not required and all(j == same_tool[0][1] for _, j in same_tool):
        return _best_for_one_call(tools, plan, calls, same_tool)
    order = canonical_order(calls)
    rank = [0] * len(calls)
    for position, j in enumerate(order):
        rank[j] = position
    sorted_calls = [calls[j] for j in order]
    found = _best_sorted_pairing(
        tools, plan, sorted_calls, [(i, rank[j]) for i, j in same_tool], required
    )
    if found is None:
        return None
    pairs, described = found
    unsorted = [(i, order[j]) for i, j in pairs]
    chosen = sorted(range(len(unsorted)), key=unsorted.__getitem__)
    return tuple(unsorted[k] for k in chosen), [described[k] for k in chosen]


def _best_single(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    same_tool: Sequence[tuple[int, int]],
    required: frozenset[int] | set[int],
) -> tuple[tuple[tuple[int, int], ...], list[list[Mismatch]]]:
    """`_best_pairing` when one plan call has every candidate: the one with fewest
    mismatches, the first in canonical order among equals, as the assignment would choose
    (`assignment.assign` takes, on a single row, the first of its cheapest columns)."""
    i = same_tool[0][0]
    rule = tools[plan[i].name]
    counts = {
        j: 0 if i in required else _mismatch_count(rule, plan[i], calls[j]) for _, j in same_tool
    }
    fewest = min(counts.values())
    tied = [j for j, count in counts.items() if count == fewest]
    j = tied[0] if len(tied) == 1 else min(tied, key=lambda j: (_content_key(calls[j]), j))
    clean = fewest == 0 and i not in required
    return ((i, j),), [_pair_mismatches(tools, plan, calls, i, j, clean)]


def _best_for_one_call(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    same_tool: Sequence[tuple[int, int]],
) -> tuple[tuple[tuple[int, int], ...], list[list[Mismatch]]]:
    """`_best_pairing` when every candidate pair has the same produced call and no plan call
    must be paired: the plan call with fewest mismatches, the first in plan order among
    equals, as the assignment would choose (its rows come in plan order, and a row takes
    the column an earlier row holds only when that costs strictly less)."""
    j = same_tool[0][1]
    count, i = min(
        (_mismatch_count(tools[plan[i].name], plan[i], calls[j]), i) for i, _ in same_tool
    )
    return ((i, j),), [_pair_mismatches(tools, plan, calls, i, j, count == 0)]


def _best_sorted_pairing(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    same_tool: Sequence[tuple[int, int]],
    required: frozenset[int] | set[int],
) -> tuple[tuple[tuple[int, int], ...], list[list[Mismatch]]] | None:
    """`_best_pairing` once the calls are in canonical order, with its candidate pairs given
    in that order: a minimum-cost assignment (`assignment.assign`)."""
    # Costs are counted without describing anything; only the chosen pairs are described.
    counts = _pair_counts(tools, plan, calls, same_tool, required)
    rows = sorted({i for i, _ in counts} | set(required))
    cols = sorted({j for _, j in counts})
    # A pair costs its number of mismatches; "no pair" costs more than every real pair put
    # together, so the assignment maximises pairs first and minimises mismatches second. A
    # required call left unpaired costs more than any assignment that pairs them all, and
    # each row has a column of its own for "unpaired", so every row is assigned somewhere.
    unpaired = 1 + sum(counts.values())
    forbidden = unpaired * (len(rows) + 1)
    cost = [
        [counts.get((i, j), forbidden if i in required else unpaired) for j in cols]
        + [forbidden if i in required else unpaired] * len(rows)
        for i in rows
    ]
    pairs = sorted(
        (rows[r], cols[c])
        for r, c in enumerate(assign(cost))
        if 0 <= c < len(cols) and (rows[r], cols[c]) in counts
    )
    if len({i for i, _ in pairs} & set(required)) < len(required):
        return None
    described = [
        _pair_mismatches(tools, plan, calls, i, j, counts[i, j] == 0 and i not in required)
        for i, j in pairs
    ]
    return tuple(pairs), described


def _pair_mismatches(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    i: int,
    j: int,
    counted_clean: bool,
) -> list[Mismatch]:
    """The mismatches of the chosen pair (i, j). A pair already counted without a mismatch
    has none to describe: the walk that describes them is the one that counted them."""
    if counted_clean:
        return []
    return _call_mismatches(tools[plan[i].name], plan[i], calls[j])


def _mismatch_count(rule: ObjectRule, expected: Call, produced: Call) -> int:
    if produced.args is None:
        return 1
    if isinstance(expected.args, dict) and isinstance(produced.args, dict):
        return sum(1 for _ in _object(rule, expected.args, produced.args, (), False))
    return sum(1 for _ in iter_mismatches(rule, expected.args, produced.args, (), False))


COUNT_TABLE_FROM = 25
"""Pairs of one tool from which `_pair_counts` counts mismatches an argument at a time
(`mismatch_counts`); on fewer, walking each pair costs less."""


def _pair_counts(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    same_tool: Sequence[tuple[int, int]],
    required: frozenset[int] | set[int],
) -> dict[tuple[int, int], int]:
    """The mismatch count of each candidate pair, 0 for the plan calls in `required` (their
    pairs are chosen by links, not by cost). The other plan calls of a tool have every
    produced call of that tool as candidates: a table of counts, worked out in one go."""
    if len(same_tool) < COUNT_TABLE_FROM:  # no table would be large enough
        return {
            (i, j): 0 if i in required else _mismatch_count(tools[plan[i].name], plan[i], calls[j])
            for i, j in same_tool
        }
    counts: dict[tuple[int, int], int] = {}
    tables: dict[str, tuple[list[int], list[int]]] = {}
    for i, j in same_tool:
        if i in required:
            counts[i, j] = 0
            continue
        rows, cols = tables.setdefault(plan[i].name, ([], []))
        if not rows or rows[-1] != i:
            rows.append(i)
        if len(rows) == 1:
            cols.append(j)  # every row of the tool has these same columns
    for name, (rows, cols) in tables.items():
        rule = tools[name]
        if len(rows) * len(cols) < COUNT_TABLE_FROM:
            for i in rows:
                for j in cols:
                    counts[i, j] = _mismatch_count(rule, plan[i], calls[j])
            continue
        table = mismatch_counts(rule, [plan[i] for i in rows], [calls[j] for j in cols])
        for i, row in zip(rows, table, strict=True):
            for j, count in zip(cols, row, strict=True):
                counts[i, j] = count
    return counts


def mismatch_counts(
    rule: ObjectRule, expected: Sequence[Call], produced: Sequence[Call]
) -> list[list[int]]:
    """`_mismatch_count` of every expected call with every produced call, as rows.

    Counted an argument at a time (`_ArgumentCounts`): each argument is judged once per
    distinct pair of values, not once per pair of calls, and a keyed argument (`Rule.key`)
    by looking keys up. Fifty refunds in one currency with fifty order ids then take fifty
    currency lookups and 2,500 key lookups, not 2,500 walks of every argument.
    """
    objects: list[int] = []  # the produced calls whose arguments are an object
    given: list[dict[str, Any]] = []
    for j, call in enumerate(produced):
        if type(call.args) is dict:
            objects.append(j)
            given.append(call.args)
    if not objects:
        return [[_mismatch_count(rule, e, p) for p in produced] for e in expected]
    unknown = [
        0 if rule.allow_unknown else sum(name not in rule.args for name in args) for args in given
    ]
    arguments = [_ArgumentCounts(rule, arg, given) for arg in rule.compared_args]
    every = len(objects) == len(produced)
    table = []
    for e in expected:
        if type(e.args) is not dict:
            table.append([_mismatch_count(rule, e, p) for p in produced])
            continue
        total = unknown
        for argument in arguments:
            counts = argument.counts(e.args)
            if counts is not None:
                total = [a + b for a, b in zip(total, counts, strict=True)]
        if not every:  # some arguments are not an object (unparsed): walked pair by pair
            row = [_mismatch_count(rule, e, p) if type(p.args) is not dict else 0 for p in produced]
            for j, count in zip(objects, total, strict=True):
                row[j] = count
            total = row
        table.append(total if total is not unknown else list(total))
    return table


class _ArgumentCounts:
    """One argument's mismatch counts against fixed produced calls, for any expected call.

    The produced values are grouped by `_value_class`: values of one class count the same
    against any expected value, so each group is judged once per class of expected value.
    """

    __slots__ = ("alone", "arg", "firsts", "groups", "keys", "memo", "owner", "values")

    def __init__(
        self,
        owner: ObjectRule,
        arg: tuple[str, Rule, Any, bool],
        given: Sequence[Mapping[str, Any]],
    ) -> None:
        self.owner, self.arg = owner, arg
        name, rule = arg[0], arg[1]
        self.values = [args.get(name, MISSING) for args in given]
        self.groups: list[int] = []  # per produced call, its group; -1: judged on its own
        self.firsts: list[Any] = []  # per group, its first value
        group_of: dict[Any, int] = {}
        for value in self.values:
            found = _value_class(value)
            group = -1 if found is None else group_of.setdefault(found, len(group_of))
            if group == len(self.firsts):
                self.firsts.append(value)
            self.groups.append(group)
        self.alone = -1 in self.groups
        self.keys = [
            rule.key(value) if rule.keyed and value is not MISSING else None
            for value in self.firsts
        ]
        self.memo: dict[Any, list[int]] = {}

    def counts(self, expected_args: Mapping[str, Any]) -> list[int] | None:
        """The argument's count against each produced call; None when every one is 0."""
        expected = expected_args.get(self.arg[0], self.arg[2])
        found = _value_class(expected)
        by_group = None if found is None else self.memo.get(found)
        if by_group is None:
            by_group = self._by_group(expected)
            if found is not None:
                self.memo[found] = by_group
        if not self.alone:
            return [by_group[group] for group in self.groups] if any(by_group) else None
        return [
            by_group[group] if group >= 0 else _argument_count(self.owner, self.arg, expected, p)
            for group, p in zip(self.groups, self.values, strict=True)
        ]

    def _by_group(self, expected: Any) -> list[int]:
        """The count of each group against `expected`: by keys where both sides have them."""
        accepted = _accepted_keys(self.arg[1], expected) if self.arg[1].keyed else None
        return [
            (0 if key in accepted else 1)
            if accepted is not None and key is not None
            else _argument_count(self.owner, self.arg, expected, value)
            for key, value in zip(self.keys, self.firsts, strict=True)
        ]


def _argument_count(
    owner: ObjectRule, arg: tuple[str, Rule, Any, bool], expected: Any, produced: Any
) -> int:
    """How many mismatches `_object` finds on one argument, given the expected value (its
    default applied) and the produced one (MISSING when absent): the same steps, counted."""
    _, rule, default, plain = arg
    if produced is MISSING:
        if type(expected) is AnyOf and OMITTED in expected:
            return 0
        produced = default
    if expected is MISSING or produced is MISSING:
        return 0 if expected is produced or owner.ignore_missing else 1
    if plain and expected is not None and produced is not None and type(expected) not in _MARKERS:
        return 0 if rule.judge(expected, produced) is None else 1
    return sum(1 for _ in iter_mismatches(rule, expected, produced, (), False))


def _value_class(value: Any) -> Any:
    """A hashable stand-in for a value that no rule tells apart from the value itself: its
    type and value for a JSON scalar (`1`, `1.0` and `true` are three classes), the classes
    of its alternatives for `$any`. None for objects, arrays and `$ref`s: judged each time."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return kind, value
    if value is MISSING or value is OMITTED:
        return value
    if kind is AnyOf:
        parts = tuple(_value_class(alternative) for alternative in value)
        return None if None in parts else (AnyOf, parts)
    return None


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
    fits = _link_fits(tools, plan, calls)
    deps = dependencies(plan)
    relaxed_checked = False

    def finish(
        assigned: Mapping[int, int], consumer_fits: Callable[[int, int], bool]
    ) -> tuple[tuple[int, int], ...] | None:
        nonlocal relaxed_checked
        rest_plan, rest_calls = _left_over(len(plan), len(calls), assigned)

        def rest_fits(a: int, b: int) -> bool:
            i, j = rest_plan[a], rest_calls[b]
            if deps[i]:
                return consumer_fits(i, j)
            return _call_matches(tools[plan[i].name], plan[i], calls[j])

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
            plan, calls, fits, finish, True, _relaxed_fits(tools, plan, calls), deps=deps
        )
    except (SearchGaveUpError, _NoPairingError):
        return None


class _NoPairingError(Exception):
    """Not even the plan with its links ignored passes: no pairing of the links can."""


def best_plan(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plans: Sequence[Sequence[Call]],
    calls: Sequence[Call],
    diagnose: bool = True,
    linked: bool = False,
) -> PlanVerdict:
    """Match `calls` against every acceptable plan: the first that passes, else the closest.

    No plan at all means the right answer is no call (abstention). `diagnose=False` skips
    working out the reasons for a failure (the lowercase baseline only needs the verdict).
    `linked` says that some plan may link calls by `$ref` or `after` (checked by data flow).
    """
    if len(plans) == 1 and not linked:  # the common case, without the bookkeeping below
        forced = _forced_pairs(plans[0], calls)
        if forced is not None:
            return _forced_verdict(tools, extra_ok, plans[0], calls, forced, diagnose)
        pairs = plan_passes(tools, extra_ok, plans[0], calls)
        if pairs is not None:
            return PlanVerdict(0, True, pairs, ())
        if not diagnose:
            return PlanVerdict(None, False, (), ())
        pairs, mismatches = diagnose_plan(tools, extra_ok, plans[0], calls)
        return PlanVerdict(0, False, pairs, tuple(mismatches))
    candidates: list[tuple[int | None, Sequence[Call]]] = list(enumerate(plans)) or [(None, ())]
    links = [linked and is_linked(plan) for _, plan in candidates]
    for (index, plan), has_links in zip(candidates, links, strict=True):
        check = linked_plan_passes if has_links else plan_passes
        pairs = check(tools, extra_ok, plan, calls)
        if pairs is not None:
            return PlanVerdict(index, True, pairs, ())
    if not diagnose:
        return PlanVerdict(None, False, (), ())
    best: tuple[tuple[int, int], PlanVerdict] | None = None
    for (index, plan), has_links in zip(candidates, links, strict=True):
        pairs, mismatches = diagnose_plan(tools, extra_ok, plan, calls, has_links)
        if has_links and not mismatches:
            # Only when the link search gave up: the diagnosis found a pairing that is right.
            return PlanVerdict(index, True, pairs, ())
        rank = (-len(pairs), len(mismatches))
        if best is None or rank < best[0]:
            best = (rank, PlanVerdict(index, False, pairs, tuple(mismatches)))
    assert best is not None
    return best[1]


def _forced_pairs(
    plan: Sequence[Call], calls: Sequence[Call]
) -> tuple[tuple[int, int], ...] | None:
    """The same-tool pairs, in plan order, when no produced call shares its tool with another
    and no two plan calls share a partner: the pairing is then forced. None otherwise (also
    in the rarer forced cases, a repeated tool the plan does not call: the general path
    finds the same pairing)."""
    if len(plan) == 1 and len(calls) == 1:  # the commonest case of all
        return ((0, 0),) if plan[0].name == calls[0].name else ()
    position = {call.name: j for j, call in enumerate(calls)}
    if len(position) < len(calls):
        return None
    pairs = tuple((i, position[e.name]) for i, e in enumerate(plan) if e.name in position)
    return pairs if len({j for _, j in pairs}) == len(pairs) else None


def _forced_verdict(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plan: Sequence[Call],
    calls: Sequence[Call],
    pairs: tuple[tuple[int, int], ...],
    diagnose: bool,
) -> PlanVerdict:
    """`best_plan` for one unlinked plan whose pairing is forced (`_forced_pairs`).

    The pairing `plan_passes` would find, if any, and the one `diagnose_plan` would choose are
    then both this one, so each pair is walked once: it passes when every plan call and every
    produced call but relaxed extras is paired and no pair has a mismatch.
    """
    n, m = len(plan), len(calls)
    complete = len(pairs) == n and (
        m == n or (n > 0 and _only_relaxed_left(calls, pairs, extra_ok))
    )
    if not diagnose:
        if complete and all(
            _call_matches(tools[plan[i].name], plan[i], calls[j]) for i, j in pairs
        ):
            return PlanVerdict(0, True, pairs, ())
        return PlanVerdict(None, False, (), ())
    described = [_call_mismatches(tools[plan[i].name], plan[i], calls[j]) for i, j in pairs]
    if complete and not any(described):
        return PlanVerdict(0, True, pairs, ())
    mismatches = _explain_pairing(tools, extra_ok, plan, calls, pairs, described)
    return PlanVerdict(0, False, pairs, tuple(mismatches))


def _only_relaxed_left(
    calls: Sequence[Call], pairs: Sequence[tuple[int, int]], extra_ok: frozenset[str]
) -> bool:
    """Whether every produced call that `pairs` leaves unpaired is a relaxed extra."""
    paired = {j for _, j in pairs}
    return all(j in paired or call.name in extra_ok for j, call in enumerate(calls))


def mismatch_line(mismatch: Mismatch) -> str:
    """One mismatch as a printable line: where, which rule, what."""
    where = []
    if mismatch.call is not None:
        where.append(f"call {mismatch.call}")
    elif mismatch.plan_call is not None:
        where.append(f"plan call {mismatch.plan_call}")
    if mismatch.path:
        where.append(mismatch.pointer)
    rule = f" [{mismatch.rule}]" if mismatch.rule else ""
    head = " ".join([mismatch.code, *where])
    return printable(f"{head}{rule}: {mismatch.message}")
