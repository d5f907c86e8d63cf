"""The command line, in-process: exit codes, one-line errors, and nothing half-written."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli, example_dir


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A writable copy of the bundled support-desk example."""
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    return target


def score_args(directory: Path, *extra: str) -> list[str]:
    return [
        "score",
        "--specs", str(directory / "tools.yaml"),
        "--cases", str(directory / "cases.jsonl"),
        "--outputs", str(directory / "outputs.jsonl"),
        *extra,
    ]  # fmt: skip


def test_demo_shows_the_three_scorers_side_by_side() -> None:
    result = run("demo")
    assert result.exit_code == 0, result.output
    assert "exact JSON 0/6 · rules 4/6 · lowercase 5/6" in result.stdout
    assert "'ORDER-77' does not equal 'order-77' exactly" in result.stdout
    assert "call to 'get_order' is not in the plan" in result.stdout
    assert "\nRelaxations in force: none\nLenient rules in force (" in result.stdout  # drawn


def test_score_writes_the_report_json(example: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run(*score_args(example, "--json", str(report)))
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["summary"]["passed"] == 4
    assert data["summary"]["baselines"]["exact"]["passed"] == 0
    assert data["summary"]["baselines"]["lowercase"]["passed"] == 5
    assert data["specs"]["version"] == "2026.11"
    assert data["specs"]["tools"] == {"get_order": 1, "refund": 3}
    assert [c["id"] for c in data["cases"] if not c["passed"]] == ["wrong-case-id", "thanks"]
    wrong = next(c for c in data["cases"] if c["id"] == "wrong-case-id")
    assert wrong["mismatches"][0]["path"] == "/order_id"
    assert wrong["mismatches"][0]["produced"] == "ORDER-77"
    assert "accuracy" in result.stdout
    assert "66.7%" in result.stdout


def test_json_to_stdout_is_only_json(example: Path) -> None:
    result = run(*score_args(example, "--json", "-"))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["summary"]["cases"] == 6
    assert "Metrics" in result.stderr


@pytest.mark.parametrize(("threshold", "code"), [("0.9", 1), ("0.6", 0)])
def test_fail_under(example: Path, threshold: str, code: int) -> None:
    assert run(*score_args(example, "--fail-under", threshold)).exit_code == code


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def test_bad_spec_names_file_tool_argument_and_suggests(example: Path) -> None:
    spec = example / "tools.yaml"
    spec.write_text(spec.read_text().replace("{kind: number, tol", "{kind: numbr, tol"))
    line = one_error_line(run(*score_args(example)))
    assert "tools.yaml" in line
    assert "tools.refund.args.amount" in line
    assert "did you mean 'number'" in line


def test_bad_cases_line_names_file_and_line(example: Path, tmp_path: Path) -> None:
    cases = example / "cases.jsonl"
    lines = cases.read_text().splitlines()
    lines[2] = lines[2][:-1]  # cut the closing brace
    cases.write_text("\n".join(lines) + "\n")
    report = tmp_path / "report.json"
    line = one_error_line(run(*score_args(example, "--json", str(report))))
    assert "cases.jsonl:3:" in line
    assert "not valid JSON" in line
    assert not report.exists()
    assert list(tmp_path.glob(".report.json*")) == []


def test_case_calling_an_unknown_tool_names_the_field(example: Path) -> None:
    cases = example / "cases.jsonl"
    cases.write_text(cases.read_text().replace('"name": "refund"', '"name": "refnud"', 1))
    line = one_error_line(run(*score_args(example)))
    assert "cases.jsonl:1: plans[0][0].name:" in line
    assert "'refnud'" in line


def test_late_bad_line_leaves_no_report(example: Path, tmp_path: Path) -> None:
    outputs = example / "outputs.jsonl"
    outputs.write_text(outputs.read_text() + '{"calls": []}\n')
    report = tmp_path / "report.json"
    line = one_error_line(run(*score_args(example, "--json", str(report))))
    assert "outputs.jsonl:7: id:" in line
    assert not report.exists()


def test_duplicate_case_id(example: Path) -> None:
    cases = example / "cases.jsonl"
    first = cases.read_text().splitlines()[0]
    cases.write_text(cases.read_text() + first + "\n")
    line = one_error_line(run(*score_args(example)))
    assert "cases.jsonl:7: id: duplicate case id 'default-omitted'" in line


def test_missing_file(example: Path) -> None:
    line = one_error_line(run(*score_args(example)[:-2], "--outputs", str(example / "nope.jsonl")))
    assert "nope.jsonl" in line
    assert "no such file" in line


def test_missing_spec_file(example: Path) -> None:
    args = score_args(example)
    args[2] = str(example / "nope.yaml")
    line = one_error_line(run(*args))
    assert "nope.yaml: cannot read" in line


def test_agent_junk_is_scored_not_an_error(example: Path, tmp_path: Path) -> None:
    outputs = example / "outputs.jsonl"
    outputs.write_text(
        outputs.read_text().replace(
            '"args": {"order_id": "order-13"}', '"args": "{\\"order_id\\": order-13"'
        )
    )
    report = tmp_path / "r.json"
    result = run(*score_args(example, "--json", str(report)))
    assert result.exit_code == 0, result.output
    case = next(c for c in json.loads(report.read_text())["cases"] if c["id"] == "parallel-swapped")
    assert [m["code"] for m in case["mismatches"]] == ["arguments_unparseable"]


def test_missing_output_is_counted(example: Path, tmp_path: Path) -> None:
    outputs = example / "outputs.jsonl"
    outputs.write_text("".join(outputs.read_text().splitlines(keepends=True)[1:]))
    report = tmp_path / "r.json"
    assert run(*score_args(example, "--json", str(report))).exit_code == 1  # a missing output
    data = json.loads(report.read_text())
    assert data["summary"]["missing_outputs"] == 1
    assert data["summary"]["missing_output_ids"] == ["default-omitted"]
    case = next(c for c in data["cases"] if c["id"] == "default-omitted")
    assert case["missing_output"] is True
    assert [m["code"] for m in case["mismatches"]] == ["missing_output"]


def test_lint_clean_example() -> None:
    directory = example_dir()
    result = run("lint", "--specs", str(directory / "tools.yaml"), "--cases",
                 str(directory / "cases.jsonl"))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "0 errors, 0 warnings" in result.stdout


def test_lint_finds_rejected_values_and_lenient_rules(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        "tools:\n"
        "  pay:\n"
        "    args:\n"
        "      who: casefold\n"
        "      amount: {kind: number, coerce: true, reason: the API parses strings}\n"
        "      unit: {kind: enum, values: [EUR, USD]}\n"
    )
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "a", "plans": [[{"name": "pay", "args": {"who": "x", "unit": "GBP"}}]]}\n'
        '{"id": "b", "plans": [[{"name": "pay", "args": {"amount": true}}]]}\n'
        '{"id": "c", "plans": [[{"name": "send", "args": {}}]]}\n'
        '{"id": "d", "plans": [[{"name": "pay", "args": {"who": {"$ref": "nope#/x"}}}]]}\n'
    )
    result = run("lint", "--specs", str(spec), "--cases", str(cases))
    assert result.exit_code == 1
    out = result.stdout
    assert "warning: " in out
    assert "tools.pay.args.who" in out
    assert "tools.pay.args.amount" not in out  # it gives a reason
    assert "cases.jsonl:1: plans[0][0].args.unit" in out
    assert "'GBP'" in out
    assert "cases.jsonl:2: plans[0][0].args.amount" in out
    assert "cases.jsonl:3: plans[0][0].name" in out
    assert "cases.jsonl:4: plans[0][0].args.who" in out
    assert "unknown label 'nope'" in out
    assert "4 errors, 1 warnings" in out
    assert run("lint", "--specs", str(spec), "--strict").exit_code == 1


def test_lint_names_a_rule_of_a_tools_list_where_it_is_in_the_json(tmp_path: Path) -> None:
    spec = tmp_path / "tools.json"
    tool = {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "x-compare": "casefold"}}}}  # fmt: skip
    spec.write_text(json.dumps([{"type": "function", "function": {"name": "ping"}}, tool]))
    result = run("lint", "--specs", str(spec))
    assert result.exit_code == 0, result.output
    assert (
        f"warning: {spec}: [1].parameters.properties.city.x-compare: casefold forgives "
        "differences: add a reason saying why that is safe"
    ) in result.stdout
    assert "tools.get_weather" not in result.stdout


def test_lint_reports_every_spec_problem(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        "tools:\n"
        "  pay:\n"
        "    args:\n"
        "      amount: {kind: number, tolerance: 0.1}\n"
        "      unit: {kind: enum, values: [EUR], aliases: {euro: EURO}}\n"
        "relax:\n"
        "  - {allow: extra_calls, tools: [pay]}\n"
    )
    result = run("lint", "--specs", str(spec))
    assert result.exit_code == 1
    assert "did you mean 'tol'" in result.stdout
    assert "tools.pay.args.unit" in result.stdout
    assert "relax[0].reason" in result.stdout
    assert "3 errors" in result.stdout


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert "toolscore" in result.stdout


def test_duplicate_output_id(example: Path) -> None:
    outputs = example / "outputs.jsonl"
    lines = outputs.read_text().splitlines()
    outputs.write_text("\n".join([*lines[:3], lines[0], *lines[3:]]) + "\n")
    line = one_error_line(run(*score_args(example)))
    assert "outputs.jsonl:4: id: duplicate output for case 'default-omitted'" in line


def test_outputs_in_another_order_give_the_same_report(example: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert run(*score_args(example, "--json", str(first))).exit_code == 0
    outputs = example / "outputs.jsonl"
    outputs.write_text("\n".join(reversed(outputs.read_text().splitlines())) + "\n")
    assert run(*score_args(example, "--json", str(second))).exit_code == 0
    assert json.loads(first.read_text())["cases"] == json.loads(second.read_text())["cases"]


def test_workers_give_the_same_report(example: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert run(*score_args(example, "--json", str(one))).exit_code == 0
    result = run(*score_args(example, "--json", str(two), "--workers", "2"))
    assert result.exit_code == 0, result.output
    assert one.read_bytes() == two.read_bytes()


def test_a_bad_case_found_by_a_worker_is_one_line(example: Path, tmp_path: Path) -> None:
    cases = example / "cases.jsonl"
    cases.write_text(cases.read_text().replace('"name": "refund"', '"name": "refnud"', 1))
    report = tmp_path / "r.json"
    line = one_error_line(run(*score_args(example, "--workers", "2", "--json", str(report))))
    assert "cases.jsonl:1: plans[0][0].name:" in line
    assert not report.exists()


def test_lint_reports_broken_data_flow(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text("tools:\n  get: {args: {id: exact}}\n  put: {args: {id: exact}}\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "cycle", "plans": [[{"id": "a", "name": "get", "args": {"id": {"$ref": "b#/x"}}},'
        ' {"id": "b", "name": "put", "args": {"id": {"$ref": "a#/x"}}}]]}\n'
        '{"id": "after", "plans": [[{"id": "a", "name": "get", "args": {}, "after": ["a"]}]]}\n'
        '{"id": "pointer", "plans": [[{"id": "a", "name": "get", "args": {"id": "1"}},'
        ' {"name": "put", "args": {"id": {"$ref": "a#x~2"}}}]]}\n'
        '{"id": "fine", "plans": [[{"id": "a", "name": "get", "args": {"id": "1"}},'
        ' {"name": "put", "args": {"id": {"$ref": "a#/x~1y"}}}]]}\n'
    )
    result = run("lint", "--specs", str(spec), "--cases", str(cases))
    assert result.exit_code == 1
    out = result.stdout
    assert "cases.jsonl:1: plans[0]: $ref/after links form a cycle: a -> b -> a" in out
    assert "cases.jsonl:2: plans[0]: $ref/after links form a cycle: a -> a" in out
    assert "cases.jsonl:3: plans[0][1].args.id: 'x~2' is not a JSON pointer" in out
    assert "cases.jsonl:4" not in out
    assert "3 errors, 0 warnings" in out


ENV_EXAMPLE = Path(__file__).parents[2] / "examples" / "support" / "env"


def env_args(*extra: str) -> list[str]:
    return score_args(ENV_EXAMPLE, "--env", *extra)


def test_env_adds_state_verdicts_beside_calls(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = run(*env_args("--json", str(report)))
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    state = data["summary"]["state"]
    assert state["calls_passed_state_failed"] >= 1
    assert state["calls_failed_state_passed"] >= 1
    twice = next(c for c in data["cases"] if c["id"] == "refund-twice")
    assert twice["passed"] is True
    assert twice["state_passed"] is False
    assert twice["state"]["diff"]
    assert data["environment"]["database"]
    assert "Outcomes" in result.stdout


def test_env_with_workers_gives_the_same_report(tmp_path: Path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert run(*env_args("--json", str(one))).exit_code == 0
    assert run(*env_args("--json", str(two), "--workers", "2")).exit_code == 0
    assert one.read_bytes() == two.read_bytes()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_store_holding_text_not_in_utf8_is_one_input_error(tmp_path: Path, workers: str) -> None:
    """Python reads such text as an OperationalError; taken for the agent's failed SQL it
    would fail a case, and uncaught it was a traceback. It is the store's: exit 2, no report."""
    folder = tmp_path / "env"
    shutil.copytree(ENV_EXAMPLE, folder)
    db = sqlite3.connect(folder / "store.db")
    db.executescript((folder / "store.sql").read_text(encoding="utf-8"))
    db.execute("UPDATE orders SET customer_id = CAST(X'41ff42' AS TEXT) WHERE rowid = 2")
    db.commit()
    db.close()
    spec = folder / "tools.yaml"
    spec.write_text(spec.read_text().replace("store.sql", "store.db"), encoding="utf-8")
    report = tmp_path / "r.json"
    line = one_error_line(
        run(*score_args(folder, "--env", "--json", str(report), "--workers", workers))
    )
    assert line.startswith(f"toolscore: error: {spec}: environment.database: case "), line
    assert "a table holds text that is not UTF-8" in line
    assert "column 'customer_id'" in line
    assert not report.exists()


def test_env_from_a_file_and_its_errors(tmp_path: Path) -> None:
    env_file = tmp_path / "env.yaml"
    env_file.write_text(f"database: {ENV_EXAMPLE / 'store.sql'}\ntools: {tmp_path / 'nope.py'}\n")
    line = one_error_line(run(*score_args(ENV_EXAMPLE, "--env", str(env_file))))
    assert "env.yaml" in line
    assert "environment.tools" in line
    env_file.write_text(f"database: {ENV_EXAMPLE / 'store.sql'}\ntoolz: x\n")
    line = one_error_line(run(*score_args(ENV_EXAMPLE, "--env", str(env_file))))
    assert "did you mean 'tools'" in line


def test_env_needs_an_environment(tmp_path: Path) -> None:
    line = one_error_line(run(*score_args(example_dir(), "--env")))
    assert "no environment block" in line


def test_replay_prints_outcomes_and_the_diff() -> None:
    args = ["replay", "--specs", str(ENV_EXAMPLE / "tools.yaml"), "--outputs",
            str(ENV_EXAMPLE / "outputs.jsonl"), "--case", "refund-twice"]  # fmt: skip
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert "call 1 refund:" in result.stdout
    assert "changes from the initial state:" in result.stdout
    result = run(*args, "--cases", str(ENV_EXAMPLE / "cases.jsonl"))
    assert "state FAILED" in result.stdout
    assert one_error_line(run(*args[:-1], "nope")).endswith("no output for case 'nope'")
