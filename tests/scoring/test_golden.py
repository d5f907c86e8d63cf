"""Golden cases: data files under tests/cases/, one per topic, each case scored end to end.

A file holds a spec (`spec`, native, or `spec_openai`, an OpenAI tool list) and cases with
`plans` (as in cases.jsonl), or `turns` for a conversation case, and one of: `produced` (as
the `calls` of outputs.jsonl), `messages` (a transcript), `output` (an outputs line without
its id), `produced_line` (a whole outputs line as text, id "golden", read as the outputs
reader reads a file) or `"missing": true` (a case with no output line); the expected verdict
`passed`, the multiset of mismatch `codes`, and optionally `plan` (the index of the plan that
passed, or of the closest one that explains the failure), `baselines`, `name_ok`, `case` (more
keys of the case line, such as `score_turns`), `explained` (each mismatch as a report words
it: `code /pointer: message`, in the order given), `message` (text some mismatch message
contains) and `note` (text some note of the case contains), `partial` and `efficiency` (the
case's blocks of the report JSON, docs/formats.md 7.6), `retries` (its retried calls, `[]` for
none, docs/formats.md 7.9), `pairs` (the verdict's pairing) and `mismatch_calls` (each
mismatch's produced call, in order), and for a conversation `turn_verdicts` (each turn's
`passed`) and `first_failed_turn`. A case with `load_error` instead expects the case itself to
be refused as input (a CaseError containing that text). Each case is read as `read_cases`
reads a line: the walk for `$any`/`$ref` markers runs only when the line holds `"$`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from toolscore.core.model import MISMATCH_CODES, CaseResult, Trajectory
from toolscore.errors import CaseError, OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case
from toolscore.specs.loading import SpecSet, parse_specs

CASES_DIR = Path(__file__).parents[1] / "cases"

# Codes no golden case covers yet, on purpose: both belong to data-flow checking ($ref and
# `after`), which is a later issue. The coverage test fails when one of them becomes covered
# (remove it here) and when any other code is left uncovered (add a golden case for it).
NOT_YET: set[str] = set()

CASE_ID = "golden"


@dataclass(frozen=True)
class Golden:
    """One golden case and the file it came from."""

    file: str
    index: int
    data: dict[str, Any]

    @property
    def id(self) -> str:
        # Plain ASCII (U+00DF for ß): ids go back to pytest as arguments (`make mutation` runs
        # tests by id), and pytest's own escapes of other characters do not survive the trip.
        name = f"{self.file}/{self.data.get('description', self.index)}"
        return "".join(c if c.isascii() else f"U+{ord(c):04X}" for c in name)


def _files() -> list[Path]:
    return sorted(CASES_DIR.glob("*.json"))


@cache
def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name}: a golden file is a JSON object"
    return data


def _specs(path: Path) -> SpecSet:
    # Parsed again for every case, not cached: `make mutation` runs for each mutant only the
    # tests that reached its function, and a cached spec would credit its loading to one case.
    data = _load(path)
    spec = data["spec_openai"] if "spec_openai" in data else data["spec"]
    specs, errors = parse_specs(spec, path.name)
    assert specs is not None, f"{path.name}: invalid spec: " + "; ".join(map(str, errors))
    return specs


def _goldens() -> list[tuple[Path, Golden]]:
    found: list[tuple[Path, Golden]] = []
    for path in _files():
        for index, case in enumerate(_load(path).get("cases", [])):
            found.append((path, Golden(path.stem, index, case)))
    return found


GOLDENS = _goldens()


def _score(path: Path, golden: Golden) -> CaseResult:
    specs = _specs(path)
    data = golden.data
    target = {"turns": data["turns"]} if "turns" in data else {"plans": data["plans"]}
    line = {"id": CASE_ID, **target, **data.get("case", {})}
    has_markers = '"$' in json.dumps(line)
    case = parse_case(line, specs, path.name, has_markers=has_markers)
    sources = ("produced", "messages", "output", "produced_line", "missing")
    given = [key for key in sources if key in data]
    assert len(given) == 1, f"{golden.id}: exactly one of {', '.join(sources)}"
    if data.get("missing", False):
        trajectory = Trajectory(CASE_ID, (), missing=True)
    elif "output" in data:
        trajectory = parse_output({"id": CASE_ID, **data["output"]}, path.name)
    elif "produced_line" in data:
        raw = data["produced_line"].encode("utf-8", "surrogatepass")
        read = parse_line(raw, path.name, 1, OutputError, lenient=True)
        trajectory = parse_output(read, path.name, 1)
    elif "messages" in data:
        trajectory = parse_output({"id": CASE_ID, "messages": data["messages"]}, path.name)
    else:
        trajectory = parse_output({"id": CASE_ID, "calls": data["produced"]}, path.name)
    return score_case(specs, case, trajectory)


def _explain(result: CaseResult) -> str:
    lines = [f"passed={result.passed} plan={result.plan} pairs={list(result.pairs)}"]
    lines += [
        f"  {m.code} call={m.call} plan_call={m.plan_call} path={m.pointer or '/'}: {m.message}"
        for m in result.mismatches
    ]
    return "\n".join(lines)


@pytest.mark.parametrize(("path", "golden"), GOLDENS, ids=[g.id for _, g in GOLDENS])
def test_golden(path: Path, golden: Golden) -> None:
    data = golden.data
    if "load_error" in data:
        with pytest.raises(CaseError, match=re.escape(data["load_error"])):
            _score(path, golden)
        return
    result = _score(path, golden)
    explanation = _explain(result)
    print(explanation)  # shown by pytest when the test fails
    assert result.passed is data["passed"], explanation
    assert sorted(m.code for m in result.mismatches) == sorted(data["codes"]), explanation
    baselines: dict[str, bool] = data.get("baselines", {})
    for name, expected in baselines.items():
        assert result.baselines[name] is expected, f"baseline {name}\n{explanation}"
    if "plan" in data:
        assert result.plan == data["plan"], f"plan\n{explanation}"
    if "name_ok" in data:
        assert result.name_ok is data["name_ok"], f"name_ok\n{explanation}"
    if "message" in data:
        assert any(data["message"] in m.message for m in result.mismatches), explanation
    if "note" in data:
        assert any(data["note"] in note for note in result.notes), result.notes
    for block in ("partial", "efficiency"):
        if block in data:
            assert case_to_json(result)[block] == data[block], f"{block}\n{explanation}"
    if "retries" in data:
        assert case_to_json(result).get("retries", []) == data["retries"], explanation
    if "pairs" in data:
        assert [list(pair) for pair in result.pairs] == data["pairs"], explanation
    if "mismatch_calls" in data:
        assert [m.call for m in result.mismatches] == data["mismatch_calls"], explanation
    if "turn_verdicts" in data:
        assert [turn.passed for turn in result.turns] == data["turn_verdicts"], explanation
    if "first_failed_turn" in data:
        assert result.first_failed_turn == data["first_failed_turn"], explanation
    if "explained" in data:
        words = [f"{m.code} {m.pointer or '/'}: {m.message}" for m in result.mismatches]
        assert words == data["explained"], explanation


def test_every_code_is_covered_except_data_flow() -> None:
    covered = Counter(code for _, golden in GOLDENS for code in golden.data.get("codes", ()))
    unknown = set(covered) - set(MISMATCH_CODES)
    assert not unknown, f"golden cases name codes outside MISMATCH_CODES: {sorted(unknown)}"
    uncovered = set(MISMATCH_CODES) - set(covered)
    assert uncovered == NOT_YET


def test_golden_files_are_described() -> None:
    assert _files(), f"no golden files under {CASES_DIR}"
    for path in _files():
        data = _load(path)
        assert isinstance(data.get("description"), str), f"{path.name}: no description"
        assert data["description"].strip(), f"{path.name}: empty description"
        assert ("spec" in data) != ("spec_openai" in data), f"{path.name}: one of spec, spec_openai"
        cases = data.get("cases")
        assert isinstance(cases, list), f"{path.name}: no cases"
        assert cases, f"{path.name}: no cases"
        seen: set[str] = set()
        for index, case in enumerate(cases):
            description = case.get("description")
            assert isinstance(description, str), f"{path.name}[{index}]: no description"
            assert description.strip(), f"{path.name}[{index}]: empty description"
            assert description not in seen, f"{path.name}: duplicate description {description!r}"
            seen.add(description)
            if "load_error" in case:
                assert "passed" not in case, f"{path.name}: {description}: load_error or passed"
                continue
            assert isinstance(case.get("passed"), bool), f"{path.name}: {description}: passed"
            assert isinstance(case.get("codes"), list), f"{path.name}: {description}: codes"
            assert case["passed"] == (not case["codes"]), (
                f"{path.name}: {description}: a case passes exactly when it expects no codes"
            )
