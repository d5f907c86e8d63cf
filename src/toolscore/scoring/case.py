"""One case scored against what the agent produced: its verdict, and the baselines beside it.

Every case is scored four ways in the same pass: by the rules, by exact JSON comparison with
the first plan, by the lowercase scorer (every string casefolded, omissions ignored), so
that the report shows what the rules changed, and as if the agent had done nothing, so that
it shows the cases that measure nothing (docs/formats.md, metrics). A case without an output
line fails (`toolscore.inputs.missing`). The run over many cases is `scoring.stream`, its
summary `scoring.summary`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolscore.core.answers import ScoredCalls
from toolscore.core.diagnosis import best_plan
from toolscore.core.forbid import limit_mismatches
from toolscore.core.model import MISSING, Call, Case, CaseResult, Mismatch, Retry, Trajectory
from toolscore.core.partial import (
    NO_EFFICIENCY,
    PASSED_ONE,
    no_credit,
    partial_credit,
    repeated_calls,
)
from toolscore.core.plans import names_match
from toolscore.core.retries import excused_calls, find_retries
from toolscore.core.values import json_equal, show
from toolscore.inputs.missing import (
    missing_result,
    nothing_calls,
)
from toolscore.specs.loading import SpecSet

if TYPE_CHECKING:
    from toolscore.state import AnyEnvironment as Environment


def exact_baseline(plans: Sequence[Sequence[Call]], calls: Sequence[Call]) -> bool:
    """The naive scorer: the produced calls equal the first plan as parsed JSON, by position."""
    plan = plans[0] if plans else ()
    if len(plan) != len(calls):
        return False
    for index, e in enumerate(plan):
        p = calls[index]
        if e.name != p.name or p.args is None or _python_unequal(e.args, p.args):
            return False  # Python's == is coarser than JSON's, so unequal here is unequal
        if not json_equal(e.args, p.args):
            return False
    return True


def _python_unequal(a: Any, b: Any) -> bool:
    """`a != b` as Python compares (fast, in C); False, leaving it to `json_equal`, when the
    values are nested deeper than Python's comparison recurses."""
    try:
        return bool(a != b)
    except RecursionError:
        return False


def exact_difference(plans: Sequence[Sequence[Call]], calls: Sequence[Call]) -> str | None:
    """Why the exact baseline fails a case, in a few words (None when it passes)."""
    plan = plans[0] if plans else ()
    if len(plan) != len(calls):
        return f"{len(calls)} calls made, the first plan has {len(plan)}"
    for index, (e, p) in enumerate(zip(plan, calls, strict=True)):
        if e.name != p.name:
            return f"call {index} is {p.name!r}, the first plan has {e.name!r} there"
        if p.args is None:
            return f"call {index}: arguments could not be parsed"
        for key in sorted(set(e.args or {}) | set(p.args)):
            want, got = (e.args or {}).get(key, MISSING), p.args.get(key, MISSING)
            if want is MISSING or got is MISSING or not json_equal(want, got):
                return f"call {index} /{key}: {show(got)} where the plan has {show(want)}"
    return None


def agent_calls(case: Case, trajectory: Trajectory) -> tuple[Call, ...]:
    """The calls to score: those after the transcript's last user message, unless the case
    says `"score_turns": "all"` (a plain `calls` list is always scored whole)."""
    if trajectory.final_turn == 0 or case.extra.get("score_turns") == "all":
        return trajectory.calls
    return tuple(call for call in trajectory.calls if call.turn == trajectory.final_turn)


def score_case(specs: SpecSet, case: Case, trajectory: Trajectory) -> CaseResult:
    """The verdict on one case: best plan, pairing, mismatches, and the baselines (a case
    without an output line fails with `missing_output`; a conversation case is scored turn
    by turn, `scoring.conversation`)."""
    if case.turns:
        from toolscore.scoring.conversation import score_conversation  # noqa: PLC0415 - rare

        return score_conversation(specs, case, trajectory, score_case)
    if trajectory.missing:
        missing = missing_result(case)
        return missing._replace(partial=no_credit(case.plans, None), efficiency=NO_EFFICIENCY)
    calls = scored = agent_calls(case, trajectory)
    retries: tuple[Retry, ...] = ()
    excused = None
    if len(calls) > 1:
        retries = find_retries(calls, specs.retries_ok)
        if retries and specs.retries_ok:
            # Excused retried calls are left out of what the matcher pairs (core.retries).
            excused = excused_calls(calls, retries)
            if excused is not None:
                scored = excused.scored
    linked = case.linked
    verdict = best_plan(specs.rules, specs.extra_ok, case.plans, scored, linked=linked)
    name_ok = verdict.passed or names_match(case.plans, scored, specs.extra_ok)
    # Under any rules a plan passes only with the tool names it calls for: when no plan's
    # names match, the lowercase scorer fails too, without being asked.
    lowercase = verdict.passed or (
        name_ok
        and best_plan(
            specs.lowercase_rules, specs.extra_ok, case.plans, scored, diagnose=False, linked=linked
        ).passed
    )
    exact = exact_baseline(case.plans, calls)
    if trajectory.unread:
        # What was not read may hold a call: no scorer can pass the case.
        lowercase = exact = False
        partial, efficiency = no_credit(case.plans, verdict.plan), NO_EFFICIENCY
    elif verdict.passed and len(scored) == 1 and verdict.plan == 0:
        partial, efficiency = PASSED_ONE, NO_EFFICIENCY  # the commonest case, without a call
    else:
        partial, efficiency = partial_credit(
            specs.rules, specs.extra_ok, case.plans, scored, verdict
        )
    if excused is not None:
        if not trajectory.unread:
            repeated = repeated_calls(specs.rules, calls)
            partial, efficiency = excused.credit(partial, efficiency, repeated)
        verdict = excused.verdict(verdict)
    mismatches = verdict.mismatches
    if trajectory.unread:
        mismatches += unread_mismatches(trajectory.unread)
    limited: tuple[Mismatch, ...] = ()
    if specs.forbidden or case.forbid or case.max_calls is not None:
        # Forbidden calls and the call limit fail the case whatever the plans allow; the
        # baselines model other scorers, which have neither.
        limited = limit_mismatches(specs.rules, specs.forbidden, case, calls)
        mismatches += limited
    # Positional, in field order: on this path a keyword call costs twice as much.
    return CaseResult(
        case.id,
        verdict.passed and not trajectory.unread and not limited,
        case.kind,
        verdict.plan,
        mismatches,
        {"exact": exact, "lowercase": lowercase, "nothing": nothing_calls(case)},
        name_ok,
        verdict.pairs,
        len(calls),
        trajectory.missing,
        calls,
        trajectory.format,
        trajectory.notes,
        None,  # state: judged later, under --env (`with_state`)
        trajectory.unread,
        None,  # trial and trials: set where trials are grouped
        None,
        trajectory.trace,
        trajectory.ignored,
        partial,
        efficiency,
        retries,
    )


def unread_mismatches(unread: Sequence[str]) -> tuple[Mismatch, ...]:
    """One `transcript_unread` mismatch for each part of a transcript its reader skipped."""
    return tuple(
        Mismatch("transcript_unread", message=f"not read from the transcript: {part}")
        for part in unread
    )


def score_replayed(
    specs: SpecSet,
    case: Case,
    trajectory: Trajectory,
    env: Environment | None = None,
    source: str = "<cases>",
) -> CaseResult:
    """`score_case`, and with `env` the outcome verdict too (`with_state`): one output line
    as a run scores it. Without `env`, a case's `required_outputs` are still checked
    (`with_outputs`)."""
    result = score_case(specs, case, trajectory)
    if "response_rubrics" in case.extra:
        result = result._replace(said=agent_texts(trajectory))
    if env is not None:
        return with_state(env, case, trajectory, result, source)
    if case.turns:
        return _conversation_outputs(case, trajectory, result, source)
    if case.extra.get("required_outputs") is not None:
        return with_outputs(case, trajectory, result, source)
    return result


def agent_texts(trajectory: Trajectory) -> tuple[str, ...]:
    """Everything the agent said in an output line, in order, for its case's response
    rubrics: a transcript's assistant texts, else the texts of its turns, else its
    `response` (none for a missing line)."""
    if trajectory.missing:
        return ()
    if trajectory.said:
        return trajectory.said
    if trajectory.turn_responses:
        return tuple(text for text in trajectory.turn_responses if text is not None)
    return () if trajectory.response is None else (trajectory.response,)


def _conversation_outputs(
    case: Case, trajectory: Trajectory, result: CaseResult, source: str
) -> CaseResult:
    """`with_outputs` for a conversation: each turn's `required_outputs` judged on its
    response, the case's own on the final one (no `--env`: recorded results). An agent that
    said nothing finds none, so the do-nothing baseline fails."""
    from toolscore.state.conversation import missing_conversation  # noqa: PLC0415
    from toolscore.state.conversation_recorded import (  # noqa: PLC0415
        has_outputs,
        recorded_conversation,
    )

    if not has_outputs(case):
        return result
    if trajectory.missing:
        outcome = missing_conversation(case)
    else:
        outcome = recorded_conversation(case, trajectory, result.turns, source)
    turns = tuple(
        turn._replace(state=state) for turn, state in zip(result.turns, outcome.turns, strict=True)
    )
    said = [case.extra.get("required_outputs")] + [
        t.extra.get("required_outputs") for t in case.turns
    ]
    nothing = result.baselines["nothing"] and not any(said)
    return result._replace(
        state=outcome.case, turns=turns, baselines={**result.baselines, "nothing": nothing}
    )


def scored_calls(case: Case, trajectory: Trajectory, result: CaseResult) -> ScoredCalls:
    """The calls `result` paired with its best plan, for the `$ref` outputs of the case:
    each with its position among the trajectory's calls (where replay outcomes stand)."""
    positions: list[int] = []
    scored = result.calls
    for position, call in enumerate(trajectory.calls):
        if len(positions) < len(scored) and call is scored[len(positions)]:
            positions.append(position)
    if len(positions) != len(scored):  # not the trajectory's own calls: take them in order
        positions = list(range(len(scored)))
    plan = case.plans[result.plan] if result.plan is not None and case.plans else ()
    return ScoredCalls(scored, tuple(positions), result.pairs, plan)


def with_outputs(
    case: Case, trajectory: Trajectory, result: CaseResult, source: str = "<cases>"
) -> CaseResult:
    """`result` with the verdict on the case's `required_outputs` alone (no `--env`): found
    in the response, references looked up in the calls' recorded results. An agent that
    said nothing finds none, so the do-nothing baseline fails."""
    from toolscore.state.unreplayed import missing_state, recorded_outputs  # noqa: PLC0415

    if trajectory.missing:
        state = missing_state(case)
    else:
        scored = scored_calls(case, trajectory, result)
        state = recorded_outputs(case, trajectory.response, trajectory.said, scored, source)
    nothing = result.baselines["nothing"] and not case.extra["required_outputs"]
    return result._replace(state=state, baselines={**result.baselines, "nothing": nothing})


def outcome_passed(result: CaseResult) -> bool:
    """Whether a case passed on calls and, when its state was judged, on state and outputs."""
    state = result.state
    if state is None:
        return result.passed
    return result.passed and state.passed is not False and state.outputs_passed is not False


def with_state(
    env: Environment, case: Case, trajectory: Trajectory, result: CaseResult, source: str
) -> CaseResult:
    """`result` with the outcome verdict: every call of the trajectory (all turns change the
    store) replayed against `env`, the final state compared with the case's goal (a case
    without an output line fails each check, unreplayed). Where the case has outcome checks,
    they decide its do-nothing baseline too (`state.unreplayed.nothing_outcome`). A
    conversation is judged turn by turn (`state.conversation`)."""
    from toolscore.state import check_state  # noqa: PLC0415 - only runs with --env replay
    from toolscore.state.unreplayed import missing_state, nothing_outcome  # noqa: PLC0415

    if case.turns:
        return _conversation_state(env, case, trajectory, result, source)
    if trajectory.missing:
        state = missing_state(case)
    else:
        state = check_state(
            env,
            case,
            trajectory.calls,
            trajectory.response,
            source=source,
            said=trajectory.said,
            scored=scored_calls(case, trajectory, result),
        )
    nothing = nothing_outcome(env, case, source)
    if nothing is None:
        return result._replace(state=state)
    return result._replace(state=state, baselines={**result.baselines, "nothing": nothing})


def _conversation_state(
    env: Environment, case: Case, trajectory: Trajectory, result: CaseResult, source: str
) -> CaseResult:
    """`with_state` for a conversation: each turn's outcome verdict on its `TurnResult`, the
    aggregate on the case, and the do-nothing baseline on the initial state."""
    from toolscore.state.conversation import (  # noqa: PLC0415 - only runs with --env replay
        judge_conversation,
        missing_conversation,
        nothing_conversation,
    )

    if trajectory.missing:
        outcome, nothing = missing_conversation(case), nothing_conversation(env, case, source)
    else:
        outcome, nothing = judge_conversation(env, case, trajectory, result.turns, source)
    turns = tuple(
        turn._replace(state=state) for turn, state in zip(result.turns, outcome.turns, strict=True)
    )
    judged = result._replace(state=outcome.case, turns=turns)
    if nothing is None:
        return judged
    return judged._replace(baselines={**result.baselines, "nothing": nothing})
