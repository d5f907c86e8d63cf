"""Document environments (`kind: documents`): the golden cases under tests/state_docs/golden/,
and the properties no single case shows (isolation, time limits, bounded diffs, bad blocks).

A golden file holds an `environment` (keys merged over the fixture's block in
tests/state_docs/tools.yaml) and cases, each with `plans`, the agent's `produced` calls and
what the verdict must say: `passed`, the diff's `diff` lines, and optionally its `changes`
(JSON), `errors` (each replayed call's error or null), `plan_errors`, `terminal`,
`plan_not_replayed`, `notes`, `plan`, `hashes_equal`; a case's own `environment` replaces the
file's.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolscore import Case, SpecSet, parse_case, parse_output, parse_specs
from toolscore.state import DocumentEnvironment, check_state, load_environment

DOCS = Path(__file__).parent / "state_docs"
GOLDEN = DOCS / "golden"


def _spec_data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DOCS / "tools.yaml").read_text(encoding="utf-8"))
    return data


@cache
def specs() -> SpecSet:
    found, errors = parse_specs(_spec_data(), "tools.yaml")
    assert found is not None, errors
    return found


@cache
def _env(overrides: str) -> DocumentEnvironment:
    block = {**_spec_data()["environment"], **json.loads(overrides)}
    env = load_environment(block, DOCS, str(DOCS / "tools.yaml"))
    assert isinstance(env, DocumentEnvironment)
    return env


def env(**overrides: Any) -> DocumentEnvironment:
    """The fixture's environment with some keys replaced (loaded once per set of keys)."""
    return _env(json.dumps(overrides, sort_keys=True))


def make_case(data: dict[str, Any], case_id: str = "c") -> Case:
    line = {"id": case_id, "plans": data.get("plans", []), "tags": []}
    line["goal_state"] = data.get("goal_state", "plan")
    if "setup" in data:
        line["setup"] = data["setup"]
    return parse_case(line, specs(), "cases.jsonl", 1)


def produced(items: list[dict[str, Any]]) -> Any:
    return parse_output({"id": "c", "calls": items}).calls


def _golden() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    found = []
    for path in sorted(GOLDEN.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in data["cases"]:
            found.append((f"{path.stem}/{item['description']}", data["environment"], item))
    return found


@pytest.mark.parametrize(
    ("name", "environment", "item"), _golden(), ids=[name for name, _, _ in _golden()]
)
def test_golden(name: str, environment: dict[str, Any], item: dict[str, Any]) -> None:
    verdict = check_state(
        env(**item.get("environment", environment)),
        make_case(item),
        produced(item["produced"]),
        None,
    )
    data = verdict.to_json()
    assert verdict.passed is item["passed"]
    assert verdict.diff is not None
    assert verdict.diff.lines() == item["diff"]
    if "changes" in item:
        assert data["diff"]["changes"] == item["changes"]
    if "errors" in item:
        assert [call.error for call in verdict.calls] == item["errors"]
    assert data.get("plan_errors", []) == item.get("plan_errors", [])
    assert data.get("terminal") == item.get("terminal")
    assert data.get("plan_not_replayed", 0) == item.get("plan_not_replayed", 0)
    if "notes" in item:
        assert verdict.notes() == item["notes"]
    if "plan" in item:
        assert verdict.plan == item["plan"]
    if "hashes_equal" in item:
        assert verdict.hashes is not None
        assert (verdict.hashes[0] == verdict.hashes[1]) is item["hashes_equal"]


def test_every_golden_topic_has_a_file() -> None:
    topics = {path.stem for path in GOLDEN.glob("*.json")}
    assert topics >= {
        "diffs", "ignore", "numbers", "numbers_typed", "errors_rollback", "errors_keep",
        "plan_failing", "terminal",
    }  # fmt: skip
