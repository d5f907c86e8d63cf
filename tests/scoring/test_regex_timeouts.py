"""A regex rubric that backtracks on every text stops being run after `max_timeouts` of its
searches ran out of time (issue 25): its later entries are unscored with the reason, the
other rubrics go on, and the run's cost is bounded by the cap, not by the number of cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.rubrics import checks
from toolscore.scoring.rubric_run import stopped

TIMED_OUT = "the regex search did not finish within 0.05 s"


def _spec(extra: str = "") -> str:
    return f"""\
rubrics:
  only_a: {{kind: regex, pattern: "^(a+)+$"{extra}}}
  bang: {{kind: regex, pattern: "!$"}}
tools:
  refund:
    args:
      order_id: exact
      note: {{kind: text, rubric: only_a}}
      memo: {{kind: text, rubric: bang}}
"""


def _score(directory: Path, cases: int, extra: str = "", *options: str) -> dict[str, Any]:
    """Score `cases` cases whose notes are the issue's reproducer, `"a" * 40 + "!"`."""
    note = "a" * 40 + "!"
    (directory / "tools.yaml").write_text(_spec(extra))
    plans = [{"id": f"c{i}", "plans": [[{"name": "refund", "args": {"order_id": i}}]]}
             for i in range(cases)]  # fmt: skip
    outputs = [{"id": f"c{i}", "calls": [{"name": "refund", "args": {
        "order_id": i, "note": note, "memo": note}}]} for i in range(cases)]  # fmt: skip
    for name, rows in (("cases", plans), ("outputs", outputs)):
        (directory / f"{name}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    args = ["score", "--specs", str(directory / "tools.yaml"),
            "--cases", str(directory / "cases.jsonl"),
            "--outputs", str(directory / "outputs.jsonl"),
            "--json", str(directory / "report.json"), *options]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads((directory / "report.json").read_text())
    return report


def _reasons(report: dict[str, Any], rubric: str) -> list[str | None]:
    return [e["unscored"] for case in report["cases"] for e in case["rubrics"]
            if e["rubric"] == rubric]  # fmt: skip


@pytest.fixture(autouse=True)
def _short_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks, "REGEX_SECONDS", 0.05)


def test_after_three_timeouts_the_rubric_is_not_run_again(tmp_path: Path) -> None:
    report = _score(tmp_path, 8)
    # Three searches ran out of time; the five later texts were never searched.
    assert _reasons(report, "only_a") == [TIMED_OUT] * 3 + [stopped("only_a", 3)] * 5
    assert "stopped for the rest of the run after its regex search ran out of time on 3" in (
        stopped("only_a", 3)
    )
    # The other rubric is still run on every case.
    assert _reasons(report, "bang") == [None] * 8
    unscored = report["summary"]["rubrics"]["per_rubric"]["only_a"]["unscored"]
    assert unscored == {"count": 8, "reasons": {TIMED_OUT: 3, stopped("only_a", 3): 5}}


def test_max_timeouts_sets_the_cap(tmp_path: Path) -> None:
    report = _score(tmp_path, 4, ", max_timeouts: 1")
    assert _reasons(report, "only_a") == [TIMED_OUT] + [stopped("only_a", 1)] * 3


def test_each_worker_counts_its_own_timeouts(tmp_path: Path) -> None:
    report = _score(tmp_path, 8, ", max_timeouts: 1", "--workers", "2")
    reasons = _reasons(report, "only_a")
    assert set(reasons) == {TIMED_OUT, stopped("only_a", 1)}
    assert 1 <= reasons.count(TIMED_OUT) <= 2


@pytest.mark.parametrize("value", [0, -1, "3", 1.5])
def test_a_bad_max_timeouts_is_a_load_error(tmp_path: Path, value: Any) -> None:
    (tmp_path / "tools.yaml").write_text(_spec(f", max_timeouts: {json.dumps(value)}"))
    result = CliRunner().invoke(cli, ["lint", "--specs", str(tmp_path / "tools.yaml")])
    assert result.exit_code == 1, result.output  # lint found an error
    assert "rubrics.only_a.max_timeouts: must be" in result.output
