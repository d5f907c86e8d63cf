"""Judge a conversation case by its outcome turn by turn: the state after each turn's last call
against that turn's goal and checks, and each turn's response against its required outputs.

The agent's calls are replayed once over the whole conversation on one private copy of the
store, and the state is judged after each turn's last call; a `"plan"` goal is the state that
replaying the chosen plans of turns 0..k reaches, one plan replay per case advanced beside it.
So the cost is linear in the turns (docs/formats.md 3.5, 9.2). The case's own outcome keys
are judged after every call, extra turns' included; its `StateVerdict` is the aggregate.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

import orjson

from toolscore.core.answers import (
    NO_CALLS,
    RequiredOutput,
    ScoredCalls,
    conversation_calls,
    parse_required_outputs,
    written,
)
from toolscore.core.model import Call, Case, Trajectory, Turn, TurnResult
from toolscore.state.checks import CheckResult, StateCheck, failed_checks, parse_checks
from toolscore.state.documents import DocumentEnvironment
from toolscore.state.documents_verdict import GOAL_FORM
from toolscore.state.environment import Environment
from toolscore.state.limits import alarms_installed
from toolscore.state.outputs import missing_required, output_options
from toolscore.state.replay import (
    CallOutcome,
    Fail,
    PlanReplay,
    ReplayStoppedError,
    case_error,
)
from toolscore.state.turn_replay import AnyReplay, open_replay
from toolscore.state.unreplayed import missing_state
from toolscore.state.verdict import Goal, StateVerdict, replayed_results

AnyEnvironment = Environment | DocumentEnvironment

OWN_KEYS = ("goal_state", "state_checks", "required_outputs", "results_from_plan")
"""A turn's outcome keys judged under `--env`."""
MISSING_TURN = "the turn is missing from the output: nothing replayed"
"""The reason a missing turn fails its outcome."""


class ConversationOutcome(NamedTuple):
    """A conversation's outcome verdict: the aggregate (the case's `state`) and each turn's
    (None for a turn without outcome keys)."""

    case: StateVerdict
    turns: tuple[StateVerdict | None, ...]


class _Keys(NamedTuple):
    """The outcome keys of a turn (or of the case itself), read and checked."""

    goal: Any
    checks: tuple[StateCheck, ...]
    checks_node: Any
    required: tuple[RequiredOutput, ...] | None
    results_from: int | None

    @property
    def judged(self) -> bool:
        """Whether the keys ask anything of the state."""
        return self.goal is not None or bool(self.checks) or self.results_from is not None

    @property
    def any(self) -> bool:
        """Whether there is any outcome key at all."""
        return self.judged or self.required is not None

    @property
    def refs(self) -> bool:
        """Whether a required output names a value a call returned (`$ref`, `$result`)."""
        return any(not isinstance(entry, str) for entry in self.required or ())

    @property
    def needs_plan(self) -> bool:
        """Whether judging them needs the plans' replay."""
        return self.goal == "plan" or self.results_from is not None


def turn_fail(fail: Fail, k: int) -> Fail:
    """The error builder for the fields of turn k (`turns[k].state_checks`)."""
    return lambda where, message: fail(f"turns[{k}].{where}", message)


def case_labels(case: Case) -> set[str]:
    """The labels of every turn's plan calls (the cases reader has checked that a turn's
    `$ref` outputs name its own or an earlier turn's)."""
    plans = (plan for turn in case.turns for plan in turn.plans)
    return {call.label for plan in plans for call in plan if call.label is not None}


def _keys(
    env: AnyEnvironment, extra: Mapping[str, Any], fail: Fail, own: bool, labels: set[str]
) -> _Keys:
    """A turn's outcome keys (`own`: the case's own, which cannot take `results_from_plan`)."""
    documents = not isinstance(env, Environment)
    goal = extra.get("goal_state")
    if goal is not None and goal != "plan" and (documents or not isinstance(goal, dict)):
        raise fail("goal_state", GOAL_FORM if documents else 'must be {table: [rows]} or "plan"')
    node = extra.get("results_from_plan")
    if node is not None and own:
        raise fail("results_from_plan", "a conversation gives results_from_plan per turn")
    if node is not None and not documents:
        raise fail("results_from_plan", "only a documents environment takes results_from_plan")
    if node is not None and (isinstance(node, bool) or not isinstance(node, int) or node < 0):
        raise fail("results_from_plan", "must be a position in the plan (an integer >= 0)")
    node_outputs = extra.get("required_outputs")
    required = None
    if node_outputs is not None:
        required = parse_required_outputs(node_outputs, labels, None, fail)
    checks_node = extra.get("state_checks")
    checks = parse_checks(checks_node, documents, fail)
    return _Keys(goal, checks, checks_node, required, node)


def validate_conversation(env: AnyEnvironment, case: Case, fail: Fail) -> None:
    """Check every turn's outcome keys, and the case's own, without replaying."""
    labels = case_labels(case)
    _keys(env, case.extra, fail, True, labels)
    for k, turn in enumerate(case.turns):
        _keys(env, turn.extra, turn_fail(fail, k), False, labels)


def _goal_kind(goal: Any) -> Goal | None:
    return None if goal is None else "plan" if goal == "plan" else "annotated"


class _Run:
    """One conversation's outcome judged: the agent's replay and the plans' replay, each
    advanced turn by turn and never restarted."""

    def __init__(
        self, env: AnyEnvironment, case: Case, fail: Fail, keys: Sequence[_Keys], own: _Keys
    ) -> None:
        self.env = env
        self.case = case
        self.fail = fail
        self.rows = any(key.goal not in (None, "plan") for key in (*keys, own))
        self.agent: AnyReplay = open_replay(env, case, fail, self.rows)
        self.plan: AnyReplay | None = None
        self.plan_stop: str | None = None
        self.plan_ended = False
        self.labels: dict[str, Call] = {}
        self.pool: dict[bytes, int] | None = None
        """The agent's results so far, as canonical JSON, each counted (only with some
        `results_from_plan`)."""
        if any(key.results_from is not None for key in keys):
            self.pool = {}
        self.outcomes: list[CallOutcome] = []
        self.ended = False
        """Whether a terminal tool's call ended the agent's replay."""
        if any(key.needs_plan for key in (*keys, own)):
            try:
                self.plan = open_replay(env, case, fail)
            except ReplayStoppedError as stop:
                self.plan_stop = str(stop)

    def close(self) -> None:
        """Hand back both copies."""
        self.agent.close()
        if self.plan is not None:
            self.plan.close()

    def nothing(self) -> _Run:
        """The do-nothing baseline's run beside this one: its own replay of the setup, which
        no call advances, judged on this run's plan replay (shared, so that the baseline
        replays no plan of its own). It reads this run's plan state when it judges
        (`sync`); closing it hands back its own copy only."""
        twin = copy.copy(self)
        twin.agent = open_replay(self.env, self.case, self.fail, self.rows)
        twin.plan = None  # not its own: `sync` lends it for each judging
        twin.pool = None if self.pool is None else {}
        twin.outcomes = []
        return twin

    def sync(self, main: _Run) -> None:
        """Take the main run's plan replay and where it stopped, before judging."""
        self.plan, self.plan_stop = main.plan, main.plan_stop

    def calls(self, calls: Sequence[Call], start: int, end: int) -> tuple[CallOutcome, ...]:
        """Replay the agent's calls start..end (none once a terminal tool ended replay)."""
        if self.ended or start >= end:
            return ()
        made = self.agent.calls(calls[:end], start)
        self.outcomes.extend(made)
        tools = self.env.policy.terminal_tools
        self.ended = len(made) < end - start or bool(made and made[-1].name in tools)
        pool = self.pool
        if pool is not None:
            for outcome in made:
                if outcome.error is None:
                    key = orjson.dumps(outcome.result, option=orjson.OPT_SORT_KEYS)
                    pool[key] = pool.get(key, 0) + 1
        return made

    def advance_plan(self, k: int, turn: Turn, chosen: int | None) -> tuple[PlanReplay, list[Any]]:
        """Replay turn k's chosen plan (its first when the verdict chose none) on the plans'
        replay; what it met, and its calls' results in replay order."""
        results: list[Any] = []
        if self.plan is None or self.plan_stop is not None or self.plan_ended or not turn.plans:
            return PlanReplay(), results
        index = chosen or 0
        turn_case = self.case._replace(plans=turn.plans)
        try:
            met = self.plan.plan(turn_case, index, turn_fail(self.fail, k), self.labels, results)
        except ReplayStoppedError as stop:
            self.plan_stop = f"turns[{k}].{stop}"
            return PlanReplay(), results
        self.plan_ended = bool(met.not_replayed)
        return met, results

    def judge(
        self,
        keys: _Keys,
        fail: Fail,
        response: str | None,
        said: Sequence[str],
        outcomes: tuple[CallOutcome, ...],
        met: PlanReplay,
        results: Sequence[Any],
        chosen: int | None,
        scored: ScoredCalls = NO_CALLS,
    ) -> StateVerdict:
        """The verdict on the state now against `keys`, and on `response` (`scored`: the
        calls whose replayed results the turn's `$ref`/`$result` outputs read)."""
        place, normalise = output_options(self.case.extra, self.env.config, self.fail)
        if keys.refs:
            scored = replayed_results(scored, self.outcomes)
        verdict = outputs_verdict(keys.required, response, said, place, normalise, scored)
        goal = _goal_kind(keys.goal)
        verdict = verdict._replace(calls=outcomes, goal=goal)
        if not keys.judged:
            return verdict
        if keys.needs_plan and self.plan_stop is not None:
            reason = f"not judged: replay stopped at {self.plan_stop}"
            return verdict._replace(
                passed=False, error=self.plan_stop, checks=failed_checks(keys.checks_node, reason)
            )
        passed = True
        if keys.goal == "plan":
            assert self.plan is not None
            passed, diff, hashes = self.agent.against_plan(self.plan)
            verdict = verdict._replace(diff=diff, hashes=hashes, plan=chosen or 0)
        elif keys.goal is not None:
            passed, diff, hashes = self.agent.against_rows(keys.goal, fail)
            verdict = verdict._replace(diff=diff, hashes=hashes)
        if keys.results_from is not None:
            lacking = self._lacking(results[keys.results_from :])
            passed = passed and not lacking
            verdict = verdict._replace(missing_results=lacking)
        checked: tuple[CheckResult, ...] = ()
        if keys.checks:
            checked = self.agent.checks(keys.checks, fail)
            passed = passed and all(check.passed for check in checked)
        return verdict._replace(passed=passed, checks=checked, plan_replay=met)

    def _lacking(self, required: Sequence[Any]) -> tuple[Any, ...]:
        """The plan results not among the agent's so far, each agent result serving once
        (`documents_verdict.missing_results` over a pool kept across the turns)."""
        pool = self.pool or {}
        used: dict[bytes, int] = {}
        lacking = []
        for result in required:
            key = orjson.dumps(result, option=orjson.OPT_SORT_KEYS)
            if used.get(key, 0) < pool.get(key, 0):
                used[key] = used.get(key, 0) + 1
            else:
                lacking.append(orjson.loads(key))  # a copy: the plan's state changes later
        return tuple(lacking)


def check_conversation(
    env: AnyEnvironment,
    case: Case,
    trajectory: Trajectory,
    turns: Sequence[TurnResult],
    source: str = "<cases>",
    *,
    until_failed: bool = False,
) -> ConversationOutcome:
    """Replay the agent's calls over the whole conversation once and judge each turn's
    outcome keys on the state after its last call (`turns` are the call verdicts, which give
    each turn's calls and chosen plan); then the case's own keys on the final state. With
    `until_failed`, only whether the outcome passes is wanted: judging stops at the first
    turn that fails (the verdicts after it are left out)."""
    return _check(env, case, trajectory, turns, source, until_failed, nothing=False)[0]


def judge_conversation(
    env: AnyEnvironment,
    case: Case,
    trajectory: Trajectory,
    turns: Sequence[TurnResult],
    source: str = "<cases>",
) -> tuple[ConversationOutcome, bool | None]:
    """`check_conversation` on the agent's output, and the case's do-nothing baseline
    (`nothing_conversation`). On a documents environment the baseline is judged in the same
    pass, on the agent's plan replay, while the agent's verdicts chose each turn's first plan
    (the baseline's choice): it then replays no plan of its own. Otherwise, and on SQLite
    (where a third copy of the database would be held at once), it is judged after."""
    share = isinstance(env, DocumentEnvironment) and _nothing_known(case) == "judge"
    outcome, nothing = _check(env, case, trajectory, turns, source, False, nothing=share)
    if nothing is None:
        nothing = nothing_conversation(env, case, source)
    return outcome, nothing


def _case_keys(env: AnyEnvironment, case: Case, fail: Fail) -> tuple[list[_Keys], _Keys]:
    """The outcome keys of each turn and the case's own, read once per case."""
    labels = case_labels(case)
    keys = [
        _keys(env, turn.extra, turn_fail(fail, k), False, labels)
        for k, turn in enumerate(case.turns)
    ]
    return keys, _keys(env, case.extra, fail, True, labels)


def _check(
    env: AnyEnvironment,
    case: Case,
    trajectory: Trajectory,
    turns: Sequence[TurnResult],
    source: str,
    until_failed: bool,
    *,
    nothing: bool,
) -> tuple[ConversationOutcome, bool | None]:
    """`check_conversation`; with `nothing`, the baseline judged beside it too (None when it
    could not be: the agent's verdicts chose a turn's other plan, or the setup stopped)."""
    fail = case_error(case, source)
    keys, own = _case_keys(env, case, fail)
    if not any(key.any for key in (*keys, own)):
        return ConversationOutcome(StateVerdict(None), (None,) * len(case.turns)), None
    planned = [k for k, key in enumerate(keys) if key.needs_plan]
    last_plan = len(case.turns) if own.needs_plan else max(planned, default=-1)
    present = max(trajectory.final_turn, 1)
    texts = said_by_turn(trajectory, present)
    calls = trajectory.calls
    with alarms_installed():
        try:
            run = _Run(env, case, fail, keys, own)
        except ReplayStoppedError as stop:
            return _stopped(case, keys, own, str(stop)), None
        baseline = _Baseline(run) if nothing else None
        try:
            found: list[StateVerdict | None] = []
            for k, turn in enumerate(case.turns):
                result = turns[k]
                start, end = result.calls
                outcomes = run.calls(calls, start, end) if k < present else ()
                met, results = PlanReplay(), list[Any]()
                if k <= last_plan:
                    met, results = run.advance_plan(k, turn, result.plan)
                    if baseline is not None and (result.plan or 0) != 0:
                        baseline.give_up()  # the baseline would replay the first plan
                key = keys[k]
                if baseline is not None and key.any:
                    baseline.turn(run, key, turn_fail(fail, k), met, results)
                if not key.any:
                    found.append(None)
                elif k >= present:
                    found.append(_unjudged(key, MISSING_TURN))
                else:
                    response = turn_response(trajectory, k)
                    scored = conversation_calls(case, turns, calls, k) if key.refs else NO_CALLS
                    verdict = run.judge(
                        key, turn_fail(fail, k), response, texts.get(k, ()), outcomes, met,
                        results, result.plan, scored,
                    )  # fmt: skip
                    found.append(verdict._replace(not_replayed=end - start - len(outcomes)))
                if until_failed and found[-1] is not None and found[-1].outcome_passed is False:
                    return ConversationOutcome(
                        aggregate_turns(found, StateVerdict(None), (), 0), ()
                    ), None
            run.calls(calls, turns[-1].calls[1] if turns else 0, len(calls))  # extra turns
            scored = conversation_calls(case, turns, calls) if own.refs else NO_CALLS
            mine = run.judge(
                own, fail, trajectory.response, trajectory.said, (), PlanReplay(), (), None,
                scored,
            )  # fmt: skip
            if baseline is not None and own.any:
                baseline.turn(run, own, fail, PlanReplay(), ())
            replayed = tuple(run.outcomes)
        finally:
            run.close()
            if baseline is not None:
                baseline.close()
    outcome = ConversationOutcome(aggregate_turns(found, mine, replayed, len(calls)), tuple(found))
    return outcome, None if baseline is None else baseline.passed


class _Baseline:
    """The do-nothing baseline judged beside the agent's run (`judge_conversation`): each
    turn's outcome keys on the state the setup left, as `nothing_conversation` judges them,
    until one fails. `passed` is the verdict, None while it cannot be given."""

    def __init__(self, run: _Run) -> None:
        self.run: _Run | None = None
        self.passed: bool | None = True
        try:
            self.run = run.nothing()
        except ReplayStoppedError:
            self.passed = None  # judged apart, as a stopped setup is

    def turn(
        self, main: _Run, keys: _Keys, fail: Fail, met: PlanReplay, results: Sequence[Any]
    ) -> None:
        """Judge one turn's keys (or the case's own) on the unchanged state, with no
        response; the baseline fails at the first that fails."""
        if self.run is None:
            return
        self.run.sync(main)
        verdict = self.run.judge(keys, fail, None, (), (), met, results, None)
        if verdict.outcome_passed is False:
            self.passed = False
            self.close()

    def give_up(self) -> None:
        """The plan states are no longer the baseline's: leave it to be judged apart
        (unless it has failed already)."""
        if self.run is not None:
            self.passed = None
            self.close()

    def close(self) -> None:
        """Hand back the baseline's own copy."""
        if self.run is not None:
            self.run.agent.close()
            self.run = None


def turn_response(trajectory: Trajectory, k: int) -> str | None:
    """Turn k's response: its entry of `turn_responses`, or the line's for a plain line."""
    responses = trajectory.turn_responses
    return responses[k] if k < len(responses) else trajectory.response


def said_by_turn(trajectory: Trajectory, present: int) -> dict[int, tuple[str, ...]]:
    """Every assistant text by the case turn it was said in (none known: {})."""
    said, known = trajectory.said, trajectory.said_turns
    if len(known) != len(said):
        return {}
    found: dict[int, list[str]] = {}
    for text, turn in zip(said, known, strict=True):
        found.setdefault(min(max(turn, 1), present) - 1, []).append(text)
    return {k: tuple(texts) for k, texts in found.items()}


def _unjudged(key: _Keys, reason: str, error: str | None = None) -> StateVerdict:
    """A verdict with every outcome key failed for one reason, nothing replayed."""
    required = key.required
    return StateVerdict(
        False if key.judged else None,
        outputs_passed=None if required is None else False,
        missing_outputs=tuple(map(written, required or ())),
        goal=_goal_kind(key.goal),
        error=error if error is not None else reason if key.judged else None,
        checks=failed_checks(key.checks_node, reason),
    )


def _stopped(case: Case, keys: Sequence[_Keys], own: _Keys, stop: str) -> ConversationOutcome:
    """The outcome when the case's setup could not be replayed: every outcome key failed."""
    reason = f"not judged: replay stopped at {stop}"
    found = [_unjudged(key, reason, stop) if key.any else None for key in keys]
    mine = _unjudged(own, reason, stop) if own.any else StateVerdict(None)
    return ConversationOutcome(aggregate_turns(found, mine, (), 0, stop), tuple(found))


def aggregate_turns(
    turns: Sequence[StateVerdict | None],
    own: StateVerdict,
    calls: tuple[CallOutcome, ...],
    made: int,
    error: str | None = None,
) -> StateVerdict:
    """The case's verdict from its turns' and its own: each check passing only when every
    one that applies passed; the turns' checks named `turn k: name`, then the case's own."""
    judged = [(k, v) for k, v in enumerate(turns) if v is not None]
    states = [v.passed for _, v in judged if v.passed is not None]
    outputs = [v.outputs_passed for _, v in judged if v.outputs_passed is not None]
    if own.passed is not None:
        states.append(own.passed)
    if own.outputs_passed is not None:
        outputs.append(own.outputs_passed)
    checks = [c._replace(name=f"turn {k}: {c.name}") for k, v in judged for c in v.checks]
    errors = [v.error for _, v in judged if v.error is not None]
    goal = own.goal or next((v.goal for _, v in judged if v.goal is not None), None)
    return own._replace(
        passed=all(states) if states else None,
        outputs_passed=all(outputs) if outputs else None,
        checks=(*checks, *own.checks),
        error=error or next(iter(errors), own.error),
        goal=goal,
        calls=calls,
        not_replayed=made - len(calls),
    )


def missing_conversation(case: Case) -> ConversationOutcome:
    """The outcome of a conversation without an output line: each turn's keys and the
    case's own failed, nothing replayed (`unreplayed.missing_state`)."""
    found = tuple(_missing_turn(turn.extra, case.turns) for turn in case.turns)
    return ConversationOutcome(aggregate_turns(found, missing_state(case), (), 0), found)


def _missing_turn(extra: Mapping[str, Any], turns: tuple[Turn, ...]) -> StateVerdict | None:
    """A turn's verdict without an output line (None for a turn without outcome keys)."""
    if not any(key in extra for key in OWN_KEYS):
        return None
    verdict = missing_state(Case("", (), extra=extra, turns=turns))
    if "results_from_plan" in extra:
        verdict = verdict._replace(passed=False)  # asks the state something, as a goal does
    return verdict


def nothing_conversation(env: AnyEnvironment, case: Case, source: str = "<cases>") -> bool | None:
    """The do-nothing baseline of a conversation: every turn judged on the state the setup
    leaves, with no response (None when neither a turn nor the case has an outcome key)."""
    known = _nothing_known(case)
    if known != "judge":
        return known
    n = len(case.turns)
    nothing = Trajectory(case.id, (), None, final_turn=n, turn_responses=(None,) * n)
    results = [TurnResult(k, False, None, ()) for k in range(n)]
    verdict = check_conversation(env, case, nothing, results, source, until_failed=True).case
    return verdict.passed is not False and verdict.outputs_passed is not False


def _nothing_known(case: Case) -> bool | Literal["judge"] | None:
    """The do-nothing baseline when it is known without replaying: None (no outcome key),
    False (a required output: no response holds it); else "judge"."""
    extras = [turn.extra for turn in case.turns] + [case.extra]
    if not any(key in extra for extra in extras for key in OWN_KEYS):
        return None
    if any("required_outputs" in extra for extra in extras):
        return False  # no response holds a required string
    return "judge"


def outputs_verdict(
    required: Sequence[RequiredOutput] | None,
    response: str | None,
    said: Sequence[str],
    place: str,
    normalise: str,
    scored: ScoredCalls,
) -> StateVerdict:
    """The verdict on one turn's (or the case's) required outputs alone (`passed` None)."""
    if required is None:
        return StateVerdict(None)
    missing = missing_required(
        required, response, said=said, place=place, normalise=normalise, scored=scored
    )
    return StateVerdict(None, outputs_passed=not missing, missing_outputs=missing)
