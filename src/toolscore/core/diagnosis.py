"""Explaining a failed plan, and the verdict over a case's plans that needs the explanation.

`diagnose_plan` chooses the pairing a plan the calls do not carry out comes closest under
(most same-tool pairs, then fewest mismatches, ties broken by content, never by position) and
lists the mismatches it leaves; `mismatch_line` prints one. `best_plan` is here rather than
beside `plan_passes` because, when no plan passes, the closest plan is the one whose
diagnosis is best.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from toolscore.core.arguments import (
    call_matches,
    call_mismatches,
    iter_mismatches,
    mismatch_count,
)
from toolscore.core.assignment import SCIPY_FROM, assign
from toolscore.core.call_order import canonical_order, content_key
from toolscore.core.counts import mismatch_counts
from toolscore.core.dataflow import (
    SearchGaveUpError,
    dependencies,
    is_linked,
    link_problems,
    search_pairing,
)
from toolscore.core.model import MISSING, Call, Mismatch
from toolscore.core.plans import (
    PlanVerdict,
    left_over,
    link_fits,
    linked_plan_passes,
    only_relaxed_left,
    plan_passes,
    relaxed_fits,
)
from toolscore.core.rules import ObjectRule
from toolscore.escape import printable


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
        # What the search found to fit, the diagnosis need not weigh again.
        known: dict[tuple[int, int], bool] | None = {} if diagnose else None
        pairs = plan_passes(tools, extra_ok, plans[0], calls, known)
        if pairs is not None:
            return PlanVerdict(0, True, pairs, ())
        if not diagnose:
            return PlanVerdict(None, False, (), ())
        pairs, mismatches, fits = _diagnosed(tools, extra_ok, plans[0], calls, known=known)
        return PlanVerdict(0, False, pairs, tuple(mismatches), fits)
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
        pairs, mismatches, fits = _diagnosed(tools, extra_ok, plan, calls, has_links)
        if has_links and not mismatches:
            # Only when the link search gave up: the diagnosis found a pairing that is right.
            return PlanVerdict(index, True, pairs, ())
        rank = (-len(pairs), len(mismatches))
        if best is None or rank < best[0]:
            best = (rank, PlanVerdict(index, False, pairs, tuple(mismatches), fits))
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
    complete = len(pairs) == n and (m == n or (n > 0 and only_relaxed_left(calls, pairs, extra_ok)))
    if not diagnose:
        if complete and all(call_matches(tools[plan[i].name], plan[i], calls[j]) for i, j in pairs):
            return PlanVerdict(0, True, pairs, ())
        return PlanVerdict(None, False, (), ())
    described = [call_mismatches(tools[plan[i].name], plan[i], calls[j]) for i, j in pairs]
    if complete and not any(described):
        return PlanVerdict(0, True, pairs, ())
    mismatches = _explain_pairing(tools, extra_ok, plan, calls, pairs, described)
    # The forced pairs are every same-tool pair there is.
    fits = frozenset(pair for pair, found in zip(pairs, described, strict=True) if not found)
    return PlanVerdict(0, False, pairs, tuple(mismatches), fits)


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
    pairs, mismatches, _ = _diagnosed(tools, extra_ok, plan, calls, linked)
    return pairs, mismatches


def _diagnosed(
    tools: Mapping[str, ObjectRule],
    extra_ok: frozenset[str],
    plan: Sequence[Call],
    calls: Sequence[Call],
    linked: bool = False,
    known: Mapping[tuple[int, int], bool] | None = None,
) -> tuple[tuple[tuple[int, int], ...], list[Mismatch], frozenset[tuple[int, int]] | None]:
    """`diagnose_plan`, and the same-tool pairs found to fit when every one was weighed
    (`PlanVerdict.fits`; None for a linked plan). `known` says of some pairs whether they
    fit (what `plan_passes` found): a pair that fits has no mismatch to count."""
    fits = None
    kept = _links_kept(tools, plan, calls) if linked else None
    if kept is None:
        found = _best_pairing(tools, plan, calls, known=known)
        assert found is not None  # no call is required to pair, so a pairing always exists
        pairs, pair_mismatches, fits = found
    else:
        pairs = kept
        pair_mismatches = [
            call_mismatches(tools[plan[i].name], plan[i], calls[j]) for i, j in pairs
        ]
    if linked:
        fits = None
        checked = link_problems(plan, calls, pairs)
        for k, (i, j) in enumerate(pairs):
            if (i, j) in checked and calls[j].args is not None:
                args, problems = checked[i, j]
                rule = tools[plan[i].name]
                pair_mismatches[k] = problems + list(iter_mismatches(rule, args, calls[j].args))
    return pairs, _explain_pairing(tools, extra_ok, plan, calls, pairs, pair_mismatches), fits


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


def _links_kept(
    tools: Mapping[str, ObjectRule], plan: Sequence[Call], calls: Sequence[Call]
) -> tuple[tuple[int, int], ...] | None:
    """A pairing in which every linked call fits its sources (after them if possible), the
    rest paired as well as they can be; None when no such pairing exists (or the search for
    one gave up on a hostile plan)."""

    fits = link_fits(tools, plan, calls)
    deps = dependencies(plan)

    def finish(
        assigned: Mapping[int, int], consumer_fits: Callable[[int, int], bool]
    ) -> tuple[tuple[int, int], ...] | None:
        rest_plan, rest_calls = left_over(len(plan), len(calls), assigned)
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

    could_fit = relaxed_fits(tools, plan, calls)
    try:
        in_order = search_pairing(plan, calls, fits, finish, True, could_fit, deps=deps)
        if in_order is not None:
            return in_order
        return search_pairing(plan, calls, fits, finish, False, could_fit, deps=deps)
    except SearchGaveUpError:
        return None


Fits = frozenset[tuple[int, int]] | None
"""The same-tool pairs that fit, when a pairing weighed them all (`PlanVerdict.fits`)."""
Weighed = tuple[tuple[tuple[int, int], ...], list[list[Mismatch]], Fits]


def _best_pairing(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    allowed: Callable[[int, int], bool] | None = None,
    required: frozenset[int] | set[int] = frozenset(),
    known: Mapping[tuple[int, int], bool] | None = None,
) -> Weighed | None:
    """Most same-tool pairs, then fewest mismatches; ties broken by content, not position.

    The plan calls in `required` must each be paired with a produced call that `allowed`
    accepts (a consumer of a linked plan and what its sources allow); None when they cannot.
    Beside the pairs and their mismatches: the same-tool pairs that fit, when every one was
    weighed (never with `required` calls, whose pairs links choose; nor per tool, on large
    plans). `known` (pair -> fits) spares weighing the pairs already found to fit.
    """
    known = known or {}
    if not required:
        blocks = _tool_blocks(plan, calls)
        if sum(len(rows) * len(cols) for rows, cols in blocks.values()) >= BY_TOOL_FROM:
            return (*_best_by_tool(tools, plan, calls, blocks), None)
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
        described = [
            [] if known.get((i, j)) else call_mismatches(tools[plan[i].name], plan[i], calls[j])
            for i, j in same_tool
        ]
        fits = frozenset(
            pair for pair, found in zip(same_tool, described, strict=True) if not found
        )
        return tuple(same_tool), described, None if required else fits
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
        tools,
        plan,
        sorted_calls,
        [(i, rank[j]) for i, j in same_tool],
        required,
        {(i, rank[j]): fit for (i, j), fit in known.items()},
    )
    if found is None:
        return None
    pairs, described, sorted_fits = found
    unsorted = [(i, order[j]) for i, j in pairs]
    chosen = sorted(range(len(unsorted)), key=unsorted.__getitem__)
    if sorted_fits is not None:
        sorted_fits = frozenset((i, order[j]) for i, j in sorted_fits)
    return tuple(unsorted[k] for k in chosen), [described[k] for k in chosen], sorted_fits


BY_TOOL_FROM = SCIPY_FROM
"""Candidate pairs from which `_best_pairing`, when no plan call must be paired, solves one
assignment per tool on an array of counts (`_best_by_tool`) instead of one for the whole plan
from a dict of pairs: the same optimum in far less memory (8 bytes a pair, not about 300;
3,000 calls of one tool took 2.7 GB before, bench/RESULTS.md), though ties between equally
good pairings may break otherwise, still by content."""


def _tool_blocks(
    plan: Sequence[Call], calls: Sequence[Call]
) -> dict[str, tuple[list[int], list[int]]]:
    """For each tool called on both sides, its plan calls and its produced calls (indices)."""
    produced: dict[str, list[int]] = {}
    for j, call in enumerate(calls):
        produced.setdefault(call.name, []).append(j)
    blocks: dict[str, tuple[list[int], list[int]]] = {}
    for i, call in enumerate(plan):
        if call.name in produced:
            blocks.setdefault(call.name, ([], produced[call.name]))[0].append(i)
    return blocks


def _best_by_tool(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    blocks: Mapping[str, tuple[list[int], list[int]]],
) -> tuple[tuple[tuple[int, int], ...], list[list[Mismatch]]]:
    """`_best_pairing` with no plan call required, one tool at a time: pairs of different
    tools never compete, and the most pairs a tool can have is the smaller of its two sides,
    so the best pairing of the plan is the best of each tool's put together. Each tool's is
    a minimum-cost assignment of its plan calls (in plan order) to its produced calls (in
    canonical order) by mismatch count."""
    order = canonical_order(calls)
    rank = [0] * len(calls)
    for position, j in enumerate(order):
        rank[j] = position
    chosen: list[tuple[int, int, bool]] = []
    for name, (rows, unsorted_cols) in blocks.items():
        cols = sorted(unsorted_cols, key=rank.__getitem__)
        table = mismatch_counts(tools[name], [plan[i] for i in rows], [calls[j] for j in cols])
        found = assign(table if table.size >= SCIPY_FROM else table.tolist())
        chosen.extend(
            (rows[r], cols[c], bool(table[r, c] == 0)) for r, c in enumerate(found) if c >= 0
        )
    chosen.sort()
    described = [_pair_mismatches(tools, plan, calls, i, j, clean) for i, j, clean in chosen]
    return tuple((i, j) for i, j, _ in chosen), described


def _best_single(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    same_tool: Sequence[tuple[int, int]],
    required: frozenset[int] | set[int],
) -> Weighed:
    """`_best_pairing` when one plan call has every candidate: the one with fewest
    mismatches, the first in canonical order among equals, as the assignment would choose
    (`assignment.assign` takes, on a single row, the first of its cheapest columns)."""
    i = same_tool[0][0]
    rule = tools[plan[i].name]
    counts = {
        j: 0 if i in required else mismatch_count(rule, plan[i], calls[j]) for _, j in same_tool
    }
    fewest = min(counts.values())
    tied = [j for j, count in counts.items() if count == fewest]
    j = tied[0] if len(tied) == 1 else min(tied, key=lambda j: (content_key(calls[j]), j))
    clean = fewest == 0 and i not in required
    fits = None if required else frozenset((i, k) for k, count in counts.items() if count == 0)
    return ((i, j),), [_pair_mismatches(tools, plan, calls, i, j, clean)], fits


def _best_for_one_call(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    same_tool: Sequence[tuple[int, int]],
) -> Weighed:
    """`_best_pairing` when every candidate pair has the same produced call and no plan call
    must be paired: the plan call with fewest mismatches, the first in plan order among
    equals, as the assignment would choose (its rows come in plan order, and a row takes
    the column an earlier row holds only when that costs strictly less)."""
    j = same_tool[0][1]
    counted = [(mismatch_count(tools[plan[i].name], plan[i], calls[j]), i) for i, _ in same_tool]
    count, i = min(counted)
    fits = frozenset((k, j) for fewest, k in counted if fewest == 0)
    return ((i, j),), [_pair_mismatches(tools, plan, calls, i, j, count == 0)], fits


def _best_sorted_pairing(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    same_tool: Sequence[tuple[int, int]],
    required: frozenset[int] | set[int],
    known: Mapping[tuple[int, int], bool] | None = None,
) -> Weighed | None:
    """`_best_pairing` once the calls are in canonical order, with its candidate pairs
    given in that order (and `known` keyed so): a minimum-cost assignment
    (`assignment.assign`)."""
    # Costs are counted without describing anything; only the chosen pairs are described.
    counts = _pair_counts(tools, plan, calls, same_tool, required, known or {})
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
    fits = None if required else frozenset(pair for pair, count in counts.items() if count == 0)
    return tuple(pairs), described, fits


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
    return call_mismatches(tools[plan[i].name], plan[i], calls[j])


COUNT_TABLE_FROM = 64 * 64
"""Pairs of one tool from which `_pair_counts` counts mismatches an argument at a time
(`mismatch_counts`, a NumPy table). Walking each pair costs as little up to about 400 pairs
and at most 1.5x more up to here, while NumPy's import costs 50-100 ms once per process: at
4,096 pairs the table repays it after about 40 such cases; at 25, where it was used before,
never (bench/count_table.py, bench/RESULTS.md). BFCL's parallel files, whose cases hold up
to a few dozen pairs, then never import NumPy."""


def _pair_counts(
    tools: Mapping[str, ObjectRule],
    plan: Sequence[Call],
    calls: Sequence[Call],
    same_tool: Sequence[tuple[int, int]],
    required: frozenset[int] | set[int],
    known: Mapping[tuple[int, int], bool],
) -> dict[tuple[int, int], int]:
    """The mismatch count of each candidate pair, 0 for the plan calls in `required` (their
    pairs are chosen by links, not by cost) and for the pairs `known` to fit. The other plan
    calls of a tool have every produced call of that tool as candidates: a table of counts,
    worked out in one go."""
    if len(same_tool) < COUNT_TABLE_FROM:  # no table would be large enough
        return {
            (i, j): 0
            if i in required or known.get((i, j))
            else mismatch_count(tools[plan[i].name], plan[i], calls[j])
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
                    counts[i, j] = mismatch_count(rule, plan[i], calls[j])
            continue
        table = mismatch_counts(rule, [plan[i] for i in rows], [calls[j] for j in cols]).tolist()
        for i, row in zip(rows, table, strict=True):
            for j, count in zip(cols, row, strict=True):
                counts[i, j] = count
    return counts


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
