"""The named call rates (`unknown_tool_rate`, `missing_argument_rate`,
`unexpected_argument_rate`), counted on the golden cases of tests/cases/rates.json: each case's
counts, the run's three rates (the worked example of docs/formats.md 7.8), merging, the
missing policy, trials and a stored run's summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolscore.core.model import Case, CaseResult, Trajectory
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case
from toolscore.scoring.rates import RATE_KEYS, CallRates
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import SpecSet, parse_specs
from toolscore.store.restore import summary_from_json

ROOT = Path(__file__).parents[2]
GOLDEN = json.loads((ROOT / "tests" / "cases" / "rates.json").read_text(encoding="utf-8"))


def _specs() -> SpecSet:
    specs, problems = parse_specs(GOLDEN["spec"], "rates.json")
    assert specs is not None, problems
    return specs


SPECS = _specs()


def _scored(index: int, data: dict[str, Any], trial: int | None = None) -> tuple[Case, CaseResult]:
    case = parse_case({"id": f"c{index}", "plans": data["plans"]}, SPECS, "rates.json")
    if data.get("missing", False):
        trajectory = Trajectory(case.id, (), missing=True)
    else:
        line: dict[str, Any] = {"id": case.id, "calls": data["produced"]}
        if trial is not None:
            line["trial"] = trial
        trajectory = parse_output(line, "rates.json")
    return case, score_case(SPECS, case, trajectory)


RESULTS = [_scored(i, data) for i, data in enumerate(GOLDEN["cases"])]


def _builder(results: list[tuple[Case, CaseResult]], missing: str = "fail") -> SummaryBuilder:
    builder = SummaryBuilder(SPECS, missing=missing)
    for case, result in results:
        builder.add_case(case, [result], 0 if result.missing_output else 1)
    return builder


@pytest.mark.parametrize("index", range(len(GOLDEN["cases"])))
def test_each_case_adds_its_calls_pairs_and_faults(index: int) -> None:
    tally = CallRates()
    tally.add(RESULTS[index][1])
    assert vars(tally) == GOLDEN["cases"][index]["rates"], GOLDEN["cases"][index]["description"]


def test_the_run_s_rates_are_the_worked_example() -> None:
    summary = _builder(RESULTS).finish().to_dict()
    assert {key: summary[key] for key in RATE_KEYS} == GOLDEN["summary"]
    keys = list(summary)
    assert keys.index("codes") < keys.index("unknown_tool_rate") < keys.index("per_tool")


def test_docs_give_the_worked_example_s_figures() -> None:
    formats = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for key, rate in GOLDEN["summary"].items():
        assert f'"{key}": {json.dumps(rate)}' in formats, key


@pytest.mark.parametrize("cut", range(len(RESULTS) + 1))
def test_two_builders_merged_equal_one(cut: int) -> None:
    first, second = _builder(RESULTS[:cut]), _builder(RESULTS[cut:])
    first.merge(second)
    merged = first.finish().to_dict()
    whole = _builder(RESULTS).finish().to_dict()
    assert {key: merged[key] for key in RATE_KEYS} == {key: whole[key] for key in RATE_KEYS}
    assert merged == whole


def test_excluded_cases_count_nowhere() -> None:
    excluded = _builder(RESULTS, missing="exclude").finish().to_dict()
    present = _builder([pair for pair in RESULTS if not pair[1].missing_output]).finish()
    assert {key: excluded[key] for key in RATE_KEYS} == GOLDEN["summary"]
    assert {key: excluded[key] for key in RATE_KEYS} == {
        key: present.to_dict()[key] for key in RATE_KEYS
    }


def test_each_trial_is_counted_as_a_case() -> None:
    data = GOLDEN["cases"][0]  # 3 produced calls, 1 unknown, 2 paired
    first, again = _scored(0, data, trial=1), _scored(0, data, trial=2)
    builder = SummaryBuilder(SPECS)
    builder.add_case(first[0], [first[1], again[1]], 2)
    summary = builder.finish().to_dict()
    assert summary["unknown_tool_rate"]["passed"] == 2
    assert summary["unknown_tool_rate"]["n"] == 6
    assert summary["missing_argument_rate"]["n"] == 4


def test_an_empty_run_measures_no_rate() -> None:
    summary = SummaryBuilder(SPECS).finish().to_dict()
    for key in RATE_KEYS:
        assert summary[key] == {"value": None, "n": 0, "passed": 0, "ci95": None}


def test_a_stored_summary_keeps_its_rates_and_an_older_one_gets_none() -> None:
    written = _builder(RESULTS).finish().to_dict()
    assert summary_from_json(written).to_dict() == written
    older = {key: value for key, value in written.items() if key not in RATE_KEYS}
    restored = summary_from_json(older)
    assert restored.call_rates is None
    assert not set(RATE_KEYS) & set(restored.to_dict())


NAMES = ("get_order", "refund", "notify", "lookup", "search_web")
"""Three tools of the spec and two it lacks."""
CALLS = st.lists(
    st.builds(
        lambda name, order: {"name": name, "args": {"order_id": order}},
        st.sampled_from(NAMES),
        st.sampled_from(("o-1", "o-2")),
    ),
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(plan=CALLS.map(lambda calls: [c for c in calls if c["name"] == "get_order"]), made=CALLS)
def test_every_call_to_a_tool_the_spec_lacks_gets_one_unknown_tool(
    plan: list[dict[str, Any]], made: list[dict[str, Any]]
) -> None:
    # No relaxation names a tool the spec lacks, so no such call is ever excused: a case
    # with one fails, and each gets exactly one `unknown_tool`, at its own position.
    case = parse_case({"id": "p", "plans": [plan] if plan else []}, SPECS)
    result = score_case(SPECS, case, parse_output({"id": "p", "calls": made}))
    unknown = [j for j, call in enumerate(made) if call["name"] not in SPECS.tools]
    marked = [m.call for m in result.mismatches if m.code == "unknown_tool"]
    assert sorted(j for j in marked if j is not None) == unknown
    assert len(marked) == len(unknown)
    assert not (unknown and result.passed)
    tally = CallRates()
    tally.add(result)
    assert (tally.unknown_tool, tally.produced) == (len(unknown), len(made))
