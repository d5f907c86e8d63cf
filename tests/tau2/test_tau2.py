"""`toolscore import tau2-bench` and `import tau2-bench-results` on a hand-written fixture in
tau2-bench's layout (tests/tau2_fixture, see its README): the spec, environment and cases
written by each task's reward basis, `score --env` on them through the checkout's own
Environment (a dropped write, a wrong argument, a raising tool's change kept, typed
numbers, outputs with tau2's normalisation), the results converter, and one-line errors
naming the file and the field for bad inputs."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli
from toolscore.cli.bfcl import register
from toolscore.tau2.schema import rule

FIXTURE = Path(__file__).parents[1] / "tau2_fixture"
GOLDEN = FIXTURE / "golden"
TASKS = FIXTURE / "data" / "tau2" / "domains" / "retail" / "tasks.json"


@pytest.fixture(scope="module")
def group() -> click.Group:
    root = click.Group("toolscore")
    register(root)
    return root


def run(group: click.Group, *args: str) -> Result:
    return CliRunner().invoke(group, list(args))


def one_error_line(result: Result, *texts: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("toolscore: error: ")
    for text in texts:
        assert text in lines[0], lines[0]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, group: click.Group) -> Path:
    out = tmp_path_factory.mktemp("tau2") / "retail"
    result = run(
        group, "import", "tau2-bench", str(FIXTURE), "--domain", "retail", "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert (
        "7 cases (6 agent actions, 1 user actions left out; 3 with a goal state, "
        "1 with required outputs), 6 tools" in result.stdout
    )
    return out


def test_import_writes_the_golden_spec_and_cases(imported: Path) -> None:
    assert (imported / "tools.yaml").read_text() == (GOLDEN / "tools.yaml").read_text()
    assert (imported / "cases.jsonl").read_text() == (GOLDEN / "cases.jsonl").read_text()


def cases(imported: Path) -> dict[str, dict[str, Any]]:
    lines = (imported / "cases.jsonl").read_text().splitlines()
    return {case["id"]: case for case in map(json.loads, lines)}


def test_each_reward_basis_decides_what_is_checked(imported: Path) -> None:
    by_id = cases(imported)
    assert by_id["0"]["goal_state"] == "plan"
    assert by_id["0"]["tau2_nl_assertions"] == ["The agent confirms the cancellation."]
    assert "rubrics" not in by_id["0"]
    assert by_id["1"]["required_outputs"] == ["1093.34"]
    assert (by_id["1"]["required_outputs_in"], by_id["1"]["normalise"]) == ("any", "tau-bench")
    assert "required_outputs" not in by_id["2"]  # COMMUNICATE is not in task 2's basis
    assert by_id["2"]["tau2_communicate_info"] == ["Lisbon"]
    assert by_id["2"]["plans"] == [[{"name": "get_order_details", "args": {"order_id": "#W2"}}]]
    assert by_id["2"]["tau2_user_actions"] == [{"name": "check_device", "arguments": {}}]
    assert "goal_state" not in by_id["3"]  # ENV_ASSERTION, ACTION: no DB check
    assert by_id["3"]["tau2_env_assertions"][0]["func_name"] == "assert_order_status"
    assert "state_checks" not in by_id["3"]
    assert by_id["4"]["tau2_reward_basis"] == []
    assert "goal_state" not in by_id["5"]  # actions and env_assertions null: tau2 passes DB
    assert "goal_state" not in by_id["2"]  # an initial state toolscore does not set up
    assert by_id["2"]["tau2_initial_state"]["initialization_actions"][0]["func_name"] == (
        "set_quantity"
    )
    assert by_id["6"]["goal_state"] == "plan"  # an initial state of nulls sets nothing up
    assert "tau2_initial_state" not in by_id["6"]


def test_what_is_not_scored_is_counted_and_noted(imported: Path) -> None:
    provenance = json.loads((imported / "import.json").read_text())
    counts = provenance["counts"]
    assert counts["nl_assertions"] == 1
    assert counts["env_assertions_kept"] == 1
    assert counts["cases_unscored_communicate_info"] == 1
    assert counts["cases_action_in_reward_basis"] == 1
    assert counts["user_actions"] == 1
    assert counts["cases_with_initial_state"] == 1
    notes = "\n".join(provenance["notes"])
    assert "task 3: 1 env assertion(s) kept, not checked" in notes
    assert "assert_order_status" in notes
    assert "task 2: 1 user action(s) left out" in notes
    assert "task 5: DB is scored but actions and env_assertions are null" in notes
    assert "task 4: no evaluation_criteria" in notes
    assert "task 2: DB is scored but the task has an initial_state: no goal_state" in notes
    assert provenance["replayed_by_tau2"] == [
        "add_credit", "cancel_pending_order", "set_quantity", "tag_order"
    ]  # fmt: skip
    assert provenance["checkout"] == str(FIXTURE.resolve())


def test_the_generated_modules_call_the_checkout_by_path(imported: Path) -> None:
    tools = (imported / "tau2_tools.py").read_text()
    assert f"CHECKOUT = {str(FIXTURE.resolve())!r}" in tools
    assert "checkout.call_tool(state, 'cancel_pending_order', kwargs)" in tools
    assert "helper_not_a_tool" not in tools
    data = (imported / "tau2_data.py").read_text()
    assert "checkout.load_environment(CHECKOUT, 'retail')" in data
    for module in ("tau2_tools.py", "tau2_data.py"):
        ast.parse((imported / module).read_text())


def test_import_runs_nothing_of_the_checkout(group: click.Group, tmp_path: Path) -> None:
    """Every module of a copy of the fixture raises when run: the import reads them only."""
    copy = tmp_path / "checkout"
    shutil.copytree(FIXTURE, copy)
    for module in copy.rglob("*.py"):
        module.write_text(module.read_text() + "\nraise RuntimeError('ran')\n")
    out = tmp_path / "o"
    result = run(group, "import", "tau2-bench", str(copy), "--domain", "retail", "--out", str(out))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("annotation", "name", "expected"),
    [
        ("str", "order_id", "exact"),
        ("str", "summary", "text"),
        ("int", None, "integer"),
        ("float", None, "number"),
        ("bool", None, "boolean"),
        ("List[str]", None, {"kind": "list", "items": "exact"}),
        ("list[int]", None, {"kind": "list", "items": "integer"}),
        ("Optional[float]", None, "number"),
        ("float | None", None, "number"),
        ("None | bool", None, "boolean"),
        ("'int'", None, "integer"),
        ("int | str", None, "exact"),
        ("FlightInfo", None, "exact"),
        ("List[Passenger]", None, {"kind": "list", "items": "exact"}),
        ("Dict[str, Any]", None, "exact"),
        ("Literal['a', 'b']", None, "exact"),
    ],
)
def test_annotations_become_rules(annotation: str, name: str | None, expected: Any) -> None:
    assert rule(ast.parse(annotation, mode="eval").body, name) == expected


def test_no_annotation_is_exact() -> None:
    assert rule(None) == "exact"


def _calls(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, "args": args} for name, args in calls]


CANCEL = ("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"})
OUTPUTS: dict[str, tuple[str, dict[str, Any]]] = {
    # variant id: (the task it is a case of, its outputs line)
    "gold": ("0", {"calls": _calls(("get_order_details", {"order_id": "#W1"}), CANCEL)}),
    "dropped_write": ("0", {"calls": _calls(("get_order_details", {"order_id": "#W1"}))}),
    "wrong_argument": (
        "0", {"calls": _calls(("cancel_pending_order", {"order_id": "#W1", "reason": "x"}))}
    ),
    "refused_then_right": (
        "0", {"calls": _calls(("cancel_pending_order", {"order_id": "#W9", "reason": "x"}), CANCEL)}
    ),
    "extra_write": (
        "0", {"calls": _calls(CANCEL, ("set_quantity", {"order_id": "#W2", "quantity": 5}))}
    ),
    "float_said": (
        "1", {"calls": _calls(("set_quantity", {"order_id": "#W2", "quantity": 2.0})),
              "response": "It costs 1,093.34."}
    ),
    "int_said": (
        "1", {"calls": _calls(("set_quantity", {"order_id": "#W2", "quantity": 2})),
              "response": "It costs 1093.34."}
    ),
    "odd_comma_said": (  # only tau2's normalisation (every comma deleted) finds 1093.34 here
        "1", {"calls": _calls(("set_quantity", {"order_id": "#W2", "quantity": 2.0})),
              "response": "It costs 10,93.34."}
    ),
    "float_unsaid": (
        "1", {"calls": _calls(("set_quantity", {"order_id": "#W2", "quantity": 2.0})),
              "response": "It costs 1093.3."}
    ),
    "raises_and_stays": ("6", {"calls": _calls(("add_credit", {"user_id": "ana", "amount": 150}))}),
    "no_call_on_a_raising_plan": ("6", {"calls": []}),
    "unknown_tool": ("0", {"calls": _calls(CANCEL, ("no_such_tool", {}))}),
}  # fmt: skip


@pytest.fixture(scope="module")
def report(imported: Path) -> dict[str, dict[str, Any]]:
    by_id = cases(imported)
    with (
        open(imported / "variants.jsonl", "w") as cases_file,
        open(imported / "outputs.jsonl", "w") as out,
    ):
        for variant, (task, line) in OUTPUTS.items():
            cases_file.write(json.dumps({**by_id[task], "id": variant}) + "\n")
            out.write(json.dumps({"id": variant, **line}) + "\n")
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(imported / "tools.yaml"),
         "--cases", str(imported / "variants.jsonl"),
         "--outputs", str(imported / "outputs.jsonl"), "--env", "--workers", "1",
         "--json", str(imported / "report.json")],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return {c["id"]: c for c in json.loads((imported / "report.json").read_text())["cases"]}


def test_the_actions_reach_the_goal(report: dict[str, Any]) -> None:
    assert report["gold"]["state_passed"] is True
    assert report["refused_then_right"]["state_passed"] is True  # the refused call changed nothing


@pytest.mark.parametrize("variant", ["dropped_write", "wrong_argument", "extra_write"])
def test_perturbed_writes_fail_the_state(report: dict[str, Any], variant: str) -> None:
    assert report[variant]["state_passed"] is False
    assert report[variant]["state"]["hashes"]["goal"] != report[variant]["state"]["hashes"]["final"]


def test_numbers_are_typed_and_outputs_normalised_as_tau2(report: dict[str, Any]) -> None:
    assert report["float_said"]["state_passed"] is True
    assert report["float_said"]["state"]["outputs_passed"] is True  # "1,093.34" said
    assert report["int_said"]["state_passed"] is False  # 2 is not 2.0 in tau2's hash
    assert report["odd_comma_said"]["state"]["outputs_passed"] is True
    assert report["float_unsaid"]["state"]["missing_outputs"] == ["1093.34"]


def test_a_raising_tool_keeps_what_it_changed(report: dict[str, Any]) -> None:
    case = report["raises_and_stays"]
    assert case["state_passed"] is True  # the plan's call raised too, and kept its change
    assert "audit failed" in case["state"]["calls"][0]["error"]
    assert case["state"]["plan_errors"][0]["name"] == "add_credit"
    assert report["no_call_on_a_raising_plan"]["state_passed"] is False


def test_an_unknown_tool_changes_nothing(report: dict[str, Any]) -> None:
    assert report["unknown_tool"]["state_passed"] is True


def test_results_become_outputs_lines(group: click.Group, tmp_path: Path) -> None:
    out = tmp_path / "outputs.jsonl"
    result = run(
        group, "import", "tau2-bench-results", str(FIXTURE / "results.json"), "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert (
        "3 outputs (3 agent tool calls; 1 user tool calls left out; 1 ended early" in result.stdout
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["id"], line["trial"]) for line in lines] == [("0", 0), ("1", 0), ("1", 1)]
    first = lines[0]
    assert first["format"] == "openai-chat"
    assert first["reward"] == 1.0
    assert first["termination_reason"] == "user_stop"
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["assistant", "user", "user", "assistant", "tool", "tool", "assistant"]
    assert "tool_calls" not in first["messages"][2]  # the user's own device call
    calls = first["messages"][3]["tool_calls"]
    assert calls[1] == {
        "id": "c2",
        "type": "function",
        "function": {
            "name": "cancel_pending_order",
            "arguments": json.dumps({"order_id": "#W1", "reason": "no longer needed"}),
        },
    }
    assert first["messages"][5] == {"role": "tool", "tool_call_id": "c2", "content": "{}"}
    said = lines[2]["messages"][0]
    assert said["content"] == "Setting it; it costs 1,093.34."  # kept beside its call
    assert lines[1]["termination_reason"] == "max_steps"


def test_converted_results_score_with_the_text_beside_a_call(
    group: click.Group, imported: Path, tmp_path: Path
) -> None:
    out = tmp_path / "outputs.jsonl"
    result = run(
        group, "import", "tau2-bench-results", str(FIXTURE / "results.json"), "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(imported / "tools.yaml"), "--cases", str(imported / "cases.jsonl"),
         "--outputs", str(out), "--env", "--workers", "1", "--json", str(tmp_path / "r.json")],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    report = json.loads((tmp_path / "r.json").read_text())
    by_trial = {(c["id"], c.get("trial")): c for c in report["cases"]}
    gold = [c for c in report["cases"] if c["id"] == "0"]
    assert gold
    assert all(c["state_passed"] is True for c in gold)
    task_1 = [c for c in report["cases"] if c["id"] == "1"]
    assert any(c["state"]["outputs_passed"] is True for c in task_1), by_trial


def _tasks_with(tmp_path: Path, tasks: Any) -> Path:
    copy = tmp_path / "checkout"
    shutil.copytree(FIXTURE, copy)
    path = copy / "data" / "tau2" / "domains" / "retail" / "tasks.json"
    path.write_text(tasks if isinstance(tasks, str) else json.dumps(tasks))
    return copy


def _task(**criteria: Any) -> dict[str, Any]:
    return {
        "id": "9",
        "user_scenario": None,
        "evaluation_criteria": {"reward_basis": ["DB"], **criteria},
    }


BAD_TASKS = [
    ("{not json", "not JSON"),
    ({"tasks": []}, "must be a JSON list of tasks"),
    ([7], "[0]: a task must be an object"),
    ([{"id": ""}], "[0].id: must be a non-empty string"),
    ([_task(), _task()], "[1].id: task id '9' is given twice"),
    ([_task(actions={"a": 1})], "[0].evaluation_criteria.actions: must be a list of actions"),
    ([_task(actions=[{"name": "x"}])], "actions[0]"),
    ([_task(actions=[{"name": "cancel_pending_order", "arguments": []}])],
     "[0].evaluation_criteria.actions[0].arguments: must be an object"),
    ([_task(actions=[{"name": "cancel_pending_order", "arguments": {}, "requestor": "bot"}])],
     "actions[0].requestor: must be assistant or user"),
    ([_task(actions=[{"name": "refund_everything", "arguments": {}}])],
     "[0].evaluation_criteria.actions[0].name: task 9: action 0 names 'refund_everything'"),
    ([_task(reward_basis=["DB", "VIBES"])], "reward_basis[1]: unknown reward type 'VIBES'"),
    ([_task(reward_basis=None)], "reward_basis: must be a list of reward types"),
    ([_task(communicate_info=[3])], "communicate_info: must be a list of strings"),
    ([_task(nl_assertions="be nice")], "nl_assertions: must be a list of strings"),
    ([_task(env_assertions=[{"arguments": {}}])], "env_assertions: must be a list of objects"),
    ([{"id": "9", "evaluation_criteria": []}],
     "[0].evaluation_criteria: must be an object or null"),
]  # fmt: skip


@pytest.mark.parametrize(("tasks", "message"), BAD_TASKS)
def test_bad_tasks_are_one_line_naming_the_field(
    group: click.Group, tmp_path: Path, tasks: Any, message: str
) -> None:
    copy = _tasks_with(tmp_path, tasks)
    result = run(
        group, "import", "tau2-bench", str(copy), "--domain", "retail", "--out", str(tmp_path / "o")
    )
    one_error_line(result, "tasks.json", message)
    assert not (tmp_path / "o").exists()


def test_a_task_whose_action_is_no_tool_but_the_users_is_kept(
    group: click.Group, tmp_path: Path
) -> None:
    tasks = [
        _task(actions=[{"name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}])
    ]
    copy = _tasks_with(tmp_path, tasks)
    result = run(
        group, "import", "tau2-bench", str(copy), "--domain", "retail", "--out", str(tmp_path / "o")
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--domain", "banking"], "unknown domain 'banking'"),
        (["--domain", "airline"],
         "not a tau2-bench checkout: no src/tau2/domains/airline/tools.py"),
        (["--domain", "retail", "--tasks", "tasks_small.json"],
         "no task file data/tau2/domains/retail/tasks_small.json"),
        (["--domain", "retail", "--tasks", "../x.json"], "--tasks must name a .json file"),
    ],
)  # fmt: skip
def test_bad_arguments_are_one_line(
    group: click.Group, tmp_path: Path, args: list[str], message: str
) -> None:
    result = run(group, "import", "tau2-bench", str(FIXTURE), *args, "--out", str(tmp_path / "o"))
    one_error_line(result, message)


def test_a_tools_module_without_tools_is_refused(group: click.Group, tmp_path: Path) -> None:
    copy = tmp_path / "checkout"
    shutil.copytree(FIXTURE, copy)
    (copy / "src" / "tau2" / "domains" / "retail" / "tools.py").write_text("class T:\n    pass\n")
    result = run(
        group, "import", "tau2-bench", str(copy), "--domain", "retail", "--out", str(tmp_path / "o")
    )
    one_error_line(result, "tools.py", "no @is_tool method")


def _simulation(**fields: Any) -> dict[str, Any]:
    return {"id": "s", "task_id": "0", "trial": 0, "messages": [], **fields}


BAD_RESULTS = [
    ("[]", "must be an object with a simulations list"),
    ({"simulations": {}}, "must be an object with a simulations list"),
    ({"simulations": [3]}, "simulations[0]: must be an object"),
    ({"simulations": [_simulation(task_id=0)]},
     "simulations[0].task_id: must be a non-empty string"),
    ({"simulations": [_simulation(trial=-1)]}, "simulations[0].trial: must be an integer >= 0"),
    ({"simulations": [_simulation(messages="hi")]}, "simulations[0].messages: must be a list"),
    ({"simulations": [_simulation(messages=[{"role": "robot"}])]},
     "simulations[0].messages[0].role: must be one of"),
    ({"simulations": [_simulation(messages=[{"role": "assistant", "content": 3}])]},
     "simulations[0].messages[0].content: must be a string or null"),
    ({"simulations": [_simulation(messages=[
        {"role": "assistant", "tool_calls": [{"name": "x", "arguments": "{}"}]}])]},
     "simulations[0].messages[0].tool_calls[0].arguments: must be an object"),
    ({"simulations": [_simulation(messages=[
        {"role": "assistant", "tool_calls": [{"arguments": {}}]}])]},
     "simulations[0].messages[0].tool_calls[0].name: must be a string"),
    ({"simulations": [_simulation(messages=[{"role": "tool", "content": "x"}])]},
     "simulations[0].messages[0].id: must be the tool call's id"),
    ({"simulations": [_simulation(messages=[{"role": "multi_tool"}])]},
     "simulations[0].messages[0].tool_messages: must be a list"),
    ({"simulations": [_simulation(termination_reason=3)]},
     "simulations[0].termination_reason: must be a string"),
    ({"simulations": [_simulation(), _simulation()]},
     "simulations[1].trial: task 0 trial 0 is given twice"),
]  # fmt: skip


@pytest.mark.parametrize(("results", "message"), BAD_RESULTS)
def test_bad_results_are_one_line_naming_the_entry(
    group: click.Group, tmp_path: Path, results: Any, message: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(results if isinstance(results, str) else json.dumps(results))
    result = run(
        group, "import", "tau2-bench-results", str(path), "--out", str(tmp_path / "o.jsonl")
    )
    one_error_line(result, "results.json", message)
    assert not (tmp_path / "o.jsonl").exists()
