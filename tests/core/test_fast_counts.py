"""The counts that take the describing walk's steps without its generators (issue 30) count
what it lists: a `$any` argument (`arguments._any_of_count`) and a list (`_list_count`). On
generated specs and values (valid ones, any JSON, nulls, `$omitted` alternatives, lists
shuffled or cut short), a pair's count equals the number of mismatches the walk lists, and is
0 exactly when the walk finds none. Most of BFCL's optional arguments are `$any` and many of
its values lists, so matching and diagnosis take these steps for most pairs."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from spec_strategies import (
    ANY_JSON,
    SETTINGS,
    Node,
    arg_specs,
    build_specs,
    spec_dicts,
    valid_values,
)
from toolscore.core.arguments import (
    call_matches,
    call_mismatches,
    iter_mismatches,
    mismatch_count,
)
from toolscore.core.model import OMITTED, AnyOf, Call
from toolscore.core.rules import ObjectRule


@st.composite
def any_of_pairs(draw: st.DrawFn) -> tuple[ObjectRule, Call, Call]:
    """A tool's rule, a plan call whose arguments are each a `$any` of alternatives, and a
    produced call with some of them (valid values, any JSON, null) and maybe unknown ones."""
    spec = draw(spec_dicts(relax=False))
    specs = build_specs(spec)
    tool = draw(st.sampled_from(sorted(specs.rules)))
    nodes = spec["tools"][tool]["args"]
    expected: dict[str, Any] = {}
    produced: dict[str, Any] = {}
    for name, node in nodes.items():
        values = valid_values(node) | ANY_JSON | st.none()
        alternatives = draw(st.lists(values | st.just(OMITTED), min_size=1, max_size=3))
        expected[name] = AnyOf(alternatives)
        choice = draw(st.integers(0, 3))
        if choice == 1:
            produced[name] = draw(st.sampled_from(alternatives).filter(lambda v: v is not OMITTED))
        elif choice >= 2:
            produced[name] = draw(values)
    if draw(st.booleans()):
        produced["zz"] = draw(ANY_JSON)
    return specs.rules[tool], Call(tool, expected), Call(tool, produced)


@st.composite
def list_pairs(draw: st.DrawFn) -> tuple[ObjectRule, Call, Call]:
    """The rule of a tool with a list argument (ordered or not, of any items), and two calls
    whose lists are valid or any JSON, the produced one often the expected one shuffled, cut
    short, or with an item changed."""
    node: Node = {"kind": "list", "items": draw(arg_specs(1))}
    if draw(st.booleans()):
        node["order"] = draw(st.sampled_from(["ordered", "unordered"]))
    specs = build_specs({"version": "1", "tools": {"t0": {"version": 1, "args": {"l": node}}}})
    values = valid_values(node) | ANY_JSON | st.none()
    value = draw(values)
    choice = draw(st.integers(0, 4))
    produced: Any = value
    if choice == 0 and isinstance(value, list):
        produced = draw(st.permutations(value))
    elif choice == 1 and isinstance(value, list):
        produced = value[: draw(st.integers(0, len(value)))]
    elif choice == 2 and isinstance(value, list) and value:
        produced = list(value)
        produced[draw(st.integers(0, len(value) - 1))] = draw(valid_values(node["items"]))
    elif choice == 3:
        produced = draw(values)
    return specs.rules["t0"], Call("t0", {"l": value}), Call("t0", {"l": produced})


@SETTINGS
@given(any_of_pairs())
def test_a_dollar_any_argument_counts_what_the_walk_describes(
    found: tuple[ObjectRule, Call, Call],
) -> None:
    assert_counted_as_described(*found)


@settings(SETTINGS, max_examples=400)
@given(list_pairs())
def test_a_list_counts_what_the_walk_describes(found: tuple[ObjectRule, Call, Call]) -> None:
    assert_counted_as_described(*found)


def assert_counted_as_described(rule: ObjectRule, expected: Call, produced: Call) -> None:
    """The pair's count, under the rules and the lowercase baseline's, is the number of
    mismatches the describing walk lists (the walk itself, not `call_mismatches`, which asks
    the count first)."""
    for rules in (rule, rule.lowercased()):
        assert isinstance(rules, ObjectRule)
        count = mismatch_count(rules, expected, produced)
        described = list(iter_mismatches(rules, expected.args, produced.args))
        assert count == len(described), described
        assert (count == 0) == call_matches(rules, expected, produced)


def test_only_omitted_alternatives_count_one_for_a_present_argument() -> None:
    """`{"$any": [{"$omitted": true}]}` given a value: the one acceptable answer was to leave
    it out, so the value counts one mismatch, as the walk's `unexpected_argument`."""
    specs = build_specs({"version": "1", "tools": {"t0": {"version": 1, "args": {"a": "exact"}}}})
    rule = specs.rules["t0"]
    expected = Call("t0", {"a": AnyOf([OMITTED])})
    produced = Call("t0", {"a": 1})
    assert mismatch_count(rule, expected, produced) == 1
    assert [m.code for m in call_mismatches(rule, expected, produced)] == ["unexpected_argument"]
    assert mismatch_count(rule, expected, Call("t0", {})) == 0
