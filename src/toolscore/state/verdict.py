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
guard) fails on state with that as its `error`; the run goes on. A plan call that fails is
recorded on the case (`plan_errors`), and its goal is what the plan's replay reached. A
document environment is judged by `documents_verdict`, with the same verdict.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from toolscore.core.answers import NO_CALLS, RequiredOutput, ScoredCalls, case_required_outputs
from toolscore.core.model import MISSING, Call, Case
from toolscore.errors import InputError
from toolscore.state.checks import (
    CheckResult,
    StateCheck,
    check_schema,
    checks_passed,
    document_checks,
    failed_checks,
    parse_checks,
    sqlite_checks,
)
from toolscore.state.diff import StateDiff, diff_states
from toolscore.state.environment import Environment
from toolscore.state.goal import GOAL_FORMS, annotated_goal
from toolscore.state.limits import alarms_installed
from toolscore.state.outputs import missing_required, output_options
from toolscore.state.pointer_diff import DocumentDiff, diff_documents
from toolscore.state.replay import (
    CallOutcome,
    Fail,
    PlanReplay,
    ReplayStoppedError,
    apply_setup,
    case_error,
    first_met,
    follows_plan,
    replay_calls,
    replay_case,
    replay_plan,
    run_calls,
    run_plan,
    snapshot,
    start,
)
from toolscore.state.snapshot import (
    NotUtf8Error,
    Snapshot,
    residues,
    schema_version,
    state_hash,
)
from toolscore.state.touched import NeedsFullCopy, Workspace, residue_states, workspace
from toolscore.stats.records import fields_json

if TYPE_CHECKING:
    from toolscore.state.documents import DocumentEnvironment

Goal = Literal["annotated", "plan"]


class StateVerdict(NamedTuple):
    """The outcome verdict on one case, beside (never inside) the call verdict.

    `passed` is None when the case has neither `goal_state` nor `state_checks` (the state is
    not checked), else whether the goal was met and every check passed; `outputs_passed` is
    None when it has no `required_outputs`. `plan` is the plan whose goal
    state was met (or the first plan, when none was) for `goal == "plan"`. `hashes` holds the
    goal's and the final state's sha256 when the environment compares `exact`. `error` says
    where and why the case's own setup or plan could not be replayed (`passed` is then False).
    """

    passed: bool | None
    diff: StateDiff | DocumentDiff | None = None
    outputs_passed: bool | None = None
    missing_outputs: tuple[str, ...] = ()
    calls: tuple[CallOutcome, ...] = ()
    goal: Goal | None = None
    plan: int | None = None
    hashes: tuple[str, str] | None = None
    error: str | None = None
    plan_replay: PlanReplay = PlanReplay()
    """What replaying the goal's plan met: its failed calls, and calls a terminal tool ended."""
    not_replayed: int = 0
    """The agent's calls left unreplayed after a terminal tool's call (the last of `calls`)."""
    missing_results: tuple[Any, ...] | None = None
    """With `results_from_plan` (documents): the plan's results the agent's calls lacked."""
    checks: tuple[CheckResult, ...] = ()
    """Each of the case's `state_checks`, judged on the final state."""

    @property
    def outcome_passed(self) -> bool | None:
        """True when every outcome check that applies passed; None when none applies."""
        checks = [c for c in (self.passed, self.outputs_passed) if c is not None]
        return all(checks) if checks else None

    def to_json(self) -> dict[str, Any]:
        """The verdict as reports show it."""
        found: dict[str, Any] = {
            **fields_json(self, "passed", "goal", "outputs_passed"),
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
        if self.not_replayed and self.calls:
            last = self.calls[-1]
            found["terminal"] = {
                "call": last.call,
                "name": last.name,
                "not_replayed": self.not_replayed,
            }
        if self.missing_results is not None:
            found["missing_results"] = list(self.missing_results)
        if self.checks:
            found["checks"] = [check.to_json() for check in self.checks]
        if self.plan_replay.errors:
            found["plan_errors"] = [call.to_json() for call in self.plan_replay.errors]
        if self.plan_replay.not_replayed:
            found["plan_not_replayed"] = self.plan_replay.not_replayed
        return found

    def notes(self) -> list[str]:
        """Lines about how replay went: where a terminal tool ended it, a plan's failures."""
        found: list[str] = []
        if self.not_replayed and self.calls:
            last = self.calls[-1]
            found.append(
                f"replay ended at call {last.call} ({last.name}), a terminal tool: "
                f"{self.not_replayed} later call(s) not replayed"
            )
        plan = self.plan or 0
        found += [
            f"plan {plan} call {c.call} ({c.name}) failed while building the goal: {c.error}"
            for c in self.plan_replay.errors
        ]
        if self.plan_replay.not_replayed:
            found.append(
                f"plan {plan} ended at a terminal tool: {self.plan_replay.not_replayed} later "
                "plan call(s) not replayed"
            )
        return found


def validate_case(
    env: Environment | DocumentEnvironment, case: Case, source: str = "<cases>"
) -> None:
    """Check a case's `goal_state`, `state_checks`, `setup` and `required_outputs` without
    replaying it.

    For loading cases up front, so that a broken one stops the run before anything is
    written. A goal for a case with `setup` is checked against the initial schema only when
    the setup is plain data (its SQL may create tables); the replay checks the rest.
    """
    fail = case_error(case, source)
    _required(case, fail)
    output_options(case.extra, env.config, fail)
    checks = parse_checks(case.extra.get("state_checks"), not isinstance(env, Environment), fail)
    if not isinstance(env, Environment):
        from toolscore.state.documents_verdict import validate_documents_case  # noqa: PLC0415

        validate_documents_case(env, case, fail)
        return
    setup = case.extra.get("setup")
    if setup is not None and not isinstance(setup, str | list):
        raise fail("setup", "must be SQL, or a list of SQL strings and calls {name, args}")
    if setup is None:  # a setup's SQL may create tables: the replay checks the rest
        columns = {name: shape.all_columns for name, shape in env.shapes.items()}
        check_schema([c for c in checks if c.table not in env.ignore.tables], columns, fail)
    node = case.extra.get("goal_state")
    if node is None or node == "plan":
        return
    if setup is None:
        annotated_goal(node, env.initial, env.ignore, fail)
    elif not isinstance(node, dict) or not node:
        raise fail("goal_state", f"must be {GOAL_FORMS}")


def check_state(
    env: Environment | DocumentEnvironment,
    case: Case,
    calls: Sequence[Call],
    response: str | None,
    *,
    source: str = "<cases>",
    said: Sequence[str] = (),
    scored: ScoredCalls | None = None,
) -> StateVerdict:
    """Replay the agent's calls for one case and judge the final state and the response.

    `calls` are all the calls the agent made for the case, in order (every turn changes the
    store); `source` names the cases file in errors about the case; `said` holds every
    assistant text, for `required_outputs_in: any`; `scored` the calls the verdict paired
    with a plan, whose replayed results `$ref`/`$result` outputs name (None: no call stands
    for a label).
    """
    fail = case_error(case, source)
    required = _required(case, fail)

    def with_outputs(verdict: StateVerdict, outcomes: Sequence[CallOutcome]) -> StateVerdict:
        if required is None:
            return verdict
        place, normalise = output_options(case.extra, env.config, fail)
        replayed = replayed_results(scored, outcomes) if scored is not None else NO_CALLS
        missing = missing_required(
            required, response, said=said, place=place, normalise=normalise, scored=replayed
        )
        return verdict._replace(outputs_passed=not missing, missing_outputs=missing)

    node = case.extra.get("goal_state")
    checks_node = case.extra.get("state_checks")
    checks = parse_checks(checks_node, not isinstance(env, Environment), fail)
    if node is None and not checks:
        outcomes: Sequence[CallOutcome] = ()
        if scored is not None and any(not isinstance(e, str) for e in required or ()):
            try:  # a reference names a replayed result: the calls are replayed for it alone
                outcomes = replay_any(env, case, calls, source)[1]
            except ReplayStoppedError as stop:
                outcomes = stop.calls
        return with_outputs(StateVerdict(None), outcomes)
    goal: Goal | None = None if node is None else "plan" if node == "plan" else "annotated"
    try:
        with alarms_installed():
            if node is None:
                verdict = StateVerdict(None)
            elif not isinstance(env, Environment):
                verdict = _documents(env, case, calls, node, fail)
            elif goal == "plan":
                verdict = _against_plans(env, case, calls, fail)
            else:
                verdict = _against_annotation(env, case, calls, node, fail)
            if checks:
                verdict = _with_checks(verdict, *_checked(env, case, calls, checks, fail))
    except NotUtf8Error as error:
        assert isinstance(env, Environment)  # documents are JSON: they hold no bytes
        raise InputError(
            env.source,
            f"case {case.id!r}: a table holds text that is not UTF-8 (from the database "
            f"{env.database}, or written by a tool), which no state can be compared on: {error}",
            field="environment.database",
        ) from None
    except ReplayStoppedError as stop:
        not_judged = failed_checks(checks_node, f"not judged: replay stopped at {stop}")
        stopped = StateVerdict(
            False, None, calls=stop.calls, goal=goal, error=str(stop), checks=not_judged
        )
        return with_outputs(stopped, stop.calls)
    unreplayed = len(calls) - len(verdict.calls)
    return with_outputs(verdict._replace(goal=goal, not_replayed=unreplayed), verdict.calls)


def replayed_results(scored: ScoredCalls, outcomes: Sequence[CallOutcome]) -> ScoredCalls:
    """`scored` with each call's result the one its replay gave: an error when the tool
    failed, no result when the call was not replayed (after a terminal tool)."""
    by_position = {outcome.call: outcome for outcome in outcomes}
    calls = []
    for call, position in zip(scored.calls, scored.positions, strict=True):
        outcome = by_position.get(position)
        if outcome is None:
            calls.append(call._replace(result=MISSING, result_error=False))
        elif outcome.error is not None:
            calls.append(call._replace(result=MISSING, result_error=True))
        else:
            calls.append(call._replace(result=outcome.result, result_error=False))
    return scored._replace(calls=tuple(calls))


def _checked(
    env: Environment | DocumentEnvironment,
    case: Case,
    calls: Sequence[Call],
    checks: Sequence[StateCheck],
    fail: Fail,
) -> tuple[tuple[CheckResult, ...], tuple[CallOutcome, ...]]:
    """The case's checks judged on the state the agent's calls leave (a replay of their
    own, from the case's setup), and each call's outcome."""
    if isinstance(env, Environment):
        db, ctx = start(env, case, fail)
        try:
            outcomes = run_calls(env, db, ctx, calls)
            return sqlite_checks(db, checks, fail, env.typed), outcomes
        finally:
            db.close()
    from toolscore.state.documents_verdict import start as start_documents  # noqa: PLC0415

    replay = start_documents(env, case, fail)
    try:
        outcomes = replay_calls(env, replay.invoke, replay.ctx, calls)
        return document_checks(replay.snapshot("after the agent's calls"), checks), outcomes
    finally:
        replay.release()


def _with_checks(
    verdict: StateVerdict, results: tuple[CheckResult, ...], outcomes: tuple[CallOutcome, ...]
) -> StateVerdict:
    """The verdict with the checks' results: passed when the goal (if any) was met and every
    check passed."""
    passed = verdict.passed is not False and checks_passed(results)
    return verdict._replace(passed=passed, checks=results, calls=verdict.calls or outcomes)


def _documents(
    env: DocumentEnvironment, case: Case, calls: Sequence[Call], node: Any, fail: Fail
) -> StateVerdict:
    from toolscore.state.documents_verdict import judge_documents  # noqa: PLC0415 - lazily

    judged = judge_documents(env, case, calls, node, fail)
    return StateVerdict(
        judged.passed,
        judged.diff,
        calls=judged.calls,
        plan=judged.plan,
        hashes=judged.hashes,
        plan_replay=judged.plan_replay,
        missing_results=judged.missing_results,
    )


def _against_annotation(
    env: Environment, case: Case, calls: Sequence[Call], node: Any, fail: Fail
) -> StateVerdict:
    space = workspace(env)
    if space is not None:
        with contextlib.suppress(NeedsFullCopy):
            return _annotation_in_place(space, env, case, calls, node, fail)
    return _annotation_on_copies(env, case, calls, node, fail)


def _annotation_in_place(
    space: Workspace, env: Environment, case: Case, calls: Sequence[Call], node: Any, fail: Fail
) -> StateVerdict:
    """`_against_annotation` on the workspace: the tables the goal lists are read whole,
    the others only where the agent's replay touched them."""
    with space.case(case) as run:
        ctx = run.context()
        apply_setup(env, run.db, ctx, case, fail)
        run.after_setup(ctx)
        initial = snapshot(env, run.db) if "setup" in case.extra else env.initial
        goal = annotated_goal(node, initial, env.ignore, fail)
        outcomes = run_calls(env, run.db, run.context(), calls)
        if env.compare == "exact":
            final = run.finish(whole=True)[1]
        else:
            listed = frozenset(goal.tables) & frozenset(node)
            touched, read = run.finish(whole=listed)
            others = {t: rows for t, rows in touched.items() if t not in listed}
            wanted, got = residue_states(run, {}, others, env.shapes)
            goal = Snapshot({**wanted.tables, **{t: goal.tables[t] for t in listed}})
            final = Snapshot({**got.tables, **read.tables})
    passed, diff, hashes = judge_states(env, goal, final)
    return StateVerdict(passed, diff, calls=outcomes, hashes=hashes)


def _annotation_on_copies(
    env: Environment, case: Case, calls: Sequence[Call], node: Any, fail: Fail
) -> StateVerdict:
    """`_against_annotation` on private full copies of the initial database."""
    db, ctx = start(env, case, fail)
    try:
        start_image = db.serialize()
        initial = snapshot(env, db) if "setup" in case.extra else env.initial
        goal = annotated_goal(node, initial, env.ignore, fail)
        outcomes = run_calls(env, db, ctx, calls)
        final = initial if same_image(start_image, db.serialize()) else snapshot(env, db)
    finally:
        db.close()
    passed, diff, hashes = judge_states(env, goal, final)
    return StateVerdict(passed, diff, calls=outcomes, hashes=hashes)


def _against_plans(env: Environment, case: Case, calls: Sequence[Call], fail: Fail) -> StateVerdict:
    """Judge against the state each acceptable plan leaves; the first plan met wins."""
    space = workspace(env)
    if space is not None:
        with contextlib.suppress(NeedsFullCopy):
            return _plans_in_place(space, env, case, calls, fail)
    return _plans_on_copies(env, case, calls, fail)


def _plans_in_place(
    space: Workspace, env: Environment, case: Case, calls: Sequence[Call], fail: Fail
) -> StateVerdict:
    """`_against_plans` on the workspace: the agent's replay and each plan's start from the
    setup's state in turn, and only the rows either touched are read and diffed (`exact`
    reads whole states: its hash covers every row)."""
    exact = env.compare == "exact"
    with space.case(case) as run:
        ctx = run.context()
        apply_setup(env, run.db, ctx, case, fail)
        run.after_setup(ctx)
        outcomes = run_calls(env, run.db, run.context(), calls)
        run.check()
        if not exact and follows_plan(case, 0, calls, outcomes):  # the first plan's shortcut
            return StateVerdict(True, StateDiff(), calls=outcomes, plan=0)
        final, final_whole = run.finish(whole=exact)

        def judge_plan(index: int) -> StateVerdict:
            met = PlanReplay()
            if follows_plan(case, index, calls, outcomes):
                if not exact:
                    return StateVerdict(True, StateDiff(), calls=outcomes, plan=index)
                judged = judge_states(env, final_whole, final_whole)
            else:
                if case.plans:
                    met = run_plan(env, run.db, run.context(), case, index, fail)
                goal, goal_whole = run.finish(whole=exact)
                if exact:
                    judged = judge_states(env, goal_whole, final_whole)
                else:
                    judged = judge_states(env, *residue_states(run, goal, final, env.shapes))
            return StateVerdict(
                judged[0], judged[1], calls=outcomes, plan=index, hashes=judged[2], plan_replay=met
            )

        return first_met(case, outcomes, judge_plan)


def _plans_on_copies(
    env: Environment, case: Case, calls: Sequence[Call], fail: Fail
) -> StateVerdict:
    """`_against_plans` on private full copies: the agent's database, then each plan's."""
    db, ctx = start(env, case, fail)
    try:
        outcomes = run_calls(env, db, ctx, calls)
        image = db.serialize()
        final = snapshot(env, db) if env.compare == "exact" else None

        def judge_plan(index: int) -> StateVerdict:
            met = PlanReplay()
            if follows_plan(case, index, calls, outcomes):
                if final is None:
                    return StateVerdict(True, StateDiff(), calls=outcomes, plan=index)
                judged = judge_states(env, final, final)
            else:
                goal_db, met = _plan_state(env, case, index, fail)
                try:
                    judged = compare_databases(env, db, image, goal_db, final)
                finally:
                    goal_db.close()
            return StateVerdict(
                judged[0], judged[1], calls=outcomes, plan=index, hashes=judged[2], plan_replay=met
            )

        return first_met(case, outcomes, judge_plan)
    finally:
        db.close()


def compare_databases(
    env: Environment,
    db: sqlite3.Connection,
    image: bytes,
    goal_db: sqlite3.Connection,
    final: Snapshot | None,
) -> tuple[bool, StateDiff, tuple[str, str] | None]:
    """Compare the agent's database (`image` its serialised form, `final` its snapshot when
    already taken) with a plan's, reading no more rows than needed."""
    goal_image = goal_db.serialize()
    if env.compare == "diff" and same_image(goal_image, image):
        return True, StateDiff(), None
    versions = {schema_version(db), schema_version(goal_db)}
    if env.compare == "diff" and versions == {env.schema_version} and not env.typed:
        # the residues' SQL compares as SQLite does, where 2 IS 2.0: typed reads every row
        diff = diff_states(*residues(db, goal_image, env.shapes.values()))
        return diff.passed, diff, None
    return judge_states(env, snapshot(env, goal_db), final or snapshot(env, db))


def _plan_state(
    env: Environment, case: Case, index: int, fail: Fail
) -> tuple[sqlite3.Connection, PlanReplay]:
    """The database after replaying plan `index` (no plan at all: the start state), and
    what the replay met."""
    if not case.plans:
        return start(env, case, fail)[0], PlanReplay()
    db, _, met = replay_plan(env, case, index, fail)
    return db, met


def judge_states(
    env: Environment, goal: Snapshot, final: Snapshot
) -> tuple[bool, StateDiff, tuple[str, str] | None]:
    """Compare a goal state with a final one: by their diff, and by their hashes under
    `compare: exact`."""
    diff = diff_states(goal, final, env.typed)
    if env.compare == "exact":
        hashes = (state_hash(goal, env.typed), state_hash(final, env.typed))
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


def _required(case: Case, fail: Fail) -> tuple[RequiredOutput, ...] | None:
    """The case's `required_outputs`, checked (the tools a `$result` names are checked
    against the spec when the cases load)."""
    return case_required_outputs(case, fail)


def replay_any(
    env: Environment | DocumentEnvironment, case: Case, calls: Sequence[Call], source: str
) -> tuple[Any, tuple[CallOutcome, ...]]:
    """The final state after the case's setup and `calls`, for an environment of either kind
    (a `Snapshot`, or a document's compared form), and each call's outcome."""
    if isinstance(env, Environment):
        return replay_case(env, case, calls, source)
    from toolscore.state.documents_verdict import replay_documents  # noqa: PLC0415

    return replay_documents(env, case, calls, source)


def changes_from_start(env: Environment | DocumentEnvironment, final: Any) -> list[str]:
    """What `final` (from `replay_any`) changed from the initial state, one line a change."""
    if isinstance(env, Environment):
        return diff_states(env.initial, final, env.typed).lines()
    from toolscore.state.documents_verdict import initial_state  # noqa: PLC0415

    return diff_documents(initial_state(env), final, env.ignore, env.typed).lines()
