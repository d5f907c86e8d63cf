"""`lint`'s gold checks: the golden cases under tests/lint_cases/, each linted alone.

A file holds a spec (`spec`, inline, or `spec_file`, a path from the repository root whose
environment block the check replays on, with `tool_timeout` when given) and cases, each a
case line without its id (`case`) and its `findings`, in order: `[severity, field, text]`,
`text` a part of the finding's message (the field null when the finding has none).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from toolscore.cli.app import cli, example_dir
from toolscore.core.model import Call, Case, Ref, Trajectory
from toolscore.core.plan_calls import plan_calls
from toolscore.errors import CaseError
from toolscore.lint.checks import Finding, lint_cases
from toolscore.run import environment
from toolscore.scoring.case import score_case
from toolscore.specs.loading import SpecSet, load_specs, parse_specs

ROOT = Path(__file__).parents[2]
CASES_DIR = Path(__file__).parents[1] / "lint_cases"


@cache
def golden_file(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CASES_DIR / name).read_text())
    return data


def goldens() -> list[Any]:
    found = []
    for path in sorted(CASES_DIR.glob("*.json")):
        for index, case in enumerate(golden_file(path.name)["cases"]):
            found.append(pytest.param(path.name, index, id=f"{path.stem}/{case['description']}"))
    return found


def linted(name: str, index: int, tmp_path: Path) -> list[Finding]:
    data = golden_file(name)
    case = data["cases"][index]
    if "spec" in data:
        specs, problems = parse_specs(data["spec"], "tools.yaml")
        assert specs is not None, problems
        env = None
    else:
        spec_file = str(ROOT / data["spec_file"])
        specs = load_specs(spec_file)
        env = environment(specs, spec_file, "spec", data.get("tool_timeout"))
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(orjson.dumps({"id": "golden", **case["case"]}) + b"\n")
    return lint_cases(specs, cases, env)


@pytest.mark.parametrize(("name", "index"), goldens())
def test_golden_lint_case(name: str, index: int, tmp_path: Path) -> None:
    expected = golden_file(name)["cases"][index]["findings"]
    found = linted(name, index, tmp_path)
    shown = [str(finding) for finding in found]
    assert len(found) == len(expected), shown
    for finding, (severity, field, text) in zip(found, expected, strict=True):
        assert finding.severity == severity, shown
        assert isinstance(finding.problem, CaseError), shown
        assert finding.problem.line == 1, shown
        assert finding.problem.field == field, shown
        assert text in finding.problem.message, shown
        read_error = golden_file(name)["cases"][index].get("read_error", False)
        if not read_error and (field is None or not field.endswith(".args.unit")):
            # a gold check's: it names the case (the cases reader's errors do not)
            assert finding.problem.message.startswith("case 'golden': "), shown


def test_every_golden_file_has_a_description_and_cases() -> None:
    for path in sorted(CASES_DIR.glob("*.json")):
        data = golden_file(path.name)
        assert data["description"].strip(), path
        assert all(case["description"].strip() for case in data["cases"]), path


SPEC = """
tools:
  get: {args: {id: exact}}
  put: {args: {id: exact, n: number, note: {kind: casefold, reason: case-insensitive}}}
"""


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def write(tmp_path: Path, cases: list[dict[str, Any]]) -> tuple[str, str]:
    spec, lines = tmp_path / "tools.yaml", tmp_path / "cases.jsonl"
    spec.write_text(SPEC)
    lines.write_bytes(b"".join(orjson.dumps(case) + b"\n" for case in cases))
    return str(spec), str(lines)


def test_strict_fails_on_a_warning_an_error_fails_anyway_and_unreadable_input_is_2(
    tmp_path: Path,
) -> None:
    optional = {"id": "optional", "plans": [[], [{"name": "get", "args": {"id": "1"}}]]}
    spec, cases = write(tmp_path, [optional])
    plain = run("lint", "--specs", spec, "--cases", cases)
    assert plain.exit_code == 0, plain.output
    assert "cases.jsonl:1: plans: case 'optional': passes without doing anything" in plain.stdout
    assert "0 errors, 1 warnings" in plain.stdout
    assert run("lint", "--specs", spec, "--cases", cases, "--strict").exit_code == 1
    lookup = {"id": "a", "name": "get", "args": {"id": "1"}}
    put = {"name": "put", "args": {"n": {"$ref": "a#"}, "id": {"$ref": "a#/id"}}}
    broken = {"id": "broken", "plans": [[lookup, put]]}
    spec, cases = write(tmp_path, [broken])
    failed = run("lint", "--specs", spec, "--cases", cases)
    assert failed.exit_code == 1
    assert "1 errors, 0 warnings" in failed.stdout
    assert run("lint", "--specs", spec, "--cases", str(tmp_path / "nope.jsonl")).exit_code == 2
    bad_env = tmp_path / "env.yaml"
    bad_env.write_text("environment: {database: missing.sql, tools: tools.py}\n")
    unreadable = run("lint", "--specs", spec, "--cases", cases, f"--env={bad_env}")
    assert unreadable.exit_code == 2
    assert "toolscore: error: " in unreadable.stderr
    assert run("lint", "--specs", spec, "--tool-timeout", "1").exit_code == 2  # needs --env


def test_lint_env_takes_the_spec_s_block_or_a_file_as_score_does(tmp_path: Path) -> None:
    directory = ROOT / "examples" / "support" / "env"
    spec, cases = str(directory / "tools.yaml"), str(directory / "cases.jsonl")
    own = run("lint", "--specs", spec, "--cases", cases, "--env")
    assert own.exit_code == 0, own.output
    other = tmp_path / "env.yaml"
    other.write_text(
        f"environment:\n  database: {directory / 'store.sql'}\n  tools: {directory / 'tools.py'}\n"
        "  ignore: {refunds: [created_at]}\n"
    )
    from_file = run("lint", "--specs", spec, "--cases", cases, "--env", str(other))
    assert from_file.exit_code == 0, from_file.output
    assert from_file.stdout == own.stdout
    assert "0 errors, 1 warnings" in own.stdout  # status-misread: a question, nothing written
    assert "case 'status-misread': the goal state is the initial state" in own.stdout


@pytest.mark.parametrize(
    ("spec", "cases", "env"),
    [
        ("support/tools.yaml", "support/cases.jsonl", False),
        ("support/env/tools.yaml", "support/env/cases.jsonl", False),
        ("support/env/tools.yaml", "support/env/cases.jsonl", True),
        ("transcripts/tools.yaml", "transcripts/cases.jsonl", False),
        ("transcripts/tools.yaml", "parquet/cases.parquet", False),
        ("support/tools.yaml", "inspect/cases.jsonl", False),
        ("support/tools.yaml", "inspect/refunds.eval", False),
    ],
)
def test_the_bundled_examples_lint_without_errors(spec: str, cases: str, env: bool) -> None:
    if cases.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    for root in (ROOT / "examples", example_dir().parent):
        if not (root / cases).exists():
            continue
        args = ["lint", "--specs", str(root / spec), "--cases", str(root / cases)]
        result = run(*args, *(["--env"] if env else []))
        assert result.exit_code == 0, result.output
        assert "\n0 errors, " in "\n" + result.stdout


def test_a_finding_in_a_parquet_cases_file_names_its_row(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    spec = tmp_path / "tools.yaml"
    source = (ROOT / "examples" / "transcripts" / "tools.yaml").read_text()
    spec.write_text(source.replace("amount: {kind: number, tol: 0.005,", "amount: {kind: integer,"))
    cases = ROOT / "examples" / "parquet" / "cases.parquet"
    result = run("lint", "--specs", str(spec), "--cases", str(cases))
    assert result.exit_code == 1, result.output
    assert (
        f"{cases}: row 1: plans[0][0].args.amount: expected value rejected by its own rule"
    ) in result.stdout


TOKENS = st.sampled_from(["a", "b", "0", "1", "12", "01", "x~1y", ""])
POINTERS = st.lists(TOKENS, max_size=3).map(lambda tokens: "".join(f"/{t}" for t in tokens))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(POINTERS, min_size=1, max_size=3), min_size=1, max_size=3))
def test_a_plan_of_exact_rules_made_with_stand_in_results_passes_its_own_case(
    reads: list[list[str]],
) -> None:
    """Whatever pointers the $refs read (keys, indexes, prefixes of one another), the
    stand-in results hold them all, and the plan made from them passes its own case."""
    names = [f"a{i}" for i in range(max(len(r) for r in reads))]
    specs = spec_of(
        {"get": {"args": {"id": "exact"}}, "put": {"args": dict.fromkeys(names, "exact")}}
    )
    plan: list[Call] = [Call("get", {"id": str(i)}, label=f"s{i}") for i in range(len(reads))]
    for i, pointers in enumerate(reads):
        args = {names[k]: Ref(f"s{i}", pointer) for k, pointer in enumerate(pointers)}
        plan.append(Call("put", args))
    case = Case("c", (tuple(plan),), linked=True)
    calls = plan_calls(case.plans[0])
    assert [c.name for c in calls[: len(reads)]] == ["get"] * len(reads)
    result = score_case(specs, case, Trajectory("c", calls))
    assert result.passed, result.mismatches


def spec_of(tools: dict[str, Any]) -> SpecSet:
    specs, problems = parse_specs({"tools": tools})
    assert specs is not None, problems
    return specs


def test_a_misspelt_turn_key_is_one_line_in_lint_and_refused_by_score(tmp_path: Path) -> None:
    case = {"id": "conv", "turns": [{"plans": []}, {"plans": [], "goal_sate": "plan"}]}
    spec, cases = write(tmp_path, [case])
    linted = run("lint", "--specs", spec, "--cases", cases)
    assert linted.exit_code == 1, linted.output
    line = "cases.jsonl:1: turns[1].goal_sate: unknown key (did you mean 'goal_state'?)"
    assert line in linted.stdout
    assert "1 errors, 0 warnings" in linted.stdout
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text('{"id": "conv", "turns": [{"calls": []}, {"calls": []}]}\n')
    scored = run("score", "--specs", spec, "--cases", cases, "--outputs", str(outputs))
    assert scored.exit_code == 2, scored.output
    assert line in scored.output
