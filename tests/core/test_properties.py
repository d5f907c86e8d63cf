"""Property tests: invariants of the scorer that must hold for every spec, case and output.

Specs are generated first; each argument kind then knows which values are valid for it and
which rewrites its rule forgives, so that expected plans and produced calls can be generated
from the spec without re-implementing the scorer.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spec_strategies import (
    ANY_JSON,
    SETTINGS,
    TEXT,
    TRICKY_TEXT,
    Node,
    arg_specs,
    as_produced,
    build_specs,
    equivalents,
    object_values,
    plans_and_calls,
    spec_dicts,
    valid_values,
)
from toolscore.core.arguments import call_matches, call_mismatches, matches, mismatch_count
from toolscore.core.diagnosis import best_plan
from toolscore.core.model import Case, CaseResult, Trajectory
from toolscore.core.rules import compile_rule
from toolscore.errors import OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case
from toolscore.scoring.stream import score

RULE_SETTINGS = settings(SETTINGS, max_examples=600)
"""Single rules are cheap to check, so they get more examples."""

# --- JSON values ----------------------------------------------------------------------------


# --- spec nodes -----------------------------------------------------------------------------

# Every kind the library has; a new one needs its branch in `valid_values` and `equivalents`.
# Case variants and Unicode folds on purpose: the lowercase baseline must cope with them.


# --- values a rule accepts, and rewrites it forgives ----------------------------------------


@st.composite
def rules_and_values(draw: st.DrawFn) -> tuple[Node, Any]:
    """A spec node and a value valid for it."""
    node = draw(arg_specs())
    return node, draw(valid_values(node))


@st.composite
def rules_values_and_others(draw: st.DrawFn, rewrites_only: bool) -> tuple[Node, Any, Any]:
    """A spec node, a value valid for it, and a rewrite its rule forgives (or any valid value)."""
    node, value = draw(rules_and_values())
    others = equivalents(node, value)
    return node, value, draw(others if rewrites_only else others | valid_values(node))


# --- plans and produced calls ---------------------------------------------------------------


@st.composite
def plain_calls(draw: st.DrawFn, spec: Node, min_size: int = 0) -> list[Node]:
    """Expected calls with valid arguments and no `$any` markers."""
    tools = spec["tools"]
    names = draw(st.lists(st.sampled_from(sorted(tools)), min_size=min_size, max_size=4))
    return [{"name": n, "args": draw(object_values(tools[n]["args"]))} for n in names]


def codes(result: CaseResult) -> Counter[str]:
    """The multiset of a result's mismatch codes."""
    return Counter(m.code for m in result.mismatches)


def output(calls: list[Any], case_id: str = "c") -> Trajectory:
    """The trajectory of an outputs line with these calls."""
    return parse_output({"id": case_id, "calls": calls})


# --- 1. a call always matches itself --------------------------------------------------------


@RULE_SETTINGS
@given(rules_and_values())
def test_a_valid_value_matches_itself(rule_and_value: tuple[Node, Any]) -> None:
    node, value = rule_and_value
    assert matches(compile_rule(node), value, value)


@RULE_SETTINGS
@given(rules_values_and_others(rewrites_only=True))
@example(({"kind": "number", "coerce": True}, 2**53 + 1, str(2**53 + 1)))
@example(({"kind": "enum", "values": ["a", None], "aliases": {"x": None}}, None, "x"))
def test_a_rewrite_the_rule_forgives_matches(case: tuple[Node, Any, Any]) -> None:
    node, value, rewritten = case
    assert matches(compile_rule(node), value, rewritten)


@SETTINGS
@given(st.data())
def test_a_plan_produced_verbatim_passes(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    calls = data.draw(plain_calls(spec), label="calls")
    case = parse_case({"id": "c", "plans": [calls]}, specs)
    as_text = data.draw(st.booleans(), label="args as JSON text")
    result = score_case(specs, case, output([as_produced(c, as_text) for c in calls]))
    assert result.passed, result.mismatches


# --- 2. shuffling produced calls never changes a verdict ------------------------------------


@SETTINGS
@given(st.data())
def test_shuffling_calls_never_changes_the_verdict(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    plans, calls = data.draw(plans_and_calls(spec), label="plans, calls")
    case = parse_case({"id": "c", "plans": plans}, specs)
    shuffled = data.draw(st.permutations(calls), label="shuffled")
    before = score_case(specs, case, output(calls))
    after = score_case(specs, case, output(shuffled))
    assert before.passed == after.passed
    assert codes(before) == codes(after)
    assert before.plan == after.plan
    assert before.name_ok == after.name_ok
    assert before.baselines["lowercase"] == after.baselines["lowercase"]


# --- 3. scoring is deterministic ------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_scoring_is_deterministic(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    cases: list[Case] = []
    outputs: list[Trajectory] = []
    for index in range(data.draw(st.integers(1, 4), label="cases")):
        plans, calls = data.draw(plans_and_calls(spec), label=f"case {index}")
        cases.append(parse_case({"id": f"c{index}", "plans": plans}, specs))
        if data.draw(st.integers(0, 4), label=f"output {index} missing") > 0:
            outputs.append(output(calls, f"c{index}"))
    if data.draw(st.booleans(), label="unmatched output"):
        outputs.append(output([], "not-a-case"))
    outputs = data.draw(st.permutations(outputs), label="output order")

    for case in cases:
        trajectory = next((t for t in outputs if t.case_id == case.id), output([], case.id))
        assert score_case(specs, case, trajectory) == score_case(specs, case, trajectory)

    first, second = score(specs, cases, outputs), score(specs, cases, outputs)
    assert list(first) == list(second)
    assert first.summary().to_dict() == second.summary().to_dict()
    assert first.unmatched_output_ids == second.unmatched_output_ids


# --- 4. arbitrary produced JSON is scored, never raised -------------------------------------


@st.composite
def junk_calls(draw: st.DrawFn, spec: Node) -> Any:
    """Anything an agent might put in `calls`, from junk to almost-valid calls of real tools."""
    tools = spec["tools"]
    tool = draw(st.sampled_from(sorted(tools)))
    args_node = tools[tool]["args"]
    shape = draw(st.sampled_from(["json", "raw args", "near miss"]))
    if shape == "json":
        return draw(ANY_JSON)
    if shape == "raw args":
        args = draw(
            ANY_JSON | TEXT | TRICKY_TEXT | ANY_JSON.map(lambda v: orjson.dumps(v).decode())
        )
        call: dict[str, Any] = {"name": tool, "args": args}
        if draw(st.booleans()):
            call["id"] = draw(ANY_JSON)
        if draw(st.booleans()):
            call["result"] = draw(ANY_JSON)
        return call
    args = draw(object_values(args_node))
    names = st.sampled_from([*args_node, "zz"])
    args.update(draw(st.dictionaries(names, ANY_JSON, max_size=3)))
    return {"name": tool, "args": args}


@SETTINGS
@given(st.data())
def test_any_produced_json_is_scored_without_raising(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    abstention = data.draw(st.booleans(), label="abstention case")
    plans = [] if abstention else [data.draw(plain_calls(spec, min_size=1), label="plan")]
    case = parse_case({"id": "c", "plans": plans}, specs)
    calls = data.draw(st.lists(junk_calls(spec), max_size=4), label="calls")
    trajectory = output(calls)
    result = score_case(specs, case, trajectory)
    assert isinstance(result, CaseResult)
    if abstention and calls:
        assert not result.passed, "an abstention case passed although calls were made"
    score(specs, [case], [trajectory]).summary().to_dict()


@SETTINGS
@given(st.data())
def test_a_mismatch_count_is_the_number_of_mismatches_described(data: st.DataObject) -> None:
    """`mismatch_count` (an argument at a time, what pairing by cost uses) counts what the
    describing walk lists, and counts 0 exactly when the calls match."""
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    plan = data.draw(plain_calls(spec, min_size=1), label="plan")
    case = parse_case({"id": "c", "plans": [plan]}, specs)
    made = data.draw(st.lists(junk_calls(spec), max_size=4), label="calls")
    calls = output(made).calls
    for rules in (specs.rules, specs.lowercase_rules):  # the lowercase rules ignore omissions
        for expected in case.plans[0]:
            rule = rules[expected.name]
            for produced in calls:
                if produced.name != expected.name:
                    continue
                count = mismatch_count(rule, expected, produced)
                assert count == len(call_mismatches(rule, expected, produced))
                assert (count == 0) == call_matches(rule, expected, produced)


@SETTINGS
@given(ANY_JSON)
@example([{"role": None}])
def test_only_a_calls_field_that_is_not_a_list_is_an_output_error(calls: Any) -> None:
    """A list is read call by call, one entry each, except an entry that is plainly no call
    (a message, a provider's object): that one is refused where it stands (`calls[k]`)."""
    refused: str | None = None
    try:
        trajectory = parse_output({"id": "c", "calls": calls})
    except OutputError as error:
        refused = str(error)
    if refused is not None:
        assert not isinstance(calls, list) or "calls[" in refused
        return
    assert calls is None or isinstance(calls, list)
    assert len(trajectory.calls) == (0 if calls is None else len(calls))


# --- 5. the lowercase baseline is never stricter than the rules -----------------------------


@RULE_SETTINGS
@given(rules_values_and_others(rewrites_only=False))
@example(({"kind": "enum", "values": ["b", "a", "A"], "aliases": {"x": "a"}}, "a", "x"))
@example(({"kind": "enum", "values": ["a", "ss"], "aliases": {"x": "ss", "X": "a"}}, "ss", "x"))
def test_lowercase_rule_accepts_what_the_rule_accepts(case: tuple[Node, Any, Any]) -> None:
    node, value, other = case
    rule = compile_rule(node)
    if matches(rule, value, other):
        assert matches(rule.lowercased(), value, other)


@SETTINGS
@given(st.data())
def test_lowercase_baseline_passes_whenever_the_rules_pass(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    noise = data.draw(st.booleans(), label="noise")
    plans, calls = data.draw(plans_and_calls(spec, noise), label="plans, calls")
    case = parse_case({"id": "c", "plans": plans}, specs)
    trajectory = output(calls)
    result = score_case(specs, case, trajectory)
    if result.passed:
        assert result.baselines["lowercase"]
        # score_case short-cuts the baseline when the rules pass; decide it on its own too.
        lowercase = best_plan(
            specs.lowercase_rules, specs.extra_ok, case.plans, trajectory.calls, diagnose=False
        )
        assert lowercase.passed


# --- 6. the exact baseline passes a verbatim copy of the first plan -------------------------


@SETTINGS
@given(st.data())
def test_exact_baseline_passes_the_first_plan_verbatim(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    first = data.draw(plain_calls(spec), label="first plan")
    others = data.draw(st.lists(plain_calls(spec), max_size=2), label="other plans")
    case = parse_case({"id": "c", "plans": [first, *others]}, specs)
    as_text = data.draw(st.booleans(), label="args as JSON text")
    result = score_case(specs, case, output([as_produced(c, as_text) for c in first]))
    assert result.baselines["exact"]
    assert result.passed, result.mismatches
