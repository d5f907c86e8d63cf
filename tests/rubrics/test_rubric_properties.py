"""Properties of rubrics: adding them to a spec never changes any call-level field of the
report, and a deterministic rubric judges any text without raising.

Specs, cases and outputs come from test_properties' strategies; the same spec is scored
with rubrics on its text arguments (named and inline, every deterministic kind) and without
any, through the path `toolscore score` takes (`ParallelScoring`), and the two reports must
be equal once the rubric keys are taken out.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from spec_strategies import ANY_JSON, SETTINGS, Node, build_specs, plans_and_calls, spec_dicts
from toolscore.engines.local import LOCAL_RUBRICS, ParallelScoring
from toolscore.rubrics.checks import LocalRubric
from toolscore.rubrics.spec import parse_rubric
from toolscore.state.limits import alarms_installed

RUBRICS: list[Node] = [
    {"kind": "not_empty"},
    {"kind": "length", "min": 1, "max": 3},
    {"kind": "contains", "phrases": ["a", "ß"], "casefold": True},
    {"kind": "not_contains", "phrases": ["."]},
    {"kind": "regex", "pattern": "^[a-z]+$"},
    {"kind": "regex", "pattern": "\\d", "must_match": False},
    {"checks": [{"kind": "not_empty"}, {"kind": "length", "max": 5}]},
]


@st.composite
def specs_with_rubrics(draw: st.DrawFn) -> tuple[Node, Node]:
    """A spec whose tools all have a `note` text argument with a rubric, rubrics on most
    other text arguments (top level and in objects), and the same spec without any."""
    plain = draw(spec_dicts())
    for tool in plain["tools"].values():
        tool["args"]["note"] = {"kind": "text"}
    rubbed = copy.deepcopy(plain)
    rubbed["rubrics"] = {"named": draw(st.sampled_from(RUBRICS))}
    for tool in rubbed["tools"].values():
        _add_rubrics(draw, tool["args"], top=tool["args"])
    return plain, rubbed


def _add_rubrics(draw: st.DrawFn, args: dict[str, Node], top: dict[str, Node]) -> None:
    for name, node in args.items():
        if node["kind"] == "text" and (name == "note" or draw(st.integers(0, 3)) > 0):
            others = [a for a in top if a != name]
            choices: list[Any] = ["named", *RUBRICS]
            if others:
                choices.append({"kind": "mentions", "argument": draw(st.sampled_from(others))})
            node["rubric"] = draw(st.sampled_from(choices))
        elif node["kind"] == "object":
            _add_rubrics(draw, node["args"], top)


def _report(spec: Node, directory: Path, rubrics: str | None) -> tuple[list[Any], Any]:
    specs = build_specs(spec)
    run = ParallelScoring(
        specs, str(directory / "cases.jsonl"), str(directory / "outputs.jsonl"), 1,
        want_report=True, chunk_size=3, rubrics=rubrics,
    )  # fmt: skip
    cases = [orjson.loads(line) for outcome in run for line in outcome.report_lines]
    return cases, run.summary().finish().to_dict()


@settings(SETTINGS, max_examples=60)
@given(st.data())
def test_adding_rubrics_never_changes_a_call_level_field(data: st.DataObject) -> None:
    plain, rubbed = data.draw(specs_with_rubrics(), label="specs")
    specs = build_specs(rubbed)
    lines_cases, lines_outputs = [], []
    for index in range(data.draw(st.integers(1, 5), label="cases")):
        plans, calls = data.draw(plans_and_calls(rubbed), label=f"case {index}")
        lines_cases.append(orjson.dumps({"id": f"c{index}", "plans": plans}))
        lines_outputs.append(orjson.dumps({"id": f"c{index}", "calls": calls}))
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        (directory / "cases.jsonl").write_bytes(b"\n".join(lines_cases) + b"\n")
        (directory / "outputs.jsonl").write_bytes(b"\n".join(lines_outputs) + b"\n")
        with_cases, with_summary = _report(rubbed, directory, LOCAL_RUBRICS)
        without_cases, without_summary = _report(plain, directory, None)
    assert set(specs.rubric_uses) == set(specs.tools)  # every tool's note has a rubric
    assert "rubrics" in with_summary
    with_summary.pop("rubrics")
    assert with_summary == without_summary
    for case in with_cases:
        case.pop("rubrics", None)
    assert with_cases == without_cases


CHECK_NODES = st.sampled_from(
    [
        {"kind": "not_empty"},
        {"kind": "length", "min": 2, "max": 9},
        {"kind": "contains", "phrases": ["ß", "e\u0301", "."], "casefold": True},
        {"kind": "not_contains", "phrases": ["\u0130", "*"]},
        {"kind": "regex", "pattern": "^(a|b)+[0-9]?$"},
        {"kind": "mentions", "argument": "x"},
    ]
)


@settings(SETTINGS, max_examples=300)
@given(
    st.lists(CHECK_NODES, min_size=1, max_size=4),
    st.text(),
    st.dictionaries(st.sampled_from(["x", "y"]), ANY_JSON, max_size=2),
)
def test_a_deterministic_rubric_judges_any_text_without_raising(
    checks: list[Node], text: str, arguments: dict[str, Any]
) -> None:
    """Any text, sent with any other arguments, gets a verdict: a score in [0, 1] that is 1
    exactly when it passes, or unscored with a reason; and the same verdict twice."""
    rubric = parse_rubric("r", {"checks": checks})
    assert isinstance(rubric, LocalRubric)
    with alarms_installed():
        verdict = rubric.score(text, arguments)
        assert rubric.score(text, arguments) == verdict
    if verdict.unscored is not None:
        assert (verdict.score, verdict.passed) == (None, None)
        return
    assert verdict.score is not None
    assert 0.0 <= verdict.score <= 1.0
    assert verdict.passed is (verdict.score == 1.0)
    assert verdict.reason
