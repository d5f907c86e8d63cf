"""The one argument walk: whether, why and how often produced arguments differ from a plan's.

`iter_mismatches` is the walk every verdict is built on: it descends objects and lists, applies
defaults, handles `$any`, and asks scalar rules to judge. `matches` asks it whether, and the
counts (`mismatch_count`, `argument_count`) take its steps without describing anything, for
choosing pairings; they live beside `_object` because they must stay its twin (`counts`
builds tables of them for many pairs at once). Multiset lists
are paired by `max_matching`, which matching calls to plans uses too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from toolscore.core.model import MISSING, OMITTED, AnyOf, Call, Mismatch, Ref
from toolscore.core.rules import ListRule, ObjectRule, Rule
from toolscore.core.values import show

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
        return not _object_count(rule, expected, produced, True)
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


def _not_both(
    container: type, what: str, rule: Rule, expected: Any, produced: Any, path: Path
) -> Mismatch | None:
    """The type mismatch of an object or list rule whose `expected` or `produced` value is
    not a `container` (`what` names it: `an object`), or None when both are."""
    if isinstance(produced, container) and isinstance(expected, container):
        return None
    side = "expected value" if isinstance(produced, container) else "value"
    message = f"the {side} is not {what}: {show(produced)}"
    return Mismatch("type_mismatch", path, rule.describe(), expected, produced, message)


def _object(
    rule: ObjectRule, expected: Any, produced: Any, path: Path, explain: bool
) -> Iterator[Mismatch]:
    wrong = _not_both(dict, "an object", rule, expected, produced, path)
    if wrong is not None:
        yield wrong
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
    wrong = _not_both(list, "an array", rule, expected, produced, path)
    if wrong is not None:
        yield wrong
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


def call_mismatches(rule: ObjectRule, expected: Call, produced: Call) -> list[Mismatch]:
    """Every mismatch of a produced call's arguments with a plan call's, at no call position
    yet; arguments that could not be parsed are one mismatch."""
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
    plan_args, args = expected.args, produced.args
    if isinstance(plan_args, dict) and isinstance(args, dict):
        # Most pairs fit: the quick count first, the describing walk only where it fails.
        if not _object_count(rule, plan_args, args, True):
            return []
        return list(_object(rule, plan_args, args, (), True))
    return list(iter_mismatches(rule, plan_args, args))


def call_matches(rule: ObjectRule, expected: Call, produced: Call) -> bool:
    """True when a produced call's arguments parsed and equal a plan call's under `rule`."""
    args, plan_args = produced.args, expected.args
    if type(args) is dict and type(plan_args) is dict:  # `matches`, one call fewer per pair
        return not _object_count(rule, plan_args, args, True)
    return args is not None and matches(rule, plan_args, args)


def mismatch_count(rule: ObjectRule, expected: Call, produced: Call) -> int:
    """The number of mismatches of a produced call's arguments with a plan call's, counted
    without describing them (what choosing a pairing by cost needs)."""
    if produced.args is None:
        return 1
    plan_args, args = expected.args, produced.args
    if not (isinstance(plan_args, dict) and isinstance(args, dict)):
        return sum(1 for _ in iter_mismatches(rule, plan_args, args, (), False))
    return _object_count(rule, plan_args, args, False)


def _object_count(
    rule: ObjectRule, expected: dict[str, Any], produced: dict[str, Any], first: bool
) -> int:
    """How many mismatches `_object` finds between two objects, taking the same steps an
    argument at a time (`argument_count`) without a generator; with `first`, 1 as soon as
    one is found (what matching needs)."""
    count = given = 0
    for arg in rule.compared_args:
        name, sub, default, plain = arg
        value = produced.get(name, MISSING)
        wanted = expected.get(name, default)
        if value is MISSING:
            count += argument_count(rule, arg, wanted, value)
        else:
            given += 1
            if (
                plain
                and wanted is not MISSING
                and wanted is not None
                and value is not None
                and type(wanted) not in _MARKERS
            ):
                count += sub.judge(wanted, value) is not None  # argument_count's commonest step
            else:
                count += argument_count(rule, arg, wanted, value)
        if first and count:
            return 1
    if len(produced) > given and not rule.allow_unknown:
        count += sum(1 for name in produced if name not in rule.args)
    return count


def argument_count(
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
    if type(expected) is AnyOf and rule.compared:
        return _any_of_count(rule, expected, produced)
    if type(rule) is ListRule and type(expected) is list and type(produced) is list:
        return _list_count(rule, expected, produced)
    return sum(1 for _ in iter_mismatches(rule, expected, produced, (), False))


def _list_count(rule: ListRule, expected: list[Any], produced: list[Any]) -> int:
    """`_list`'s count for two lists, without a generator per item where an ordered list's
    items are plain values a scalar rule judges (BFCL's arrays of numbers and names)."""
    if not rule.ordered or not rule.compared:
        return sum(1 for _ in iter_mismatches(rule, expected, produced, (), False))
    items = rule.items
    count = 0
    if items.scalar and items.compared:
        for e, p in zip(expected, produced, strict=False):
            if e is not None and p is not None and type(e) not in _MARKERS:
                count += items.judge(e, p) is not None
            else:
                count += sum(1 for _ in iter_mismatches(items, e, p, (), False))
    else:
        for e, p in zip(expected, produced, strict=False):
            count += sum(1 for _ in iter_mismatches(items, e, p, (), False))
    return count + (len(expected) != len(produced))


def _any_of_count(rule: Rule, alternatives: AnyOf, produced: Any) -> int:
    """`_any_of`'s count (0 when some alternative equals `produced`, else 1), without its
    generators for the alternatives a scalar rule judges: BFCL's cases give most optional
    arguments as `$any`, so matching and diagnosis take this step for most of their pairs."""
    scalar, judges_null = rule.scalar, rule.judges_null
    for alternative in alternatives:
        if alternative is OMITTED:
            continue  # the argument is present: its omission is not what happened
        if not scalar or type(alternative) in _MARKERS:
            if next(iter_mismatches(rule, alternative, produced, (), False), None) is None:
                return 0
        elif (alternative is None or produced is None) and not judges_null:
            if alternative is produced:
                return 0
        elif rule.judge(alternative, produced) is None:
            return 0
    return 1


def accepted_keys(rule: Rule, expected: Any) -> frozenset[Any] | None:
    """The keys of the present values that can equal `expected` under a keyed `rule`: its own
    key, or those of its `$any` alternatives. None when some such value has no key."""
    if type(expected) is AnyOf:
        keys = [rule.key(value) for value in expected if value is not OMITTED]
    elif expected is MISSING:
        return None
    else:
        keys = [rule.key(expected)]
    return None if None in keys else frozenset(keys)
