"""The pytest plugin, run by pytest itself (pytester): cases files collected as tests, the
`toolscore_specs` fixture, `assert_tool_calls`, and the entry point that registers it."""

from __future__ import annotations

import json
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml.nodes  # noqa: F401 - see below

from toolscore import load_specs, read_cases, read_outputs, score
from toolscore.integrations import pytest_plugin
from toolscore.report.cells import interval
from toolscore.report.terminal import metric_rows
from toolscore.stats.intervals import wilson

pytest_plugins = ["pytester"]
# pytester's in-process runs forget the modules first imported during a run; PyYAML, which
# toolscore imports lazily, must outlive them (a new copy breaks the loader's node classes).

PLUGIN = ("-p", "toolscore.integrations.pytest_plugin")
ROOT = Path(__file__).parents[2]

SPECS = """\
version: "2026.11"
tools:
  get_weather:
    args:
      city: {kind: casefold, reason: "the weather service ignores case"}
      unit: {kind: enum, values: [celsius, fahrenheit], aliases: {F: fahrenheit}, default: celsius}
      days: {kind: integer, default: 1}
"""

CASES: list[dict[str, Any]] = [
    {"id": "paris", "plans": [[{"name": "get_weather", "args": {"city": "Paris"}}]]},
    {"id": "week", "plans": [[{"name": "get_weather", "args": {"city": "Paris", "days": 7}}]]},
    {"id": "hello", "plans": []},
    {"id": "rome", "plans": [[{"name": "get_weather", "args": {"city": "Rome", "unit": "F"}}]]},
]
OUTPUTS: list[dict[str, Any]] = [
    {"id": "paris", "calls": [{"name": "get_weather", "args": '{"city": "paris"}'}]},
    {"id": "week", "calls": [{"name": "get_weather", "args": {"city": "Paris", "days": "7"}}]},
    {"id": "hello", "calls": []},
    {"id": "rome", "calls": [{"name": "get_weather", "args": {"city": "Rome", "unit": "F"}}]},
]


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.fixture(autouse=True)
def no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner runs load the plugin by `-p` only: once toolscore is installed, its entry point
    would register the same module a second time, which pytest refuses."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def files(pytester: pytest.Pytester) -> Path:
    """tools.yaml, cases.jsonl and outputs.jsonl in the pytester folder: 3 of 4 cases pass."""
    (pytester.path / "tools.yaml").write_text(SPECS)
    (pytester.path / "cases.jsonl").write_text(jsonl(CASES))
    (pytester.path / "outputs.jsonl").write_text(jsonl(OUTPUTS))
    return pytester.path


def collect_args(*extra: str) -> tuple[str, ...]:
    return (
        *PLUGIN, "--toolscore-cases", "cases.jsonl", "--toolscore-outputs", "outputs.jsonl",
        *extra,
    )  # fmt: skip


def test_each_case_is_a_test_named_by_its_id(pytester: pytest.Pytester, files: Path) -> None:
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml", "-v"))
    run.assert_outcomes(passed=3, failed=1)
    run.stdout.fnmatch_lines(
        [
            "cases.jsonl::paris PASSED*",
            "cases.jsonl::week FAILED*",
            "cases.jsonl::hello PASSED*",
            "cases.jsonl::rome PASSED*",
        ]
    )
    # the failure says what `score` says, in its words
    run.stdout.fnmatch_lines(
        ["*type_mismatch call 0 /days [[]integer[]]: expected an integer, got string '7'*"]
    )
    assert run.ret == pytest.ExitCode.TESTS_FAILED


def test_junit_xml_lists_every_case_and_the_failure(pytester: pytest.Pytester, files: Path) -> None:
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml", "--junitxml=j.xml"))
    run.assert_outcomes(passed=3, failed=1)
    suite = ET.parse(files / "j.xml").getroot().find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"paris", "week", "hello", "rome"}
    failure = cases["week"].find("failure")
    assert failure is not None
    assert "type_mismatch call 0 /days [integer]" in (failure.text or "")
    assert cases["paris"].find("failure") is None


def test_the_terminal_summary_gives_the_metrics_of_score(
    pytester: pytest.Pytester, files: Path
) -> None:
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml"))
    specs = load_specs(files / "tools.yaml")
    summary = score(
        specs, read_cases(files / "cases.jsonl", specs), read_outputs(files / "outputs.jsonl")
    ).summary()
    text = run.stdout.str()
    assert "toolscore: cases.jsonl against outputs.jsonl (specs tools.yaml)" in text
    shown = [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()]
    for row in metric_rows(summary):
        assert list(row) in shown
    assert interval(wilson(3, 4)) in text  # accuracy 3/4 and its Wilson interval
    assert "75.0%" in text
    assert "missing outputs: 0" in text


def test_choice_and_ignored_keys_reach_the_plugin(pytester: pytest.Pytester, files: Path) -> None:
    function = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    call = {"id": "c", "type": "function", "function": function}
    choices = [
        {"index": n, "message": {"role": "assistant", "tool_calls": [call] if n else []}}
        for n in (0, 1)
    ]
    outputs = [
        {"id": "paris", "object": "chat.completion", "choices": choices, "latency_ms": 5},
        *[dict(row, latency_ms=5) for row in OUTPUTS[1:]],
    ]
    (files / "outputs.jsonl").write_text(jsonl(outputs))
    refused = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml"))
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*outputs.jsonl:1: choices: a response with 2 choices*"])
    run = pytester.runpytest(
        *collect_args("--toolscore-specs", "tools.yaml", "--toolscore-choice", "1")
    )
    run.assert_outcomes(passed=3, failed=1)
    assert (
        "Outputs keys no reader uses, ignored (lines with each): latency_ms (4)" in run.stdout.str()
    )


def test_trials_are_one_test_each(pytester: pytest.Pytester, files: Path) -> None:
    trials = [dict(row, trial=t) for row in OUTPUTS[:1] for t in (0, 1)]
    trials[1]["calls"] = [{"name": "get_weather", "args": {"city": "Oslo"}}]
    (files / "cases.jsonl").write_text(jsonl(CASES[:1]))
    (files / "outputs.jsonl").write_text(jsonl(trials))
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml", "-v"))
    run.assert_outcomes(passed=1, failed=1)
    run.stdout.fnmatch_lines(["*::paris[[]0[]] PASSED*", "*::paris[[]1[]] FAILED*"])


def test_a_case_without_output_is_scored_as_no_call(pytester: pytest.Pytester, files: Path) -> None:
    (files / "outputs.jsonl").write_text(jsonl(OUTPUTS[:2]))  # none for hello and rome
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml", "-v"))
    run.assert_outcomes(passed=1, failed=3)  # hello's absent answer is no abstention
    run.stdout.fnmatch_lines(["missing outputs: 2 (hello, rome)"])
    run.stdout.fnmatch_lines(["*case 'rome' do not match the plans (*, no output; *"])


def test_keyword_selection_applies_to_cases(pytester: pytest.Pytester, files: Path) -> None:
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml", "-k", "week"))
    run.assert_outcomes(failed=1, deselected=3)
    run.stdout.fnmatch_lines(["collected 4 items / 3 deselected / 1 selected"])


def test_the_specs_fall_back_to_the_ini_option(pytester: pytest.Pytester, files: Path) -> None:
    (files / "specs").mkdir()
    (files / "tools.yaml").rename(files / "specs" / "tools.yaml")
    pytester.makeini("[pytest]\ntoolscore_specs = specs/tools.yaml\n")
    run = pytester.runpytest(*collect_args())
    run.assert_outcomes(passed=3, failed=1)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda path: (path / "cases.jsonl").write_text(
                jsonl(CASES[:1]) + '{"id": "x", "plans": [[{"name": "nope"}]]}\n'
            ),
            "ERROR: cases.jsonl:2: plans[[]0[]][[]0[]].name: 'nope' is not a tool in the spec*",
        ),
        (
            lambda path: (path / "outputs.jsonl").write_text('{"id": "paris", "calls": 5}\n'),
            "ERROR: outputs.jsonl:1: calls: must be a list of calls",
        ),
        (
            lambda path: (path / "tools.yaml").write_text("tools: 5\n"),
            "ERROR: tools.yaml: tools: *",
        ),
        (lambda path: (path / "outputs.jsonl").unlink(), "ERROR: outputs.jsonl: cannot read*"),
    ],
)
def test_a_bad_input_fails_the_session_in_one_line(
    pytester: pytest.Pytester, files: Path, damage: object, message: str
) -> None:
    damage(files)  # type: ignore[operator]
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml"))
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines([message])
    errors = [line for line in run.stderr.lines if line.startswith("ERROR")]
    assert len(errors) == 1


def test_cases_need_outputs_and_specs(pytester: pytest.Pytester, files: Path) -> None:
    run = pytester.runpytest(*PLUGIN, "--toolscore-cases", "cases.jsonl")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines(["ERROR: --toolscore-cases needs --toolscore-outputs too"])
    run = pytester.runpytest(*collect_args())
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines(["ERROR: --toolscore-cases needs a spec file: *"])


ASSERTING_TEST = """
from toolscore.integrations.pytest_plugin import assert_tool_calls

PLAN = [{"name": "get_weather", "args": {"city": "Paris", "days": 7}}]

def test_right(toolscore_specs):
    result = assert_tool_calls([{"name": "get_weather", "args": {"city": "PARIS", "days": 7}}],
                               PLAN, specs=toolscore_specs)
    assert result.passed

def test_wrong(toolscore_specs):
    assert_tool_calls([{"name": "get_weather", "args": {"city": "Rome", "days": "7"}}],
                      PLAN, specs=toolscore_specs)
"""


@pytest.mark.parametrize("assertions", ["rewrite", "plain"])
def test_assert_tool_calls_with_the_specs_fixture(
    pytester: pytest.Pytester, files: Path, assertions: str
) -> None:
    pytester.makeini("[pytest]\ntoolscore_specs = tools.yaml\n")
    pytester.makepyfile(test_agent=ASSERTING_TEST)
    run = pytester.runpytest(*PLUGIN, f"--assert={assertions}")
    run.assert_outcomes(passed=1, failed=1)
    run.stdout.fnmatch_lines(
        [
            "E       AssertionError: tool calls do not match the plans "
            "(closest plan 0; 2 mismatches):",
            "E         value_mismatch call 0 /city [[]casefold[]]: *",
            "E         type_mismatch call 0 /days [[]integer[]]: expected an integer, got *'7'",
        ]
    )


def test_the_specs_fixture_says_when_no_spec_file_is_named(
    pytester: pytest.Pytester, files: Path
) -> None:
    pytester.makepyfile(test_agent=ASSERTING_TEST)
    run = pytester.runpytest(*PLUGIN)
    run.assert_outcomes(errors=2)
    run.stdout.fnmatch_lines(
        ["*the toolscore_specs fixture needs a spec file: --toolscore-specs or the ini option*"]
    )


def test_the_specs_fixture_reads_the_command_line_option(
    pytester: pytest.Pytester, files: Path
) -> None:
    """`--toolscore-specs` names the fixture's spec file too, with no ini option..."""
    pytester.makepyfile(test_agent=ASSERTING_TEST)
    run = pytester.runpytest(*PLUGIN, "--toolscore-specs", "tools.yaml")
    run.assert_outcomes(passed=1, failed=1)


def test_the_command_line_option_wins_over_the_ini_option(
    pytester: pytest.Pytester, files: Path
) -> None:
    """... and over the ini option, for the fixture as for the cases files."""
    pytester.makeini("[pytest]\ntoolscore_specs = missing.yaml\n")
    pytester.makepyfile(test_agent=ASSERTING_TEST)
    run = pytester.runpytest(*PLUGIN, "--toolscore-specs", "tools.yaml")
    run.assert_outcomes(passed=1, failed=1)
    assert "missing.yaml" not in run.stdout.str()
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml"))
    run.assert_outcomes(passed=3 + 1, failed=1 + 1)  # the four cases and test_agent's two


def test_the_specs_fixture_names_an_unreadable_file(pytester: pytest.Pytester, files: Path) -> None:
    pytester.makeini("[pytest]\ntoolscore_specs = missing.yaml\n")
    pytester.makepyfile(test_agent=ASSERTING_TEST)
    run = pytester.runpytest(*PLUGIN)
    run.assert_outcomes(errors=2)
    run.stdout.fnmatch_lines(["*missing.yaml: cannot read*"])


def test_without_the_options_the_plugin_collects_nothing(
    pytester: pytest.Pytester, files: Path
) -> None:
    pytester.makepyfile(test_other="def test_one():\n    assert True\n")
    run = pytester.runpytest(*PLUGIN)
    run.assert_outcomes(passed=1)
    assert "toolscore:" not in run.stdout.str()


def test_cases_outside_the_rootdir(pytester: pytest.Pytester, files: Path) -> None:
    (files / "sub").mkdir()
    pytester.makeini("[pytest]\n")
    run = pytester.runpytest(
        *PLUGIN, "--rootdir", str(files / "sub"), "--toolscore-cases", str(files / "cases.jsonl"),
        "--toolscore-outputs", "outputs.jsonl", "--toolscore-specs", "tools.yaml", "-v",
    )  # fmt: skip
    run.assert_outcomes(passed=3, failed=1)
    run.stdout.fnmatch_lines(["*cases.jsonl::week FAILED*"])


def test_an_installed_toolscore_loads_the_plugin_by_itself(
    pytester: pytest.Pytester, files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the entry point installed (here: a distribution's metadata holding the project's
    own entry point, on sys.path), pytest loads the plugin with no `-p`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    points = project["project"]["entry-points"]["pytest11"]
    site = files / "site"
    info = site / "toolscore_probe-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toolscore-probe\nVersion: 0.0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in points.items())
    (info / "entry_points.txt").write_text(f"[pytest11]\n{lines}")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    run = pytester.runpytest(*collect_args("--toolscore-specs", "tools.yaml")[len(PLUGIN) :])
    run.assert_outcomes(passed=3, failed=1)


def test_the_entry_point_registers_the_plugin() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    points = project["project"]["entry-points"]["pytest11"]
    assert points == {"toolscore": "toolscore.integrations.pytest_plugin"}
    assert pytest_plugin.toolscore_specs is not None  # the module the entry point names loads
