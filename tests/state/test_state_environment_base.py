"""One environment protocol: the SQLite and the document kinds share their fields, their
validation, their setup calls and their loop over plans (`EnvironmentBase`, `shared_fields`,
`setup_call`, `first_met`), so that the same mistake reads the same on either kind.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from toolscore import Case, parse_case, parse_output, parse_specs
from toolscore.errors import CaseError, InputError
from toolscore.state import check_state, load_environment, validate_case
from toolscore.state.environment_common import EnvironmentBase

TOOLS = """\
import time


def put(store, key, value):
    if isinstance(store, dict):
        store[key] = value
    else:
        store.execute("INSERT INTO kv VALUES (?, ?)", (key, value))
    return value


def boom(store):
    raise ValueError("no")


def slow(store):
    time.sleep(5)
"""


def _env(tmp_path: Path, kind: str, **block: Any) -> Any:
    (tmp_path / "tools.py").write_text(TOOLS)
    if kind == "sqlite":
        (tmp_path / "db.sql").write_text("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT);\n")
        config = {"database": "db.sql", "tools": "tools.py", **block}
    else:
        (tmp_path / "data.json").write_text("{}")
        config = {"kind": "documents", "data": "data.json", "tools": "tools.py", **block}
    return load_environment(config, tmp_path, "env.yaml")


def _case(extra: dict[str, Any]) -> Case:
    specs, _ = parse_specs(
        {"tools": {"put": {"args": {"key": "exact", "value": "exact"}}, "boom": {"args": {}},
                   "slow": {"args": {}}}}
    )  # fmt: skip
    assert specs is not None
    return parse_case({"id": "c", "plans": [], "tags": [], **extra}, specs, "cases.jsonl", 3)


KINDS = pytest.mark.parametrize("kind", ["sqlite", "documents"])


@KINDS
def test_both_kinds_hold_the_shared_fields(tmp_path: Path, kind: str) -> None:
    env = _env(tmp_path, kind, compare="exact", numbers="typed", timeout=2)
    assert isinstance(env, EnvironmentBase)
    assert (env.compare, env.numbers, env.typed, env.timeout) == ("exact", "typed", True, 2.0)
    assert env.tools_module == "tools.py"
    assert env.lacking(["put", "missing"]) == ("missing",)
    assert env.context("c").random.random() == env.context("c").random.random()


@KINDS
@pytest.mark.parametrize(
    ("block", "field", "message"),
    [
        ({"compare": "loose"}, "environment.compare", "must be 'diff' or 'exact', got 'loose'"),
        ({"numbers": 2}, "environment.numbers", "must be 'numeric' or 'typed', got 2"),
        ({"now": "soon"}, "environment.now", "not an ISO 8601 date-time: 'soon'"),
        ({"timeout": 0}, "environment.timeout", "must be a number of seconds above 0"),
        ({"terminal_tools": ["stop"]}, "environment.terminal_tools",
         "the tools module has no function 'stop'"),
    ],
)  # fmt: skip
def test_a_shared_key_is_refused_alike_by_both_kinds(
    tmp_path: Path, kind: str, block: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(InputError) as error:
        _env(tmp_path, kind, **block)
    assert error.value.field == field
    assert message in str(error.value)


@KINDS
def test_both_kinds_cross_to_worker_processes(tmp_path: Path, kind: str) -> None:
    env = _env(tmp_path, kind, compare="exact")
    copy = pickle.loads(pickle.dumps(env))
    assert type(copy) is type(env)
    assert copy.describe() == env.describe()
    assert copy.tools.keys() == env.tools.keys()


@KINDS
@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"name": "nope"}, "case 'c': no tool 'nope' in tools.py"),
        ({"name": "put", "extra": 1}, "case 'c': a setup call has a name and args (an object)"),
        ({"name": "boom"}, "case 'c': boom raised ValueError: no"),
    ],
)
def test_a_bad_setup_call_is_the_same_case_error_on_both_kinds(
    tmp_path: Path, kind: str, item: dict[str, Any], message: str
) -> None:
    env = _env(tmp_path, kind)
    case = _case({"setup": [item], "goal_state": "plan"})
    with pytest.raises(CaseError) as error:
        check_state(env, case, [], None, source="cases.jsonl")
    assert error.value.field == "setup[0]"
    assert error.value.line == 3
    assert message in str(error.value)


@KINDS
def test_a_setup_call_past_the_time_limit_fails_the_case_on_both_kinds(
    tmp_path: Path, kind: str
) -> None:
    env = _env(tmp_path, kind, timeout=0.2)
    case = _case({"setup": [{"name": "slow"}], "goal_state": "plan"})
    verdict = check_state(env, case, [], None)
    assert verdict.passed is False
    assert verdict.error is not None
    assert verdict.error.startswith("setup[0]: timed out: did not return within 0.2 s")


@KINDS
def test_the_first_plan_met_wins_and_a_stopped_plan_keeps_the_agent_s_calls(
    tmp_path: Path, kind: str
) -> None:
    env = _env(tmp_path, kind, timeout=0.2)
    put = {"name": "put", "args": {"key": "k", "value": "v"}}
    two_plans = _case({"plans": [[{"name": "boom", "args": {}}], [put]], "goal_state": "plan"})
    calls = parse_output({"id": "c", "calls": [put]}).calls
    verdict = check_state(env, two_plans, calls, None)
    assert (verdict.passed, verdict.plan) == (True, 1)
    assert verdict.plan_replay.errors == ()
    stopped = _case({"plans": [[{"name": "slow", "args": {}}]], "goal_state": "plan"})
    verdict = check_state(env, stopped, calls, None)
    assert verdict.passed is False
    assert verdict.error is not None
    assert verdict.error.startswith("plans[0][0] (slow): timed out")
    assert [call.name for call in verdict.calls] == ["put"]


@KINDS
def test_validation_still_refuses_a_setup_that_is_not_a_list(tmp_path: Path, kind: str) -> None:
    env = _env(tmp_path, kind)
    with pytest.raises(CaseError, match="setup"):
        validate_case(env, _case({"setup": 3}))
