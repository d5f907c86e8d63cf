"""`state_checks`: named tests of single values of the final state, on both back ends.

The golden cases are state_checks_golden.yaml (each with its description); the tests here
add the input errors, the do-nothing baseline, a case without output, and the report.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from document_envs import env as documents_env
from document_envs import specs as documents_specs
from toolscore import Case, SpecSet, parse_case, parse_output, parse_specs
from toolscore.cli.app import cli
from toolscore.errors import CaseError
from toolscore.state import Environment, StateVerdict, check_state, load_environment
from toolscore.state.checks import CheckResult, document_checks, parse_checks, sqlite_checks
from toolscore.state.unreplayed import missing_state, nothing_outcome
from toolscore.state.verdict import validate_case

HERE = Path(__file__).parent
EXAMPLE = HERE.parents[1] / "examples" / "support" / "env"
GOLDEN = yaml.safe_load((HERE / "state_checks_golden.yaml").read_text(encoding="utf-8"))


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
    line = {"id": case_id, "plans": [], "tags": [], **keys}
    return parse_case(line, specs, "cases.jsonl", 1)


def agent_calls(items: list[list[Any]]) -> Any:
    line = {"id": "c", "calls": [{"name": name, "args": args} for name, args in items]}
    return parse_output(line).calls


def judged(name: str, keys: dict[str, Any], calls: list[list[Any]] = ()) -> StateVerdict:  # type: ignore[assignment]
    env, specs = backend(name)
    return check_state(env, make_case(keys, specs), agent_calls(list(calls)), None)


@pytest.mark.parametrize("golden", GOLDEN, ids=[g["description"] for g in GOLDEN])
def test_golden_state_checks(golden: dict[str, Any]) -> None:
    verdict = judged(golden["backend"], golden["case"], golden["calls"])
    assert verdict.passed is golden["passed"], verdict.checks
    assert [c.name for c in verdict.checks] == [c["name"] for c in golden["case"]["state_checks"]]
    for result in verdict.checks:
        passed, reason = golden["checks"][result.name]
        assert result.passed is passed, result
        if reason is None:
            assert result.reason is None
        else:
            assert result.reason is not None
            assert reason in result.reason, result.reason
    if golden.get("goal_met"):
        assert verdict.diff is not None
        assert verdict.diff.passed
        assert verdict.goal == "plan"
    elif "goal_state" not in golden["case"]:
        assert verdict.goal is None
        assert verdict.diff is None


def test_a_case_with_checks_only_passes_on_its_checks_and_reports_them() -> None:
    keys = {"state_checks": [{"name": "st", "path": "/orders/#W1/status", "equals": "cancelled"}]}
    verdict = judged("documents", keys, [["cancel_order", {"order_id": "#W1"}]])
    assert verdict.passed is True
    assert verdict.outcome_passed is True
    found = verdict.to_json()
    assert found["checks"] == [{"name": "st", "passed": True}]
    assert found["goal"] is None
    assert found["passed"] is True
    assert [c.name for c in verdict.calls] == ["cancel_order"]


def test_a_case_with_neither_goal_nor_checks_is_not_judged_on_state() -> None:
    assert judged("sqlite", {}).passed is None


# --- input errors -------------------------------------------------------------------------

BAD_SQLITE = [
    ({"table": "ordres", "column": "status", "equals": 1}, "state_checks[0].table", "no table"),
    (
        {"table": "orders", "where": {"order": "x"}, "column": "status", "equals": 1},
        "state_checks[0].where.order",
        "has no column 'order'",
    ),
    ({"table": "orders", "column": "stat", "equals": 1}, "state_checks[0].column", "no column"),
    ({"table": "orders", "count": 0, "absent": True}, "state_checks[0].absent", "count: 0"),
    ({"table": "orders", "column": "status"}, "state_checks[0]", "exactly one test"),
    ({"table": "orders", "count": 1, "equals": 2, "column": "x"}, "state_checks[0]", "exactly one"),
    ({"table": "orders", "count": 1, "column": "status"}, "state_checks[0].column", "no column"),
    ({"table": "orders", "count": -1}, "state_checks[0].count", "whole number"),
    ({"table": "orders", "count": True}, "state_checks[0].count", "whole number"),
    ({"table": "orders", "colum": "x", "count": 1}, "state_checks[0].colum", "did you mean"),
    ({"table": "orders", "column": "total", "matches": 1}, "state_checks[0].rule", "needs the"),
    (
        {"table": "orders", "column": "total", "matches": 1, "rule": {"kind": "nmber"}},
        "state_checks[0].rule",
        "unknown kind",
    ),
    (
        {"table": "orders", "column": "total", "matches": 1, "rule": "text"},
        "state_checks[0].rule",
        "compares nothing",
    ),
    ({"table": "orders", "column": "total", "in": []}, "state_checks[0].in", "non-empty"),
    ({"table": "orders", "count": 1, "rule": "number"}, "state_checks[0].rule", "goes with"),
]


@pytest.mark.parametrize(("check", "field", "words"), BAD_SQLITE)
def test_an_ill_formed_sqlite_check_is_an_input_error_naming_the_field(
    check: dict[str, Any], field: str, words: str
) -> None:
    keys = {"state_checks": [{"name": "n", **check}]}
    with pytest.raises(CaseError) as validated:
        validate_case(sqlite_env(), make_case(keys, sqlite_specs()))
    assert validated.value.field == field
    assert words in str(validated.value)
    with pytest.raises(CaseError) as checked:
        judged("sqlite", keys)
    assert checked.value.field == field


@pytest.mark.parametrize(
    ("node", "field", "words"),
    [
        ([], "state_checks", "non-empty list"),
        ({"name": "x"}, "state_checks", "non-empty list"),
        (["x"], "state_checks[0]", "an object"),
        ([{"path": "/a", "absent": True}], "state_checks[0].name", "non-empty string"),
        ([{"name": " ", "path": "/a", "absent": True}], "state_checks[0].name", "non-empty"),
        (
            [
                {"name": "a", "path": "/a", "absent": True},
                {"name": "a", "path": "/b", "absent": True},
            ],
            "state_checks[1].name",
            "two checks are named 'a'",
        ),
        ([{"name": "a", "path": "a/b", "absent": True}], "state_checks[0].path", "JSON pointer"),
        ([{"name": "a", "path": "/a~2", "absent": True}], "state_checks[0].path", "JSON pointer"),
        ([{"name": "a", "path": "/a", "absent": False}], "state_checks[0].absent", "must be true"),
        ([{"name": "a", "path": "/a", "count": 1}], "state_checks[0].count", "unknown key"),
        ([{"name": "a", "table": "t", "absent": True}], "state_checks[0].table", "unknown key"),
    ],
)
def test_an_ill_formed_documents_check_is_an_input_error(node: Any, field: str, words: str) -> None:
    case = make_case({"state_checks": node}, documents_specs())
    with pytest.raises(CaseError) as error:
        validate_case(documents_env(), case)
    assert error.value.field == field
    assert words in str(error.value)


def test_a_table_a_setup_creates_is_checked_at_replay() -> None:
    keys = {
        "setup": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)",
        "state_checks": [{"name": "n", "table": "notes", "column": "bodyy", "equals": "x"}],
    }
    validate_case(sqlite_env(), make_case(keys, sqlite_specs()))  # the setup may create it
    with pytest.raises(CaseError, match="has no column 'bodyy'"):
        judged("sqlite", keys)


def test_an_unknown_table_exits_2_from_score(tmp_path: Path) -> None:
    case = {
        "id": "c",
        "tags": [],
        "plans": [],
        "state_checks": [{"name": "n", "table": "ordres", "count": 0}],
    }
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    (tmp_path / "out.jsonl").write_text('{"id": "c", "calls": []}\n', encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "score",
            "--specs", str(EXAMPLE / "tools.yaml"),
            "--cases", str(tmp_path / "cases.jsonl"),
            "--outputs", str(tmp_path / "out.jsonl"),
            "--env", str(EXAMPLE / "tools.yaml"),
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "state_checks[0].table" in result.output
    assert "no table 'ordres'" in result.output


# --- baselines and missing outputs --------------------------------------------------------


def test_the_do_nothing_baseline_evaluates_checks_on_the_untouched_state() -> None:
    untouched = {"name": "u", "table": "orders", "where": {"order_id": "order-77"},
                 "column": "refunded", "equals": 0}  # fmt: skip
    refunded = {**untouched, "name": "r", "equals": 12.5}
    env, specs = sqlite_env(), sqlite_specs()
    assert nothing_outcome(env, make_case({"state_checks": [untouched]}, specs, "a")) is True
    assert nothing_outcome(env, make_case({"state_checks": [refunded]}, specs, "b")) is False
    doc = {"name": "d", "path": "/orders/#W1/status", "equals": "pending"}
    case = make_case({"state_checks": [doc]}, documents_specs())
    assert nothing_outcome(documents_env(), case) is True


def test_the_do_nothing_verdict_kept_per_setup_tells_checks_apart() -> None:
    env, specs = sqlite_env(), sqlite_specs()
    one = {"name": "n", "table": "refunds", "count": 1}
    assert nothing_outcome(env, make_case({"state_checks": [one]}, specs, "x")) is True
    two = {**one, "count": 2}
    assert nothing_outcome(env, make_case({"state_checks": [two]}, specs, "y")) is False


def test_a_case_without_output_fails_every_check() -> None:
    checks = [{"name": "a", "table": "refunds", "count": 1}, {"name": "b", "table": "refunds",
              "count": 0}]  # fmt: skip
    verdict = missing_state(make_case({"state_checks": checks}, sqlite_specs()))
    assert verdict.passed is False
    assert [(c.name, c.passed) for c in verdict.checks] == [("a", False), ("b", False)]
    assert all(c.reason and "no output line" in c.reason for c in verdict.checks)


def test_a_stopped_setup_fails_every_check_saying_why() -> None:
    keys = {"setup": "ATTACH DATABASE ':memory:' AS x",
            "state_checks": [{"name": "a", "table": "refunds", "count": 1}]}  # fmt: skip
    verdict = judged("sqlite", keys)
    assert verdict.passed is False
    assert verdict.error is not None
    assert verdict.checks[0].passed is False
    assert verdict.checks[0].reason is not None
    assert "replay stopped" in verdict.checks[0].reason


# --- the entry points on a state ------------------------------------------------------------


def test_document_checks_judge_any_state_given() -> None:
    def fail(where: str, message: str) -> CaseError:
        return CaseError("<t>", message, field=where)

    checks = parse_checks([{"name": "x", "path": "/a/0", "equals": {"b": [1]}}], True, fail)
    assert document_checks({"a": [{"b": [1.0]}]}, checks) == (CheckResult("x", True),)
    assert document_checks({"a": []}, checks)[0].passed is False
    assert document_checks({"a": {"0": {"b": [1]}}}, checks)[0].passed is True  # a key "0"


def test_sqlite_checks_judge_a_connection_and_bind_values_not_sql() -> None:
    import sqlite3  # noqa: PLC0415

    def fail(where: str, message: str) -> CaseError:
        return CaseError("<t>", message, field=where)

    db = sqlite3.connect(":memory:")
    db.execute('CREATE TABLE "we""ird" ("c ol" TEXT, v INTEGER)')
    db.execute("""INSERT INTO "we""ird" VALUES ('x'' OR 1=1 --', 1), ('y', 2)""")
    node = [
        {"name": "q", "table": 'we"ird', "where": {"c ol": "x' OR 1=1 --"}, "column": "v",
         "equals": 1},
        {"name": "inject", "table": 'we"ird', "where": {"c ol": "' OR 1=1 --"}, "count": 0},
        {"name": "by_rowid", "table": 'we"ird', "where": {"rowid": 2}, "column": "c ol",
         "equals": "y"},
    ]  # fmt: skip
    results = sqlite_checks(db, parse_checks(node, False, fail), fail)
    assert [r.passed for r in results] == [True, True, True]


# --- the report: JSON, terminal, HTML --------------------------------------------------------

SHOUTY = "[bold red]boom[/] \x1b[31m"
"""A check name that rich would read as markup, holding a terminal escape."""


def _scored(tmp_path: Path, *extra: str) -> Any:
    refunded = {"table": "orders", "where": {"order_id": "order-77"}, "column": "refunded"}
    cases = [
        {"id": "ok", "tags": [], "plans": [],
         "state_checks": [{"name": "refunded", **refunded, "equals": 0}]},
        {"id": "bad", "tags": [], "plans": [],
         "state_checks": [{"name": "refunded", **refunded, "equals": 12.5},
                          {"name": SHOUTY, "table": "refunds", "count": 5}]},
        {"id": "gone", "tags": [], "plans": [],
         "state_checks": [{"name": "refunded", **refunded, "equals": 0}]},
    ]  # fmt: skip
    outputs = [{"id": "ok", "calls": []}, {"id": "bad", "calls": []}]
    for name, lines in (("cases.jsonl", cases), ("out.jsonl", outputs)):
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return CliRunner().invoke(
        cli,
        [
            "score",
            "--specs", str(EXAMPLE / "tools.yaml"),
            "--cases", str(tmp_path / "cases.jsonl"),
            "--outputs", str(tmp_path / "out.jsonl"),
            "--env", str(EXAMPLE / "tools.yaml"),
            "--json", str(tmp_path / "report.json"),
            *extra,
        ],
    )  # fmt: skip


def test_the_report_gives_each_case_s_checks_and_the_summary_per_check(tmp_path: Path) -> None:
    result = _scored(tmp_path)
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    by_id = {case["id"]: case for case in report["cases"]}
    assert by_id["ok"]["state"]["checks"] == [{"name": "refunded", "passed": True}]
    bad = by_id["bad"]["state"]["checks"]
    assert [(c["name"], c["passed"]) for c in bad] == [("refunded", False), (SHOUTY, False)]
    assert "expected 12.5, found 0.0" in bad[0]["reason"]
    assert by_id["gone"]["state"]["checks"][0]["passed"] is False  # no output: never a pass
    summary = report["summary"]
    assert summary["state_checks"]["refunded"]["n"] == 3
    assert summary["state_checks"]["refunded"]["passed"] == 1
    assert summary["state_checks"]["refunded"]["ci95"] is not None
    assert summary["state_checks_most_failed"] == [
        {"name": "refunded", "failed": 2, "n": 3},
        {"name": SHOUTY, "failed": 1, "n": 1},
    ]
    assert summary["state"]["state_accuracy"]["passed"] == 1


def test_the_terminal_prints_the_state_checks_table_with_names_inert(tmp_path: Path) -> None:
    output = _scored(tmp_path).output
    assert "State checks (failing most first)" in output
    assert "[bold red]boom[/]" in output  # printed as written, not read as markup
    assert "\x1b[31m" not in output
    assert output.index("refunded") < output.index("[bold red]boom[/]")
    assert "state check 'refunded' failed" in output


def test_the_html_report_shows_the_checks(tmp_path: Path) -> None:
    result = _scored(tmp_path, "--html", str(tmp_path / "report.html"))
    assert result.exit_code == 1, result.output
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'id="state-checks"' in page
    assert 'data-check="refunded"' in page
    assert "[bold red]boom[/]" in page
    assert "<b" not in page.split('id="state-checks"')[1].split("</table>")[0]  # escaped


def test_a_stored_summary_keeps_the_checks() -> None:
    from toolscore.scoring.tallies import OutcomeTally  # noqa: PLC0415
    from toolscore.store.restore import summary_from_json  # noqa: PLC0415

    tally = OutcomeTally()
    tally.add(True, StateVerdict(False, checks=(CheckResult("a", False, "r"),)))
    tally.add(True, StateVerdict(True, checks=(CheckResult("a", True),)))
    other = OutcomeTally()
    other.add(False, StateVerdict(True, checks=(CheckResult("b", True),)))
    tally.merge(other)
    assert tally.checks == {"a": [1, 2], "b": [1, 1]}
    assert [name for name, _ in tally.most_failed()] == ["a"]
    from toolscore.scoring.summary import Summary  # noqa: PLC0415

    data = Summary(outcomes=tally).to_dict()
    restored = summary_from_json(data).outcomes
    assert restored is not None
    assert restored.checks == tally.checks


def test_the_documented_examples_are_valid_checks() -> None:
    text = (HERE.parents[1] / "docs" / "formats.md").read_text(encoding="utf-8")
    section = text.split("### 9.7 State checks")[1].split("\n### ")[0]
    blocks = [part.split("```")[0] for part in section.split("```yaml\n")[1:]]
    assert len(blocks) == 2
    for block, name in zip(blocks, ("documents", "sqlite"), strict=True):
        keys = yaml.safe_load(block)
        env, specs = backend(name)
        validate_case(env, make_case(keys, specs))
        assert len(judged(name, keys).checks) == len(keys["state_checks"])
