"""Golden cases of the deterministic rubrics: data files under tests/rubric_cases/, each case
a rubric node, a produced text (and the call's other arguments), and the expected verdict.

A case's `text` is a string, or `{repeat, times, then}` for a long one (a 1 MB text stays
out of the data file). `expected` holds `score` and `passed`, or `unscored` (words the
reason contains); `reason` is words the verdict's reason contains.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolscore.rubrics.checks import LocalRubric
from toolscore.rubrics.spec import parse_rubric
from toolscore.state.limits import alarms_installed

CASES_DIR = Path(__file__).parents[1] / "rubric_cases"


def _cases() -> list[Any]:
    found = []
    for path in sorted(CASES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for case in data["cases"]:
            ident = f"{path.stem}/{case['description']}"
            found.append(pytest.param(case, id="".join(c if c.isascii() else "?" for c in ident)))
    return found


def _text(node: Any) -> str:
    if isinstance(node, str):
        return node
    return str(node["repeat"]) * int(node["times"]) + str(node["then"])


@pytest.mark.parametrize("case", _cases())
def test_rubric_golden(case: dict[str, Any]) -> None:
    rubric = parse_rubric("golden", case["rubric"])
    assert isinstance(rubric, LocalRubric)
    with alarms_installed():  # a regex check runs only under its time limit
        verdict = rubric.score(_text(case["text"]), case.get("arguments", {}))
    expected = case["expected"]
    assert verdict.rubric == "golden"
    if "unscored" in expected:
        assert (verdict.score, verdict.passed) == (None, None)
        assert verdict.unscored is not None
        assert expected["unscored"] in verdict.unscored
        return
    assert verdict.unscored is None, verdict.unscored
    assert verdict.score is not None
    assert round(verdict.score, 4) == expected["score"]
    assert verdict.passed is expected["passed"]
    assert expected.get("reason", "") in verdict.reason


def test_a_regex_off_the_main_thread_is_left_unscored() -> None:
    """Where no alarm can stop a search (no `alarms_installed`, as off the main thread),
    a regex check does not run at all rather than risk a search that never ends."""
    rubric = parse_rubric("r", {"kind": "regex", "pattern": "^(a+)+$"})
    assert isinstance(rubric, LocalRubric)
    verdict = rubric.score("a" * 40 + "!", {})
    assert verdict.score is None
    assert verdict.unscored is not None
    assert "time limit" in verdict.unscored
