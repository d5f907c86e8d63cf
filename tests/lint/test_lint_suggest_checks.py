"""`lint --suggest-checks`: the checks suggested from a goal hold on the goal's own state.

Property: for a case whose goal is "plan", the suggested checks, put on the same case
without its goal, pass on the agent that made the plan's calls; and, when the plan changes
anything, at least one fails on the agent that did nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from document_envs import env as documents_env
from document_envs import specs as documents_specs
from toolscore import Case, SpecSet, parse_case, parse_output, parse_specs
from toolscore.cli.app import cli
from toolscore.lint.suggest import suggest_checks
from toolscore.state import Environment, check_state, load_environment

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support" / "env"


def _sqlite() -> tuple[Environment, SpecSet]:
    data = yaml.safe_load((EXAMPLE / "tools.yaml").read_text(encoding="utf-8"))
    specs, errors = parse_specs(data, str(EXAMPLE / "tools.yaml"))
    assert specs is not None, errors
    env = load_environment(data["environment"], EXAMPLE, str(EXAMPLE / "tools.yaml"))
    assert isinstance(env, Environment)
    return env, specs


SQLITE = _sqlite()


def _case(line: dict[str, Any], specs: SpecSet) -> Case:
    return parse_case({"tags": [], **line}, specs, "cases.jsonl", 1)


def _holds_on_the_plan(env: Any, specs: SpecSet, line: dict[str, Any]) -> None:
    case = _case(line, specs)
    suggestion = suggest_checks(env, case, "cases.jsonl")
    assert suggestion is not None
    assert not suggestion.notes, suggestion.notes
    plan_calls = [{"name": c["name"], "args": c.get("args", {})} for c in line["plans"][0]]
    made = parse_output({"id": case.id, "calls": plan_calls}).calls
    checked = {k: v for k, v in line.items() if k != "goal_state"}
    checked["state_checks"] = list(suggestion.checks)
    if not suggestion.checks:
        return
    verdict = check_state(env, _case(checked, specs), made, None)
    assert verdict.passed is True, [c for c in verdict.checks if not c.passed]
    nothing = check_state(env, _case(checked, specs), (), None)
    assert nothing.passed is False


SQLITE_PLANS = [
    [{"name": "refund", "args": {"order_id": "order-77", "amount": 12.5}}],
    [{"name": "cancel_order", "args": {"order_id": "order-41", "reason": "asked"}}],
    [
        {"name": "refund", "args": {"order_id": "order-12", "amount": 5}},
        {"name": "refund", "args": {"order_id": "order-12", "amount": 30}},
    ],
]


@pytest.mark.parametrize("plan", SQLITE_PLANS)
def test_sqlite_suggestions_hold_on_the_plan_s_replay(plan: list[dict[str, Any]]) -> None:
    line = {"id": "p", "plans": [plan], "goal_state": "plan"}
    _holds_on_the_plan(*SQLITE, line)


def test_a_setup_is_the_start_the_changes_are_counted_from() -> None:
    line = {
        "id": "s",
        "plans": [SQLITE_PLANS[0]],
        "goal_state": "plan",
        "setup": "UPDATE orders SET refunded = 1 WHERE order_id = 'order-77'",
    }
    _holds_on_the_plan(*SQLITE, line)
    found = suggest_checks(SQLITE[0], _case(line, SQLITE[1]), "cases.jsonl")
    assert found is not None
    assert {"column": "refunded", "equals": 13.5}.items() <= found.checks[0].items()


def test_an_annotated_goal_suggests_a_removed_row_as_count_0() -> None:
    line = {"id": "a", "plans": [], "goal_state": {"refunds": []}}
    found = suggest_checks(SQLITE[0], _case(line, SQLITE[1]), "cases.jsonl")
    assert found is not None
    assert found.checks == (
        {"name": "refunds[refund_id=1] removed", "table": "refunds", "where": {"refund_id": 1},
         "count": 0},
    )  # fmt: skip


DOCUMENT_CALLS = [
    {"name": "cancel_order", "args": {"order_id": "#W1"}},
    {"name": "cancel_order", "args": {"order_id": "#W2"}},  # fails: delivered
    {"name": "set_price", "args": {"order_id": "#W1", "item": 0, "price": 3}},
    {"name": "add_item", "args": {"order_id": "#W2", "item_id": "i7", "price": 2.5}},
    {"name": "remove_last_item", "args": {"order_id": "#W1"}},
    {"name": "flag", "args": {"user_id": "u2", "note": "late"}},
    {"name": "set_setting", "args": {"key": "a/b~c", "value": "on"}},
    {"name": "charge", "args": {"user_id": "u1", "amount": 30}},
]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(DOCUMENT_CALLS), max_size=5))
def test_document_suggestions_hold_on_the_plan_s_replay(plan: list[dict[str, Any]]) -> None:
    env, specs = documents_env(), documents_specs()
    line = {"id": "d", "plans": [plan], "goal_state": "plan"}
    case = _case(line, specs)
    suggestion = suggest_checks(env, case, "cases.jsonl")
    assert suggestion is not None
    assert all(c["path"].startswith("/") for c in suggestion.checks)
    if plan and any(call["name"] not in ("cancel_order",) for call in plan):
        assert suggestion.checks  # every other tool here changes the data
    _holds_on_the_plan(env, specs, line)


def test_the_command_prints_one_json_line_a_case_with_a_goal(tmp_path: Path) -> None:
    lines = [
        {"id": "r", "tags": [], "plans": [SQLITE_PLANS[0]], "goal_state": "plan"},
        {"id": "none", "tags": [], "plans": []},
    ]
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    spec = str(EXAMPLE / "tools.yaml")
    args = ["lint", "--specs", spec, "--cases", str(cases), "--env", spec, "--suggest-checks"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    printed = [json.loads(line) for line in result.output.splitlines()]
    assert [line["id"] for line in printed] == ["r"]
    assert printed[0]["state_checks"][0]["name"] == "orders[order_id=order-77].refunded"


def test_the_command_needs_cases_and_env() -> None:
    spec = str(EXAMPLE / "tools.yaml")
    result = CliRunner().invoke(cli, ["lint", "--specs", spec, "--suggest-checks"])
    assert result.exit_code == 2
    assert "--suggest-checks" in result.output


def test_lint_env_judges_a_plan_on_its_case_s_state_checks(tmp_path: Path) -> None:
    refunded = {"table": "orders", "where": {"order_id": "order-77"}, "column": "refunded"}
    lines = [
        {"id": "wrong", "tags": [], "plans": [SQLITE_PLANS[0]],
         "state_checks": [{"name": "refunded", **refunded, "equals": 99}]},
        {"id": "idle", "tags": [], "plans": [SQLITE_PLANS[0]],
         "state_checks": [{"name": "total", "table": "orders", "where": {"order_id": "order-77"},
                           "column": "total", "equals": 60}]},
    ]  # fmt: skip
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    spec = str(EXAMPLE / "tools.yaml")
    result = CliRunner().invoke(cli, ["lint", "--specs", spec, "--cases", str(cases), "--env"])
    assert result.exit_code == 1, result.output
    assert "its replay fails a state check: state check 'refunded' failed" in result.output
    assert "expected 99, found 12.5" in result.output
    assert "state_checks: case 'idle': every state check passes on the initial state" in (
        result.output
    )
