"""Required outputs that name what the agent's calls returned (`$ref`, `$result`).

Golden cases as data under answers/: `recorded.json` is scored without `--env` (the recorded
results decide), `replayed.json` with the support example's environment and without it (the
replayed results decide under `--env`). The number finder is checked against every number
`format` writes; the entries' validation is in the golden files (`load_error`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from toolscore.core.answers import (
    NO_CALLS,
    ResultRef,
    ScoredCalls,
    missing_ref_outputs,
    numbers_in,
    parse_required_outputs,
)
from toolscore.core.model import Call, Case
from toolscore.errors import CaseError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_replayed
from toolscore.specs.loading import SpecSet, parse_specs
from toolscore.state import Environment, load_environment
from toolscore.state.outputs import normalise_text
from toolscore.state.unreplayed import nothing_outcome

HERE = Path(__file__).parent / "answers"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support" / "env"


def _golden(name: str) -> list[Any]:
    data = json.loads((HERE / name).read_text(encoding="utf-8"))
    return [pytest.param(case, id=case["description"]) for case in data["cases"]]


def _specs(data: dict[str, Any]) -> SpecSet:
    specs, errors = parse_specs(data, "tools.yaml")
    assert specs is not None, errors
    return specs


RECORDED_SPEC = _specs(json.loads((HERE / "recorded.json").read_text(encoding="utf-8"))["spec"])


def _case(data: dict[str, Any], specs: SpecSet) -> Case:
    return parse_case({"id": "c", **data}, specs, "cases.jsonl", 1)


@pytest.fixture(scope="module")
def example() -> tuple[SpecSet, Environment]:
    specs = _specs(yaml.safe_load((EXAMPLE / "tools.yaml").read_text(encoding="utf-8")))
    assert specs.environment is not None
    env = load_environment(specs.environment, EXAMPLE, str(EXAMPLE / "tools.yaml"))
    assert isinstance(env, Environment)
    return specs, env


@pytest.mark.parametrize("golden", _golden("recorded.json"))
def test_recorded_results(golden: dict[str, Any]) -> None:
    if "load_error" in golden:
        with pytest.raises(CaseError) as caught:
            _case(golden["case"], RECORDED_SPEC)
        assert caught.value.field == golden["load_error"]["field"]
        assert golden["load_error"]["message"] in str(caught.value)
        return
    case = _case(golden["case"], RECORDED_SPEC)
    trajectory = parse_output({"id": "c", **golden["output"]})
    result = score_replayed(RECORDED_SPEC, case, trajectory)
    state = result.state
    assert state is not None
    assert (state.passed, state.outputs_passed) == (None, golden["outputs_passed"])
    assert list(state.missing_outputs) == golden["missing"]
    assert state.to_json()["missing_outputs"] == golden["missing"]
    assert result.baselines["nothing"] is False  # an agent that says nothing carries nothing


@pytest.mark.parametrize("golden", _golden("replayed.json"))
def test_replayed_and_recorded_results(
    example: tuple[SpecSet, Environment], golden: dict[str, Any]
) -> None:
    specs, env = example
    case = _case(golden["case"], specs)
    trajectory = parse_output({"id": "c", **golden["output"]})
    for mode, environment in (("env", env), ("recorded", None)):
        state = score_replayed(specs, case, trajectory, environment).state
        expected = golden[mode]
        assert state is not None, mode
        assert state.outputs_passed is expected["outputs_passed"], mode
        assert list(state.missing_outputs) == expected["missing"], mode
        if "state_passed" in expected and environment is not None:
            assert state.passed is expected["state_passed"]
    assert nothing_outcome(env, case) is False


def test_a_case_without_an_output_line_misses_every_reference() -> None:
    plans = [[{"id": "look", "name": "lookup", "args": {"account": "a"}}]]
    required = ["EUR", {"$ref": "look#/balance"}]
    case = _case({"plans": plans, "required_outputs": required}, RECORDED_SPEC)
    trajectory = parse_output({"id": "c", "calls": []})._replace(missing=True)
    state = score_replayed(RECORDED_SPEC, case, trajectory).state
    assert state is not None
    assert state.outputs_passed is False
    assert state.missing_outputs == ("EUR", '{"$ref": "look#/balance"}')


def test_a_case_without_required_outputs_gets_no_state_without_env() -> None:
    case = _case({"plans": [], "tags": []}, RECORDED_SPEC)
    result = score_replayed(RECORDED_SPEC, case, parse_output({"id": "c", "calls": []}))
    assert result.state is None
    assert result.baselines["nothing"] is True


def _fail(where: str, message: str) -> ValueError:
    return ValueError(f"{where}: {message}")


def test_missing_ref_outputs_checks_one_turn_alone() -> None:
    """The per-turn entry point: texts and calls in, the missing references out."""
    (ref,) = parse_required_outputs([{"$ref": "look#/n"}], {"look"}, None, _fail)
    assert isinstance(ref, ResultRef)
    plan = (Call("lookup", {}, label="look"),)
    calls = (Call("lookup", {}, result={"n": 1205}),)
    scored = ScoredCalls(calls, (0,), ((0, 0),), plan)
    forms = {"of_value": normalise_text, "of_text": normalise_text}
    assert missing_ref_outputs([ref], ["it is 1,205"], scored, **forms) == ()
    assert missing_ref_outputs([ref], ["it is 1,250"], scored, **forms) == (
        '{"$ref": "look#/n"} (held 1205)',
    )
    assert missing_ref_outputs([ref], ["1205"], NO_CALLS, **forms) == (
        '{"$ref": "look#/n"} (no call of the agent stands for look)',
    )
    # one turn's texts only: a value said in another turn is not in this one
    assert missing_ref_outputs([ref], [], scored, **forms) == ('{"$ref": "look#/n"} (held 1205)',)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("1,234,567.50 EUR", [1234567.5]),
        ("-3 and +4 and \u22125", [-3, 4, -5]),
        ("on 2024-03-05", [2024, 3, 5]),  # a hyphen after a digit is no sign
        ("x-5", [5]),
        ("1,2345 and 1234,567", [1, 2345, 1234, 567]),  # not thousands groups
        ("1,234,5678", [1234, 5678]),
        ("1.5e+20, 1e-05, 3em, 2e", [1.5e20, 1e-05, 3, 2]),
        ("\uff11\uff12\uff13", [123]),  # full-width digits, read after NFKC
        ("end 7.", [7]),
        ("v1.2.3", [1.2, 3]),
        ("9" * 5000, [float("9" * 5000)]),
    ],
)
def test_numbers_in_text(text: str, numbers: list[float]) -> None:
    assert numbers_in(text) == numbers


_FORMATS = ("", ",", ".2f", ",.2f", ".3f", ",.1f", "e", ".0f", ",.0f")


@given(
    st.one_of(
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
    st.sampled_from(_FORMATS),
    st.sampled_from(("", "Total: ", "x=", "(", "$")),
    st.sampled_from(("", " EUR", ".", ")", ", then 7")),
)
def test_every_number_format_writes_is_found(x: float, spec: str, before: str, after: str) -> None:
    written = format(x, spec)
    plain = written.replace(",", "")
    value = int(plain) if plain.lstrip("-").isdigit() else float(plain)
    assert any(n == value for n in numbers_in(before + written + after)), written


def _turn_outcomes(result: Any) -> list[dict[str, Any] | None]:
    return [
        None
        if turn.state is None
        else {
            "outputs_passed": turn.state.outputs_passed,
            "missing": list(turn.state.missing_outputs),
        }
        for turn in result.turns
    ]


@pytest.mark.parametrize("golden", _golden("conversations.json"))
def test_conversation_outputs_from_recorded_results(golden: dict[str, Any]) -> None:
    if "load_error" in golden:
        with pytest.raises(CaseError) as caught:
            _case(golden["case"], RECORDED_SPEC)
        assert caught.value.field == golden["load_error"]["field"]
        assert golden["load_error"]["message"] in str(caught.value)
        return
    case = _case(golden["case"], RECORDED_SPEC)
    trajectory = parse_output({"id": "c", **golden["output"]})
    result = score_replayed(RECORDED_SPEC, case, trajectory)
    assert _turn_outcomes(result) == golden["turns"]
    state = result.state
    assert state is not None
    assert state.outputs_passed is golden["outputs_passed"]
    if "case_missing" in golden:
        assert list(state.missing_outputs) == golden["case_missing"]
    assert result.baselines["nothing"] is False


@pytest.mark.parametrize("golden", _golden("conversations_replayed.json"))
def test_conversation_outputs_replayed_and_recorded(
    example: tuple[SpecSet, Environment], golden: dict[str, Any]
) -> None:
    specs, env = example
    case = _case(golden["case"], specs)
    trajectory = parse_output({"id": "c", **golden["output"]})
    for mode, environment in (("env", env), ("recorded", None)):
        result = score_replayed(specs, case, trajectory, environment)
        assert _turn_outcomes(result) == golden[mode]["turns"], mode


def test_a_conversation_without_an_output_line_misses_every_turns_reference() -> None:
    look = {"id": "look", "name": "lookup", "args": {"account": "a"}}
    turns = [{"plans": [[look]]}, {"plans": [], "required_outputs": [{"$ref": "look#/balance"}]}]
    case = _case({"turns": turns}, RECORDED_SPEC)
    trajectory = parse_output({"id": "c", "calls": []})._replace(missing=True)
    result = score_replayed(RECORDED_SPEC, case, trajectory)
    assert _turn_outcomes(result) == [
        None,
        {"outputs_passed": False, "missing": ['{"$ref": "look#/balance"}']},
    ]
