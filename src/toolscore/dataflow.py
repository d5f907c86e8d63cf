"""Data flow between calls: `$ref` values taken from earlier results, and `after` orderings.

Independent calls are a multiset; a call that uses what another returned must come after it
in the produced trajectory, and must use exactly what it returned (DESIGN.md principle 6).
A plan with such links passes when some pairing satisfies every link; the search tries
pairings for the linked calls (in dependency order, pruned by arguments and positions) and
matches the rest optimally, so the verdict never depends on first fits. This module knows
links and positions only; comparing values is left to `matching`, which calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from toolscore.model import MISSING, AnyOf, Call, Mismatch, Ref
from toolscore.rules import show

Pairs = tuple[tuple[int, int], ...]


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at a JSON pointer (RFC 6901) in `document`, or MISSING when there is none."""
    if pointer == "":
        return document
    value = document
    for token in pointer[1:].split("/"):
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(key, MISSING)
        elif isinstance(value, list) and key.isdigit() and (key == "0" or key[0] != "0"):
            index = int(key)
            value = value[index] if index < len(value) else MISSING
        else:
            return MISSING
        if value is MISSING:
            return MISSING
    return value


def pointer_problem(pointer: str) -> str | None:
    """Why `pointer` is not a valid JSON pointer, or None."""
    if pointer and not pointer.startswith("/"):
        return f"{pointer!r} is not a JSON pointer (it must be empty or start with '/')"
    stripped = pointer.replace("~0", "").replace("~1", "")
    if "~" in stripped:
        return f"{pointer!r} is not a JSON pointer ('~' must be followed by 0 or 1)"
    return None


def result_document(call: Call) -> Any:
    """A call's result as `$ref` sees it: a JSON string is parsed, plain text stays text."""
    result = call.result
    if isinstance(result, str):
        try:
            return orjson.loads(result)
        except orjson.JSONDecodeError:
            return result
    return result


def iter_refs(
    value: Any, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Ref]]:
    """Every `$ref` in an expected value, with its path, in document order (with a stack, not
    recursion: a case's value may be nested deeper than Python recurses)."""
    stack = [(value, path)]
    while stack:
        value, path = stack.pop()
        if type(value) is Ref:
            yield path, value
        elif type(value) is AnyOf:
            stack.extend((option, path) for option in reversed(value))
        elif isinstance(value, dict):
            stack.extend((value[key], (*path, key)) for key in reversed(list(value)))
        elif isinstance(value, list):
            stack.extend((value[i], (*path, i)) for i in reversed(range(len(value))))


def dependencies(plan: Sequence[Call]) -> list[set[int]]:
    """For each plan call, the plan calls it depends on (by `$ref` or `after`)."""
    index = {call.label: i for i, call in enumerate(plan) if call.label is not None}
    found: list[set[int]] = []
    for call in plan:
        deps = {index[label] for label in call.after if label in index}
        deps.update(index[ref.label] for _, ref in iter_refs(call.args) if ref.label in index)
        found.append(deps)
    return found


def find_cycle(plan: Sequence[Call]) -> list[str] | None:
    """The labels of a cycle of `$ref`/`after` links, or None when the links are acyclic."""
    deps = dependencies(plan)
    state = [0] * len(plan)  # 0 unseen, 1 on the current path, 2 done
    path: list[int] = []

    def visit(i: int) -> list[int] | None:
        state[i] = 1
        path.append(i)
        for d in sorted(deps[i]):
            if state[d] == 1:
                return [*path[path.index(d) :], d]
            if state[d] == 0:
                cycle = visit(d)
                if cycle:
                    return cycle
        path.pop()
        state[i] = 2
        return None

    for start in range(len(plan)):
        if state[start] == 0:
            cycle = visit(start)
            if cycle:
                return [plan[i].label or f"#{i}" for i in cycle]
    return None


def is_linked(plan: Sequence[Call]) -> bool:
    """True when some call of the plan depends on another."""
    return any(dependencies(plan))


def substitute(value: Any, sources: Mapping[str, Call]) -> Any:
    """`value` with each `$ref` whose source call is known replaced by the value it points to.

    A `$ref` that cannot be resolved stays a Ref (the walker skips it; `link_problems`
    reports it). Containers are copied with a stack, not recursion, so any depth is fine.
    """
    holder = [value]
    stack: list[tuple[Any, Any]] = [(holder, 0)]
    choices: list[tuple[Any, Any]] = []  # where AnyOf copies stand, made lists until the end
    while stack:
        container, key = stack.pop()
        item = container[key]
        if type(item) is Ref:
            container[key] = _resolved(item, sources)
        elif type(item) is AnyOf or isinstance(item, list):
            container[key] = copy = list(item)
            stack.extend((copy, i) for i in range(len(copy)))
            if type(item) is AnyOf:
                choices.append((container, key))
        elif isinstance(item, dict):
            container[key] = mapping = dict(item)
            stack.extend((mapping, k) for k in mapping)
    for container, key in reversed(choices):  # inner ones first: their parents hold them
        container[key] = AnyOf(container[key])
    return holder[0]


def _resolved(ref: Ref, sources: Mapping[str, Call]) -> Any:
    source = sources.get(ref.label)
    if source is None or source.result is MISSING:
        return ref
    found = resolve_pointer(result_document(source), ref.pointer)
    return ref if found is MISSING else found


def has_unresolved(value: Any) -> bool:
    """True when a `$ref` is left in a value after substitution."""
    return any(True for _ in iter_refs(value))


def topological(nodes: Sequence[int], deps: Sequence[set[int]]) -> list[int]:
    """`nodes` and what they depend on, each after its dependencies (links are acyclic)."""
    order: list[int] = []
    done: set[int] = set()

    def visit(i: int) -> None:
        if i in done:
            return
        done.add(i)
        for d in sorted(deps[i]):
            visit(d)
        order.append(i)

    for node in nodes:
        visit(node)
    return order


Fits = Callable[[int, int, Mapping[str, Call]], bool]
"""Whether plan call i can be produced call j, given the produced calls its labels map to."""
Finish = Callable[[list[int], list[int]], Pairs | None]
"""Pair the remaining (unlinked) plan calls with the remaining produced calls, or None."""


def search_pairing(
    plan: Sequence[Call], calls: Sequence[Call], fits: Fits, finish: Finish, ordered: bool = True
) -> Pairs | None:
    """A pairing that satisfies every link of `plan`, or None when there is none.

    Linked calls are tried in dependency order against every produced call that fits after
    the calls they depend on (backtracking); the rest is left to `finish`, an optimal
    matching. Every pairing of the linked calls is considered, so no first fit decides.
    `ordered=False` drops the order constraint (to explain a failure by its order alone).
    """
    deps = dependencies(plan)
    dependents = set().union(*deps) if deps else set()
    linked = [i for i, d in enumerate(deps) if d or i in dependents]
    order = topological(linked, deps)
    free = [i for i in range(len(plan)) if i not in set(linked)]
    assigned: dict[int, int] = {}

    def search(k: int) -> Pairs | None:
        if k == len(order):
            taken = set(assigned.values())
            rest = [j for j in range(len(calls)) if j not in taken]
            pairs = finish(free, rest)
            if pairs is None:
                return None
            return tuple(sorted([(free[a], rest[b]) for a, b in pairs] + list(assigned.items())))
        i = order[k]
        earliest = max((assigned[d] for d in deps[i]), default=-1) if ordered else -1
        sources = {
            label: calls[assigned[d]] for d in deps[i] if (label := plan[d].label) is not None
        }
        taken = set(assigned.values())
        for j in range(earliest + 1, len(calls)):
            if j not in taken and fits(i, j, sources):
                assigned[i] = j
                found = search(k + 1)
                if found is not None:
                    return found
                del assigned[i]
        return None

    return search(0)


def link_problems(
    plan: Sequence[Call], calls: Sequence[Call], pairs: Pairs
) -> dict[tuple[int, int], tuple[Any, list[Mismatch]]]:
    """For each linked pair of a chosen pairing: its arguments with `$ref` resolved, and the
    link problems (`order_violation`, `unresolved_ref`) found on the way.

    A `$ref` whose source call is unpaired, has no result, or lacks the pointer is
    unresolved; a source (or `after` call) that the agent made later than the consumer is an
    order violation.
    """
    deps = dependencies(plan)
    partner = dict(pairs)
    found: dict[tuple[int, int], tuple[Any, list[Mismatch]]] = {}
    for i, j in pairs:
        if not deps[i]:
            continue
        problems: list[Mismatch] = []
        for d in sorted(deps[i]):
            source = partner.get(d)
            label = plan[d].label or f"#{d}"
            if source is not None and source > j:
                problems.append(Mismatch(
                    "order_violation", (), None, label, source,
                    f"call {j} depends on {label!r}, which the agent made later (call {source})",
                    j, i,
                ))  # fmt: skip
        sources = {plan[d].label: calls[partner[d]] for d in deps[i] if d in partner}
        labelled = {k: v for k, v in sources.items() if k is not None}
        args = substitute(plan[i].args, labelled)
        for path, ref in iter_refs(args):
            problems.append(Mismatch(
                "unresolved_ref", path, None, str(ref), MISSING,
                _unresolved_reason(ref, labelled), j, i,
            ))  # fmt: skip
        found[i, j] = (args, problems)
    return found


def _unresolved_reason(ref: Ref, sources: Mapping[str, Call]) -> str:
    source = sources.get(ref.label)
    if source is None:
        return f"$ref {ref}: the call labelled {ref.label!r} was not made (or not matched)"
    if source.result is MISSING:
        return f"$ref {ref}: the call labelled {ref.label!r} has no recorded result"
    document = result_document(source)
    return f"$ref {ref}: nothing at {ref.pointer or '(root)'} in its result {show(document)}"
