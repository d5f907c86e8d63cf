"""Data flow between calls: `$ref` values taken from earlier results, and `after` orderings.

Independent calls are a multiset; a call that uses what another returned must come after it
in the produced trajectory, and must use exactly what it returned.
A plan with such links passes when some pairing satisfies every link; the search tries
pairings for the linked calls (in dependency order, pruned by arguments and positions) and
matches the rest optimally, so the verdict never depends on first fits. This module knows
links and positions only; comparing values is left to `plans` and `diagnosis`, which call it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from toolscore.core.model import MISSING, OMITTED, AnyOf, Call, Mismatch, Ref
from toolscore.core.values import show

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
    if not index:  # no call can be named: none depends on another
        return [set() for _ in plan]
    found: list[set[int]] = []
    for call in plan:
        deps = {index[label] for label in call.after if label in index}
        deps.update(index[ref.label] for _, ref in iter_refs(call.args) if ref.label in index)
        found.append(deps)
    return found


def find_cycle(plan: Sequence[Call]) -> list[str] | None:
    """The labels of a cycle of `$ref`/`after` links, or None when the links are acyclic.

    A depth-first walk with its own stack, so a chain of thousands of links is no deeper
    for Python than a chain of two.
    """
    deps = [sorted(d) for d in dependencies(plan)]
    state = [0] * len(plan)  # 0 unseen, 1 on the current path, 2 done
    for start in range(len(plan)):
        if state[start]:
            continue
        path = [start]
        state[start] = 1
        pending = [iter(deps[start])]
        while pending:
            d = next(pending[-1], None)
            if d is None:
                state[path.pop()] = 2
                pending.pop()
            elif state[d] == 1:
                cycle = [*path[path.index(d) :], d]
                return [plan[i].label or f"#{i}" for i in cycle]
            elif state[d] == 0:
                state[d] = 1
                path.append(d)
                pending.append(iter(deps[d]))
    return None


def is_linked(plan: Sequence[Call]) -> bool:
    """True when some call of the plan depends on another."""
    return any(dependencies(plan))


def first_options(value: Any) -> Any:
    """`value` with each `$any` replaced by its first alternative (a first `$omitted` leaves
    its key out), as replay and `lint` take a plan's values."""
    if type(value) is AnyOf:
        return first_options(value[0])
    if isinstance(value, dict):
        chosen = {key: first_options(item) for key, item in value.items()}
        return {key: item for key, item in chosen.items() if item is not OMITTED}
    if isinstance(value, list):
        return [first_options(item) for item in value]
    return value


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
    for node in nodes:
        if node in done:
            continue
        done.add(node)
        pending = [(node, iter(sorted(deps[node])))]
        while pending:
            i, rest = pending[-1]
            d = next(rest, None)
            if d is None:
                order.append(i)
                pending.pop()
            elif d not in done:
                done.add(d)
                pending.append((d, iter(sorted(deps[d]))))
    return order


Fits = Callable[[int, int, Mapping[str, Call]], bool]
"""Whether plan call i can be produced call j, given the produced calls its labels map to."""
Finish = Callable[[Mapping[int, int], Callable[[int, int], bool]], Pairs | None]
"""Pair the plan calls the search left (consumers and independent calls) with the produced
calls it left, given the sources' pairs and a test for consumers; None when it cannot."""

SEARCH_BUDGET = 50_000
"""Checks of a plan call against a produced call that one search may make. Real plans need a
few hundred; only a plan built to be ambiguous gets near it (see `SearchGaveUpError`)."""


class SearchGaveUpError(Exception):
    """The pairing search spent its budget without deciding. Raised instead of running for
    hours on a hostile plan; callers then fall back to pairing by arguments alone."""


def search_pairing(
    plan: Sequence[Call],
    calls: Sequence[Call],
    fits: Fits,
    finish: Finish,
    ordered: bool = True,
    could_fit: Callable[[int, int], bool] | None = None,
    budget: int | None = None,
    deps: Sequence[set[int]] | None = None,
) -> Pairs | None:
    """A pairing that satisfies every link of `plan`, or None when there is none.

    Only *sources* (calls that others refer to) are searched, in dependency order: what a
    source is paired with decides the values its consumers must carry. Consumers and
    independent calls are then paired all at once by `finish`, an optimal matching, so
    interchangeable consumers are one matching, never N! orders. Sources that the plan cannot
    tell apart (swapping their labels leaves the plan unchanged) are paired in increasing
    position only, and a source tries one of several identical produced calls only when no
    other source could take them; both cuts keep every verdict (see `_twins` and
    `_LinkSearch._tried_already`).
    `could_fit` (plan call i, produced call j, links aside) enables the second cut.
    `ordered=False` drops the order constraint (to explain a failure by its order alone).
    Raises `SearchGaveUpError` after `budget` checks (`SEARCH_BUDGET` by default). `deps`
    may pass the plan's `dependencies` when the caller has them already.
    """
    deps = dependencies(plan) if deps is None else deps
    search = _LinkSearch(plan, calls, fits, ordered, could_fit, budget, deps)
    return search.run(finish)


class _LinkSearch:
    """The state of one `search_pairing`: which source is paired with which produced call."""

    def __init__(
        self,
        plan: Sequence[Call],
        calls: Sequence[Call],
        fits: Fits,
        ordered: bool,
        could_fit: Callable[[int, int], bool] | None,
        budget: int | None,
        deps: Sequence[set[int]],
    ) -> None:
        self.plan, self.calls, self.fits, self.ordered = plan, calls, fits, ordered
        self.limit = SEARCH_BUDGET if budget is None else budget
        self.checks = 0
        self.deps = deps
        referred = set().union(*deps) if deps else set()
        self.sources = topological(sorted(referred), deps)
        position = {i: k for k, i in enumerate(self.sources)}
        self.completed_by: dict[int, list[int]] = {i: [] for i in self.sources}
        for i, d in enumerate(deps):
            if d and i not in referred:
                self.completed_by[max(d, key=position.__getitem__)].append(i)
        self.twin_before = _twins(plan, self.sources, deps)
        self.twins_after = dict.fromkeys(self.sources, 0)
        for i in reversed(self.sources):
            twin = self.twin_before[i]
            if twin is not None:
                self.twins_after[twin] = self.twins_after[i] + 1
        self.could_fit = could_fit
        self.class_root: dict[int, int] = {}
        for i in self.sources:
            twin = self.twin_before[i]
            self.class_root[i] = i if twin is None else self.class_root[twin]
        self._content: dict[int, Any] = {}
        self._others_could_take: dict[tuple[int, Any], bool] = {}
        self.assigned: dict[int, int] = {}
        self.known: dict[tuple[int, int, tuple[int, ...]], bool] = {}
        self.taken = [False] * len(calls)
        self.domain: dict[int, list[int]] = {}
        for i in self.sources:
            if self.twins_after[i] or self.twin_before[i] is not None:
                self.domain[i] = self._twin_candidates(i)

    def check(self, i: int, j: int) -> bool:
        """Whether plan call i can be produced call j given the pairs of its sources."""
        sources = tuple(self.assigned[d] for d in self.deps[i])
        if self.ordered and any(s >= j for s in sources):
            return False
        key = (i, j, sources)
        known = self.known.get(key)
        if known is not None:
            return known
        self.checks += 1
        if self.checks > self.limit:
            raise SearchGaveUpError(f"gave up after {self.limit:,} checks of linked calls")
        plan, calls = self.plan, self.calls
        named = {label: calls[self.assigned[d]] for d in self.deps[i] if (label := plan[d].label)}
        known = self.known[key] = self.fits(i, j, named)
        return known

    def _pair(self, i: int, j: int) -> None:
        self.assigned[i] = j
        self.taken[j] = True

    def _unpair(self, i: int, j: int) -> None:
        del self.assigned[i]
        self.taken[j] = False

    def _viable(self, consumer: int) -> bool:
        return any(not self.taken[j] and self.check(consumer, j) for j in range(len(self.calls)))

    def _twin_candidates(self, i: int) -> list[int]:
        """The produced calls a twin could be paired with: for a twin with no dependencies,
        those that fit it and leave the consumers that depend on it alone a partner; for one
        with dependencies, those that fit it with links aside."""
        if self.deps[i]:
            could_fit = self.could_fit
            return [j for j in range(len(self.calls)) if could_fit is None or could_fit(i, j)]
        own = [c for c in self.completed_by[i] if self.deps[c] == {i}]
        found = []
        for j in range(len(self.calls)):
            if self.check(i, j):
                self._pair(i, j)
                if all(self._viable(c) for c in own):
                    found.append(j)
                self._unpair(i, j)
        return found

    def _tried_already(self, step: _Step, j: int) -> bool:
        """Whether an identical call (same tool, arguments and result) came earlier in line
        for this source and led nowhere, so that j would lead nowhere too.

        That holds when no source outside the step's twin class could take such a call:
        whatever else took the earlier one (a consumer, an independent call, a twin) could
        take j instead, and a source is never worse off for an earlier call."""
        key = self._content_key(j)
        if key not in step.tried_keys or self.could_fit is None:
            return False
        root = self.class_root[step.source]
        others = self._others_could_take.get((root, key))
        if others is None:
            could_fit = self.could_fit
            others = any(self.class_root[s] != root and could_fit(s, j) for s in self.sources)
            self._others_could_take[root, key] = others
        return not others

    def _content_key(self, j: int) -> Any:
        key = self._content.get(j)
        if key is None:
            key = self._content[j] = _content_key(self.calls[j], j)
        return key

    def _room_for_twins(self, i: int, j: int) -> bool:
        """Whether the twins to be paired after i can still find free calls after j."""
        need = self.twins_after[i]
        if not need:
            return True
        candidates = self.domain.get(i, range(len(self.calls)))
        free = (k for k in candidates if k > j and not self.taken[k])
        return sum(1 for _ in zip(range(need), free, strict=False)) == need

    def run(self, finish: Finish) -> Pairs | None:
        """Pair the sources one by one, stepping back where one has no candidate left, and
        let `finish` pair the rest each time every source is paired. The steps are kept on
        a list rather than the call stack, so a chain of thousands of sources runs too."""
        if not self.sources:
            return finish(dict(self.assigned), self.check)
        steps = [self._step(0)]
        while steps:
            step = steps[-1]
            if step.current is not None:  # back from a dead end: unpair and move on
                self._unpair(step.source, step.current)
                step.tried_keys.add(self._content_key(step.current))
                step.current = None
            if not self._advance(step):
                steps.pop()
            elif len(steps) < len(self.sources):
                steps.append(self._step(len(steps)))
            else:
                found = finish(dict(self.assigned), self.check)
                if found is not None:
                    return found
        return None

    def _step(self, k: int) -> _Step:
        """The search's place at the k-th source, whose dependencies are paired already."""
        i = self.sources[k]
        low = max((self.assigned[d] for d in self.deps[i]), default=-1) if self.ordered else -1
        twin = self.twin_before[i]
        if twin is not None:
            low = max(low, self.assigned[twin])
        return _Step(i, low, iter(self.domain.get(i, range(len(self.calls)))))

    def _advance(self, step: _Step) -> bool:
        """Pair the step's source with its next candidate; False when none is left."""
        i = step.source
        for j in step.candidates:
            if j <= step.low or self.taken[j]:
                continue
            if step.tried_keys and self._tried_already(step, j):
                continue
            if not self.check(i, j):
                continue
            self._pair(i, j)
            if not self._room_for_twins(i, j):
                self._unpair(i, j)
                return False  # later calls leave the twins even less room
            if all(self._viable(c) for c in self.completed_by[i]):
                step.current = j
                return True
            self._unpair(i, j)
            step.tried_keys.add(self._content_key(j))
        return False


class _Step:
    """One source's place in the search: the candidates left, those tried, the current one."""

    __slots__ = ("candidates", "current", "low", "source", "tried_keys")

    def __init__(self, source: int, low: int, candidates: Iterator[int]) -> None:
        self.source = source
        self.low = low  # candidates must come after this position
        self.candidates = candidates
        self.tried_keys: set[Any] = set()  # what the candidates that led nowhere hold
        self.current: int | None = None


def _twins(
    plan: Sequence[Call], sources: Sequence[int], deps: Sequence[set[int]]
) -> dict[int, int | None]:
    """For each source, the previous source (in `sources` order) that the plan cannot tell
    apart from it, or None.

    Two sources are twins when swapping their labels throughout the plan leaves it the same
    multiset of calls. Any pairing then stays valid with the twins' partners swapped (and
    their consumers' with them), so only the pairings that give twins increasing positions
    need to be tried. Twins have the same dependencies, so they never depend on each other.
    """
    alike = Counter((plan[i].name, frozenset(deps[i])) for i in sources)
    if all(count == 1 for count in alike.values()):
        return dict.fromkeys(sources)
    forms = [_form(call, {}) for call in plan]
    mentions: dict[str, list[int]] = {}
    for i, call in enumerate(plan):
        for label in {call.label, *call.after, *(ref.label for _, ref in iter_refs(call.args))}:
            if label is not None:
                mentions.setdefault(label, []).append(i)
    twin_before: dict[int, int | None] = dict.fromkeys(sources)
    last_of_class: list[int] = []  # the latest member of each class found so far
    for i in sources:
        for c, member in enumerate(last_of_class):
            if deps[member] == deps[i] and _swap_keeps(plan, forms, mentions, member, i):
                twin_before[i] = member
                last_of_class[c] = i
                break
        else:
            last_of_class.append(i)
    return twin_before


def _swap_keeps(
    plan: Sequence[Call],
    forms: Sequence[str],
    mentions: Mapping[str, Sequence[int]],
    a: int,
    b: int,
) -> bool:
    """True when swapping the labels of plan calls a and b leaves the plan's calls the same."""
    label_a, label_b = plan[a].label, plan[b].label
    if label_a is None or label_b is None or plan[a].name != plan[b].name:
        return False
    swap = {label_a: label_b, label_b: label_a}
    touched = set(mentions.get(label_a, ())) | set(mentions.get(label_b, ()))
    before = Counter(forms[i] for i in touched)
    after = Counter(_form(plan[i], swap) for i in touched)
    return before == after


def _form(call: Call, swap: Mapping[str, str]) -> str:
    """A plan call written out canonically, with the labels in `swap` exchanged."""

    def plain(value: Any) -> Any:
        if type(value) is Ref:
            return {"$ref": f"{swap.get(value.label, value.label)}#{value.pointer}"}
        if type(value) is AnyOf:
            return {"$any": [plain(option) for option in value]}
        if value is OMITTED:
            return {"$omitted": True}
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        if isinstance(value, list):
            return [plain(item) for item in value]
        return value

    label = swap.get(call.label, call.label) if call.label is not None else None
    after = sorted(swap.get(name, name) for name in call.after)
    shape = [call.name, label, after, plain(call.args)]
    try:
        return orjson.dumps(shape, option=orjson.OPT_SORT_KEYS).decode()
    except (orjson.JSONEncodeError, RecursionError):
        return repr(shape)


def _content_key(call: Call, j: int) -> Any:
    """What makes two produced calls interchangeable as a source: tool, arguments, result."""
    try:
        args = (
            orjson.dumps(call.args, option=orjson.OPT_SORT_KEYS) if call.args is not None else None
        )
        result = (
            orjson.dumps(call.result, option=orjson.OPT_SORT_KEYS)
            if call.result is not MISSING
            else None
        )
    except (orjson.JSONEncodeError, RecursionError, TypeError):
        return ("unique", j)
    return (call.name, args, call.raw_args if args is None else None, result, call.result_error)


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
                    order_message(j, label, source),
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


def order_message(call: int, label: str, source: int) -> str:
    """The message of an `order_violation`: produced call `call` uses the call labelled
    `label`, which the agent made later, as produced call `source`."""
    return f"call {call} depends on {label!r}, which the agent made later (call {source})"


def _unresolved_reason(ref: Ref, sources: Mapping[str, Call]) -> str:
    source = sources.get(ref.label)
    if source is None:
        return f"$ref {ref}: the call labelled {ref.label!r} was not made (or not matched)"
    if source.result is MISSING:
        return f"$ref {ref}: the call labelled {ref.label!r} has no recorded result"
    document = result_document(source)
    return f"$ref {ref}: nothing at {ref.pointer or '(root)'} in its result {show(document)}"
