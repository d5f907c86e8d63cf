"""`toolscore import tau-bench` and `import tau-bench-results` on a hand-written fixture in
tau-bench's layout (tests/taubench_fixture, see its README): the spec, environment and cases
written, `score --env` on them (error values, keep semantics, a terminal tool, typed numbers,
a failing plan recorded), the results converter, and one-line errors for bad inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli
from toolscore.cli.bfcl import register

FIXTURE = Path(__file__).parents[1] / "taubench_fixture"
GOLDEN = FIXTURE / "golden"


@pytest.fixture(scope="module")
def group() -> click.Group:
    root = click.Group("toolscore")
    register(root)
    return root


def run(group: click.Group, *args: str) -> Result:
    return CliRunner().invoke(group, list(args))


def one_error_line(result: Result, text: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("toolscore: error: ")
    assert text in lines[0], lines[0]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, group: click.Group) -> Path:
    out = tmp_path_factory.mktemp("taubench") / "retail"
    result = run(
        group, "import", "tau-bench", str(FIXTURE), "--domain", "retail", "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert "4 cases (5 annotated actions, 2 with required outputs, 1 without actions), 6 tools" in (
        result.stdout
    )
    return out


def test_import_writes_the_golden_spec_and_cases(imported: Path) -> None:
    assert (imported / "tools.yaml").read_text() == (GOLDEN / "tools.yaml").read_text()
    assert (imported / "cases.jsonl").read_text() == (GOLDEN / "cases.jsonl").read_text()
    provenance = json.loads((imported / "import.json").read_text())
    assert provenance["checkout"] == str(FIXTURE.resolve())
    assert provenance["counts"]["cases_with_outputs"] == 2


def test_the_generated_modules_call_the_checkout_by_path(imported: Path) -> None:
    tools = (imported / "taubench_tools.py").read_text()
    assert f"CHECKOUT = {str(FIXTURE.resolve())!r}" in tools
    assert "_TOOLS['cancel_pending_order'].invoke(state, **kwargs)" in tools
    data = (imported / "taubench_data.py").read_text()
    assert "checkout.load_data(CHECKOUT, 'retail')" in data


def test_import_runs_nothing_of_the_checkout(group: click.Group, tmp_path: Path) -> None:
    """Every module of a copy of the fixture raises when run: the import reads them only."""
    copy = tmp_path / "checkout"
    shutil.copytree(FIXTURE, copy)
    for module in copy.rglob("*.py"):
        module.write_text(module.read_text() + "\nraise RuntimeError('ran')\n")
    result = run(
        group, "import", "tau-bench", str(copy), "--domain", "retail", "--out", str(tmp_path / "o")
    )
    assert result.exit_code == 0, result.output


def _calls(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, "args": args} for name, args in calls]


CANCEL = ("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"})
TRANSFER = ("transfer_to_human_agents", {"summary": "wants a human"})
CREDIT = (
    "add_gift_card_credit",
    {"user_id": "ana_1", "payment_method_id": "gift_card_1", "amount": 150},
)
FLOAT = ("set_item_quantity", {"order_id": "#W3", "item_ids": ["300"], "quantity": 2.0})
INT = ("set_item_quantity", {"order_id": "#W3", "item_ids": ["300"], "quantity": 2})
OUTPUTS: dict[str, tuple[str, dict[str, Any]]] = {
    # variant id: (the task it is a case of, its outputs line)
    "gold": ("0", {"calls": _calls(("get_order_details", {"order_id": "#W1"}), CANCEL)}),
    "error_value_then_fixed": (
        "0",
        {"calls": _calls(("cancel_pending_order", {"order_id": "#W1", "reason": "bad"}), CANCEL)},
    ),
    "credit_raises_and_stays": ("0", {"calls": _calls(CANCEL, CREDIT)}),
    "transfer_first": ("0", {"calls": _calls(TRANSFER, CANCEL)}),
    "quantity_float": ("1", {"calls": _calls(FLOAT), "response": "It costs 1093.34."}),
    "quantity_int": ("1", {"calls": _calls(INT), "response": "It costs 1093.34."}),
    "failing_plan": ("2", {"calls": _calls(TRANSFER)}),
    "said": ("3", {"calls": [], "response": "It ships from LISBON."}),
    "not_said": ("3", {"calls": [], "response": "It ships from Porto."}),
}  # fmt: skip


@pytest.fixture(scope="module")
def report(imported: Path) -> dict[str, dict[str, Any]]:
    cases = {
        c["id"]: c for c in map(json.loads, (imported / "cases.jsonl").read_text().splitlines())
    }
    with (
        open(imported / "variants.jsonl", "w") as cases_file,
        open(imported / "outputs.jsonl", "w") as out,
    ):
        for variant, (task, line) in OUTPUTS.items():
            cases_file.write(json.dumps({**cases[task], "id": variant}) + "\n")
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


def test_the_annotated_actions_reach_the_goal(report: dict[str, dict[str, Any]]) -> None:
    assert report["gold"]["state_passed"] is True
    assert report["gold"]["state"]["hashes"]["goal"] == report["gold"]["state"]["hashes"]["final"]


def test_an_error_value_is_the_calls_error_and_changes_nothing(report: dict[str, Any]) -> None:
    case = report["error_value_then_fixed"]
    assert case["state"]["calls"][0]["error"] == "Error: invalid reason"
    assert case["state_passed"] is True


def test_a_raising_tool_keeps_what_it_changed(report: dict[str, Any]) -> None:
    case = report["credit_raises_and_stays"]
    assert "credit over 100" in case["state"]["calls"][1]["error"]
    assert case["state_passed"] is False  # the credit stayed, as in tau-bench
    assert case["state"]["hashes"]["goal"] != case["state"]["hashes"]["final"]


def test_replay_ends_at_the_terminal_tool(report: dict[str, Any]) -> None:
    case = report["transfer_first"]
    assert case["state"]["terminal"] == {
        "call": 0,
        "name": "transfer_to_human_agents",
        "not_replayed": 1,
    }
    assert case["state_passed"] is False  # the cancellation after it never happened


def test_numbers_are_typed(report: dict[str, Any]) -> None:
    assert report["quantity_int"]["state_passed"] is True
    assert report["quantity_float"]["state_passed"] is False  # 2.0 is not 2 in tau-bench's hash
    assert report["quantity_float"]["passed"] is True  # while the call's rule accepts it


def test_a_failing_plan_is_recorded_on_the_case(report: dict[str, Any]) -> None:
    case = report["failing_plan"]
    assert case["state"]["plan_errors"] == [
        {
            "call": 0,
            "name": "cancel_pending_order",
            "error": "Error: non-pending order cannot be cancelled",
        }
    ]
    assert case["state_passed"] is True  # the goal is what the plan reached: nothing changed


def test_required_outputs(report: dict[str, Any]) -> None:
    assert report["said"]["state"]["outputs_passed"] is True
    assert report["not_said"]["state"]["outputs_passed"] is False
    assert report["not_said"]["state"]["missing_outputs"] == ["Lisbon"]
    assert report["quantity_int"]["state"]["outputs_passed"] is True


def test_results_become_outputs_lines_with_their_trials(group: click.Group, tmp_path: Path) -> None:
    out = tmp_path / "outputs.jsonl"
    result = run(
        group, "import", "tau-bench-results", str(FIXTURE / "results.json"), "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert "3 outputs (4 tool calls; 1 assistant texts beside a tool call dropped" in result.stdout
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["id"], line["trial"], line["reward"]) for line in lines] == [
        ("0", 0, 1.0),
        ("0", 1, 0.0),
        ("1", 0, 0.0),
    ]
    assert all(line["format"] == "openai-chat" for line in lines)
    beside = lines[1]["messages"][2]
    assert beside["content"] is None
    assert beside["tool_calls"][0]["function"]["name"] == "cancel_pending_order"
    assert lines[2]["messages"][2]["content"] == "The desk costs 1,093.34."  # text alone stays


def test_results_saved_trial_by_trial_come_out_by_task(group: click.Group, tmp_path: Path) -> None:
    """tau-bench's run.py saves every task's trial 0, then every task's trial 1; toolscore
    reads a case's trials together, so the converter writes them by task."""
    entries = json.loads((FIXTURE / "results.json").read_text())
    trial_major = sorted(entries, key=lambda e: (e["trial"], e["task_id"]))
    assert [(e["task_id"], e["trial"]) for e in trial_major] == [(0, 0), (1, 0), (0, 1)]
    source = tmp_path / "run.json"
    source.write_text(json.dumps(trial_major))
    out = tmp_path / "outputs.jsonl"
    result = run(group, "import", "tau-bench-results", str(source), "--out", str(out))
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["id"], line["trial"]) for line in lines] == [("0", 0), ("0", 1), ("1", 0)]


def test_converted_results_read_as_transcripts(group: click.Group, tmp_path: Path) -> None:
    from toolscore.errors import OutputError  # noqa: PLC0415
    from toolscore.inputs.jsonl import parse_line  # noqa: PLC0415
    from toolscore.inputs.outputs import parse_output  # noqa: PLC0415

    out = tmp_path / "outputs.jsonl"
    run(group, "import", "tau-bench-results", str(FIXTURE / "results.json"), "--out", str(out))
    raw = out.read_bytes().splitlines()[2]
    trajectory = parse_output(parse_line(raw, "o", 3, OutputError), "o", 3)
    assert [(c.name, c.args) for c in trajectory.calls] == [
        ("set_item_quantity", {"order_id": "#W3", "item_ids": ["300"], "quantity": 2.0})
    ]
    args = trajectory.calls[0].args
    assert args is not None
    assert type(args["quantity"]) is float


OUT = ["--out", "{tmp}/o"]
RESULTS_OUT = ["--out", "{tmp}/o.jsonl"]
RETAIL = [str(FIXTURE), "--domain", "retail"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tau-bench", "{tmp}", "--domain", "retail", *OUT],
         "not a tau-bench checkout: no tau_bench/envs/retail/tools/__init__.py"),
        (["tau-bench", str(FIXTURE), "--domain", "shopping", *OUT], "unknown domain 'shopping'"),
        (["tau-bench", *RETAIL, "--split", "dev", *OUT], "the retail domain has no dev split"),
        (["tau-bench", *RETAIL, "--split", "val", *OUT], "unknown split 'val'"),
        (["tau-bench-results", "{tmp}/missing.json", *RESULTS_OUT], "cannot read"),
        (["tau-bench-results", "{tmp}/bad.json", *RESULTS_OUT], "not JSON"),
        (["tau-bench-results", "{tmp}/dict.json", *RESULTS_OUT], "must be a JSON list of results"),
        (["tau-bench-results", "{tmp}/id.json", *RESULTS_OUT],
         '[0].task_id: must be an integer >= 0, got "0"'),
        (["tau-bench-results", "{tmp}/traj.json", *RESULTS_OUT],
         "[0].traj: must be a list of messages"),
        (["tau-bench-results", "{tmp}/twice.json", *RESULTS_OUT],
         "[1].trial: task 0 trial 0 is given twice"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(
    group: click.Group, tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "bad.json").write_text('[{"task_id": 0,')
    (tmp_path / "dict.json").write_text('{"task_id": 0}')
    (tmp_path / "id.json").write_text('[{"task_id": "0", "trial": 0, "traj": []}]')
    (tmp_path / "traj.json").write_text('[{"task_id": 0, "trial": 0, "traj": {}}]')
    entry = {"task_id": 0, "trial": 0, "traj": []}
    (tmp_path / "twice.json").write_text(json.dumps([entry, entry]))
    result = run(group, "import", *[a.replace("{tmp}", str(tmp_path)) for a in args])
    one_error_line(result, message)
    assert not (tmp_path / "o").exists()
    assert not (tmp_path / "o.jsonl").exists()


# `import tau-bench --as-checks`: each task's goal written as state checks on the paths its
# annotated actions change (the `lint --suggest-checks` machinery, replayed at import time on
# the fixture checkout), and the verdicts those checks give beside the plan goal's on the
# same outputs (OUTPUTS above).


def _import(group: click.Group, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        group,
        ["import", "tau-bench", str(FIXTURE), "--domain", "retail", "--out", str(out), *extra],
    )


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory, group: click.Group) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("taubench_checks")
    found = {}
    for name, extra in (("plan", ()), ("checks", ("--as-checks",))):
        result = _import(group, base / name, *extra)
        assert result.exit_code == 0, result.output
        found[name] = base / name
    return found


def _case_lines(folder: Path) -> dict[str, dict[str, Any]]:
    lines = (folder / "cases.jsonl").read_text().splitlines()
    return {c["id"]: c for c in map(json.loads, lines)}


def test_as_checks_replaces_the_plan_goal_where_the_plan_changes_something(
    layouts: dict[str, Path],
) -> None:
    cases = _case_lines(layouts["checks"])
    assert "goal_state" not in cases["1"]
    assert cases["1"]["state_checks"] == [
        {"name": "orders/#W3/items/0/quantity", "path": "/orders/#W3/items/0/quantity", "equals": 2}
    ]
    assert cases["0"]["state_checks"][0]["path"] == "/orders/#W1/cancel_reason"
    # task 2's plan fails (a delivered order) before its terminal call, task 3 has no action:
    # both change nothing, so both keep the whole-data goal, counted and noted
    assert cases["2"]["goal_state"] == "plan"
    assert "state_checks" not in cases["2"]
    assert cases["3"]["goal_state"] == "plan"
    about = json.loads((layouts["checks"] / "import.json").read_text())
    assert about["counts"]["cases_as_checks"] == 2
    assert about["counts"]["cases_kept_plan_unchanged"] == 2
    assert about["counts"]["cases_kept_plan_not_checks"] == 0
    assert any("change nothing keep goal_state plan" in note for note in about["notes"])
    # the default layout is as before: no check, every goal the plan's
    assert all(c["goal_state"] == "plan" for c in _case_lines(layouts["plan"]).values())


def _outcomes(folder: Path) -> dict[str, bool]:
    cases = _case_lines(folder)
    with (
        open(folder / "variants.jsonl", "w") as cases_file,
        open(folder / "outputs.jsonl", "w") as out,
    ):
        for variant, (task, line) in OUTPUTS.items():
            cases_file.write(json.dumps({**cases[task], "id": variant}) + "\n")
            out.write(json.dumps({"id": variant, **line}) + "\n")
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(folder / "tools.yaml"), "--cases", str(folder / "variants.jsonl"),
         "--outputs", str(folder / "outputs.jsonl"), "--env", "--workers", "1",
         "--json", str(folder / "report.json")],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    report = json.loads((folder / "report.json").read_text())["cases"]
    return {
        c["id"]: c["state"]["passed"] is not False and c["state"]["outputs_passed"] is not False
        for c in report
    }


def test_checks_agree_with_the_plan_goal_but_where_they_forgive_an_unrelated_change(
    layouts: dict[str, Path],
) -> None:
    plan, checks = _outcomes(layouts["plan"]), _outcomes(layouts["checks"])
    differ = sorted(v for v in OUTPUTS if plan[v] != checks[v])
    assert differ == EXPECTED_DIFFERENCES, {v: (plan[v], checks[v]) for v in OUTPUTS}
    assert checks["gold"] is True
    for variant in differ:  # every difference: the checks pass what the whole data fails
        assert (plan[variant], checks[variant]) == (False, True)


EXPECTED_DIFFERENCES = ["quantity_float"]
"""The variants whose verdict the checks change: `quantity: 2.0` for 2 passes the check's
`equals: 2` (a check compares numbers by value), while the whole-data goal, under `numbers:
typed` as tau-bench's hash, tells 2.0 from 2 and fails it."""
