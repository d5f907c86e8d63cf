"""What `lint --env` replays: a plan made call by call as an agent makes it, each `$ref`
read from what the calls before it returned, and the checks of a case's state keys.

A plan is replayed once from the case's setup, under the environment's time limits, as the
agent's calls are (`state.replay.replay_calls`): a call that fails is that call's error and
replay goes on; a terminal tool's call ends it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from toolscore.core.dataflow import dependencies, iter_refs, result_document, topological
from toolscore.core.model import MISSING, Call, Case, Plan
from toolscore.core.plan_calls import made_call
from toolscore.core.values import show
from toolscore.state.environment import Environment, Tool, ToolContext
from toolscore.state.limits import alarms_installed
from toolscore.state.outputs import missing_outputs, output_options
from toolscore.state.replay import (
    Fail,
    ReplayStoppedError,
    case_error,
    invoke,
    replay_calls,
    start,
)
from toolscore.state.verdict import validate_case

if TYPE_CHECKING:
    from toolscore.state import AnyEnvironment
    from toolscore.state.replay import Invoke


class Replayed(NamedTuple):
    """A plan's calls as replay made them (each with its result), in dependency order."""

    calls: tuple[Call, ...]
    errors: tuple[tuple[int, str], ...] = ()
    """(position, error) of each call whose tool failed."""
    unresolved: tuple[int, str] | None = None
    """The position of the first call whose `$ref` could not be resolved, and why; the
    calls stop before it."""
    stopped: str | None = None
    """Where and why the replay stopped (past the time limit or denied, in the setup)."""


def unsayable_outputs(env: AnyEnvironment, case: Case, source: str) -> list[str]:
    """Check a case's state keys (an input error when they are malformed); then, for each
    required output that no response could hold, not even one saying the required strings
    themselves, why."""
    validate_case(env, case, source)
    if case.turns:  # each turn's outcome keys, as `score --env` reads them
        from toolscore.state.conversation import validate_conversation  # noqa: PLC0415

        validate_conversation(env, case, case_error(case, source))
    required = [e for e in case.extra.get("required_outputs") or () if isinstance(e, str)]
    if not required:
        return []
    place, normalise = output_options(case.extra, env.config, case_error(case, source))
    said = tuple(required)
    missing = missing_outputs(
        required, "\n".join(said), said=said, place=place, normalise=normalise
    )
    return [
        f"no response can hold {text!r}: not even one that says it (normalise: {normalise})"
        for text in missing
    ]


def replayed_calls(env: AnyEnvironment, case: Case, plan: Plan, source: str) -> Replayed:
    """Make plan's calls one by one on a replay from the case's setup, each with the
    result replay gave it; stop at a call whose `$ref` cannot be resolved from them (a
    call that failed resolves none)."""
    fail = case_error(case, source)
    sources: dict[str, Call] = {}
    failed: dict[str, str] = {}
    calls: list[Call] = []
    errors: list[tuple[int, str]] = []
    ended = False
    try:
        with alarms_installed(), _replay(env, case, fail) as (call_tool, ctx):
            for position, i in enumerate(topological(range(len(plan)), dependencies(plan))):
                expected = plan[i]
                call = made_call(expected, sources)
                why = _unresolved(call.args or {}, sources, failed)
                if why is not None:
                    return Replayed(tuple(calls), tuple(errors), (position, why))
                calls.append(call)
                if not ended:
                    (outcome,) = replay_calls(env, call_tool, ctx, calls, first=position)
                    if outcome.error is None:
                        calls[-1] = call._replace(result=outcome.result)
                    else:
                        calls[-1] = call._replace(result=outcome.error, result_error=True)
                        errors.append((position, outcome.error))
                    ended = call.name in env.policy.terminal_tools
                if expected.label is not None:
                    if calls[-1].result_error:
                        failed[expected.label] = str(calls[-1].result)
                    else:
                        sources[expected.label] = calls[-1]
    except ReplayStoppedError as stop:
        return Replayed(tuple(calls), tuple(errors), stopped=str(stop))
    return Replayed(tuple(calls), tuple(errors))


def _unresolved(
    args: Mapping[str, Any], sources: Mapping[str, Call], failed: Mapping[str, str]
) -> str | None:
    """Why a `$ref` left in a made call's arguments could not be resolved, or None."""
    for _, ref in iter_refs(args):
        if ref.label in failed:
            return f"$ref {ref}: the call labelled {ref.label!r} failed: {failed[ref.label]}"
        source = sources[ref.label]
        if source.result is MISSING:
            return (
                f"$ref {ref}: the call labelled {ref.label!r} was not replayed (a terminal "
                "tool's call ended the replay)"
            )
        document = show(result_document(source))
        return f"$ref {ref}: nothing at {ref.pointer or '(root)'} in its result {document}"
    return None


@contextlib.contextmanager
def _replay(env: AnyEnvironment, case: Case, fail: Fail) -> Iterator[tuple[Invoke, ToolContext]]:
    """A replay from the case's setup, on either kind of store: how to call a tool on it,
    and the case's context."""
    if isinstance(env, Environment):
        db, ctx = start(env, case, fail)

        def call(tool: Tool, args: Mapping[str, Any]) -> Any:
            return invoke(env, tool, db, args, ctx)

        try:
            yield call, ctx
        finally:
            db.close()
        return
    from toolscore.state.documents_verdict import start as start_documents  # noqa: PLC0415

    replay = start_documents(env, case, fail)
    try:
        yield replay.invoke, replay.ctx
    finally:
        env.release(replay.state)
