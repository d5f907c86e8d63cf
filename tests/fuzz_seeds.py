"""The real files the fuzzers start from: every kind of input toolscore reads.

Outputs lines (every provider transcript under tests/formats/, SDK-written ones included, the
response objects and streams under tests/formats/responses/, the malformed and unread lines,
the golden cases' `calls`, the packaged examples), cases lines and spec files. Used by
tests/inputs/test_fuzz_readers.py and bench/fuzz.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolscore.core.model import Case
from toolscore.errors import InputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.specs.loading import SpecSet, parse_specs

TESTS = Path(__file__).parent
EXAMPLES = TESTS.parent / "src" / "toolscore" / "examples"

SPEC = {
    "version": "fuzz",
    "tools": {
        "get_order": {"args": {"order_id": "exact"}},
        "refund": {
            "args": {
                "order_id": "exact",
                "amount": {"kind": "number", "tol": 0.005, "coerce": True},
                "unit": {"kind": "enum", "values": ["EUR", "USD"], "default": "EUR"},
            }
        },
    },
}
CASE = {
    "id": "fuzz",
    "plans": [
        [
            {"id": "look", "name": "get_order", "args": {"order_id": "order-12"}},
            {"name": "refund", "args": {"order_id": {"$ref": "look#/order_id"}, "amount": 12.5}},
        ],
        [{"name": "refund", "args": {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}}],
    ],
}


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for text in path.read_text(encoding="utf-8").splitlines():
        if text.strip():
            yield json.loads(text)


def _goldens() -> Iterator[dict[str, Any]]:
    for path in sorted((TESTS / "cases").glob("*.json")):
        yield json.loads(path.read_text(encoding="utf-8"))


def output_seeds() -> list[dict[str, Any]]:
    """Outputs lines: every transcript fixture, then plain `calls` lines, all with id `fuzz`."""
    seeds = []
    for path in sorted((TESTS / "formats").glob("*.json")):
        seeds.append({**json.loads(path.read_text(encoding="utf-8"))["line"], "id": "fuzz"})
    seeds += response_seeds()
    for name in ("malformed.jsonl", "unread.jsonl"):
        seeds += [{"id": "fuzz", **case["line"]} for case in _jsonl(TESTS / "formats" / name)]
    for golden in _goldens():
        for case in golden["cases"]:
            if "produced" in case:
                seeds.append({"id": "fuzz", "calls": case["produced"], "response": "done"})
            elif "output" in case:
                seeds.append({"id": "fuzz", **case["output"]})
    for path in sorted(EXAMPLES.rglob("outputs*.jsonl")):
        seeds += [{**line, "id": "fuzz"} for line in _jsonl(path)]
    return seeds


def response_seeds() -> list[dict[str, Any]]:
    """Outputs lines holding a provider's response object or a saved stream, by the SDKs
    (tests/formats/responses/), with id `fuzz`."""
    return [
        {**json.loads(path.read_text(encoding="utf-8"))["line"], "id": "fuzz"}
        for path in sorted((TESTS / "formats" / "responses").glob("*.json"))
    ]


def output_groups() -> dict[str, list[dict[str, Any]]]:
    """The outputs seeds by what they are read as (a format, `calls`, or `input error`), so
    that a fuzzer can take each kind in turn however many seeds each has."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for seed in output_seeds():
        try:
            kind = parse_output(seed).format or "calls"
        except InputError:
            kind = "input error"
        groups.setdefault(kind, []).append(seed)
    return dict(sorted(groups.items()))


def case_seeds() -> list[dict[str, Any]]:
    """Cases lines under SPEC: the golden cases' plans and the packaged examples' cases."""
    seeds = [CASE]
    for golden in _goldens():
        for case in golden["cases"]:
            target = {"turns": case["turns"]} if "turns" in case else {"plans": case["plans"]}
            seeds.append({"id": "fuzz", **target, "tags": ["golden"]})
    for path in sorted(EXAMPLES.rglob("cases.jsonl")):
        seeds += list(_jsonl(path))
    return seeds


def spec_seeds() -> list[Any]:
    """Spec files: SPEC and every golden file's spec (native or an OpenAI tool list)."""
    return [SPEC] + [golden.get("spec", golden.get("spec_openai")) for golden in _goldens()]


def fuzz_case() -> tuple[SpecSet, Case]:
    """SPEC and CASE, loaded: the spec and case mutated outputs lines are scored against."""
    specs, problems = parse_specs(SPEC, "tools.json")
    assert specs is not None, problems
    return specs, parse_case(CASE, specs)
