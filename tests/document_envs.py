"""A document environment under test: the spec of tests/state_docs, an environment, a case
and produced calls."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from toolscore import Case, SpecSet, parse_case, parse_output, parse_specs
from toolscore.state import DocumentEnvironment, load_environment

DOCS = Path(__file__).parent / "state_docs"


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
