"""The schemas agree with the loaders on every golden file the tests use: each spec, case
and outputs line the loader accepts validates against its schema, and each one it refuses
the schema refuses too, unless the refusal is of a kind no schema of the file alone can
express (listed in `BEYOND_A_SCHEMA`, each with the reason)."""

from __future__ import annotations

import re
from collections import Counter

import jsonschema
import pytest

from schema_goldens import Golden, collect, load_problem
from toolscore.schemas import NAMES, generate

GOLDENS = collect()
VALIDATORS = {name: jsonschema.Draft202012Validator(generate(name)) for name in NAMES}

BEYOND_A_SCHEMA: dict[str, str] = {
    r"is not a tool in the spec|has no argument|not in the spec \(keys": (
        "a case names the spec's tools and arguments: the cases schema does not know the spec"
    ),
    r"cannot stand inside a value compared as exact|stands only among the alternatives": (
        "where a marker may stand depends on the rule the spec gives the argument"
    ),
    r"the plan makes a call that .* forbids": "the spec's forbid entries judge a plan's values",
    r"label|links form a cycle|\$ref to ": (
        "call labels, `after` and `$ref` relate values across calls and turns"
    ),
    r"is not a JSON pointer": "a `$ref`'s pointer stands inside argument values left open",
    r"written as \w+, but the line's format is|\.resourceSpans: must be a list": (
        "what a transcript holds is the provider's shape, read by its reader, left open"
    ),
}
"""Refusals no schema of the file alone can express: pattern of the loader's message, and why."""


def _ids(golden: Golden) -> str:
    return f"{golden.format}:{golden.where}"


def _beyond(problem: str) -> str | None:
    return next((p for p in BEYOND_A_SCHEMA if re.search(p, problem)), None)


def test_the_goldens_are_collected_from_every_kind_of_file() -> None:
    counts = Counter(golden.format for golden in GOLDENS)
    assert counts["spec"] >= 50
    assert counts["cases"] >= 600
    assert counts["outputs"] >= 150
    places = {golden.where.split(":")[0] for golden in GOLDENS}
    for expected in (
        "src/toolscore/examples/support/tools.yaml",
        "src/toolscore/examples/support/cases.jsonl",
        "src/toolscore/examples/support/outputs.jsonl",
        "src/toolscore/examples/transcripts/outputs-anthropic.jsonl",
        "tests/cases/conversations.json",
        "tests/state/state_checks_golden.yaml",
        "tests/state/conversation_state_golden.yaml",
        "tests/formats/malformed.jsonl",
        "tests/formats/responses/openai_chat_dump.json",
        "tests/variant_groups/groups.json",
    ):
        assert expected in places


@pytest.mark.parametrize("golden", GOLDENS, ids=_ids)
def test_schema_and_loader_agree_on_the_golden(golden: Golden) -> None:
    problem = load_problem(golden)
    errors = list(VALIDATORS[golden.format].iter_errors(golden.document))
    if problem is None:
        assert not errors, f"the loader accepts it, the schema says: {errors[0].message}"
    elif not errors:
        assert _beyond(problem), f"the loader refuses it ({problem}), the schema accepts it"


def test_every_refusal_beyond_a_schema_is_met_by_some_golden() -> None:
    """The list holds no pattern that no golden needs (one that could hide a disagreement)."""
    met = set()
    for golden in GOLDENS:
        problem = load_problem(golden)
        if problem is not None and VALIDATORS[golden.format].is_valid(golden.document):
            met.add(_beyond(problem))
    assert met == set(BEYOND_A_SCHEMA)


def test_the_goldens_hold_refused_documents_the_schema_refuses_too() -> None:
    """Deliberately bad goldens are there, and the schema rejects those it can."""
    refused = [g for g in GOLDENS if load_problem(g) is not None]
    both = [g for g in refused if not VALIDATORS[g.format].is_valid(g.document)]
    assert len(refused) >= 40
    assert len(both) >= 30
    assert {g.format for g in both} == {"cases", "outputs"}
