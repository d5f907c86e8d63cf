"""Outcome verdicts that replay no call of an agent: a case without an output, an agent that
did nothing (the do-nothing baseline, docs/formats.md 7.3), and the required outputs of a run
without `--env` (checked against the calls' recorded results).

A case without an output line fails every outcome check it has, without replay: a missing
output is never a pass. The do-nothing verdict is the case's outcome checks on the state its
setup leaves, with no response: required outputs are never found in no response, so a case
with any fails without replay; a goal state and state checks are judged by `check_state`
with no call, as an agent's would be. A goal given as rows (or checks alone), on a store
whose setup is SQL or absent, involves no tool at all, so its verdict is kept per (setup,
goal, checks) for the process's later cases.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import orjson

from toolscore.core.answers import ScoredCalls, case_required_outputs, written
from toolscore.core.model import NO_EXTRA, Case
from toolscore.state.checks import failed_checks
from toolscore.state.environment import Environment
from toolscore.state.outputs import missing_required, output_options
from toolscore.state.replay import case_error
from toolscore.state.verdict import StateVerdict, check_state

if TYPE_CHECKING:
    from toolscore.state.documents import DocumentEnvironment

KEPT_VERDICTS = 4096
"""Do-nothing verdicts of row goals kept per environment (forgotten all at once beyond)."""

_kept: weakref.WeakKeyDictionary[Environment, dict[bytes, bool]] = weakref.WeakKeyDictionary()
_last: list[tuple[Case, bool | None]] = []
"""The last case judged and its verdict: a case's trials ask for it once each."""


def missing_state(case: Case) -> StateVerdict:
    """The outcome verdict on a case without an output line: each check it has, failed."""
    goal = case.extra.get("goal_state")
    required = case_required_outputs(case, case_error(case, "<cases>"))
    checks = failed_checks(case.extra.get("state_checks"), "no output line: nothing replayed")
    return StateVerdict(
        None if goal is None and not checks else False,
        outputs_passed=None if required is None else False,
        missing_outputs=tuple(map(written, required or ())),
        goal=None if goal is None else "plan" if goal == "plan" else "annotated",
        checks=checks,
    )


def recorded_outputs(
    case: Case,
    response: str | None,
    said: tuple[str, ...],
    scored: ScoredCalls,
    source: str = "<cases>",
) -> StateVerdict:
    """The outcome verdict of a run without `--env` on a case with `required_outputs`: the
    outputs alone (`passed` None), references looked up in the calls' recorded results."""
    fail = case_error(case, source)
    required = case_required_outputs(case, fail) or ()
    place, normalise = output_options(case.extra, NO_EXTRA, fail)
    missing = missing_required(
        required, response, said=said, place=place, normalise=normalise, scored=scored
    )
    return StateVerdict(None, outputs_passed=not missing, missing_outputs=missing)


def nothing_outcome(
    env: Environment | DocumentEnvironment, case: Case, source: str = "<cases>"
) -> bool | None:
    """Whether an agent that did nothing (no call, no response) passes every outcome check
    of `case`; None when it has none (no `goal_state`, `state_checks` or `required_outputs`)."""
    if _last and _last[0][0] is case:
        return _last[0][1]
    verdict = _judge(env, case, source)
    _last[:] = [(case, verdict)]
    return verdict


def _judge(env: Environment | DocumentEnvironment, case: Case, source: str) -> bool | None:
    goal = case.extra.get("goal_state")
    required = case.extra.get("required_outputs")
    checks = case.extra.get("state_checks")
    if goal is None and required is None and checks is None:
        return None
    if isinstance(required, list):
        output_options(case.extra, env.config, case_error(case, source))
        if required:  # nothing is said: no string is found, and no call returned a value
            return False
    if goal is None and checks is None:
        return True
    key = _key(env, case, goal)
    if key is None or not isinstance(env, Environment):
        return check_state(env, case, (), None, source=source).passed is True
    kept = _kept.setdefault(env, {})
    found = kept.get(key)
    if found is None:
        if len(kept) >= KEPT_VERDICTS:
            kept.clear()
        found = kept[key] = check_state(env, case, (), None, source=source).passed is True
    return found


def _key(env: Environment | DocumentEnvironment, case: Case, goal: Any) -> bytes | None:
    """What a row goal's do-nothing verdict depends on besides the store: the goal, the
    state checks and the setup's SQL; None when it may depend on more (a plan goal, a setup
    calling tools)."""
    if not isinstance(env, Environment) or goal == "plan":
        return None
    setup = case.extra.get("setup")
    sql_only = setup is None or isinstance(setup, str) or (
        isinstance(setup, list) and all(isinstance(item, str) for item in setup)
    )  # fmt: skip
    if not sql_only:
        return None
    try:
        checks = case.extra.get("state_checks")
        return orjson.dumps([setup, goal, checks], option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, RecursionError):
        return None
