"""`forbid` and `max_calls` end to end through `toolscore score` and `lint`: bad entries are
one-line input errors (exit 2), forbidden calls fail cases in the report JSON, JUnit and
OpenTelemetry events, under `--env` whatever the state says, and lint warns on a forbidden
tool no case exercises."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from toolscore.cli.app import cli

SPEC = """\
version: "1"
tools:
  lookup: {args: {id: exact}}
  delete: {args: {id: exact, mode: {kind: casefold, reason: "modes are case-insensitive"}}}
  wipe: {args: {}}
relax:
  - {allow: extra_calls, tools: [lookup, delete, wipe], reason: "extra calls are harmless"}
forbid:
  - {tool: delete, args: {mode: delete}, reason: "a hard delete cannot be undone"}
  - {tool: wipe, reason: "never asked for"}
"""
CASES: list[dict[str, Any]] = [
    {"id": "c1", "plans": [[{"name": "lookup", "args": {"id": "a"}}]]},
    {"id": "c2", "plans": [[{"name": "lookup", "args": {"id": "b"}}]], "max_calls": 1},
]
OUTPUTS = [
    {"id": "c1", "calls": [{"name": "lookup", "args": {"id": "a"}},
                           {"name": "delete", "args": {"id": "a", "mode": "DELETE"}}]},
    {"id": "c2", "calls": [{"name": "lookup", "args": {"id": "b"}},
                           {"name": "lookup", "args": {"id": "c"}}]},
]  # fmt: skip
ENV_EXAMPLE = Path(__file__).parents[2] / "examples" / "support" / "env"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def write(tmp_path: Path, spec: str = SPEC, cases: list[dict[str, Any]] = CASES) -> Path:
    (tmp_path / "tools.yaml").write_text(spec)
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in OUTPUTS))
    return tmp_path


def score(directory: Path, *extra: str) -> Result:
    return run(
        "score", "--specs", str(directory / "tools.yaml"), "--cases",
        str(directory / "cases.jsonl"), "--outputs", str(directory / "outputs.jsonl"), *extra,
    )  # fmt: skip


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_forbidden_calls_and_the_call_limit_in_every_report(tmp_path: Path) -> None:
    directory = write(tmp_path)
    report, junit, events = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "e.jsonl"
    result = score(directory, "--json", str(report), "--junit", str(junit),
                   "--emit-otel", str(events))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith(
        "critical failures: 1 forbidden call in 1 case (rate 50.0% of 2 cases"
    )
    data = json.loads(report.read_text())
    assert data["forbid"] == [
        {"tool": "delete", "args": {"mode": "delete"}, "reason": "a hard delete cannot be undone"},
        {"tool": "wipe", "args": {}, "reason": "never asked for"},
    ]
    c1, c2 = data["cases"]
    assert c1["passed"] is False
    assert c1["mismatches"] == [{
        "code": "forbidden_call", "call": 1, "plan_call": None, "path": "", "rule": None,
        "message": "call 1 to 'delete' is forbidden by the spec's forbid[0]: "
        "a hard delete cannot be undone",
    }]  # fmt: skip
    assert [m["code"] for m in c2["mismatches"]] == ["too_many_calls"]
    assert c2["mismatches"][0]["message"] == "2 calls made, at most 1 allowed"
    summary = data["summary"]
    assert summary["forbidden_calls"]["calls"] == 1
    assert summary["forbidden_calls"]["per_tool"] == {"delete": 1}
    assert summary["codes"] == {"forbidden_call": 1, "too_many_calls": 1}
    assert summary["baselines"]["lowercase"]["passed"] == 2  # other scorers are left as they are
    xml = junit.read_text()
    assert "forbidden_call" in xml
    assert "too_many_calls" in xml
    otel = events.read_text()
    assert "forbidden_call at call 1" in otel
    assert "too_many_calls" in otel


def test_a_workers_run_counts_forbidden_calls_as_one(tmp_path: Path) -> None:
    directory = write(tmp_path)
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert score(directory, "--json", str(one)).exit_code == 0
    assert score(directory, "--json", str(two), "--workers", "2").exit_code == 0
    assert one.read_bytes() == two.read_bytes()


def test_a_bad_spec_forbid_entry_is_one_error_line(tmp_path: Path) -> None:
    directory = write(tmp_path, SPEC.replace("{tool: wipe, reason", "{tool: wype, reason"))
    line = one_error_line(score(directory))
    assert "tools.yaml" in line
    assert "forbid[1].tool: 'wype' is not a tool in the spec" in line


def test_a_bad_case_forbid_entry_is_one_error_line(tmp_path: Path) -> None:
    cases = [{**CASES[0], "forbid": [{"name": "lookup", "args": {"idd": "a"}}]}]
    line = one_error_line(score(write(tmp_path, cases=cases)))
    assert "cases.jsonl:1: forbid[0].args.idd: tool 'lookup' has no argument 'idd'" in line


def test_a_bad_max_calls_is_one_error_line(tmp_path: Path) -> None:
    cases = [{**CASES[0], "max_calls": "3"}]
    line = one_error_line(score(write(tmp_path, cases=cases)))
    assert "cases.jsonl:1: max_calls: must be a positive integer, got '3'" in line


def test_a_plan_with_a_forbidden_call_is_one_error_line(tmp_path: Path) -> None:
    plans = [[{"name": "lookup", "args": {"id": "b"}}],
             [{"name": "delete", "args": {"id": "b", "mode": "Delete"}}]]  # fmt: skip
    cases: list[dict[str, Any]] = [CASES[0], {"id": "c2", "plans": plans}]
    line = one_error_line(score(write(tmp_path, cases=cases)))
    assert "cases.jsonl:2: plans[1][0]: the plan makes a call that the spec's forbid[0] " in line


def test_under_env_a_forbidden_call_fails_a_case_whose_state_passes(tmp_path: Path) -> None:
    directory = tmp_path / "env"
    shutil.copytree(ENV_EXAMPLE, directory)
    case = {"id": "look", "plans": [[{"name": "get_order", "args": {"order_id": "order-12"}}]],
            "goal_state": "plan", "forbid": [{"name": "list_orders"}]}  # fmt: skip
    calls = [{"name": "get_order", "args": {"order_id": "order-12"}},
             {"name": "list_orders", "args": {"customer_id": "cust-1"}}]  # fmt: skip
    (directory / "cases.jsonl").write_text(json.dumps(case) + "\n")
    (directory / "outputs.jsonl").write_text(json.dumps({"id": "look", "calls": calls}) + "\n")
    report = tmp_path / "r.json"
    result = score(directory, "--env", "--json", str(report))
    assert result.exit_code == 0, result.output
    entry = json.loads(report.read_text())["cases"][0]
    assert entry["state_passed"] is True
    assert entry["passed"] is False
    assert [m["code"] for m in entry["mismatches"]] == ["forbidden_call"]
    # Its outcome fails too (`outcome_passed`): the run lists it among the failing cases.
    assert "look (plan 0): calls failed" in result.stdout
    assert "forbidden_call call 1: call 1 to 'list_orders' is forbidden by the case's" in (
        result.stdout
    )
    allowed = {**case, "forbid": []}
    (directory / "cases.jsonl").write_text(json.dumps(allowed) + "\n")
    assert score(directory, "--env", "--json", str(report)).exit_code == 0
    assert json.loads(report.read_text())["cases"][0]["passed"] is True  # list_orders excused


def test_lint_warns_on_a_forbidden_tool_no_case_exercises(tmp_path: Path) -> None:
    directory = write(tmp_path)
    result = run("lint", "--specs", str(directory / "tools.yaml"),
                 "--cases", str(directory / "cases.jsonl"))  # fmt: skip
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stdout.splitlines() if line.startswith("warning")]
    assert len(warnings) == 2, result.stdout
    assert "forbid[0].tool: no case exercises forbidden tool 'delete'" in warnings[0]
    assert "forbid[1].tool: no case exercises forbidden tool 'wipe'" in warnings[1]
    exercised = [
        {**CASES[0], "forbid": [{"name": "wipe"}]},
        {"id": "c3", "plans": [[{"name": "delete", "args": {"id": "x", "mode": "soft"}}]]},
    ]
    write(tmp_path, cases=exercised)
    result = run("lint", "--specs", str(directory / "tools.yaml"),
                 "--cases", str(directory / "cases.jsonl"))  # fmt: skip
    assert "no case exercises" not in result.stdout, result.stdout
    assert run("lint", "--specs", str(directory / "tools.yaml")).stdout.endswith(
        "0 errors, 0 warnings\n"
    )  # without cases there is nothing to exercise
