"""Replay calls against a private copy of the environment's database.

Every replay opens a new in-memory connection on a copy of the initial image (nothing is
shared between cases, or between the agent's replay and a plan's), applies the case's
`setup`, then calls the tools in order. Each call is a unit of work, as in a request handler:
committed when the tool returns, rolled back when it fails (or committed all the same under
`on_error: keep`; `errors_policy`). What the agent did is never an error here: a call with
unparseable arguments, to a tool the module lacks, or that raises or returns an error value,
is recorded as an error result and replay goes on. So is a call that runs past the time limit
(`limits`), ends the process with `sys.exit`, runs SQL that the guard denies (`guard`), or
grows the database past its size cap (`size`). A call of a terminal tool ends the replay. A
plan call that fails is recorded (`PlanReplay`) and the plan's replay goes on, as tau-bench
builds its goal. The user's own inputs (setup, a plan naming no tool, a tool returning
something that is not JSON) are errors naming the case and the call; but where the case's
setup or plan runs past the time limit, is denied, or reaches the size cap, replay stops with
`ReplayStoppedError`, which the verdict records on the case, so that one
such case does not stop the run. The call loops (`replay_calls`, `replay_plan_calls`) serve
document environments too, given a function that runs one call on their store.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

import orjson

from toolscore.core.dataflow import (
    dependencies,
    first_options,
    has_unresolved,
    substitute,
    topological,
)
from toolscore.core.model import Call, Case
from toolscore.errors import CaseError, InputError, ReplayInterrupted
from toolscore.state.environment import Environment, Tool, ToolContext
from toolscore.state.errors_policy import ToolReportedError
from toolscore.state.guard import DeniedError, ReplayConnection, refusing, trusted
from toolscore.state.limits import (
    CallTimeout,
    alarms_installed,
    exit_call,
    time_limit,
)
from toolscore.state.size import OversizeError, oversize
from toolscore.state.snapshot import Snapshot, read_shapes, schema_version, take_snapshot

if TYPE_CHECKING:
    from toolscore.state.documents import DocumentEnvironment

_SCALARS = (str, int, float, bool, type(None))

STOPPING = (CallTimeout, DeniedError, OversizeError)
"""What stops a case's own setup or plan (`ReplayStoppedError`) rather than failing a call."""

Fail = Callable[[str, str], CaseError]
"""Builds the error for a field of the case being replayed."""


class CallOutcome(NamedTuple):
    """One replayed call: its position in the trajectory, its tool, its result or its error."""

    call: int
    """The call's position in the trajectory (as `Mismatch.call`)."""
    name: str
    result: Any = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """`{call, name, result}` or `{call, name, error}`."""
        if self.error is not None:
            return {"call": self.call, "name": self.name, "error": self.error}
        return {"call": self.call, "name": self.name, "result": self.result}


class ReplayStoppedError(Exception):
    """A case's own setup or plan could not be replayed: a call or statement ran past the
    time limit, attempted what the guard denies, or grew the database past its size cap
    (`size`). The case fails with this as its error."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(where, message)
        self.where = where
        self.message = message
        self.calls: tuple[CallOutcome, ...] = ()
        """The agent's call outcomes, when they were replayed before replay stopped."""

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def case_error(case: Case, source: str) -> Fail:
    """The error builder for fields of `case` (a line of the cases file `source`)."""

    def fail(where: str, message: str) -> CaseError:
        return CaseError(source, f"case {case.id!r}: {message}", line=case.line, field=where)

    return fail


def start(env: Environment, case: Case, fail: Fail) -> tuple[ReplayConnection, ToolContext]:
    """A fresh copy of the initial database with the case's `setup` applied, and its context."""
    db = env.connect()
    ctx = env.context(case.id)
    try:
        apply_setup(env, db, ctx, case, fail)
    except BaseException:
        db.close()
        raise
    return db, ctx


def snapshot(env: Environment, db: sqlite3.Connection) -> Snapshot:
    """The compared state of a replay's database (its schema read again if it changed)."""
    with trusted(db):
        same = schema_version(db) == env.schema_version
        shapes = env.shapes if same else read_shapes(db, env.ignore)
        return take_snapshot(db, shapes.values())


Invoke = Callable[[Tool, Mapping[str, Any]], Any]
"""Runs one tool call on a replay's store under the time limit; raises the call's error."""
Check = Callable[[str], None]
"""Checks the store after a call (`where` names the call)."""


class PlanReplay(NamedTuple):
    """What replaying a plan met: the calls that failed (each a `CallOutcome` whose `call` is
    the position in the plan) and how many calls a terminal tool left unreplayed."""

    errors: tuple[CallOutcome, ...] = ()
    not_replayed: int = 0


def run_calls(
    env: Environment, db: ReplayConnection, ctx: ToolContext, calls: Sequence[Call]
) -> tuple[CallOutcome, ...]:
    """Replay the agent's calls in order on `db`, recording each result or error."""

    def call(tool: Tool, args: Mapping[str, Any]) -> Any:
        return invoke(env, tool, db, args, ctx)

    return replay_calls(env, call, ctx, calls, lambda where: check_open(env, db, ctx, where))


def replay_calls(
    env: Environment | DocumentEnvironment,
    call_tool: Invoke,
    ctx: ToolContext,
    calls: Sequence[Call],
    check: Check | None = None,
    first: int = 0,
) -> tuple[CallOutcome, ...]:
    """Replay the agent's calls in order from position `first`, recording each result or
    error; after a call of a terminal tool, the rest are not replayed (fewer outcomes than
    calls say so)."""
    outcomes: list[CallOutcome] = []
    for index in range(first, len(calls)):
        call = calls[index]
        tool = env.tools.get(call.name)
        where = f"call {index} ({call.name})"
        if call.args is None:
            error = f"arguments unparseable: {call.args_error or 'not a JSON object'}"
            outcomes.append(CallOutcome(index, call.name, error=error))
        elif tool is None:
            error = f"no tool {call.name!r} in {env.tools_module}"
            outcomes.append(CallOutcome(index, call.name, error=error))
        else:
            try:
                result = call_tool(tool, call.args)
            except KeyboardInterrupt:
                raise ReplayInterrupted(f"case {ctx.case_id!r}, {where}") from None
            except (Exception, SystemExit, CallTimeout) as exc:
                outcomes.append(CallOutcome(index, call.name, error=tool_error(exc)))
            else:
                outcomes.append(CallOutcome(index, call.name, plain(env, result, ctx, where)))
        if check is not None:
            check(where)
        if call.name in env.policy.terminal_tools:
            break
    return tuple(outcomes)


def replay_plan(
    env: Environment, case: Case, index: int, fail: Fail
) -> tuple[ReplayConnection, ToolContext, PlanReplay]:
    """Replay plan `index` of the case from the same start: its database holds the goal."""
    db, ctx = start(env, case, fail)
    try:
        found = run_plan(env, db, ctx, case, index, fail)
    except BaseException:
        db.close()
        raise
    return db, ctx, found


def run_plan(
    env: Environment, db: ReplayConnection, ctx: ToolContext, case: Case, index: int, fail: Fail
) -> PlanReplay:
    """Replay plan `index` of the case on `db` (`replay_plan_calls`)."""

    def call(tool: Tool, args: Mapping[str, Any]) -> Any:
        return invoke(env, tool, db, args, ctx)

    return replay_plan_calls(
        env, case, index, call, ctx, fail, lambda where: check_open(env, db, ctx, where)
    )


def replay_plan_calls(
    env: Environment | DocumentEnvironment,
    case: Case,
    index: int,
    call_tool: Invoke,
    ctx: ToolContext,
    fail: Fail,
    check: Check | None = None,
    first: int = 0,
    labels: dict[str, Call] | None = None,
) -> PlanReplay:
    """Replay the calls of plan `index` in dependency order (from position `first` of that
    order, for a replay resumed; only where no call is labelled). `labels` holds the results
    of labelled calls of earlier plans (a conversation's earlier turns), and gains this plan's.

    `$ref` values are resolved from the results of the plan's own calls, and `$any` takes its
    first alternative. A call that fails (raises, or returns an error) is recorded and replay
    goes on, as tau-bench computes its goal: the goal is what the plan's replay reaches,
    errors included. A call whose `$ref` names a failed call's result is recorded as failed
    and not made. A call past the time limit or denied stops the case (`ReplayStoppedError`);
    a plan naming a tool the module lacks is the user's error.
    """
    plan = case.plans[index]
    sources: dict[str, Call] = {} if labels is None else labels
    errors: list[CallOutcome] = []
    order = topological(range(len(plan)), dependencies(plan))
    for position, i in enumerate(order):
        if position < first:
            continue
        call = plan[i]
        where = f"plans[{index}][{i}]"
        args = first_options(substitute(call.args, sources) if sources else call.args)
        if has_unresolved(args):
            if errors:
                why = "not made: a $ref names the result of a plan call that failed"
                errors.append(CallOutcome(i, call.name, error=why))
                continue
            raise fail(where, "a $ref cannot be resolved from the results of the plan's own "
                              "calls (replaying the plan to build the goal state)")  # fmt: skip
        tool = env.tools.get(call.name)
        if tool is None:
            raise fail(where, f"no tool {call.name!r} in {env.tools_module}")
        try:
            result = call_tool(tool, args)
        except KeyboardInterrupt:
            raise ReplayInterrupted(f"case {case.id!r}, {where} ({call.name})") from None
        except STOPPING as stop:
            raise ReplayStoppedError(f"{where} ({call.name})", tool_error(stop)) from None
        except (Exception, SystemExit) as exc:
            errors.append(CallOutcome(i, call.name, error=tool_error(exc)))
        else:
            if call.label is not None:
                sources[call.label] = call._replace(result=plain(env, result, ctx, where))
        if check is not None:
            check(f"{where} ({call.name})")
        if call.name in env.policy.terminal_tools:
            return PlanReplay(tuple(errors), len(order) - position - 1)
    return PlanReplay(tuple(errors))


def follows_plan(
    case: Case, index: int, calls: Sequence[Call], outcomes: Sequence[CallOutcome]
) -> bool:
    """Whether the agent made exactly the calls that replaying plan `index` makes, in the same
    order, each succeeding. Replay being deterministic, the agent's final state is then the
    plan's, and the plan need not be replayed."""
    plan = case.plans[index] if case.plans else ()
    if not len(calls) == len(outcomes) == len(plan):  # a terminal tool ended the replay early
        return False
    sources: dict[str, Call] = {}
    for position, i in enumerate(topological(range(len(plan)), dependencies(plan))):
        expected, made, outcome = plan[i], calls[position], outcomes[position]
        if outcome.error is not None or made.name != expected.name or made.args is None:
            return False
        args = first_options(substitute(expected.args, sources) if sources else expected.args)
        if has_unresolved(args) or _json(args) != _json(made.args):
            return False
        if expected.label is not None:
            sources[expected.label] = expected._replace(result=outcome.result)
    return True


class _Verdict(Protocol):
    @property
    def passed(self) -> bool | None: ...


VerdictT = TypeVar("VerdictT", bound=_Verdict)


def first_met(
    case: Case, outcomes: tuple[CallOutcome, ...], judge_plan: Callable[[int], VerdictT]
) -> VerdictT:
    """Judge a case against each of its plans in turn (plan 0 alone when it has none): the
    verdict on the first plan met, or else on the first plan; later plans are not judged.
    A plan that cannot be replayed stops the case with the agent's `outcomes` on the error."""
    first: VerdictT | None = None
    try:
        for index in range(max(len(case.plans), 1)):
            verdict = judge_plan(index)
            if verdict.passed:
                return verdict
            if first is None:
                first = verdict
    except ReplayStoppedError as stop:
        stop.calls = outcomes  # the agent's calls were replayed; a plan could not be
        raise
    assert first is not None
    return first


def _json(value: Any) -> bytes:
    """A value as canonical JSON: equal only when the values are equal with their JSON types."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def replay_case(
    env: Environment, case: Case, calls: Sequence[Call], source: str = "<cases>"
) -> tuple[Snapshot, tuple[CallOutcome, ...]]:
    """The final state after the case's setup and the given calls, and each call's outcome."""
    with alarms_installed():
        db, ctx = start(env, case, case_error(case, source))
        try:
            outcomes = run_calls(env, db, ctx, calls)
            return snapshot(env, db), outcomes
        finally:
            db.close()


def invoke(
    env: Environment, tool: Tool, db: ReplayConnection, args: Mapping[str, Any], ctx: ToolContext
) -> Any:
    """Call one tool as a unit of work under the time limit: committed when it returns;
    when it fails (raises, returns an error value, runs past the limit or attempts what the
    guard denies) rolled back, or committed under `on_error: keep`."""
    args = own_args(args)
    db.begin_call()
    try:
        with time_limit(env.timeout), refusing(db):
            if tool.takes_ctx:
                result = tool.function(db, **args, ctx=ctx)
            else:
                result = tool.function(db, **args)
            error = env.policy.returned_error(result)
            if error is not None:
                raise ToolReportedError(error)
        db.end_call(keep=True)
    except BaseException as stopped:
        keep = env.policy.keeps and not isinstance(stopped, KeyboardInterrupt)
        with contextlib.suppress(sqlite3.Error):
            db.end_call(keep)
        if isinstance(stopped, Exception) and oversize(stopped):
            raise OversizeError(env.max_size_mb, describe_error(stopped)) from None
        raise
    return result


def own_args(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """The call's arguments, copied when a tool could change what it is given."""
    if any(type(value) in (dict, list) for value in args.values()):
        return orjson.loads(orjson.dumps(args))  # type: ignore[no-any-return]
    return args


def plain(env: Environment | DocumentEnvironment, result: Any, ctx: ToolContext, where: str) -> Any:
    """A tool's result as plain JSON values; a result that is not JSON is the tool's bug."""
    if type(result) in _SCALARS:
        return result
    try:
        return orjson.loads(orjson.dumps(result))
    except TypeError as error:
        raise InputError(
            env.source,
            f"case {ctx.case_id!r}, {where}: the tool returned {type(result).__name__}, "
            f"which is not JSON-serialisable ({error})",
            field="environment.tools",
        ) from None


def tool_error(error: BaseException) -> str:
    """What stopped a tool call, as one line (an exception's type and message)."""
    if isinstance(error, CallTimeout):
        return f"timed out: {error}"
    if isinstance(error, (DeniedError, OversizeError)):
        return str(error)
    if isinstance(error, SystemExit):
        return f"SystemExit: the tool called {exit_call(error)}"
    if isinstance(error, ToolReportedError):
        return error.message
    return describe_error(error)


def describe_error(error: BaseException) -> str:
    """An exception as one line: its type and its message."""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def check_open(env: Environment, db: ReplayConnection, ctx: ToolContext, where: str) -> None:
    try:
        db.total_changes  # noqa: B018 -- raises once the connection is closed
    except sqlite3.ProgrammingError:
        raise InputError(
            env.source,
            f"case {ctx.case_id!r}, {where}: the tool closed the database connection",
            field="environment.tools",
        ) from None


def apply_setup(
    env: Environment, db: ReplayConnection, ctx: ToolContext, case: Case, fail: Fail
) -> None:
    """Apply a case's `setup`: SQL, or calls `{name, args}`, or a list of either."""
    node = case.extra.get("setup")
    if node is None:
        return
    items = [node] if isinstance(node, str) else node
    if not isinstance(items, list):
        raise fail("setup", "must be SQL, or a list of SQL strings and calls {name, args}")
    for i, item in enumerate(items):
        where = "setup" if isinstance(node, str) else f"setup[{i}]"
        if isinstance(item, str):
            _setup_sql(env, db, ctx, item, where, fail)
            continue

        def call(tool: Tool, args: Mapping[str, Any]) -> Any:
            return invoke(env, tool, db, args, ctx)

        setup_call(env, call, ctx, item, where, fail, "SQL or a call {name, args}")
        check_open(env, db, ctx, where)


def setup_call(
    env: Environment | DocumentEnvironment,
    call_tool: Invoke,
    ctx: ToolContext,
    item: Any,
    where: str,
    fail: Fail,
    form: str,
) -> None:
    """Run one call `{name, args}` of a case's `setup` (`form` says what an item must be);
    any failure is the case's error, but a call past the time limit or denied stops the case
    (`ReplayStoppedError`)."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise fail(where, f"must be {form}")
    if not item.keys() <= {"name", "args"} or not isinstance(item.get("args", {}), dict):
        raise fail(where, "a setup call has a name and args (an object)")
    tool = env.tools.get(item["name"])
    if tool is None:
        raise fail(where, f"no tool {item['name']!r} in {env.tools_module}")
    try:
        call_tool(tool, item.get("args", {}))
    except KeyboardInterrupt:
        raise ReplayInterrupted(f"case {ctx.case_id!r}, {where}") from None
    except STOPPING as stop:
        raise ReplayStoppedError(where, tool_error(stop)) from None
    except (Exception, SystemExit) as exc:
        raise fail(where, f"{item['name']} raised {tool_error(exc)}") from None


def _setup_sql(
    env: Environment, db: ReplayConnection, ctx: ToolContext, sql: str, where: str, fail: Fail
) -> None:
    """Run one SQL item of a setup under the time limit and the guard."""
    try:
        with time_limit(env.timeout), refusing(db):
            db.executescript(sql)
    except KeyboardInterrupt:
        raise ReplayInterrupted(f"case {ctx.case_id!r}, {where}") from None
    except (CallTimeout, DeniedError) as stop:
        raise ReplayStoppedError(where, tool_error(stop)) from None
    except sqlite3.Error as error:
        if oversize(error):
            over = OversizeError(env.max_size_mb, describe_error(error))
            raise ReplayStoppedError(where, str(over)) from None
        raise fail(where, f"SQL failed: {describe_error(error)}") from None
