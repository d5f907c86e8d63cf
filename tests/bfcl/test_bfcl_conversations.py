"""`toolscore import bfcl` and `import bfcl-outputs` for multi-turn categories in the
conversation layout (one case per entry, a turn per BFCL turn), on the hand-written fixture
of tests/bfcl_multiturn: the converted files, the outputs lines, the calls' verdicts turn by
turn, the runtime's mark of a turn without calls, and under `--env` each turn's state and
each entry's verdict, the same as in the per-turn layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bfcl_runs import FIXTURE, invoke, scored_cases
from toolscore.bfcl.multiturn import EMPTY_TURN_TOOL
from toolscore.bfcl.multiturn_results import convert_multi_turn
from toolscore.bfcl.runtime import WITHOUT_CALLS, Runtime

MARK = EMPTY_TURN_TOOL


def _outputs(result: str, tmp_path: Path, *layout: str) -> list[dict[str, Any]]:
    outputs = tmp_path / "o.jsonl"
    invoke("import", "bfcl-outputs", str(FIXTURE / result), "--out", str(outputs), *layout)
    return [json.loads(line) for line in outputs.read_text().splitlines()]


def test_an_entry_whose_last_turn_has_no_call_is_marked_there_only() -> None:
    made = convert_multi_turn({"id": "e", "result": [[["f()"]], [["not a call("]]]}, "-", 1)
    assert made == [
        {"id": "e", "turns": [{"calls": [{"name": "f", "args": {}}]},
                              {"calls": [{"name": MARK, "args": {"turn": 1}}]}]},
    ]  # fmt: skip


def test_a_result_without_turns_writes_no_line_in_either_layout() -> None:
    assert convert_multi_turn({"id": "e", "result": []}, "-", 1) == []
    assert convert_multi_turn({"id": "e", "result": []}, "-", 1, per_turn=True) == []


def test_a_model_call_named_as_the_mark_is_kept_as_a_call_per_turn() -> None:
    mine = {"name": MARK, "args": {"turn": 0}}
    made = convert_multi_turn(
        {"id": "e", "result": [[[{MARK: {"turn": 0}}]], []]}, "-", 1, per_turn=True
    )
    assert made[1]["calls"] == [mine, {"name": MARK, "args": {"turn": 1}}]


def test_the_import_matches_the_golden_conversation_files(conversations: Path) -> None:
    for name in ("cases.jsonl", "tools.yaml"):
        golden = (FIXTURE / "golden" / f"conversation_{name}").read_text()
        assert (conversations / name).read_text() == golden, name
    cases = [json.loads(line) for line in (conversations / "cases.jsonl").read_text().splitlines()]
    assert [case["id"] for case in cases] == [f"multi_turn_base_{n}" for n in range(3)]
    empty = cases[1]["turns"][1]
    assert empty["plans"] == [[], [{"name": MARK, "args": {"turn": 1}}]]
    assert "goal_state" not in empty
    assert "results_from_plan" not in empty
    assert all(turn["results_from_plan"] == 0 for turn in cases[0]["turns"])
    assert cases[0]["turns"][1]["plans"] == [
        [{"name": "read_note", "args": {"title": "c"}}, {"name": "get_count", "args": {}}]
    ]  # the turn's own calls only


def test_outputs_are_one_line_per_entry_with_its_turns(tmp_path: Path) -> None:
    lines = _outputs("result_correct.json", tmp_path)
    assert [line["id"] for line in lines] == [f"multi_turn_base_{n}" for n in range(3)]
    assert [len(line["turns"]) for line in lines] == [2, 3, 1]
    assert lines[1]["turns"][1] == {"calls": [{"name": MARK, "args": {"turn": 1}}]}
    assert [call["name"] for call in lines[0]["turns"][1]["calls"]] == ["read_note", "get_count"]
    assert all("calls" not in line for line in lines)


def test_per_turn_outputs_keep_the_older_layout(tmp_path: Path) -> None:
    lines = _outputs("result_perturbed.json", tmp_path, "--per-turn")
    assert [line["id"] for line in lines] == [
        "multi_turn_base_0/turn-0", "multi_turn_base_0/turn-1", "multi_turn_base_1/turn-0",
        "multi_turn_base_1/turn-1", "multi_turn_base_1/turn-2", "multi_turn_base_2/turn-0",
    ]  # fmt: skip
    assert [call["name"] for call in lines[4]["calls"]] == ["increment", "reset"]
    assert lines[5]["calls"] == [{"name": MARK, "args": {"turn": 0}}]


def test_the_ground_truth_passes_every_turn_on_calls(conversations: Path) -> None:
    cases = scored_cases(conversations, FIXTURE / "result_correct.json", per_turn=False, env=False)
    assert {case["id"]: case["passed"] for case in cases} == {
        "multi_turn_base_0": True,
        "multi_turn_base_1": True,  # the marked turn without calls matches its second plan
        # a positional argument stays under "*" in outputs (bfcl-outputs has no docs to name
        # it): the calls differ, the state does not
        "multi_turn_base_2": False,
    }


def test_perturbed_results_fail_in_their_turn(conversations: Path) -> None:
    cases = scored_cases(
        conversations, FIXTURE / "result_perturbed.json", per_turn=False, env=False
    )
    failed = {case["id"]: case["first_failed_turn"] for case in cases if not case["passed"]}
    assert failed == {"multi_turn_base_0": 0, "multi_turn_base_1": 2, "multi_turn_base_2": 0}
    marked = next(case for case in cases if case["id"] == "multi_turn_base_1")["turns"][1]
    assert marked["passed"] is True
    assert marked["plan"] == 1  # the turn without calls, marked, as its second plan


class Counter:
    def __init__(self) -> None:
        self.count = 0

    def _load_scenario(self, config: dict[str, Any], long_context: bool = False) -> None:
        self.count = config.get("count", 0)

    def bump(self) -> str:
        self.count += 1
        return str(self.count)


@pytest.mark.parametrize("name", ["bump", "no_such_method", "kill"])
def test_any_call_ends_the_mark_of_a_turn_without_calls(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replayed on through a conversation, the mark of turn t must not make a later turn's
    state differ: the state differs only while the last turn replayed had no call."""
    runtime = Runtime("unused")
    monkeypatch.setattr(runtime, "_class", lambda _name: Counter)
    state: dict[str, Any] = {}
    runtime.setup(state, ["Counter"], {"Counter": {"count": 2}}, False)
    state[WITHOUT_CALLS] = 1  # what bfcl_turn_without_calls(turn=1) does
    assert runtime.snapshot(state)[WITHOUT_CALLS] == 1
    runtime.call(state, name, {})
    assert WITHOUT_CALLS not in runtime.snapshot(state)


def _entries(cases: list[dict[str, Any]]) -> dict[str, bool]:
    """Each entry's verdict on state: its conversation case's, or all its per-turn cases'."""
    verdicts: dict[str, bool] = {}
    for case in cases:
        entry = case["id"].split("/")[0]
        verdicts[entry] = verdicts.get(entry, True) and case["state_passed"] is True
    return verdicts


@pytest.mark.parametrize("result", ["result_correct.json", "result_perturbed.json"])
def test_both_layouts_give_each_entry_the_same_verdict_under_env(
    conversations: Path, converted: Path, result: str
) -> None:
    ours = scored_cases(conversations, FIXTURE / result, per_turn=False)
    older = scored_cases(converted, FIXTURE / result)
    assert _entries(ours) == _entries(older)
    assert set(_entries(ours).values()) == {result == "result_correct.json"}


def test_under_env_each_turn_with_calls_is_judged_after_it(conversations: Path) -> None:
    cases = scored_cases(conversations, FIXTURE / "result_perturbed.json", per_turn=False)
    turns = {case["id"]: [turn.get("state") for turn in case["turns"]] for case in cases}
    # increment(by=3): wrong after turn 0 already, and {"count": 7} never returned
    assert [state["passed"] for state in turns["multi_turn_base_0"]] == [False, False]
    # the marked turn without calls is not judged (no state key); get_count() dropped in turn 2
    base_1 = turns["multi_turn_base_1"]
    assert base_1[1] is None
    assert (base_1[0]["passed"], base_1[2]["passed"]) == (True, False)
    assert base_1[2]["missing_results"] == ['{"count": 0}']
    # no call where the ground truth has some: the mark is in the state
    empty = turns["multi_turn_base_2"][0]
    assert "/$turn_without_calls" in [change["path"] for change in empty["diff"]["changes"]]
