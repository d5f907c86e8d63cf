"""Golden audits (tests/audit/golden/planted.json): for each small spec and its cases, the
rows `audit` must report, field by field, and the rows it must not (a kind with no target:
an argument whose plan value is a `$ref`, a reordering of linked calls)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolscore.audit import audit_cases
from toolscore.inputs.cases import parse_case
from toolscore.specs.loading import SpecSet, parse_specs

GOLDEN = json.loads((Path(__file__).parent / "golden" / "planted.json").read_text())


def _specs(data: dict[str, Any]) -> SpecSet:
    specs, problems = parse_specs(data, "<golden>")
    assert not problems
    assert specs is not None
    return specs


def _audit(entry: dict[str, Any]) -> dict[str, Any]:
    specs = _specs(entry["spec"])
    cases = [parse_case(case, specs, "<golden>", n) for n, case in enumerate(entry["cases"], 1)]
    return audit_cases(specs, cases, seed=0).to_json()


@pytest.mark.parametrize("entry", GOLDEN["audits"], ids=lambda e: e["description"][:60])
def test_the_audit_reports_what_the_golden_file_says(entry: dict[str, Any]) -> None:
    found = _audit(entry)
    assert found["skipped"] == []
    for family in ("bad", "harmless"):
        rows = {(r["kind"], r["tool"], r["argument"]): r for r in found[family]}
        for want in entry[family]:
            key = (want["kind"], want["tool"], want["argument"])
            assert key in rows, f"{family} row {key} missing; found {sorted(rows, key=str)}"
            got = rows[key]
            assert {k: got[k] for k in want} == want
    present = {
        f"{r['kind']}:{r['tool']}:{r['argument']}"
        for fam in ("bad", "harmless")
        for r in found[fam]
    }
    kinds = {r["kind"] for fam in ("bad", "harmless") for r in found[fam]}
    for absent in entry.get("absent", []):
        assert absent not in present, absent
        assert absent not in kinds, absent


def test_a_forgiven_row_names_the_cases_it_forgave() -> None:
    (entry,) = [e for e in GOLDEN["audits"] if e["description"].startswith("casefold")]
    (row,) = [r for r in _audit(entry)["bad"] if r["kind"] == "wrong_id_case"]
    assert row["examples"] == ["r1", "r2"]


def test_the_same_seed_plants_the_same_answers_and_another_seed_may_not() -> None:
    entry = GOLDEN["audits"][0]
    assert _audit(entry) == _audit(entry)
    specs = _specs(entry["spec"])
    cases = [parse_case(case, specs, "<golden>", 1) for case in entry["cases"]]
    from toolscore.audit.planted import plan_answers, planted_answers  # noqa: PLC0415

    def made(seed: int) -> list[Any]:
        return [
            planted.calls
            for case in cases
            for plan, answer in plan_answers(case)
            for planted in planted_answers(specs, case, plan, answer, seed)
            if planted.kind == "wrong_id_char"
        ]

    assert made(3) == made(3)
    assert any(made(seed) != made(0) for seed in range(1, 6))


def test_a_plan_that_fails_its_own_case_is_counted_as_skipped_not_planted() -> None:
    specs = _specs({"tools": {"t": {"args": {"a": "integer"}}}})
    # a plan value its own rule rejects: no answer made from it can pass (lint says so too)
    case = parse_case({"id": "c", "plans": [[{"name": "t", "args": {"a": "7"}}]]}, specs)
    conversation = parse_case(
        {"id": "talk", "turns": [{"prompt": "hi", "plans": []}]}, specs, "<golden>"
    )
    found = audit_cases(specs, [case, conversation]).to_json()
    assert found["cases"] == 2
    assert [s["case"] for s in found["skipped"]] == ["c", "talk"]
    assert found["skipped"][0]["reason"].startswith("the plan's own calls fail: ")
    assert found["skipped"][1]["reason"] == "a conversation case (turns)"
    assert found["bad"] == found["harmless"] == []
