"""The data-flow search as it was before issue 11: exhaustive backtracking over every linked
call, exponential on interchangeable calls but simple enough to trust on small cases.

Kept only as a test oracle for `test_linked_search.py`: the polynomial search must reach the
same verdicts. Not used by toolscore itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from toolscore.core.dataflow import Pairs, dependencies, topological
from toolscore.core.diagnosis import _best_pairing
from toolscore.core.model import Call
from toolscore.core.plans import link_fits, plan_passes
from toolscore.core.rules import ObjectRule

OldFits = Callable[[int, int, Mapping[str, Call]], bool]
OldFinish = Callable[[list[int], list[int]], Pairs | None]


def old_search(
    plan: Sequence[Call], calls: Sequence[Call], fits: OldFits, finish: OldFinish, ordered: bool
) -> Pairs | None:
    """Every linked call tried against every produced call that fits, in dependency order."""
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


def old_passes(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plan: Sequence[Call],
    calls: Sequence[Call],
) -> Pairs | None:
    """The old `linked_plan_passes`."""
    fits = link_fits(tools, plan, calls)

    def finish(free: list[int], rest: list[int]) -> Pairs | None:
        if not free:
            return () if all(calls[j].name in extra_ok for j in rest) else None
        return plan_passes(tools, extra_ok, [plan[i] for i in free], [calls[j] for j in rest])

    return old_search(plan, calls, fits, finish, True)


def old_links_kept(
    tools: Mapping[str, ObjectRule], plan: Sequence[Call], calls: Sequence[Call], ordered: bool
) -> Pairs | None:
    """The old search for a pairing that keeps every link (for the diagnosis)."""
    fits = link_fits(tools, plan, calls)

    def finish(free: list[int], rest: list[int]) -> Pairs | None:
        found = _best_pairing(tools, [plan[i] for i in free], [calls[j] for j in rest])
        assert found is not None
        return found[0]

    return old_search(plan, calls, fits, finish, ordered)
