"""The gold checks of `toolscore lint`: a case's own plans, made as an agent's calls, pass it,
and doing nothing does not pass a case that expects calls (docs/formats.md, 3.4).

Each plan is scored once by the scorer itself (`scoring.score_case`), as the output of an
agent that made the plan's calls (`plan_calls`, or `lint_replay` under an environment, which
also judges the state their replay reaches). The do-nothing agent is an empty trajectory
scored the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from toolscore.core.dataflow import dependencies, topological
from toolscore.core.model import Call, Case, CaseResult, Mismatch, Plan, Trajectory
from toolscore.core.plan_calls import plan_calls
from toolscore.errors import CaseError, InputError
from toolscore.scoring.case import outcome_passed, score_case, with_state

if TYPE_CHECKING:
    from toolscore.specs.loading import SpecSet
    from toolscore.state import AnyEnvironment as Environment

Severity = Literal["error", "warning"]
Problem = tuple[Severity, InputError]
"""A finding of the gold checks, located like an input error."""


def gold_problems(
    specs: SpecSet,
    case: Case,
    source: str,
    env: Environment | None = None,
    skip: Iterable[int] = (),
) -> list[Problem]:
    """Every problem the gold checks find in one case: plans that do not pass it (errors;
    the plans in `skip` are not scored, their problem being reported already), a tool case
    the do-nothing agent passes, a tool case whose goal state is its initial state
    (warnings); with `env`, replays that cannot be done or do not reach the goal (errors)
    and plan calls that fail when replayed (warnings)."""
    report = CaseReport(case, source)
    try:
        if env is not None:
            from toolscore.lint.replay import unsayable_outputs  # noqa: PLC0415 - with --env

            for message in unsayable_outputs(env, case, source):
                report.error("required_outputs", message)
        skipped, unmade = set(skip), False
        for index, plan in enumerate(case.plans):
            if index not in skipped:
                checked = _check_plan(specs, case, index, plan, env, report)
                if checked == "stopped":  # in the setup, which every replay of the case runs
                    return report.found
                unmade = unmade or checked == "unmade"
        try:
            nothing = _scored(specs, case, (), env, source)
        except CaseError as error:
            if unmade and (error.field or "").startswith("plans["):
                return report.found  # the plan replay of a goal "plan" met it: reported
            raise
        state = nothing.state
        if state is not None and state.error is not None:
            report.error(None, f"replay stopped at {state.error}")
        elif case.kind == "tool":
            _flag_nothing(nothing, report)
        elif not case.plans and not _passed_but_outputs(nothing):
            report.error("plans", f"no call, the right answer, fails the case: {_why(nothing)}")
    except InputError as error:  # a case its replay finds broken, or the tools module
        report.found.append(("error", error))
    return report.found


class CaseReport:
    """The problems found in one case, each naming the case (its id, file and line)."""

    def __init__(self, case: Case, source: str) -> None:
        self.case = case
        self.source = source
        self.found: list[Problem] = []

    def add(self, severity: Severity, where: str | None, message: str) -> None:
        """Record a problem at field `where` of the case, unless it is recorded already (two
        replays of a case may stop at the same plan call)."""
        error = CaseError(
            self.source, f"case {self.case.id!r}: {message}", line=self.case.line, field=where
        )
        if all(str(error) != str(found) for _, found in self.found):
            self.found.append((severity, error))

    def error(self, where: str | None, message: str) -> None:
        """Record an error at field `where` of the case."""
        self.add("error", where, message)

    def warning(self, where: str | None, message: str) -> None:
        """Record a warning at field `where` of the case."""
        self.add("warning", where, message)


def _flag_nothing(nothing: CaseResult, report: CaseReport) -> None:
    """Warn where the do-nothing agent's result shows a tool case that measures nothing."""
    state = nothing.state
    if state is not None and state.passed is True and state.goal is None:
        report.warning(
            "state_checks",
            "every state check passes on the initial state: they pass any agent that changes "
            "nothing",
        )
    elif state is not None and state.passed is True:
        which = (
            f"plan {state.plan}'s replay changes nothing"
            if state.goal == "plan"
            else "its rows are those the case starts with"
        )
        report.warning(
            "goal_state",
            f"the goal state is the initial state ({which}): the state check passes any "
            "agent that changes nothing",
        )
    if outcome_passed(nothing):
        report.warning(
            "plans",
            "passes without doing anything: an agent that makes no call"
            + (" and changes nothing" if state is not None else "")
            + " passes this tool case, so it measures nothing",
        )


def _check_plan(
    specs: SpecSet, case: Case, index: int, plan: Plan, env: Environment | None, report: CaseReport
) -> Literal["checked", "unmade", "stopped"]:
    """Score plan `index` of the case as the agent's calls against the case with that plan
    alone (it must pass by itself, not by carrying out another plan) and, under `env`,
    judge its replay's final state. Say whether the plan could be made (a `$ref` may find
    nothing to read) and whether replay stopped in the case's setup."""
    where = f"plans[{index}]"
    order = topological(range(len(plan)), dependencies(plan))
    if env is None:
        calls = plan_calls(plan)
    else:
        from toolscore.lint.replay import replayed_calls  # noqa: PLC0415 - only with --env

        made = replayed_calls(env, case, plan, report.source)
        if made.stopped is not None:
            report.error(None, f"replay stopped at {made.stopped}")
            return "stopped"
        for position, error in made.errors:
            report.warning(f"{where}[{order[position]}]", f"fails when replayed: {error}")
        if made.unresolved is not None:
            position, why = made.unresolved
            report.error(f"{where}[{order[position]}]", f"cannot be made as written: {why}")
            return "unmade"
        calls = made.calls
    own = case._replace(plans=(plan,), linked=any(dependencies(plan)))
    result = _scored(specs, own, calls, env, report.source, index)
    state = result.state
    if not result.passed:
        report.error(
            where, f"made as the agent's calls, the plan fails its own case: {_why(result, order)}"
        )
    elif state is not None and state.error is not None:  # the error names the plan call
        report.error(None, f"replay stopped at {_renumbered(state.error, index)}")
    elif state is not None and state.passed is False:
        if state.diff is None or state.diff.passed:  # the goal, if any, is met: a check failed
            report.error(where, f"its replay fails a state check: {_first(_failed_checks(state))}")
        else:
            report.error(where, f"its replay does not reach the goal state: {_first(_diff(state))}")
    return "checked"


def _scored(
    specs: SpecSet,
    case: Case,
    calls: Sequence[Call],
    env: Environment | None,
    source: str,
    index: int | None = None,
) -> CaseResult:
    """The verdict on `calls` as an agent's output for the case (and on their replay under
    `env`). `index` is the plan the case was cut down to: errors about its plan 0 name it."""
    trajectory = Trajectory(case.id, tuple(calls))
    result = score_case(specs, case, trajectory)
    if env is None or not any(
        key in case.extra for key in ("goal_state", "state_checks", "required_outputs")
    ):
        return result
    try:
        return with_state(env, case, trajectory, result, source)
    except CaseError as error:
        if index is None or error.field is None:
            raise
        field = _renumbered(error.field, index)
        raise CaseError(error.source, error.message, line=error.line, field=field) from None


def _renumbered(where: str, index: int) -> str:
    """`where` (a field, or a message that starts with one) about plan 0 of a case cut down
    to its plan `index`, about that plan."""
    if not where.startswith("plans[0]"):
        return where
    return f"plans[{index}]" + where[len("plans[0]") :]


def _passed_but_outputs(result: CaseResult) -> bool:
    """Whether a result passed on calls and on state (the required outputs left aside: the
    do-nothing agent says nothing, which the outputs check of `lint_replay` covers)."""
    state = result.state
    return result.passed and (state is None or state.passed is not False)


def _why(result: CaseResult, order: Sequence[int] = ()) -> str:
    """Why a result failed, in one line: its first mismatch (or state difference)."""
    if not result.passed:
        return _first([_mismatch(m, result.plan, order) for m in result.mismatches])
    state = result.state
    assert state is not None
    return f"its state differs from the goal: {_first(_diff(state))}"


def _mismatch(mismatch: Mismatch, plan: int | None, order: Sequence[int]) -> str:
    """A mismatch as `code at plans[P][I] /pointer: message`, I the plan call (for an extra
    call, the plan call that the call at that position was made for)."""
    index = mismatch.plan_call
    if index is None and mismatch.call is not None and mismatch.call < len(order):
        index = order[mismatch.call]
    at = "" if index is None or plan is None else f" at plan call {index}"
    pointer = f" {mismatch.pointer}" if mismatch.path else ""
    return f"{mismatch.code}{at}{pointer}: {mismatch.message}"


def _diff(state: Any) -> list[str]:
    diff = state.diff
    return ([] if diff is None else list(diff.lines())) + _failed_checks(state)


def _failed_checks(state: Any) -> list[str]:
    return [f"state check {c.name!r} failed: {c.reason}" for c in state.checks if not c.passed]


def _first(lines: Sequence[str]) -> str:
    """The first line, and how many more there are."""
    if not lines:
        return "(no detail)"
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return lines[0] + more
