"""A conversation's answers judged without `--env`: each turn's `required_outputs` on that
turn's response and the case's own on the final one, their `$ref`/`$result` values read
from the calls' recorded results (the state keys need a replay and are not judged)."""

from __future__ import annotations

from collections.abc import Sequence

from toolscore.core.answers import (
    NO_CALLS,
    case_required_outputs,
    conversation_calls,
    parse_required_outputs,
    written,
)
from toolscore.core.model import NO_EXTRA, Case, Trajectory, TurnResult
from toolscore.state.conversation import (
    ConversationOutcome,
    aggregate_turns,
    case_labels,
    outputs_verdict,
    said_by_turn,
    turn_fail,
    turn_response,
)
from toolscore.state.outputs import output_options
from toolscore.state.replay import case_error
from toolscore.state.verdict import StateVerdict


def recorded_conversation(
    case: Case, trajectory: Trajectory, turns: Sequence[TurnResult], source: str = "<cases>"
) -> ConversationOutcome:
    """Without `--env`: each turn's `required_outputs`, and the case's own, judged on that
    turn's response (the case's on the final one), `$ref`/`$result` values read from the
    calls' recorded results; the state keys need replay and are not judged."""
    fail = case_error(case, source)
    place, normalise = output_options(case.extra, NO_EXTRA, fail)
    labels = case_labels(case)
    present = max(trajectory.final_turn, 1)
    texts = said_by_turn(trajectory, present)
    calls = trajectory.calls
    found: list[StateVerdict | None] = []
    for k, turn in enumerate(case.turns):
        node = turn.extra.get("required_outputs")
        if node is None:
            found.append(None)
            continue
        required = parse_required_outputs(node, labels, None, turn_fail(fail, k))
        if k >= present:
            missing = tuple(map(written, required))
            found.append(StateVerdict(None, outputs_passed=False, missing_outputs=missing))
            continue
        refs = any(not isinstance(entry, str) for entry in required)
        scored = conversation_calls(case, turns, calls, k) if refs else NO_CALLS
        response = turn_response(trajectory, k)
        found.append(
            outputs_verdict(required, response, texts.get(k, ()), place, normalise, scored)
        )
    own = case_required_outputs(case, fail)
    scored = conversation_calls(case, turns, calls) if own else NO_CALLS
    mine = outputs_verdict(own, trajectory.response, trajectory.said, place, normalise, scored)
    return ConversationOutcome(aggregate_turns(found, mine, (), 0), tuple(found))


def has_outputs(case: Case) -> bool:
    """Whether a conversation case or one of its turns has `required_outputs`."""
    extras = [case.extra, *(turn.extra for turn in case.turns)]
    return any(extra.get("required_outputs") is not None for extra in extras)
