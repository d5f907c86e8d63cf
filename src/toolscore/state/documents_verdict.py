"""Replay calls on a document environment's data and judge the final state against the goal.

As with SQLite (`replay`, `verdict`): each replay starts from a private copy of the initial
data with the case's `setup` calls applied; every call runs under the time limit; a call that
fails is recorded and replay goes on, its changes undone (`on_error: rollback`, by going back
to a copy taken before the call) or kept (`keep`). The goal is `"plan"`: the state a plan's
replay reaches, errors included; an agent that made exactly a plan's calls, each succeeding,
reached it without the plan being replayed.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import orjson

import toolscore.state.resume as resuming
from toolscore.core.model import Call, Case
from toolscore.errors import InputError, ReplayInterrupted
from toolscore.state.document_hash import document_hash
from toolscore.state.documents import DocumentEnvironment, plain_copy
from toolscore.state.environment import Tool, ToolContext
from toolscore.state.errors_policy import ToolReportedError
from toolscore.state.limits import CallTimeout, alarms_installed, time_limit
from toolscore.state.pointer_diff import DocumentDiff, diff_documents
from toolscore.state.replay import (
    CallOutcome,
    Fail,
    PlanReplay,
    case_error,
    first_met,
    follows_plan,
    own_args,
    replay_calls,
    replay_plan_calls,
    setup_call,
    tool_error,
)

GOAL_FORM = 'a documents environment takes goal_state: "plan"'


class Replay:
    """One replay's state (replaced as a whole when a failed call is rolled back)."""

    __slots__ = ("ctx", "env", "kept", "last", "state")

    def __init__(self, env: DocumentEnvironment, ctx: ToolContext) -> None:
        self.env = env
        self.ctx = ctx
        self.state: Any = env.fresh()
        self.last: Any = None
        """The compared form of `state` as it is now (None once a call may have changed
        it), for `release` to bring the state back from."""
        self.kept = False
        """True when the replay is kept to be resumed: it must not be released."""

    def release(self) -> None:
        """Hand the state back to the environment, unless the replay is kept to resume."""
        if not self.kept:
            self.env.release(self.state, self.last)

    def evicted(self) -> None:
        """The replay was kept to resume and will not be (`resume.Ends` forgot it): hand its
        state back, as it ended."""
        self.kept = False
        self.release()

    def invoke(self, tool: Tool, args: Mapping[str, Any]) -> Any:
        """Call one tool on the state under the time limit; on failure, go back to the state
        before the call unless the environment keeps a failed call's changes."""
        env = self.env
        args = own_args(args)
        self.last = None
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
        return self.compared(where).state

    def compared(self, where: str) -> Compared:
        """The compared form of the state, checked to be JSON, with its `exact` hash when
        the JSON written for the check is the hashed text (`numbers: typed`, nothing
        ignored): the state is then written once, not once to check and once to hash."""
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
        self.last = found
        hashed = env.compare == "exact" and env.typed and not env.ignore
        try:
            text = orjson.dumps(found, option=orjson.OPT_SORT_KEYS if hashed else None)
        except TypeError as error:
            if "recursion" not in str(error).lower():  # deeper than orjson writes is JSON too
                raise InputError(
                    env.source,
                    f"case {self.ctx.case_id!r}: the state {where} is not JSON ({error}); "
                    "give a `snapshot` function that makes it JSON",
                    field="environment.snapshot" if env.snapshot_function else "environment.data",
                ) from None
            return Compared(found)
        return Compared(found, hashlib.sha256(text).hexdigest() if hashed else None)


class Compared(NamedTuple):
    """A state in its compared form and, when already known, its `exact` hash (the same
    value `document_hash` gives)."""

    state: Any
    digest: str | None = None


def start(env: DocumentEnvironment, case: Case, fail: Fail) -> Replay:
    """A fresh copy of the initial data with the case's `setup` calls applied."""
    replay = Replay(env, env.context(case.id))
    node = case.extra.get("setup")
    if node is None:
        return replay
    if not isinstance(node, list):
        raise fail("setup", "must be a list of calls {name, args} (a documents environment)")
    for i, item in enumerate(node):
        setup_call(env, replay.invoke, replay.ctx, item, f"setup[{i}]", fail, "a call {name, args}")
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
    missing_results: tuple[Any, ...] | None = None
    """With `results_from_plan`: the plan results not found among the agent's (else None)."""


def judge_documents(
    env: DocumentEnvironment, case: Case, calls: Sequence[Call], node: Any, fail: Fail
) -> Judged:
    """Judge one case's final state against its plans' states; the first plan met wins.
    The replays' states go back to the environment at the end (`release`), and so the
    verdict's diff and missing results hold copies of their values, not the values (a tool
    may return a part of the state)."""
    if node != "plan":
        raise fail("goal_state", GOAL_FORM)
    results_from = _results_from(case, fail)
    replays: list[Replay] = []
    try:
        verdict = _judge_plans(env, case, calls, fail, results_from, replays)
        if env.pool is None:
            return verdict
        missing = verdict.missing_results
        return verdict._replace(
            diff=detached(verdict.diff),
            missing_results=None if missing is None else tuple(map(_copied, missing)),
        )
    finally:
        for replay in replays:
            replay.release()


def _judge_plans(
    env: DocumentEnvironment,
    case: Case,
    calls: Sequence[Call],
    fail: Fail,
    results_from: int | None,
    replays: list[Replay],
) -> Judged:
    """`judge_documents`, each replay it starts appended to `replays` (those kept to be
    resumed are marked `kept`, and not released: a later case takes their state over)."""
    replay, outcomes, ending = _agent_replay(env, case, calls, fail)
    replays.append(replay)
    final = replay.compared("after the agent's calls")
    if ending is not None and len(outcomes) == len(calls):
        replay.kept = True
        resuming.AGENT.keep(ending[0], resuming.Ended(env, ending[1], replay, outcomes))

    def judge_plan(index: int) -> Judged:
        met = PlanReplay()
        results: list[Any] = []
        if follows_plan(case, index, calls, outcomes):
            goal = final
        else:
            goal, met = _plan_state(env, case, index, fail, results, replays)
        passed, diff, hashes = judge(env, goal, final)
        missing = None
        if results_from is not None:
            missing = missing_results(results[results_from:], outcomes)
            passed = passed and not missing
        return Judged(passed, diff, outcomes, index, hashes, met, missing)

    return first_met(case, outcomes, judge_plan)


def _agent_replay(
    env: DocumentEnvironment, case: Case, calls: Sequence[Call], fail: Fail
) -> tuple[Replay, tuple[CallOutcome, ...], tuple[bytes, tuple[bytes, ...]] | None]:
    """The agent's replay and its outcomes, resumed where an earlier case's replay of the
    same first calls ended (`resume`) when it may be; with the setup and calls to keep it by
    once it ends (None when it is not to be kept)."""
    setup = resuming.setup_key(case.extra.get("setup")) if resuming.resumable(env) else None
    keys = resuming.agent_keys(calls) if setup is not None else None
    if setup is None or keys is None:
        replay = start(env, case, fail)
        return replay, replay_calls(env, replay.invoke, replay.ctx, calls), None
    found = resuming.AGENT.take(env, setup, keys)
    if found is None:
        replay = start(env, case, fail)
        outcomes = replay_calls(env, replay.invoke, replay.ctx, calls)
    else:
        replay = found.replay
        replay.kept = False  # taken over: this case releases it, unless it keeps it again
        replay.ctx = env.context(case.id)
        made = replay_calls(env, replay.invoke, replay.ctx, calls, first=len(found.calls))
        outcomes = found.past + made
    return replay, outcomes, (setup, tuple(keys))


def _plan_state(
    env: DocumentEnvironment,
    case: Case,
    index: int,
    fail: Fail,
    results: list[Any],
    replays: list[Replay],
) -> tuple[Compared, PlanReplay]:
    """The state after replaying plan `index` (no plan at all: the start state); each plan
    call's result (None for a failed call) is appended to `results`, in replay order. The
    replay is resumed where an earlier case's replay of the same first plan calls ended
    (`resume`) when it may be: where no plan call is labelled."""
    if not case.plans:
        replay = start(env, case, fail)
        replays.append(replay)
        return replay.compared("at the start"), PlanReplay()
    setup = resuming.setup_key(case.extra.get("setup")) if resuming.resumable(env) else None
    keys = resuming.plan_keys(case.plans[index]) if setup is not None else None
    found = resuming.PLANS.take(env, setup, keys) if setup is not None and keys else None
    first, errors = 0, ()
    if found is None:
        replay = start(env, case, fail)
    else:
        replay, first = found.replay, len(found.calls)
        replay.kept = False  # taken over: this case releases it, unless it keeps it again
        replay.ctx = env.context(case.id)
        results.extend(found.past[0])
        errors = found.past[1]
    replays.append(replay)

    def invoke(tool: Tool, args: Mapping[str, Any]) -> Any:
        results.append(None)
        results[-1] = replay.invoke(tool, args)
        return results[-1]

    met = replay_plan_calls(env, case, index, invoke, replay.ctx, fail, first=first)
    met = PlanReplay(errors + met.errors, met.not_replayed)
    state = replay.compared(f"after plan {index}")
    if setup is not None and keys and not met.not_replayed:
        past = (tuple(results), met.errors)
        replay.kept = True
        resuming.PLANS.keep(setup, resuming.Ended(env, tuple(keys), replay, past))
    return state, met


def detached(diff: DocumentDiff) -> DocumentDiff:
    """The diff with each value it shows copied, so that it no longer holds parts of the
    states it compared (which later replays reuse)."""
    if not diff.changes:
        return diff
    changes = tuple(
        change._replace(goal=_copied(change.goal), final=_copied(change.final))
        for change in diff.changes
    )
    return diff._replace(changes=changes)


def _copied(value: Any) -> Any:
    if type(value) not in (dict, list, tuple):
        return value  # a scalar: immutable
    copied = plain_copy(value)
    return copy.deepcopy(value) if copied is None else copied


def _results_from(case: Case, fail: Fail) -> int | None:
    node = case.extra.get("results_from_plan")
    if node is None:
        return None
    if isinstance(node, bool) or not isinstance(node, int) or node < 0:
        raise fail("results_from_plan", "must be a position in the plan (an integer >= 0)")
    return node


def missing_results(required: Sequence[Any], outcomes: Sequence[CallOutcome]) -> tuple[Any, ...]:
    """The required results not found among the agent's call results, each agent result
    serving once, in any order (BFCL's response check)."""
    pool: dict[bytes, int] = {}
    for outcome in outcomes:
        if outcome.error is None:
            key = orjson.dumps(outcome.result, option=orjson.OPT_SORT_KEYS)
            pool[key] = pool.get(key, 0) + 1
    missing = []
    for result in required:
        key = orjson.dumps(result, option=orjson.OPT_SORT_KEYS)
        if pool.get(key):
            pool[key] -= 1
        else:
            missing.append(result)
    return tuple(missing)


def judge(
    env: DocumentEnvironment, goal: Compared, final: Compared
) -> tuple[bool, DocumentDiff, tuple[str, str] | None]:
    """Compare a goal state with a final one: by their diff, or by their hashes (`exact`).
    Equal hashes mean an empty diff (both write numbers in the same canonical form), so the
    diff is walked only when the hashes differ: most passing cases skip it. A hash already
    known (`Compared.digest`) is not computed again, nor twice for one state."""
    if env.compare == "exact":
        final_hash = final.digest or document_hash(final.state, env.ignore, env.typed)
        if goal is final:
            goal_hash = final_hash
        else:
            goal_hash = goal.digest or document_hash(goal.state, env.ignore, env.typed)
        hashes = (goal_hash, final_hash)
        if hashes[0] == hashes[1]:
            return True, DocumentDiff(), hashes
        diff = diff_documents(goal.state, final.state, env.ignore, env.typed, differ=True)
        return False, diff, hashes
    diff = diff_documents(goal.state, final.state, env.ignore, env.typed)
    return diff.passed, diff, None


def validate_documents_case(env: DocumentEnvironment, case: Case, fail: Fail) -> None:
    """Check what can be checked of a case for a documents environment without replaying."""
    node = case.extra.get("goal_state")
    if node is not None and node != "plan":
        raise fail("goal_state", GOAL_FORM)
    _results_from(case, fail)
    setup = case.extra.get("setup")
    if setup is not None and not isinstance(setup, list):
        raise fail("setup", "must be a list of calls {name, args} (a documents environment)")


def initial_state(env: DocumentEnvironment) -> Any:
    """The compared form of the initial data (no case's setup applied)."""
    with alarms_installed():
        return Replay(env, env.context("")).snapshot("at the start")
