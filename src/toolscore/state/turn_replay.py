"""The replays a conversation's outcome verdict advances turn by turn, one per back end: the
agent's calls on one private copy of the store, and the chosen plans on another.

Each replay starts from the case's `setup` and is only ever advanced, never restarted, so that
judging turn k costs the calls of turn k, not those of turns 0..k (`state.conversation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolscore.core.model import Call, Case
from toolscore.state.checks import CheckResult, StateCheck, document_checks, sqlite_checks
from toolscore.state.diff import StateDiff
from toolscore.state.documents import DocumentEnvironment
from toolscore.state.documents_verdict import GOAL_FORM, Compared, Replay, detached, judge
from toolscore.state.documents_verdict import start as start_documents
from toolscore.state.environment import Environment, Tool, ToolContext
from toolscore.state.goal import annotated_goal
from toolscore.state.guard import ReplayConnection
from toolscore.state.pointer_diff import DocumentDiff
from toolscore.state.replay import (
    CallOutcome,
    Fail,
    PlanReplay,
    check_open,
    invoke,
    replay_calls,
    replay_plan_calls,
    snapshot,
    start,
)
from toolscore.state.snapshot import Snapshot
from toolscore.state.verdict import compare_databases, judge_states

Judged = tuple[bool, StateDiff | DocumentDiff, tuple[str, str] | None]
"""A goal compared with a state: passed, the diff, and the hashes under `compare: exact`."""


class SqliteReplay:
    """One replay on a private copy of a SQLite environment's database."""

    def __init__(self, env: Environment, case: Case, fail: Fail, rows: bool) -> None:
        self.env = env
        self.db: ReplayConnection
        self.ctx: ToolContext
        self.db, self.ctx = start(env, case, fail)
        self.initial: Snapshot = env.initial
        """The state the case's setup left: where an annotated goal starts from (read only
        when `rows`, some goal of the case being annotated)."""
        if rows and "setup" in case.extra:
            try:
                self.initial = snapshot(env, self.db)
            except BaseException:
                self.db.close()
                raise

    def _call(self, tool: Tool, args: Mapping[str, Any]) -> Any:
        return invoke(self.env, tool, self.db, args, self.ctx)

    def _check(self, where: str) -> None:
        check_open(self.env, self.db, self.ctx, where)

    def calls(self, calls: Sequence[Call], first: int) -> tuple[CallOutcome, ...]:
        """Replay `calls` from position `first` on (each outcome numbered in `calls`)."""
        return replay_calls(self.env, self._call, self.ctx, calls, self._check, first)

    def plan(
        self, case: Case, index: int, fail: Fail, labels: dict[str, Call], results: list[Any]
    ) -> PlanReplay:
        """Replay plan `index` of `case` (`results` is for documents only)."""
        return replay_plan_calls(
            self.env, case, index, self._call, self.ctx, fail, self._check, labels=labels
        )

    def checks(self, checks: Sequence[StateCheck], fail: Fail) -> tuple[CheckResult, ...]:
        """The checks judged on the database as it is now."""
        return sqlite_checks(self.db, checks, fail, self.env.typed)

    def against_rows(self, node: Any, fail: Fail) -> Judged:
        """The state now against an annotated goal (tables it lists hold its rows, the others
        are as the setup left them)."""
        env = self.env
        goal = annotated_goal(node, self.initial, env.ignore, fail)
        return judge_states(env, goal, snapshot(env, self.db))

    def against_plan(self, plan: AnyReplay) -> Judged:
        """The state now against the plan replay's state now."""
        assert isinstance(plan, SqliteReplay)
        return compare_databases(self.env, self.db, self.db.serialize(), plan.db, None)

    def close(self) -> None:
        """Close the copy."""
        self.db.close()


class DocumentsReplay:
    """One replay on a private copy of a documents environment's data."""

    def __init__(self, env: DocumentEnvironment, case: Case, fail: Fail) -> None:
        self.env = env
        self.replay: Replay = start_documents(env, case, fail)
        self._results: list[Any] | None = None

    def _call(self, tool: Tool, args: Mapping[str, Any]) -> Any:
        result = self.replay.invoke(tool, args)
        if self._results is not None:
            self._results[-1] = result
        return result

    def _recorded(self, tool: Tool, args: Mapping[str, Any]) -> Any:
        assert self._results is not None
        self._results.append(None)  # a failed call's result stays None
        return self._call(tool, args)

    def calls(self, calls: Sequence[Call], first: int) -> tuple[CallOutcome, ...]:
        """Replay `calls` from position `first` on (each outcome numbered in `calls`)."""
        return replay_calls(self.env, self.replay.invoke, self.replay.ctx, calls, first=first)

    def plan(
        self, case: Case, index: int, fail: Fail, labels: dict[str, Call], results: list[Any]
    ) -> PlanReplay:
        """Replay plan `index` of `case`, each call's result (None for a failed one) appended
        to `results` in replay order."""
        self._results = results
        try:
            return replay_plan_calls(
                self.env, case, index, self._recorded, self.replay.ctx, fail, labels=labels
            )
        finally:
            self._results = None

    def state(self, where: str) -> Compared:
        """The compared form of the data now."""
        return self.replay.compared(where)

    def checks(self, checks: Sequence[StateCheck], fail: Fail) -> tuple[CheckResult, ...]:
        """The checks judged on the data as it is now."""
        return document_checks(self.replay.snapshot("after the turn's calls"), checks)

    def against_rows(self, node: Any, fail: Fail) -> Judged:
        """A documents environment takes no annotated goal: an input error."""
        raise fail("goal_state", GOAL_FORM)

    def against_plan(self, plan: AnyReplay) -> Judged:
        """The data now against the plan replay's data now; the diff holds copies of the
        values it shows (both states change in later turns)."""
        assert isinstance(plan, DocumentsReplay)
        goal = plan.state("after the turn's plan")
        passed, diff, hashes = judge(self.env, goal, self.state("after the turn's calls"))
        return passed, detached(diff), hashes

    def close(self) -> None:
        """Hand the data back to the environment."""
        self.replay.release()


AnyReplay = SqliteReplay | DocumentsReplay
"""A replay of either back end."""


def open_replay(
    env: Environment | DocumentEnvironment, case: Case, fail: Fail, rows: bool = False
) -> AnyReplay:
    """A replay of `case` from its setup on a private copy of `env`'s store (`rows`: some
    goal is annotated, so the state the setup left is kept)."""
    if isinstance(env, Environment):
        return SqliteReplay(env, case, fail, rows)
    return DocumentsReplay(env, case, fail)
