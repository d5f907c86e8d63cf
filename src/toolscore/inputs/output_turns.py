"""The `turns` shape of an outputs line: what the agent did in each user turn of a
conversation, `turns: [{calls: [...], response?}, ...]`.

Each turn's calls are read as a line's `calls` are, and carry `turn = k + 1` (the number of
user messages before them, as a transcript's calls do), so that one scorer splits both
shapes into turns the same way (`scoring.conversation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.core.model import Call, Trajectory
from toolscore.errors import OutputError
from toolscore.inputs.calls import BothResultAndError, json_text, produced_call
from toolscore.inputs.formats.hints import calls_error, check_calls

TURN_ENTRY_KEYS = frozenset({"calls", "response"})
"""The keys of one entry of an outputs line's `turns`."""


def read_turns(
    data: Mapping[str, Any], case_id: str, source: str, line: int | None, trial: int | str | None
) -> Trajectory:
    """The trajectory of a line whose `turns` list each user turn's calls and response; a
    broken structure (not a list, an unknown key, calls not a list) is an input error."""
    node = data["turns"]
    if type(node) is not list or not node:
        message = "must be a non-empty list of turns ({calls: [...], response?})"
        raise OutputError(source, message, line=line, field="turns")
    if data.get("response") is not None:
        message = "a line with turns gives each turn's response in its entry"
        raise OutputError(source, message, line=line, field="response")
    calls: list[Call] = []
    responses: list[str | None] = []
    for k, entry in enumerate(node):
        where = f"turns[{k}]"
        if type(entry) is not dict:
            message = "a turn must be an object with calls (and a response)"
            raise OutputError(source, message, line=line, field=where)
        if not entry.keys() <= TURN_ENTRY_KEYS:
            unknown = sorted(entry.keys() - TURN_ENTRY_KEYS)[0]
            message = "unknown key (a turn has calls and response)"
            raise OutputError(source, message, line=line, field=f"{where}.{unknown}")
        if "calls" not in entry:
            message = "every turn gives its calls ([] for no call)"
            raise OutputError(source, message, line=line, field=f"{where}.calls")
        calls.extend(call._replace(turn=k + 1) for call in _turn_calls(entry, source, line, where))
        response = entry.get("response")
        if response is not None and not isinstance(response, str):
            response = json_text(response)
        responses.append(response)
    return Trajectory(
        case_id,
        tuple(calls),
        responses[-1],
        line=line,
        final_turn=len(node),
        trial=trial,
        said=tuple(text for text in responses if text),
        turn_responses=tuple(responses),
        said_turns=tuple(k + 1 for k, text in enumerate(responses) if text),
    )


def _turn_calls(
    entry: Mapping[str, Any], source: str, line: int | None, where: str
) -> tuple[Call, ...]:
    """One turn's calls (null: none), each read as a line's `calls` entry."""
    node = entry["calls"]
    if node is None:
        return ()
    try:
        if not isinstance(node, list):
            raise calls_error(node, source, line)
        try:
            calls = tuple(map(produced_call, node))
        except BothResultAndError:
            index = next(
                i
                for i, n in enumerate(node)
                if isinstance(n, dict) and "error" in n and "result" in n
            )
            message = "a call gives its tool's result or its error, not both"
            raise OutputError(source, message, line=line, field=f"calls[{index}].error") from None
        if calls and not all(call.args for call in calls):
            check_calls(node, source, line)
    except OutputError as error:
        raise OutputError(
            source, error.message, line=line, field=f"{where}.{error.field or 'calls'}"
        ) from None
    return calls
