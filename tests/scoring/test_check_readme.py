"""The README's examples of `check`, `assert_tool_calls`, the pytest collector and the
evaluator functions run as written, in the tour's folder (its files from the README itself).

tests/project/test_readme.py runs the README's other blocks; it leaves these to this file, which
runs the pytest commands with pytester and compares what the Python blocks print.
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

from readme_blocks import HEREDOC, blocks, heredocs

pytest_plugins = ["pytester"]


def readme_block(language: str, marker: str) -> str:
    """The README's one block in `language` that holds `marker`."""
    (found,) = [block for block in blocks(language) if marker in block]
    return found


CHECK_EXAMPLE = readme_block("python", "from toolscore import check")
CHECK_PRINTS = "False ['type_mismatch']\n"
ASSERT_EXAMPLE = readme_block("sh", "python -m pytest test_agent.py")
COLLECT_EXAMPLE = readme_block("sh", "--toolscore-cases")
LANGSMITH_EXAMPLE = readme_block("python", "tool_calls_evaluator")
LANGSMITH_PRINTS = "{'key': 'tool_calls', 'score': 1, 'comment': 'every call matches plan 0'}\n"
LANGFUSE_EXAMPLE = readme_block("python", "langfuse_evaluator")
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
        words = shlex.split(line, comments=True)
        if words == ["python", "-m", "pip", "install", "pytest"]:
            continue  # pytest runs this very test
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
