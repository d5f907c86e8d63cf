"""Replay calls on a document environment's data and judge the final state against the goal.

As with SQLite (`replay`, `verdict`): each replay starts from a private copy of the initial
data with the case's `setup` calls applied; every call runs under the time limit; a call that
fails is recorded and replay goes on, its changes undone (`on_error: rollback`, by going back
to a copy taken before the call) or kept (`keep`). The goal is `"plan"`: the state a plan's
replay reaches, errors included; an agent that made exactly a plan's calls, each succeeding,
reached it without the plan being replayed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import orjson

from toolscore.errors import InputError, ReplayInterrupted
from toolscore.model import Call, Case
from toolscore.state.document_hash import document_hash
from toolscore.state.documents import DocumentEnvironment
from toolscore.state.environment import Tool, ToolContext
from toolscore.state.errors_policy import ToolReportedError
from toolscore.state.limits import CallTimeout, alarms_installed, time_limit
from toolscore.state.pointer_diff import DocumentDiff, diff_documents
from toolscore.state.replay import (
    CallOutcome,
    Fail,
    PlanReplay,
    ReplayStoppedError,
    case_error,
    follows_plan,
    own_args,
    replay_calls,
    replay_plan_calls,
    tool_error,
)

GOAL_FORM = 'a documents environment takes goal_state: "plan"'


class Replay:
    """One replay's state (replaced as a whole when a failed call is rolled back)."""

    __slots__ = ("ctx", "env", "state")

    def __init__(self, env: DocumentEnvironment, ctx: ToolContext) -> None:
        self.env = env
        self.ctx = ctx
        self.state: Any = env.fresh()

    def invoke(self, tool: Tool, args: Mapping[str, Any]) -> Any:
        """Call one tool on the state under the time limit; on failure, go back to the state
        before the call unless the environment keeps a failed call's changes."""
        env = self.env
        args = own_args(args)
        saved = None if env.policy.keeps else env.save(self.state)
        try:
            with time_limit(env.timeout):
                if tool.takes_ctx:
                    result = tool.function(self.state, **args, ctx=self.ctx)
                else:
                    result = tool.function(self.state, **args)
                error = env.policy.returned_error(result)
                if error is not None:
                    raise ToolReportedError(error)
        except BaseException:
            if saved is not None:
                self.state = env.restore(saved)
            raise
        return result

    def snapshot(self, where: str) -> Any:
        """The compared form of the state, checked to be JSON."""
        env = self.env
        try:
            with time_limit(env.timeout):
                found = env.snapshot(self.state)
        except KeyboardInterrupt:
            raise ReplayInterrupted(f"case {self.ctx.case_id!r}, the snapshot {where}") from None
        except (Exception, SystemExit, CallTimeout) as error:
            raise InputError(
                env.source,
                f"case {self.ctx.case_id!r}: the snapshot {where} failed: {tool_error(error)}",
                field="environment.snapshot",
            ) from None
        try:
            orjson.dumps(found)
        except TypeError as error:
            if "recursion" not in str(error).lower():  # deeper than orjson writes is JSON too
                raise InputError(
                    env.source,
                    f"case {self.ctx.case_id!r}: the state {where} is not JSON ({error}); "
                    "give a `snapshot` function that makes it JSON",
                    field="environment.snapshot" if env.snapshot_function else "environment.data",
                ) from None
        return found


def start(env: DocumentEnvironment, case: Case, fail: Fail) -> Replay:
    """A fresh copy of the initial data with the case's `setup` calls applied."""
    replay = Replay(env, env.context(case.id))
    node = case.extra.get("setup")
    if node is None:
        return replay
    if not isinstance(node, list):
        raise fail("setup", "must be a list of calls {name, args} (a documents environment)")
    for i, item in enumerate(node):
        where = f"setup[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise fail(where, "must be a call {name, args}")
        if not item.keys() <= {"name", "args"} or not isinstance(item.get("args", {}), dict):
            raise fail(where, "a setup call has a name and args (an object)")
        tool = env.tools.get(item["name"])
        if tool is None:
            raise fail(where, f"no tool {item['name']!r} in {env.tools_module}")
        try:
            replay.invoke(tool, item.get("args", {}))
        except KeyboardInterrupt:
            raise ReplayInterrupted(f"case {case.id!r}, {where}") from None
        except CallTimeout as stop:
            raise ReplayStoppedError(where, tool_error(stop)) from None
        except (Exception, SystemExit) as exc:
            raise fail(where, f"{item['name']} raised {tool_error(exc)}") from None
    return replay


def replay_documents(
    env: DocumentEnvironment, case: Case, calls: Sequence[Call], source: str = "<cases>"
) -> tuple[Any, tuple[CallOutcome, ...]]:
    """The final state (its compared form) after the case's setup and the given calls, and
    each call's outcome."""
    with alarms_installed():
        replay = start(env, case, case_error(case, source))
        outcomes = replay_calls(env, replay.invoke, replay.ctx, calls)
        return replay.snapshot("after the calls"), outcomes


class Judged(NamedTuple):
    """A document case's state verdict, the fields of `verdict.StateVerdict` it sets."""

    passed: bool
    diff: DocumentDiff
    calls: tuple[CallOutcome, ...]
    plan: int
    hashes: tuple[str, str] | None
    plan_replay: PlanReplay


def judge_documents(
    env: DocumentEnvironment, case: Case, calls: Sequence[Call], node: Any, fail: Fail
) -> Judged:
    """Judge one case's final state against its plans' states; the first plan met wins."""
    if node != "plan":
        raise fail("goal_state", GOAL_FORM)
    replay = start(env, case, fail)
    outcomes = replay_calls(env, replay.invoke, replay.ctx, calls)
    try:
        final = replay.snapshot("after the agent's calls")
        first = None
        for index in range(max(len(case.plans), 1)):
            met = PlanReplay()
            if follows_plan(case, index, calls, outcomes):
                goal = final
            else:
                goal, met = _plan_state(env, case, index, fail)
            passed, diff, hashes = judge(env, goal, final)
            verdict = Judged(passed, diff, outcomes, index, hashes, met)
            if passed:
                return verdict
            first = first or verdict
        assert first is not None
        return first
    except ReplayStoppedError as stop:
        stop.calls = outcomes
        raise


def _plan_state(
    env: DocumentEnvironment, case: Case, index: int, fail: Fail
) -> tuple[Any, PlanReplay]:
    """The state after replaying plan `index` (no plan at all: the start state)."""
    replay = start(env, case, fail)
    if not case.plans:
        return replay.snapshot("at the start"), PlanReplay()
    met = replay_plan_calls(env, case, index, replay.invoke, replay.ctx, fail)
    return replay.snapshot(f"after plan {index}"), met


def judge(
    env: DocumentEnvironment, goal: Any, final: Any
) -> tuple[bool, DocumentDiff, tuple[str, str] | None]:
    """Compare a goal state with a final one: by their diff, or by their hashes (`exact`)."""
    diff = diff_documents(goal, final, env.ignore, env.typed)
    if env.compare == "exact":
        hashes = (
            document_hash(goal, env.ignore, env.typed),
            document_hash(final, env.ignore, env.typed),
        )
        return hashes[0] == hashes[1], diff, hashes
    return diff.passed, diff, None


def validate_documents_case(env: DocumentEnvironment, case: Case, fail: Fail) -> None:
    """Check what can be checked of a case for a documents environment without replaying."""
    node = case.extra.get("goal_state")
    if node is not None and node != "plan":
        raise fail("goal_state", GOAL_FORM)
    setup = case.extra.get("setup")
    if setup is not None and not isinstance(setup, list):
        raise fail("setup", "must be a list of calls {name, args} (a documents environment)")


def initial_state(env: DocumentEnvironment) -> Any:
    """The compared form of the initial data (no case's setup applied)."""
    with alarms_installed():
        return Replay(env, env.context("")).snapshot("at the start")
