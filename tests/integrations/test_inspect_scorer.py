"""The Inspect AI scorer, against the real inspect_ai with its mock model (offline): a tiny
task whose samples keep their plans in the target or the metadata (tests/inspect/task.py)."""

from __future__ import annotations

import contextlib
import gc
import io
import math
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

# inspect_ai's eval loop leaves an anyio stream for the garbage collector to close: its warning,
# not ours (collected below, inside the fixture, so that no other test meets it)
pytestmark = pytest.mark.filterwarnings(
    "ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning"
)

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai import score as inspect_score  # noqa: E402
from inspect_ai._util.registry import registry_lookup  # noqa: E402
from inspect_ai.log import EvalLog, headline_metric, read_eval_log  # noqa: E402
from inspect_ai.scorer import Target  # noqa: E402
from inspect_ai.scorer._scorer import scorer_create  # noqa: E402

from toolscore.errors import CaseError  # noqa: E402
from toolscore.integrations import inspect as integration  # noqa: E402
from toolscore.specs.loading import load_specs  # noqa: E402

ROOT = Path(__file__).parents[2]
HERE = Path(__file__).parents[1] / "inspect"
sys.path.insert(0, str(HERE))

from task import SPECS, mock_model, refunds  # noqa: E402


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    log_dir = tmp_path_factory.mktemp("logs")
    (result,) = inspect_eval(refunds(), model=mock_model(), log_dir=str(log_dir), display="none")
    gc.collect()
    assert result.status == "success", result.error
    return result


def metrics_of(log: EvalLog) -> dict[str, dict[str, float]]:
    assert log.results is not None
    return {s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores}


def test_the_eval_log_holds_accuracy_its_stderr_and_the_other_rates(log: EvalLog) -> None:
    metrics = metrics_of(log)
    assert metrics["passed"]["accuracy"] == 0.75
    assert metrics["passed"]["stderr"] == pytest.approx(0.25)
    assert metrics["name"] == {"accuracy": 1.0}  # the wrong order is still the right tool
    assert metrics["abstention"] == {"accuracy": 1.0}
    assert metrics["tool_calls"]["argument_accuracy"] == pytest.approx(2 / 3)
    assert metrics["tool_calls"]["case_accuracy"] == 0.75


def test_the_headline_is_the_case_accuracy(log: EvalLog) -> None:
    """Inspect shows the first metric of the first score as the run's number: the accuracy
    over cases, not the argument accuracy over paired calls (2/3 here)."""
    headline = headline_metric(log)
    assert headline is not None
    assert (headline.score.name, headline.name, headline.metric.value) == (
        "tool_calls", "case_accuracy", 0.75,
    )  # fmt: skip
    assert log.results is not None
    assert [score.name for score in log.results.scores] == [
        "tool_calls", "passed", "name", "abstention",
    ]  # fmt: skip
    assert list(log.results.scores[0].metrics) == ["case_accuracy", "argument_accuracy"]


def sample_scores(log: EvalLog) -> dict[str, Any]:
    assert log.samples is not None
    return {str(s.id): s.scores["tool_calls"] for s in log.samples if s.scores}


def test_each_sample_s_score_holds_its_verdict_calls_and_mismatches(log: EvalLog) -> None:
    scores = sample_scores(log)
    wrong = scores["2"]
    assert wrong.value["passed"] == 0.0
    assert wrong.value["name"] == 1.0
    assert wrong.value["arguments"] == 0.0
    assert math.isnan(wrong.value["abstention"])
    assert wrong.answer == 'get_order({"order_id":"order-13"})'
    assert wrong.explanation == (
        "value_mismatch call 0 /order_id [exact]: 'order-13' does not equal 'order-12' exactly"
    )
    assert wrong.metadata["mismatches"] == ["value_mismatch"]
    refund = scores["refund-1"]  # "euro" is EUR under the spec's alias
    assert refund.value["passed"] == 1.0
    assert refund.explanation == "passed"
    thanks = scores["thanks"]
    assert thanks.value["abstention"] == 1.0
    assert math.isnan(thanks.value["name"])
    assert thanks.answer == ""
    assert scores["lookup"].value["passed"] == 1.0  # its plans are in the metadata


def test_the_scorer_is_found_by_the_name_inspect_gives_it() -> None:
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert entry["inspect_ai"] == {"toolscore": integration.__name__}
    assert registry_lookup("scorer", "toolscore/tool_calls") is not None
    made = scorer_create("toolscore/tool_calls", specs=str(SPECS))  # as `-S specs=...` does
    assert callable(made)


def test_inspect_score_rescores_a_log_written_by_inspect(tmp_path: Path) -> None:
    written = read_eval_log(str(HERE / "fixtures" / "refunds.eval"))
    rescored = inspect_score(
        written,
        scorer_create("toolscore/tool_calls", specs=str(SPECS)),
        action="overwrite",  # the log's own scores are replaced, not kept beside
        display="none",
    )
    metrics = metrics_of(rescored)
    assert metrics["passed"]["accuracy"] == 0.75  # the mean of the two epochs of each sample
    assert metrics["tool_calls"]["case_accuracy"] == 0.75


SPEC_SET = load_specs(SPECS)
LOOKUP = {"name": "get_order", "args": {"order_id": "order-12"}}


@pytest.mark.parametrize(
    ("target", "plans"),
    [
        ('[[{"name": "get_order", "args": {"order_id": "order-12"}}]]', 1),  # plans
        ('[{"name": "get_order", "args": {"order_id": "order-12"}}]', 1),  # one plan
        ('{"plans": [[], [{"name": "get_order", "args": {}}]]}', 2),  # a case object
        ("[]", 0),  # no call is right
        (['[{"name": "get_order"}]', '[{"name": "refund", "args": {"order_id": "o"}}]'], 2),
    ],
)
def test_plans_are_read_from_the_target(target: str | list[str], plans: int) -> None:
    case = integration._case(SPEC_SET, "s1", {}, Target(target), "plans")
    assert case.id == "s1"
    assert len(case.plans) == plans


def test_plans_in_the_metadata_come_before_the_target() -> None:
    case = integration._case(SPEC_SET, "s1", {"calls": [[LOOKUP]]}, Target("not json"), "calls")
    assert [call.name for call in case.plans[0]] == ["get_order"]


def test_a_target_that_is_not_json_names_the_sample() -> None:
    with pytest.raises(ValueError, match="sample s1: target: plans must be JSON text"):
        integration._case(SPEC_SET, "s1", {}, Target("refund it"), "plans")


def test_a_plan_calling_an_unknown_tool_names_the_sample_and_the_field() -> None:
    with pytest.raises(CaseError) as failure:
        integration._case(SPEC_SET, "s1", {}, Target('[{"name": "refnd"}]'), "plans")
    assert str(failure.value).startswith("sample s1 (target)")
    assert "refnd" in str(failure.value)


def readme_blocks(language: str, marker: str) -> list[str]:
    """The README's blocks in `language` that hold `marker`."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(rf"^```{language}\n(.*?)^```", readme, re.S | re.M)
    return [block for block in blocks if marker in block]


def test_the_readme_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python example, then the `inspect score` command after it, as the README gives them,
    in a stand-in repository root; the command runs in a shell with no terminal, as in CI."""
    (example,) = readme_blocks("python", "toolscore.integrations.inspect")
    (command,) = readme_blocks("sh", "inspect score")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(example, "README.md", "exec"), {})  # our own README's example
    assert printed.getvalue().splitlines() == [
        "0.0",
        "value_mismatch call 0 /order_id [exact]: 'order-13' does not equal 'order-12' exactly",
    ]
    assert "`0.0`" in (ROOT / "README.md").read_text()

    assert command.startswith("# run in: the repository root\n")
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    done = subprocess.run(
        ["bash", "-e", "-c", command],
        cwd=tmp_path,
        env={**os.environ, "PATH": path},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rescored = read_eval_log(str(tmp_path / "rescored.eval"))
    assert rescored.results is not None
    names = [score.name for score in rescored.results.scores]
    assert names == ["tool_calls", "passed", "name", "abstention"]  # replaced, not appended
    assert metrics_of(rescored)["tool_calls"]["case_accuracy"] == 0.0
