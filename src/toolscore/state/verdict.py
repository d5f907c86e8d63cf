"""Judge one case by its outcome: the final state against the goal, and the required outputs.

Outcomes decide, calls diagnose. The goal is annotated in the case
(`goal_state: {table: [rows]}`) or is the state that replaying an acceptable plan leaves
(`goal_state: "plan"`, the tau-bench way; as with calls, any acceptable plan will do).

Rows are read only where the states may differ. Replay is deterministic, so an agent that
made exactly a plan's calls, each succeeding, left the plan's state, and the plan is not
replayed; two database images equal but for their change counters hold the same state; and
otherwise SQLite reads out only the rows that differ between the two databases (`residues`).
The `exact` comparison hashes whole states, so it always reads every row.

A case whose own setup or plan cannot be replayed (past the time limit, or denied by the
guard) fails on state with that as its `error`; the run goes on.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from toolscore.model import Call, Case
from toolscore.state.diff import StateDiff, diff_states
from toolscore.state.environment import Environment
from toolscore.state.goal import GOAL_FORMS, annotated_goal
from toolscore.state.limits import alarms_installed
from toolscore.state.outputs import missing_outputs, output_options
from toolscore.state.replay import (
    CallOutcome,
    Fail,
    ReplayStoppedError,
    case_error,
    follows_plan,
    replay_plan,
    run_calls,
    snapshot,
    start,
)
from toolscore.state.snapshot import Snapshot, residues, schema_version, state_hash

Goal = Literal["annotated", "plan"]


class StateVerdict(NamedTuple):
    """The outcome verdict on one case, beside (never inside) the call verdict.

    `passed` is None when the case has no `goal_state` (the state is not checked), and
    `outputs_passed` None when it has no `required_outputs`. `plan` is the plan whose goal
    state was met (or the first plan, when none was) for `goal == "plan"`. `hashes` holds the
    goal's and the final state's sha256 when the environment compares `exact`. `error` says
    where and why the case's own setup or plan could not be replayed (`passed` is then False).
    """

    passed: bool | None
    diff: StateDiff | None = None
    outputs_passed: bool | None = None
    missing_outputs: tuple[str, ...] = ()
    calls: tuple[CallOutcome, ...] = ()
    goal: Goal | None = None
    plan: int | None = None
    hashes: tuple[str, str] | None = None
    error: str | None = None

    @property
    def outcome_passed(self) -> bool | None:
        """True when every outcome check that applies passed; None when none applies."""
        checks = [c for c in (self.passed, self.outputs_passed) if c is not None]
        return all(checks) if checks else None

    def to_json(self) -> dict[str, Any]:
        """The verdict as reports show it."""
        found: dict[str, Any] = {
            "passed": self.passed,
            "goal": self.goal,
            "outputs_passed": self.outputs_passed,
            "missing_outputs": list(self.missing_outputs),
        }
        if self.plan is not None:
            found["plan"] = self.plan
        if self.diff is not None:
            found["diff"] = self.diff.to_json()
        if self.hashes is not None:
            found["hashes"] = {"goal": self.hashes[0], "final": self.hashes[1]}
        if self.error is not None:
            found["error"] = self.error
        if self.calls:
            found["calls"] = [call.to_json() for call in self.calls]
        return found


def validate_case(env: Environment, case: Case, source: str = "<cases>") -> None:
    """Check a case's `goal_state`, `setup` and `required_outputs` without replaying it.

    For loading cases up front, so that a broken one stops the run before anything is
    written. A goal for a case with `setup` is checked against the initial schema only when
    the setup is plain data (its SQL may create tables); the replay checks the rest.
    """
    fail = case_error(case, source)
    _required(case, fail)
    output_options(case.extra, env.config, fail)
    setup = case.extra.get("setup")
    if setup is not None and not isinstance(setup, str | list):
        raise fail("setup", "must be SQL, or a list of SQL strings and calls {name, args}")
    node = case.extra.get("goal_state")
    if node is None or node == "plan":
        return
    if setup is None:
        annotated_goal(node, env.initial, env.ignore, fail)
    elif not isinstance(node, dict) or not node:
        raise fail("goal_state", f"must be {GOAL_FORMS}")


def check_state(
    env: Environment,
    case: Case,
    calls: Sequence[Call],
    response: str | None,
    *,
    source: str = "<cases>",
    said: Sequence[str] = (),
) -> StateVerdict:
    """Replay the agent's calls for one case and judge the final state and the response.

    `calls` are all the calls the agent made for the case, in order (every turn changes the
    store); `source` names the cases file in errors about the case; `said` holds every
    assistant text, for `required_outputs_in: any`.
    """
    fail = case_error(case, source)
    required = _required(case, fail)
    missing: tuple[str, ...] = ()
    if required is not None:
        place, normalise = output_options(case.extra, env.config, fail)
        missing = missing_outputs(required, response, said=said, place=place, normalise=normalise)
    outputs_passed = None if required is None else not missing
    node = case.extra.get("goal_state")
    if node is None:
        return StateVerdict(None, None, outputs_passed, missing)
    goal: Goal = "plan" if node == "plan" else "annotated"
    try:
        with alarms_installed():
            if goal == "plan":
                passed, diff, plan, hashes, outcomes = _against_plans(env, case, calls, fail)
                return StateVerdict(
                    passed, diff, outputs_passed, missing, outcomes, goal, plan, hashes
                )
            passed, diff, hashes, outcomes = _against_annotation(env, case, calls, node, fail)
            return StateVerdict(passed, diff, outputs_passed, missing, outcomes, goal, None, hashes)
    except ReplayStoppedError as stop:
        return StateVerdict(False, None, outputs_passed, missing, stop.calls, goal, error=str(stop))


def _against_annotation(
    env: Environment, case: Case, calls: Sequence[Call], node: Any, fail: Fail
) -> tuple[bool, StateDiff, tuple[str, str] | None, tuple[CallOutcome, ...]]:
    db, ctx = start(env, case, fail)
    try:
        if "setup" in case.extra:
            start_image, initial = db.serialize(), snapshot(env, db)
        else:
            start_image, initial = env.image, env.initial
        goal = annotated_goal(node, initial, env.ignore, fail)
        outcomes = run_calls(env, db, ctx, calls)
        final = initial if same_image(start_image, db.serialize()) else snapshot(env, db)
    finally:
        db.close()
    passed, diff, hashes = _judge(env, goal, final)
    return passed, diff, hashes, outcomes


def _against_plans(
    env: Environment, case: Case, calls: Sequence[Call], fail: Fail
) -> tuple[bool, StateDiff, int, tuple[str, str] | None, tuple[CallOutcome, ...]]:
    """Judge against the state each acceptable plan leaves; the first plan met wins."""
    db, ctx = start(env, case, fail)
    outcomes: tuple[CallOutcome, ...] = ()
    try:
        outcomes = run_calls(env, db, ctx, calls)
        image = db.serialize()
        final = snapshot(env, db) if env.compare == "exact" else None
        first: tuple[bool, StateDiff, tuple[str, str] | None] | None = None
        for index in range(max(len(case.plans), 1)):
            if follows_plan(case, index, calls, outcomes):
                if final is None:
                    return True, StateDiff(), index, None, outcomes
                judged = _judge(env, final, final)
            else:
                goal_db = _plan_state(env, case, index, fail)
                try:
                    judged = _compare(env, db, image, goal_db, final)
                finally:
                    goal_db.close()
            if judged[0]:
                return judged[0], judged[1], index, judged[2], outcomes
            first = first or judged
        assert first is not None
        return first[0], first[1], 0, first[2], outcomes
    except ReplayStoppedError as stop:
        stop.calls = outcomes  # the agent's calls were replayed; a plan could not be
        raise
    finally:
        db.close()


def _compare(
    env: Environment,
    db: sqlite3.Connection,
    image: bytes,
    goal_db: sqlite3.Connection,
    final: Snapshot | None,
) -> tuple[bool, StateDiff, tuple[str, str] | None]:
    """Compare the agent's database with a plan's, reading no more rows than needed."""
    goal_image = goal_db.serialize()
    if env.compare == "diff" and same_image(goal_image, image):
        return True, StateDiff(), None
    versions = {schema_version(db), schema_version(goal_db)}
    if env.compare == "diff" and versions == {env.schema_version}:
        diff = diff_states(*residues(db, goal_image, env.shapes.values()))
        return diff.passed, diff, None
    return _judge(env, snapshot(env, goal_db), final or snapshot(env, db))


def _plan_state(env: Environment, case: Case, index: int, fail: Fail) -> sqlite3.Connection:
    """The database after replaying plan `index` (no plan at all: the start state)."""
    if not case.plans:
        return start(env, case, fail)[0]
    return replay_plan(env, case, index, fail)[0]


def _judge(
    env: Environment, goal: Snapshot, final: Snapshot
) -> tuple[bool, StateDiff, tuple[str, str] | None]:
    diff = diff_states(goal, final)
    if env.compare == "exact":
        hashes = (state_hash(goal), state_hash(final))
        return hashes[0] == hashes[1], diff, hashes
    return diff.passed, diff, None


def same_image(a: bytes, b: bytes) -> bool:
    """Whether two database images hold the same data: equal but for the header's change
    counters (bytes 24-27 and 92-99), which count transactions, not content."""
    if a == b:
        return True
    if len(a) != len(b) or a[:24] != b[:24] or a[28:92] != b[28:92]:
        return False
    counted = bytearray(a)
    counted[24:28], counted[92:100] = b[24:28], b[92:100]
    return counted == b


def _required(case: Case, fail: Fail) -> list[str] | None:
    node = case.extra.get("required_outputs")
    if node is None:
        return None
    if not isinstance(node, list) or not all(isinstance(s, str) and s.strip() for s in node):
        raise fail("required_outputs", "must be a list of non-empty strings")
    return node
