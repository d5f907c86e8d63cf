"""The README's examples of `check`, `assert_tool_calls`, the pytest collector and the
evaluator functions run as written, in the tour's folder (its files from the README itself).

The blocks below are the text proposed for the README; tests/test_readme.py runs the README's
own blocks, and these keep the examples honest until they are pasted there.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml.nodes  # noqa: F401 - outlives pytester's in-process runs (test_pytest_plugin.py)

from test_readme import HEREDOC, heredocs

pytest_plugins = ["pytester"]

CHECK_EXAMPLE = """\
# run in: tour/
from toolscore import check

plan = [{"name": "get_weather", "args": {"city": "Paris", "days": 7}}]  # or a list of plans
calls = [{"name": "get_weather", "args": '{"city": "paris", "days": "7"}'}]  # or messages
result = check("tools.yaml", plan, calls)  # specs: a path, a SpecSet or spec data
print(result.passed, [m.code for m in result.mismatches])
"""
CHECK_PRINTS = "False ['type_mismatch']\n"

ASSERT_EXAMPLE = """\
# run in: tour/
cat > pytest.ini <<'EOF'
[pytest]
toolscore_specs = tools.yaml
EOF
cat > test_agent.py <<'EOF'
from toolscore import assert_tool_calls


def my_agent(prompt):  # stands for your agent: the calls it made, or its messages
    return [{"name": "get_weather", "args": {"city": "Rome", "unit": "F"}}]


def test_weather_in_rome(toolscore_specs):
    calls = my_agent("Weather in Rome, in Fahrenheit?")
    plan = [{"name": "get_weather", "args": {"city": "Rome", "unit": "fahrenheit"}}]
    assert_tool_calls(calls, plan, specs=toolscore_specs)
EOF
python -m pytest test_agent.py
"""

COLLECT_EXAMPLE = """\
# run in: tour/
python -m pytest --toolscore-cases cases.jsonl --toolscore-outputs outputs.jsonl \\
    --junitxml=cases.xml
"""

LANGSMITH_EXAMPLE = """\
# run in: tour/
from toolscore.integrations.evaluators import tool_calls_evaluator

# LangSmith: evaluate(target, data=..., evaluators=[evaluator])
evaluator = tool_calls_evaluator("tools.yaml")
outputs = {"messages": [  # what the target returned: messages, or {"calls": [...]}
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "PARIS", "unit": "C"}'}}]}]}
# the dataset example's outputs
reference_outputs = {"plans": [[{"name": "get_weather", "args": {"city": "Paris"}}]]}
print(evaluator(outputs, reference_outputs))
"""
LANGSMITH_PRINTS = "{'key': 'tool_calls', 'score': 1, 'comment': 'every call matches plan 0'}\n"

LANGFUSE_EXAMPLE = """\
# run in: tour/
from toolscore.integrations.evaluators import langfuse_evaluator

# Langfuse: run_experiment(..., evaluators=[evaluator])
evaluator = langfuse_evaluator("tools.yaml")
evaluation = evaluator(
    input="Weather in Paris this week?",
    output=[{"name": "get_weather", "args": {"city": "Paris", "days": "7"}}],  # the task's
    expected_output={"plans": [[{"name": "get_weather", "args": {"city": "Paris", "days": 7}}]]},
    metadata=None,
)
print(evaluation.name, evaluation.value)
print(evaluation.comment)
"""
LANGFUSE_PRINTS = """\
tool_calls 0.0
tool calls do not match the plans (closest plan 0; 1 mismatch):
  type_mismatch call 0 /days [integer]: expected an integer, got string '7'
"""

TOUR_FILES = ("tools.yaml", "cases.jsonl", "outputs.jsonl")


@pytest.fixture
def tour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tour's folder with its spec, cases and outputs as the README writes them."""
    written = heredocs()
    folder = tmp_path / "tour"
    folder.mkdir()
    for name in TOUR_FILES:
        (folder / name).write_text(written[name])
    monkeypatch.chdir(folder)
    return folder


def run_python(block: str) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, "README.md", "exec"), {})  # our own example
    return printed.getvalue()


def run_shell(block: str, pytester: pytest.Pytester) -> list[pytest.RunResult]:
    """Write the block's heredocs, and run its `python -m pytest` commands with pytester."""
    runs = []
    for name, body in HEREDOC.findall(block):
        Path(name).write_text(body + "\n")
    for line in HEREDOC.sub("", block).replace("\\\n", " ").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        words = shlex.split(line)
        assert words[:3] == ["python", "-m", "pytest"], line
        runs.append(pytester.runpytest("-p", "toolscore.integrations.pytest_plugin", *words[3:]))
    return runs


def test_the_check_example(tour: Path) -> None:
    assert run_python(CHECK_EXAMPLE) == CHECK_PRINTS


def test_the_evaluator_examples(tour: Path) -> None:
    assert run_python(LANGSMITH_EXAMPLE) == LANGSMITH_PRINTS
    assert run_python(LANGFUSE_EXAMPLE) == LANGFUSE_PRINTS


def test_the_pytest_examples(
    tour: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # see test_pytest_plugin.py
    monkeypatch.chdir(pytester.path)
    for name in TOUR_FILES:
        (pytester.path / name).write_text((tour / name).read_text())
    (asserted,) = run_shell(ASSERT_EXAMPLE, pytester)
    asserted.assert_outcomes(passed=1)
    (collected,) = run_shell(COLLECT_EXAMPLE, pytester)
    collected.assert_outcomes(passed=4, failed=1)  # the four cases (week fails) and test_agent
    collected.stdout.fnmatch_lines(
        ["*type_mismatch call 0 /days [[]integer[]]: expected an integer, got string '7'"]
    )
    suite = ET.parse(pytester.path / "cases.xml").getroot()
    names = {case.get("name") for case in suite.iter("testcase")}
    assert names == {"paris", "two-cities", "week", "hello", "test_weather_in_rome"}
    assert re.search(r"^accuracy +75\.0% +3/4 +30\.1% - 95\.4%$", collected.stdout.str(), re.M)
