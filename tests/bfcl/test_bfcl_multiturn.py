"""`toolscore import bfcl` for multi-turn categories, on a hand-written fixture in BFCL's
layout whose two state classes are our own (tests/bfcl_multiturn/classes.py): the converted
files, and `score --env` verdicts on a correct and a perturbed result file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bfcl_runs import ANSWERS, DATA, FIXTURE, invoke, scored_cases
from toolscore.bfcl.multiturn import parse_call
from toolscore.bfcl.runtime import plain
from toolscore.cli.app import cli


def test_import_matches_the_golden_files(converted: Path) -> None:
    for name in ("cases.jsonl", "tools.yaml"):
        golden = (FIXTURE / "golden" / name).read_text()
        assert (converted / name).read_text() == golden, name
    module = (converted / "bfcl_env.py").read_text()
    assert "def read_note(state, **args):" in module
    assert "def bfcl_setup(state, classes, config, long_context=False):" in module


def state_verdicts(converted: Path, result: Path) -> dict[str, tuple[bool, list[object]]]:
    cases = scored_cases(converted, result)
    return {c["id"]: (c["state_passed"], c["state"]["missing_results"]) for c in cases}


def test_the_ground_truth_as_a_result_passes_every_turn(converted: Path) -> None:
    verdicts = state_verdicts(converted, FIXTURE / "result_correct.json")
    assert verdicts == {
        "multi_turn_base_0/turn-0": (True, []),
        "multi_turn_base_0/turn-1": (True, []),
        "multi_turn_base_1/turn-0": (True, []),
        "multi_turn_base_1/turn-2": (True, []),
        "multi_turn_base_2/turn-0": (True, []),  # a positional argument, as BFCL calls it
    }


def test_perturbed_results_fail_as_bfcl_fails_them(converted: Path) -> None:
    verdicts = state_verdicts(converted, FIXTURE / "result_perturbed.json")
    assert verdicts == {
        # increment(by=3): the state differs, and {"count": 7} was never returned
        "multi_turn_base_0/turn-0": (False, ['{"count": 7}']),
        "multi_turn_base_0/turn-1": (False, ['{"count": 7}']),
        "multi_turn_base_1/turn-0": (True, []),
        # get_count() dropped: the state is right, the response check fails
        "multi_turn_base_1/turn-2": (False, ['{"count": 0}']),
        # no call in a turn whose ground truth has calls
        "multi_turn_base_2/turn-0": (False, ['{"deleted": "a"}', "y"]),
    }
    report = json.loads((converted / "report.json").read_text())
    empty = next(c for c in report["cases"] if c["id"] == "multi_turn_base_2/turn-0")
    paths = [change["path"] for change in empty["state"]["diff"]["changes"]]
    assert "/$turn_without_calls" in paths


def test_an_empty_turn_whose_truth_is_empty_matches_no_case(tmp_path: Path) -> None:
    outputs = tmp_path / "o.jsonl"
    invoke(
        "import", "bfcl-outputs", str(FIXTURE / "result_correct.json"), "--out", str(outputs),
        "--per-turn",
    )  # fmt: skip
    lines = [json.loads(line) for line in outputs.read_text().splitlines()]
    marked = [line["id"] for line in lines if line["calls"][-1]["name"].startswith("bfcl_")]
    assert marked == ["multi_turn_base_1/turn-1"]
    assert len(lines[-2]["calls"]) == 3  # turn 2 holds the calls of turns 0..2, no marker


def test_calls_parse_with_positional_arguments() -> None:
    assert parse_call("sort('f.txt', lines=2)") == ("sort", {"*": ["f.txt"], "lines": 2})
    with pytest.raises(ValueError, match="not a literal"):
        parse_call("cd(folder=x)")


class Node:
    def __init__(self, name: str, parent: Node | None = None) -> None:
        self.name = name
        self.parent = parent
        self.children: dict[str, Node] = {}
        self._stamp = object()


def test_objects_snapshot_as_their_public_attributes() -> None:
    root = Node("/")
    root.children["a"] = Node("a", root)
    assert plain(root) == {
        "$class": "Node", "name": "/", "parent": None,
        "children": {"a": {"$class": "Node", "name": "a", "parent": {"$enclosing": "Node"},
                           "children": {}}},
    }  # fmt: skip
    assert plain({1: {3, 2}}) == {"1": [2, 3]}


def test_a_bad_results_from_plan_is_one_input_error(converted: Path) -> None:
    cases = converted / "cases.jsonl"
    lines = cases.read_text().splitlines()
    first = json.loads(lines[0])
    first["results_from_plan"] = -1
    cases.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    outputs = converted / "outputs.jsonl"
    invoke(
        "import", "bfcl-outputs", str(FIXTURE / "result_correct.json"), "--out", str(outputs),
        "--per-turn",
    )  # fmt: skip
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(converted / "tools.yaml"), "--cases", str(cases),
         "--outputs", str(outputs), "--env"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "results_from_plan" in result.stderr
    assert "an integer >= 0" in result.stderr


def test_a_multi_turn_entry_without_its_classes_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "BFCL_v4_multi_turn_base.json"
    function = {"name": "f", "parameters": {"type": "dict", "properties": {}}}
    entry = {"id": "multi_turn_base_0", "question": [[]], "function": [function]}
    data.write_text(json.dumps(entry) + "\n")
    result = CliRunner().invoke(cli, ["import", "bfcl", str(data), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "initial_config and involved_classes" in result.stderr


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        ("read_note(title=x)", "not a literal"),
        ("read_note('a', 'b')", "does not fit the doc of read_note"),
        ("get_count()", "no involved class has 'get_count'"),
    ],
)
def test_a_bad_ground_truth_call_is_one_line(tmp_path: Path, call: str, reason: str) -> None:
    answers = tmp_path / "answers.json"
    truth = {"id": "multi_turn_base_2", "ground_truth": [[call]]}
    lines = ANSWERS.read_text().splitlines()
    answers.write_text("\n".join([*lines[:2], json.dumps(truth)]) + "\n")
    docs = str(FIXTURE / "multi_turn_func_doc")
    args = ["import", "bfcl", str(DATA), str(answers), "--out", str(tmp_path / "o")]
    result = CliRunner().invoke(cli, [*args, "--func-docs", docs])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert f"{answers}:3: " in result.stderr
    assert reason in result.stderr
