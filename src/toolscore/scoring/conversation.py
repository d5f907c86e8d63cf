"""A conversation case scored turn by turn: the agent's calls split by the user message they
follow, each turn matched against its own plans with the one-case scorer.

Case turn k is the output's user turn k + 1 (a transcript's calls after its (k+1)-th user
message, or entry k of a `turns` line); calls before the first user message count to turn 0,
and a plain `calls` line is one turn. A `$ref` to a label of an earlier turn is replaced,
before the turn is matched, by what the agent's own paired call of that turn returned. The
cost is linear in the turns: each call is matched in one turn only (docs/formats.md 3.8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolscore.core.dataflow import iter_refs, substitute
from toolscore.core.model import (
    MISSING,
    Call,
    Case,
    CaseResult,
    Efficiency,
    Mismatch,
    Partial,
    Plan,
    Retry,
    Trajectory,
    Turn,
    TurnResult,
)
from toolscore.core.partial import no_credit, rates
from toolscore.inputs.missing import MISSING_OUTPUT
from toolscore.specs.loading import SpecSet

ScoreCalls = Callable[[SpecSet, Case, Trajectory], CaseResult]
"""The one-case scorer (`scoring.case.score_case`), passed in to score each turn."""


def split_turns(trajectory: Trajectory) -> list[list[int]]:
    """The positions of the produced calls in each user turn of the output, one list per
    turn (a line without user turns is one turn)."""
    count = max(trajectory.final_turn, 1)
    turns: list[list[int]] = [[] for _ in range(count)]
    for j, call in enumerate(trajectory.calls):
        turns[min(max(call.turn, 1), count) - 1].append(j)
    return turns


def score_conversation(
    specs: SpecSet, case: Case, trajectory: Trajectory, score_calls: ScoreCalls
) -> CaseResult:
    """The verdict on a conversation case: each turn's verdict, and the case's (it passes
    when every turn passes and the output has no turn the case lacks)."""
    if trajectory.missing:
        return _missing(case)
    calls = trajectory.calls
    split = split_turns(trajectory)
    unread = _unread_by_turn(trajectory, len(split))
    sources: dict[str, Call] = {}
    earlier: set[str] = set()
    results: list[TurnResult] = []
    baselines = {"exact": True, "lowercase": True}
    name_ok = True
    retries: list[Retry] = []
    efficiency = [0, 0, 0]
    for k, turn in enumerate(case.turns):
        if k >= len(split):
            results.append(_missing_turn(k, turn, len(split), trajectory))
            baselines = {"exact": False, "lowercase": False}
            name_ok = False
            continue
        positions = split[k]
        scored, resolved = _turn_result(
            specs, case, turn, k, positions, trajectory, unread.get(k, ()), sources, earlier,
            score_calls,
        )  # fmt: skip
        results.append(resolved)
        baselines = {name: ok and scored.baselines[name] for name, ok in baselines.items()}
        name_ok = name_ok and scored.name_ok
        retries.extend(_moved_retry(retry, positions) for retry in scored.retries)
        if scored.efficiency is not None:
            efficiency = [a + b for a, b in zip(efficiency, scored.efficiency, strict=True)]
        if scored.plan is not None:
            plan = turn.plans[scored.plan]
            for i, j in scored.pairs:
                label = plan[i].label
                if label is not None:
                    sources[label] = calls[positions[j]]
        earlier.update(call.label for plan in turn.plans for call in plan if call.label)
    extra, extra_at = _extra_turns(case, split, unread)
    results = _with_limit(case, results, split, extra)
    if extra:
        baselines = {"exact": False, "lowercase": False}
        name_ok = False
    failed = next((r.turn for r in results if not r.passed), None)
    if failed is None:
        failed = extra_at
    return CaseResult(
        id=case.id,
        passed=failed is None,
        kind=case.kind,
        plan=None,
        mismatches=(*(m for r in results for m in r.mismatches), *extra),
        baselines={**baselines, "nothing": nothing_turns(case)},
        name_ok=name_ok,
        pairs=tuple(pair for r in results for pair in r.pairs),
        produced_calls=len(calls),
        calls=calls,
        format=trajectory.format,
        notes=trajectory.notes,
        unread=trajectory.unread,
        trace=trajectory.trace,
        ignored=trajectory.ignored,
        partial=_summed([r.partial for r in results]),
        efficiency=Efficiency(*efficiency),
        retries=tuple(retries),
        turns=tuple(results),
        first_failed_turn=failed,
    )


def nothing_turns(case: Case) -> bool:
    """The do-nothing baseline of a conversation: making no call carries out some plan of
    every turn (each has no plan, or an empty one)."""
    return all(not turn.plans or not all(turn.plans) for turn in case.turns)


def _turn_result(
    specs: SpecSet,
    case: Case,
    turn: Turn,
    k: int,
    positions: Sequence[int],
    trajectory: Trajectory,
    unread: tuple[str, ...],
    sources: Mapping[str, Call],
    earlier: set[str],
    score_calls: ScoreCalls,
) -> tuple[CaseResult, TurnResult]:
    """Turn k scored as a case of its own (its calls, its plans with earlier turns' `$ref`s
    resolved), and its verdict with calls numbered in the whole conversation."""
    all_calls = trajectory.calls
    turn_calls = tuple(all_calls[j] for j in positions)
    plans = turn.plans
    left: dict[int, list[Mismatch]] = {}
    if turn.earlier_refs:
        plans, left = _resolved(turn, sources, earlier)
    responses = trajectory.turn_responses
    response = responses[k] if k < len(responses) else trajectory.response
    turn_case = Case(case.id, plans, turn.prompt, linked=turn.linked, forbid=case.forbid)
    turn_trajectory = Trajectory(case.id, turn_calls, response, unread=unread)
    scored = score_calls(specs, turn_case, turn_trajectory)
    if left and scored.plan in left:
        scored = _unresolved(specs, turn_case, turn_trajectory, scored, left, score_calls)
    start = positions[0] if positions else _start_of(trajectory, k)
    moved = tuple(_moved(m, positions) for m in scored.mismatches)
    pairs = tuple((i, positions[j]) for i, j in scored.pairs)
    partial = scored.partial
    if partial is not None:
        partial = partial._replace(pairs=tuple((i, positions[j]) for i, j in partial.pairs))
    end = positions[-1] + 1 if positions else start
    return scored, TurnResult(k, scored.passed, scored.plan, moved, pairs, partial, (start, end))


def _resolved(
    turn: Turn, sources: Mapping[str, Call], earlier: set[str]
) -> tuple[tuple[Plan, ...], dict[int, list[Mismatch]]]:
    """The turn's plans with each `$ref` to an earlier turn's label replaced by the value the
    agent's paired call returned, and for each plan the `unresolved_ref` mismatches of those
    left."""
    plans = [list(plan) for plan in turn.plans]
    left: dict[int, list[Mismatch]] = {}
    for p, i in turn.earlier_refs:
        call = plans[p][i]
        args = substitute(call.args, sources)
        for path, ref in iter_refs(args):
            if ref.label in earlier:
                left.setdefault(p, []).append(
                    Mismatch(
                        "unresolved_ref", path, None, str(ref), MISSING,
                        _unresolved_reason(ref.label, ref.pointer, sources), None, i,
                    )
                )  # fmt: skip
        plans[p][i] = call._replace(args=args)
    return tuple(map(tuple, plans)), left


def _unresolved_reason(label: str, pointer: str, sources: Mapping[str, Call]) -> str:
    source = sources.get(label)
    if source is None:
        return f"$ref {label}#{pointer}: an earlier turn's call labelled {label!r} was not made"
    if source.result is MISSING:
        return f"$ref {label}#{pointer}: the earlier turn's call {label!r} has no recorded result"
    return f"$ref {label}#{pointer}: nothing at {pointer or '(root)'} in the earlier turn's result"


def _unresolved(
    specs: SpecSet,
    turn_case: Case,
    turn_trajectory: Trajectory,
    scored: CaseResult,
    left: Mapping[int, list[Mismatch]],
    score_calls: ScoreCalls,
) -> CaseResult:
    """The verdict when the chosen plan holds a `$ref` to an earlier turn that could not be
    resolved: a plan that can pass without one, if any passes; else the chosen plan, failed
    with its `unresolved_ref` mismatches."""
    clean = [p for p in range(len(turn_case.plans)) if p not in left]
    if scored.passed and clean:
        retry = score_calls(
            specs, turn_case._replace(plans=tuple(turn_case.plans[p] for p in clean)),
            turn_trajectory,
        )  # fmt: skip
        if retry.passed and retry.plan is not None:
            return retry._replace(plan=clean[retry.plan])
    assert scored.plan is not None
    partner = dict(scored.pairs)
    found = tuple(m.at(partner.get(m.plan_call or 0), m.plan_call) for m in left[scored.plan])
    partial = scored.partial
    if partial is not None:
        wrong = {m.plan_call for m in found if m.call is not None}
        matched = max(partial.matched - len(wrong), 0)
        figures = rates(matched, partial.expected, partial.produced)
        partial = partial._replace(matched=matched, precision=figures[0], recall=figures[1],
                                   f1=figures[2])  # fmt: skip
    baselines = {**scored.baselines, "exact": False, "lowercase": False}
    return scored._replace(
        passed=False, mismatches=(*scored.mismatches, *found), partial=partial, baselines=baselines
    )


def _moved(mismatch: Mismatch, positions: Sequence[int]) -> Mismatch:
    call = mismatch.call
    return mismatch if call is None else mismatch._replace(call=positions[call])


def _moved_retry(retry: Retry, positions: Sequence[int]) -> Retry:
    return retry._replace(call=positions[retry.call], retried_by=positions[retry.retried_by])


def _start_of(trajectory: Trajectory, k: int) -> int:
    """Where turn k's calls would start among the conversation's calls: after every call of
    an earlier turn."""
    return sum(1 for call in trajectory.calls if max(call.turn, 1) - 1 < k)


def _unread_by_turn(trajectory: Trajectory, turns: int) -> dict[int, tuple[str, ...]]:
    """The unread parts of the transcript by the output turn they were met in (parts whose
    turn is not known count to turn 0)."""
    if not trajectory.unread:
        return {}
    found: dict[int, list[str]] = {}
    known = trajectory.unread_turns
    for n, part in enumerate(trajectory.unread):
        turn = min(max(known[n], 1), turns) - 1 if n < len(known) else 0
        found.setdefault(turn, []).append(part)
    return {turn: tuple(parts) for turn, parts in found.items()}


def _missing_turn(k: int, turn: Turn, present: int, trajectory: Trajectory) -> TurnResult:
    """A case turn the output has no user message for: failed with `missing_turn`."""
    what = "a plain calls list is one turn" if trajectory.final_turn == 0 else "user turns"
    message = f"turn {k}: the output has only {present} ({what}), none for this turn"
    end = len(trajectory.calls)
    return TurnResult(
        k, False, None, (Mismatch("missing_turn", message=message),), (),
        no_credit(turn.plans, None), (end, end),
    )  # fmt: skip


def _extra_turns(
    case: Case, split: Sequence[Sequence[int]], unread: Mapping[int, tuple[str, ...]]
) -> tuple[tuple[Mismatch, ...], int | None]:
    """One `extra_turn` mismatch for each output turn beyond the case's last that holds
    calls, and the unread parts met there; and the first such turn that fails."""
    found: list[Mismatch] = []
    first: int | None = None
    have = len(case.turns)
    for t in range(have, len(split)):
        positions = split[t]
        if positions:
            n = len(positions)
            message = (
                f"{n} call{'s' if n > 1 else ''} in turn {t}, which the case does not have "
                f"(it has {have} turn{'s' if have > 1 else ''})"
            )
            found.append(Mismatch("extra_turn", message=message, call=positions[0]))
        for part in unread.get(t, ()):
            message = f"not read from the transcript: {part}"
            found.append(Mismatch("transcript_unread", message=message))
        if first is None and found:
            first = t
    return tuple(found), first


def _with_limit(
    case: Case, results: list[TurnResult], split: Sequence[Sequence[int]], extra: tuple[Any, ...]
) -> list[TurnResult]:
    """`max_calls` over the whole conversation: `too_many_calls` in the turn of the first
    call beyond the limit (it fails there)."""
    limit = case.max_calls
    made = sum(map(len, split))
    if limit is None or made <= limit:
        return results
    message = f"{made} calls made, at most {limit} allowed"
    mismatch = Mismatch("too_many_calls", message=message, call=limit)
    for result in results:
        start, end = result.calls
        if start <= limit < end:
            results[result.turn] = result._replace(
                passed=False, mismatches=(*result.mismatches, mismatch)
            )
            return results
    # The call is in a turn the case lacks, which fails with extra_turn already.
    assert extra
    return results


def _summed(partials: Sequence[Partial | None]) -> Partial:
    """The conversation's partial credit: the turns' matched, expected and produced calls
    added up (micro), against no one plan."""
    matched = sum(p.matched for p in partials if p is not None)
    expected = sum(p.expected for p in partials if p is not None)
    produced = sum(p.produced for p in partials if p is not None)
    return Partial(None, matched, expected, produced, *rates(matched, expected, produced))


def _missing(case: Case) -> CaseResult:
    """A conversation case without an output line: every turn failed, the case failed with
    `missing_output`."""
    turns = tuple(
        TurnResult(k, False, None, (), (), no_credit(turn.plans, None))
        for k, turn in enumerate(case.turns)
    )
    partial = _summed([t.partial for t in turns])
    return CaseResult(
        id=case.id,
        passed=False,
        kind=case.kind,
        plan=None,
        mismatches=(MISSING_OUTPUT,),
        baselines={"exact": False, "lowercase": False, "nothing": nothing_turns(case)},
        name_ok=False,
        missing_output=True,
        partial=partial._replace(precision=0.0, recall=0.0, f1=0.0),
        efficiency=Efficiency(0, 0, 0),
        turns=turns,
        first_failed_turn=0,
    )
