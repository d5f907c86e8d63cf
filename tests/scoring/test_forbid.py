"""Forbidden calls and `max_calls` across a run: the spec's own problems, the summary's
`forbidden_calls` (merged across workers as one builder counts it), and the terminal's
critical-failures line. The verdicts of single cases are golden data (tests/cases/forbid.json).
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from toolscore.core.model import Case, CaseResult
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.terminal import critical_line, render_summary
from toolscore.scoring.case import score_case
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import SpecSet, parse_specs

SPEC: dict[str, Any] = {
    "version": "1",
    "tools": {
        "lookup": {"args": {"id": "exact"}},
        "delete": {
            "args": {"id": "exact", "mode": {"kind": "casefold", "reason": "case-insensitive"}}
        },
        "wipe": {"args": {}},
        "note": {"args": {"text": "text"}},
    },
    "relax": [{"allow": "extra_calls", "tools": ["lookup", "delete", "wipe"], "reason": "ok"}],
    "forbid": [
        {"tool": "delete", "args": {"mode": "delete"}, "reason": "a hard delete cannot be undone"},
        {"tool": "wipe", "reason": "never asked for"},
    ],
}

# The worked example of docs/formats.md ("Forbidden calls and max_calls"): four cases.
LINES: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
    (
        {"id": "c1", "plans": [[{"name": "lookup", "args": {"id": "a"}}]]},
        [{"name": "lookup", "args": {"id": "a"}},
         {"name": "delete", "args": {"id": "a", "mode": "DELETE"}}],
    ),
    (
        {"id": "c2", "plans": [[{"name": "lookup", "args": {"id": "b"}}]]},
        [{"name": "lookup", "args": {"id": "b"}}, {"name": "wipe"}, {"name": "wipe"}],
    ),
    (
        {"id": "c3", "plans": [[{"name": "lookup", "args": {"id": "c"}}]]},
        [{"name": "lookup", "args": {"id": "c"}}],
    ),
    (
        {"id": "c4", "plans": [[{"name": "lookup", "args": {"id": "d"}}]], "max_calls": 1},
        [{"name": "lookup", "args": {"id": "d"}}, {"name": "lookup", "args": {"id": "e"}}],
    ),
]  # fmt: skip


def specs_of(data: dict[str, Any]) -> SpecSet:
    specs, errors = parse_specs(data, "tools.yaml")
    assert specs is not None, errors
    return specs


def scored(specs: SpecSet) -> list[tuple[Case, CaseResult]]:
    pairs = []
    for number, (line, calls) in enumerate(LINES, 1):
        case = parse_case(line, specs, "cases.jsonl", number)
        trajectory = parse_output({"id": line["id"], "calls": calls}, "outputs.jsonl", number)
        pairs.append((case, score_case(specs, case, trajectory)))
    return pairs


def test_the_worked_example_counts_forbidden_calls_apart() -> None:
    specs = specs_of(SPEC)
    results = scored(specs)
    assert [r.passed for _, r in results] == [False, False, True, False]
    assert [r.baselines["lowercase"] for _, r in results] == [True, True, True, True]
    builder = SummaryBuilder(specs)
    for case, result in results:
        builder.add(case, result)
    summary = builder.finish().to_dict()
    forbidden = summary["forbidden_calls"]
    assert forbidden["calls"] == 3
    assert forbidden["cases"] == 2
    assert forbidden["per_tool"] == {"delete": 1, "wipe": 2}
    assert forbidden["rate"]["value"] == 0.5
    assert forbidden["rate"]["n"] == 4
    assert forbidden["rate"]["passed"] == 2
    assert forbidden["rate"]["ci95"] == pytest.approx([0.1500, 0.8500], abs=5e-4)
    assert summary["codes"] == {"forbidden_call": 3, "too_many_calls": 1}
    assert summary["passed"] == 1


def test_summary_counts_merged_across_two_builders_equal_one_builder() -> None:
    specs = specs_of(SPEC)
    results = scored(specs)
    one = SummaryBuilder(specs)
    for case, result in results:
        one.add(case, result)
    first, second = SummaryBuilder(specs), SummaryBuilder(specs)
    for case, result in results[:1]:
        first.add(case, result)
    for case, result in results[1:]:
        second.add(case, result)
    first.merge(second)
    assert first.finish().to_dict() == one.finish().to_dict()


def test_a_run_without_forbid_entries_reports_none() -> None:
    data = {**SPEC, "forbid": []}
    summary = SummaryBuilder(specs_of(data)).finish()
    assert summary.to_dict()["forbidden_calls"] == {
        "calls": 0, "cases": 0, "rate": {"value": None, "n": 0, "passed": 0, "ci95": None},
        "per_tool": {},
    }  # fmt: skip
    assert critical_line(summary) is None


def test_the_terminal_shows_critical_failures_first() -> None:
    specs = specs_of(SPEC)
    builder = SummaryBuilder(specs)
    results = scored(specs)
    for case, result in results:
        builder.add(case, result)
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    render_summary(console, specs, "0", builder.finish(), [r for _, r in results if not r.passed])
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "critical failures: 3 forbidden calls in 2 cases (rate 50.0% of 4 cases, "
        "95% interval 15.0% - 85.0%; wipe x2, delete x1)"
    )
    text = out.getvalue()
    assert "forbidden_call call 1: call 1 to 'delete' is forbidden by the spec's forbid[0]" in text
    assert "too_many_calls: 2 calls made, at most 1 allowed" in text


@pytest.mark.parametrize(
    ("forbid", "message"),
    [
        ({"tool": "dlete", "reason": "r"}, "forbid[0].tool: 'dlete' is not a tool in the spec"),
        ({"tool": "delete", "args": {"level": 1}, "reason": "r"},
         "forbid[0].args.level: tool 'delete' has no argument 'level'"),
        ({"tool": "delete"}, "forbid[0].reason: every forbid entry needs a reason"),
        ({"tool": "delete", "reason": " "}, "forbid[0].reason: every forbid entry needs a reason"),
        ("delete", "forbid[0]: must be an object with tool, args, reason"),
        ({"tool": "delete", "reason": "r", "why": 1}, "forbid[0].why: unknown key"),
        ({"tool": "delete", "args": ["mode"], "reason": "r"}, "forbid[0].args: must be an object"),
        ({"tool": "note", "args": {"text": "x"}, "reason": "r"},
         "forbid[0].args.text: argument 'text' is never compared (text)"),
        ({"tool": "delete", "args": {"mode": {"$any": "hard"}}, "reason": "r"},
         "forbid[0].args.mode: $any must be the only key, with a non-empty list"),
        ({"tool": "delete", "args": {"mode": {"$ref": "a#/b"}}, "reason": "r"},
         "forbid[0].args.mode: $ref to unknown label"),
    ],
)  # fmt: skip
def test_a_bad_spec_forbid_entry_is_a_spec_error_naming_the_entry(
    forbid: Any, message: str
) -> None:
    specs, errors = parse_specs({**SPEC, "forbid": [forbid]}, "tools.yaml")
    assert specs is None
    assert len(errors) == 1, errors
    assert str(errors[0]).startswith("tools.yaml: "), errors[0]
    assert message in str(errors[0]), errors[0]


def test_spec_forbid_must_be_a_list() -> None:
    specs, errors = parse_specs({**SPEC, "forbid": {"tool": "wipe"}}, "tools.yaml")
    assert specs is None
    assert [str(e) for e in errors] == [
        "tools.yaml: forbid: must be a list of {tool, args, reason} entries"
    ]


def test_a_plan_that_calls_what_the_spec_forbids_is_refused_on_a_plain_line() -> None:
    specs = specs_of(SPEC)
    line = {"id": "x", "plans": [[{"name": "lookup", "args": {"id": "a"}}, {"name": "wipe"}]]}
    with pytest.raises(Exception, match=r"cases.jsonl:7: plans\[0\]\[1\]: the plan makes a call "
                       r"that the spec's forbid\[1\] forbids \(never asked for\)"):  # fmt: skip
        parse_case(line, specs, "cases.jsonl", 7)


_CALLS = st.sampled_from([
    {"name": "lookup", "args": {"id": "a"}},
    {"name": "lookup", "args": {"id": "b"}},
    {"name": "delete", "args": {"id": "a", "mode": "soft"}},
    {"name": "delete", "args": {"id": "a", "mode": "Delete"}},
    {"name": "delete", "args": {"id": "b"}},
    {"name": "wipe"},
])  # fmt: skip


def _brute_force(call: dict[str, Any]) -> bool:
    """Whether SPEC's entries forbid `call`, written out by hand."""
    mode = call.get("args", {}).get("mode")
    return bool(call["name"] == "wipe" or (call["name"] == "delete" and mode == "Delete"))


@given(st.lists(_CALLS, max_size=8), st.randoms(use_true_random=False))
def test_forbidden_calls_are_each_matching_call_in_any_order(
    calls: list[dict[str, Any]], rng: Any
) -> None:
    specs = specs_of(SPEC)
    case = parse_case({"id": "p", "plans": [[{"name": "lookup", "args": {"id": "a"}}]]}, specs)
    shuffled = list(calls)
    rng.shuffle(shuffled)
    found = []
    for order in (calls, shuffled):
        result = score_case(specs, case, parse_output({"id": "p", "calls": order}))
        forbidden = [m.call for m in result.mismatches if m.code == "forbidden_call"]
        assert forbidden == [i for i, call in enumerate(order) if _brute_force(call)]
        assert not (result.passed and forbidden)
        found.append(len(forbidden))
    assert found[0] == found[1]
