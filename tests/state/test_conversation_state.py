"""Conversations under `--env`: each turn's outcome judged on the state after its last call.

The golden cases are conversation_state_golden.yaml (each with its description); the tests
here add the do-nothing baseline, a missing output, the input errors, the report, and the
property that a one-turn conversation is judged as the plain case is.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from document_envs import env as documents_env
from document_envs import specs as documents_specs
from toolscore import Case, SpecSet, parse_case, parse_output, parse_specs
from toolscore.core.model import CaseResult, Trajectory
from toolscore.errors import CaseError
from toolscore.report.json_report import case_to_json
from toolscore.report.terminal import case_detail
from toolscore.scoring.case import outcome_passed, score_replayed
from toolscore.state import Environment, load_environment
from toolscore.state.conversation import check_conversation, nothing_conversation
from toolscore.store.restore import result_from_json

HERE = Path(__file__).parent
EXAMPLE = HERE.parents[1] / "examples" / "support" / "env"
GOLDEN = yaml.safe_load((HERE / "conversation_state_golden.yaml").read_text(encoding="utf-8"))


@cache
def sqlite_specs() -> SpecSet:
    data = yaml.safe_load((EXAMPLE / "tools.yaml").read_text(encoding="utf-8"))
    found, errors = parse_specs(data, str(EXAMPLE / "tools.yaml"))
    assert found is not None, errors
    return found


@cache
def sqlite_env() -> Environment:
    specs = sqlite_specs()
    assert specs.environment is not None
    env = load_environment(specs.environment, EXAMPLE, str(EXAMPLE / "tools.yaml"))
    assert isinstance(env, Environment)
    return env


def backend(name: str) -> tuple[Any, SpecSet]:
    if name == "sqlite":
        return sqlite_env(), sqlite_specs()
    return documents_env(), documents_specs()


def make_case(keys: dict[str, Any], specs: SpecSet, case_id: str = "c") -> Case:
    return parse_case({"id": case_id, "tags": [], **keys}, specs, "cases.jsonl", 1)


def scored(name: str, keys: dict[str, Any], turns: list[dict[str, Any]] | None) -> CaseResult:
    """The case scored under --env against an outputs line of `turns` (None: no line)."""
    env, specs = backend(name)
    case = make_case(keys, specs)
    if turns is None:
        trajectory = Trajectory("c", (), missing=True)
    else:
        trajectory = parse_output({"id": "c", "turns": turns})
    return score_replayed(specs, case, trajectory, env, "cases.jsonl")


def turn_outcomes(result: CaseResult) -> list[bool | None]:
    return [None if t.state is None else t.state.outcome_passed for t in result.turns]


@pytest.mark.parametrize("golden", GOLDEN, ids=[g["description"] for g in GOLDEN])
def test_golden_conversations(golden: dict[str, Any]) -> None:
    result = scored(golden["backend"], golden["case"], golden["output"])
    assert turn_outcomes(result) == golden["turns"], [t.state for t in result.turns]
    assert outcome_passed(result) is golden["outcome"] or (
        golden["outcome"] is True and not result.passed  # passes on outcome, not on calls
    )
    state = result.state
    assert state is not None
    outcome = state.passed is not False and state.outputs_passed is not False
    assert outcome is golden["outcome"], state
    if "codes" in golden:
        assert sorted({m.code for m in result.mismatches}) == golden["codes"]
    if "checks" in golden:
        assert [c.name for c in state.checks if not c.passed] == golden["checks"]


SQLITE_CHECK = {
    "name": "refunded",
    "table": "orders",
    "where": {"order_id": "order-77"},
    "column": "refunded",
    "equals": 12.5,
}
REFUND = {"name": "refund", "args": {"order_id": "order-77", "amount": 12.5}}


def test_a_missing_output_fails_every_turns_outcome_unreplayed() -> None:
    keys = {
        "turns": [
            {"plans": [[REFUND]], "state_checks": [SQLITE_CHECK]},
            {"plans": [], "required_outputs": ["done"]},
            {"plans": []},
        ]
    }
    result = scored("sqlite", keys, None)
    assert turn_outcomes(result) == [False, False, None]
    first = result.turns[0].state
    assert first.checks[0].reason == "no output line: nothing replayed"
    assert first.calls == ()
    assert result.turns[1].state.missing_outputs == ("done",)
    assert result.state.passed is False
    assert result.state.outputs_passed is False
    assert [c.name for c in result.state.checks] == ["turn 0: refunded"]


def test_the_do_nothing_baseline_judges_every_turn_on_the_initial_state() -> None:
    untouched = {**SQLITE_CHECK, "name": "untouched", "equals": 0}
    passes = {"turns": [{"plans": [], "state_checks": [untouched]}, {"plans": [[REFUND]]}]}
    fails = {"turns": [{"plans": []}, {"plans": [[REFUND]], "state_checks": [SQLITE_CHECK]}]}
    outputs: list[dict[str, Any]] = [{"calls": []}, {"calls": [REFUND]}]
    assert scored("sqlite", passes, outputs).baselines["nothing"] is True
    assert scored("sqlite", fails, outputs).baselines["nothing"] is False
    said = {"turns": [{"plans": [], "required_outputs": ["x"]}]}
    assert scored("sqlite", said, [{"calls": [], "response": "x"}]).baselines["nothing"] is False
    # A plan goal: doing nothing meets it only where the plans change nothing.
    plan = {"turns": [{"plans": [[REFUND]], "goal_state": "plan"}]}
    assert scored("sqlite", plan, [{"calls": [REFUND]}]).baselines["nothing"] is False
    read = {"name": "get_order", "args": {"order_id": "order-77"}}
    idle = {"turns": [{"plans": [[read]], "goal_state": "plan"}]}
    assert scored("sqlite", idle, [{"calls": [read]}]).baselines["nothing"] is True


def test_a_conversation_without_outcome_keys_has_no_state_verdict() -> None:
    result = scored("sqlite", {"turns": [{"plans": [[REFUND]]}]}, [{"calls": [REFUND]}])
    assert result.state.passed is None
    assert result.state.outputs_passed is None
    assert result.turns[0].state is None
    assert "nothing" in result.baselines


def test_any_looks_in_that_turns_assistant_texts_only() -> None:
    keys = {
        "required_outputs_in": "any",
        "turns": [{"plans": [], "required_outputs": ["first"]}, {"plans": []}],
    }
    env, specs = backend("sqlite")
    case = make_case(keys, specs)
    transcript = {
        "id": "c",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "the first answer"},
            {"role": "assistant", "content": "more"},
            {"role": "user", "content": "and?"},
            {"role": "assistant", "content": "done"},
        ],
    }
    result = score_replayed(specs, case, parse_output(transcript), env)
    assert turn_outcomes(result) == [True, None]
    late = make_case(
        {**keys, "turns": [{"plans": []}, {"plans": [], "required_outputs": ["first"]}]}, specs
    )
    result = score_replayed(specs, late, parse_output(transcript), env)
    assert turn_outcomes(result) == [None, False]


def test_a_turns_plan_may_use_an_earlier_turns_label() -> None:
    look = {"id": "look", "name": "get_order", "args": {"order_id": "order-77"}}
    refund = {"name": "refund", "args": {"order_id": {"$ref": "look#/order_id"}, "amount": 12.5}}
    keys = {"turns": [{"plans": [[look]]}, {"plans": [[refund]], "goal_state": "plan"}]}
    outputs = [
        {
            "calls": [
                {
                    "name": "get_order",
                    "args": {"order_id": "order-77"},
                    "result": {"order_id": "order-77"},
                }
            ]
        },
        {"calls": [REFUND]},
    ]
    result = scored("sqlite", keys, outputs)
    assert turn_outcomes(result) == [None, True]


@pytest.mark.parametrize(
    ("name", "turn", "field"),
    [
        ("sqlite", {"plans": [], "goal_state": "nonsense"}, "turns[0].goal_state"),
        ("documents", {"plans": [], "goal_state": {"orders": []}}, "turns[0].goal_state"),
        ("sqlite", {"plans": [], "results_from_plan": 0}, "turns[0].results_from_plan"),
        ("documents", {"plans": [], "results_from_plan": -1}, "turns[0].results_from_plan"),
        ("sqlite", {"plans": [], "required_outputs": [""]}, "turns[0].required_outputs[0]"),
        ("sqlite", {"plans": [], "state_checks": []}, "turns[0].state_checks"),
        ("sqlite", {"plans": [], "outputs": ["x"]}, "turns[0].outputs"),
    ],
)
def test_a_broken_turn_outcome_key_is_an_input_error(
    name: str, turn: dict[str, Any], field: str
) -> None:
    with pytest.raises(CaseError) as error:
        scored(name, {"turns": [turn]}, [{"calls": []}])
    assert error.value.field == field


def test_results_from_plan_on_the_conversation_itself_is_refused() -> None:
    keys = {"results_from_plan": 0, "goal_state": "plan", "turns": [{"plans": []}]}
    with pytest.raises(CaseError) as error:
        scored("documents", keys, [{"calls": []}])
    assert error.value.field == "results_from_plan"


def test_the_report_gives_each_turns_state_and_checks() -> None:
    keys = {
        "turns": [
            {"plans": [[REFUND]], "state_checks": [SQLITE_CHECK]},
            {"plans": [], "goal_state": "plan"},
        ]
    }
    wrong = {"name": "refund", "args": {"order_id": "order-77", "amount": 10}}
    result = scored("sqlite", keys, [{"calls": [wrong]}, {"calls": []}])
    data = json.loads(json.dumps(case_to_json(result)))
    first, second = data["turns"]
    assert first["state_passed"] is False
    assert first["checks"] == [
        {"name": "refunded", "passed": False, "reason": first["checks"][0]["reason"]}
    ]
    assert first["state"]["calls"] == [
        {"call": 0, "name": "refund", "result": first["state"]["calls"][0]["result"]}
    ]
    assert second["state"]["goal"] == "plan"
    assert second["state_passed"] is False  # the plans leave refunded 12.5, the agent 10
    assert "checks" not in second
    assert data["state"]["checks"][0]["name"] == "turn 0: refunded"
    lines = case_detail(result)
    assert any(line.startswith("turn 0: state check 'refunded' failed") for line in lines)
    assert any(line.startswith("turn 1: state FAILED (goal: plan)") for line in lines)


def test_a_terminal_tool_ends_the_replay_for_later_turns() -> None:
    env = documents_env(terminal_tools=["transfer_to_human_agents"])
    specs = documents_specs()
    check = {"name": "balance", "path": "/users/u1/balance", "equals": 100}
    case = make_case({"turns": [{"plans": []}, {"plans": [], "state_checks": [check]}]}, specs)
    line = {
        "id": "c",
        "turns": [
            {"calls": [{"name": "transfer_to_human_agents", "args": {"summary": "s"}}]},
            {"calls": [{"name": "refund", "args": {"user_id": "u1", "amount": 5}}]},
        ],
    }
    result = score_replayed(specs, case, parse_output(line), env)
    state = result.turns[1].state
    assert state.passed is True  # the refund was not replayed
    assert state.not_replayed == 1
    assert result.state.not_replayed == 1


def test_judging_a_turn_replays_no_earlier_call_again() -> None:
    """Linear cost: each of the agent's calls is replayed once in the whole conversation."""
    env, specs = backend("documents")
    n = 20
    turns = [
        {
            "plans": [],
            "state_checks": [{"name": f"b{k}", "path": "/users/u1/balance", "equals": 100 + k + 1}],
        }
        for k in range(n)
    ]
    case = make_case({"turns": turns}, specs)
    line = {
        "id": "c",
        "turns": [{"calls": [{"name": "refund", "args": {"user_id": "u1", "amount": 1}}]}] * n,
    }
    trajectory = parse_output(line)
    result = score_replayed(specs, case, trajectory, env)
    assert turn_outcomes(result) == [True] * n  # replayed twice, the balance would be off
    assert len(result.state.calls) == n


@cache
def _plain_and_turns(keys_json: str, calls_json: str) -> tuple[Any, Any]:
    keys, calls = json.loads(keys_json), json.loads(calls_json)
    env, specs = backend("documents")
    plans = keys.pop("plans")
    plain = make_case({**keys, "plans": plans}, specs)
    turned = make_case({"turns": [{"plans": plans, **keys}]}, specs)
    output = parse_output({"id": "c", "calls": calls})
    single = score_replayed(specs, plain, output, env)
    conversation = score_replayed(specs, turned, output, env)
    return single.state, conversation.turns[0].state


AMOUNTS = st.sampled_from([5, 15, 60])
CALLS = st.lists(
    st.one_of(
        st.builds(lambda a: {"name": "refund", "args": {"user_id": "u1", "amount": a}}, AMOUNTS),
        st.just({"name": "cancel_order", "args": {"order_id": "#W1"}}),
        st.just({"name": "get_order", "args": {"order_id": "#W2"}}),
    ),
    max_size=3,
)


@settings(max_examples=40, deadline=None)
@given(plan=CALLS, calls=CALLS, results=st.booleans())
def test_a_one_turn_conversation_is_judged_as_the_plain_case(
    plan: list[dict[str, Any]], calls: list[dict[str, Any]], results: bool
) -> None:
    keys: dict[str, Any] = {"plans": [plan], "goal_state": "plan"}
    if results:
        keys["results_from_plan"] = 0
    keys["state_checks"] = [{"name": "st", "path": "/orders/#W1/status", "equals": "cancelled"}]
    single, turn = _plain_and_turns(json.dumps(keys), json.dumps(calls))
    assert turn.passed == single.passed
    assert turn.checks == single.checks
    assert turn.missing_results == single.missing_results
    assert (turn.diff.passed if turn.diff else None) == (
        single.diff.passed if single.diff else None
    )
    assert turn.calls == single.calls


@settings(max_examples=25, deadline=None)
@given(
    plan=st.lists(st.sampled_from(["order-77", "order-41", "order-12"]), max_size=2),
    made=st.lists(st.sampled_from(["order-77", "order-41", "order-12"]), max_size=2),
)
def test_a_one_turn_sqlite_conversation_is_judged_as_the_plain_case(
    plan: list[str], made: list[str]
) -> None:
    env, specs = backend("sqlite")

    def refunds(ids: list[str]) -> list[dict[str, Any]]:
        return [{"name": "refund", "args": {"order_id": i, "amount": 5}} for i in ids]

    check = {**SQLITE_CHECK, "equals": 5}
    plain = make_case(
        {"plans": [refunds(plan)], "goal_state": "plan", "state_checks": [check]}, specs
    )
    turned = make_case(
        {"turns": [{"plans": [refunds(plan)], "goal_state": "plan", "state_checks": [check]}]},
        specs,
    )
    output = parse_output({"id": "c", "calls": refunds(made)})
    single = score_replayed(specs, plain, output, env).state
    turn = score_replayed(specs, turned, output, env).turns[0].state
    assert (turn.passed, turn.checks, turn.calls) == (single.passed, single.checks, single.calls)


def test_check_conversation_is_importable_from_the_state_package() -> None:
    assert callable(check_conversation)


def test_a_stored_conversation_keeps_each_turns_outcome() -> None:
    """`show` rebuilds the turns' state verdicts from the stored JSON (`store.restore`)."""
    keys = {"turns": [{"plans": [[REFUND]], "state_checks": [SQLITE_CHECK]}, {"plans": []}]}
    wrong = {"name": "refund", "args": {"order_id": "order-77", "amount": 10}}
    result = scored("sqlite", keys, [{"calls": [wrong]}, {"calls": []}])
    back = result_from_json(json.loads(json.dumps(case_to_json(result))))
    assert [t.state and t.state.passed for t in back.turns] == [False, None]
    assert back.turns[0].state.checks == result.turns[0].state.checks
    assert any(line.startswith("turn 0: state check") for line in case_detail(back))


def test_a_plan_that_cannot_be_replayed_fails_the_turns_that_need_it_only() -> None:
    env, specs = documents_env(timeout=0.2), documents_specs()
    spin = {"name": "loop_forever", "args": {}}
    check = {"name": "pending", "path": "/orders/#W1/status", "equals": "pending"}
    turns = [
        {"plans": [[spin]], "goal_state": "plan"},
        {"plans": [], "state_checks": [check]},
        {"plans": [], "goal_state": "plan", "state_checks": [check]},
    ]
    case = make_case({"turns": turns}, specs)
    line = {"id": "c", "turns": [{"calls": []}, {"calls": []}, {"calls": []}]}
    result = score_replayed(specs, case, parse_output(line), env)
    first, second, third = (t.state for t in result.turns)
    assert first.passed is False
    assert first.error.startswith("turns[0].plans[0][0] (loop_forever): timed out")
    assert second.passed is True  # needs no plan: still judged
    assert third.passed is False
    assert third.checks[0].reason.startswith("not judged: replay stopped at turns[0]")
    assert result.state.error == first.error


def test_a_failed_plan_call_is_recorded_on_its_turn() -> None:
    env, specs = backend("documents")
    bad = {"name": "cancel_order", "args": {"order_id": "#W2"}}  # delivered: an error result
    turns = [{"plans": []}, {"plans": [[bad]], "goal_state": "plan"}]
    case = make_case({"turns": turns}, specs)
    result = score_replayed(
        specs, case, parse_output({"id": "c", "turns": [{"calls": []}] * 2}), env
    )
    state = result.turns[1].state
    assert state.passed is True
    assert [c.error for c in state.plan_replay.errors] == [
        "Error: non-pending order cannot be cancelled"
    ]
    assert "plan_errors" in state.to_json()


def _baselines(keys: dict[str, Any], turns: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The documents baseline as a run judges it (beside the agent's replay, or apart) and
    as `nothing_conversation` judges it alone."""
    env, specs = backend("documents")
    case = make_case(keys, specs)
    result = score_replayed(specs, case, parse_output({"id": "c", "turns": turns}), env)
    return result.baselines.get("nothing"), nothing_conversation(env, case, "cases.jsonl")


CANCEL = {"name": "cancel_order", "args": {"order_id": "#W1"}}


@pytest.mark.parametrize(
    ("description", "keys", "turns", "expected"),
    [
        (
            "the agent's verdict chose turn 0's second plan (nothing changed): the baseline is "
            "still judged on the first plan's state, which doing nothing does not reach",
            {"turns": [{"plans": [[CANCEL], []], "goal_state": "plan"}]},
            [{"calls": []}],
            False,
        ),
        (
            "every plan changes nothing: doing nothing meets each turn's plan state",
            {"turns": [{"plans": [[]], "goal_state": "plan"}, {"plans": [], "goal_state": "plan"}]},
            [{"calls": []}, {"calls": [CANCEL]}],
            True,
        ),
        (
            "turn 0 passes on the initial state, turn 1's plan changes it: the baseline fails "
            "at turn 1, whatever the agent did",
            {
                "turns": [
                    {"plans": [[]], "goal_state": "plan"},
                    {"plans": [[CANCEL]], "goal_state": "plan"},
                ]
            },
            [{"calls": [CANCEL]}, {"calls": []}],
            False,
        ),
        (
            "a check on the case itself that the initial state meets, the turns without keys",
            {
                "turns": [{"plans": [[CANCEL]]}],
                "state_checks": [
                    {"name": "pending", "path": "/orders/#W2/status", "equals": "delivered"}
                ],
            },
            [{"calls": [CANCEL]}],
            True,
        ),
        (
            "results_from_plan: doing nothing returns none of the plan's results",
            {"turns": [{"plans": [[CANCEL]], "results_from_plan": 0}]},
            [{"calls": [CANCEL]}],
            False,
        ),
    ],
)
def test_the_baseline_judged_beside_the_agent_is_the_one_judged_alone(
    description: str, keys: dict[str, Any], turns: list[dict[str, Any]], expected: bool
) -> None:
    assert _baselines(keys, turns) == (expected, expected), description


@pytest.mark.parametrize(
    "golden",
    [g for g in GOLDEN if g["backend"] == "documents"],
    ids=[g["description"] for g in GOLDEN if g["backend"] == "documents"],
)
def test_each_golden_documents_conversation_has_the_baseline_judged_alone(
    golden: dict[str, Any],
) -> None:
    found, alone = _baselines(golden["case"], golden["output"])
    assert found == alone
