"""The count of a `$any` argument (`arguments._any_of_count`, a loop without generators) is
the describing walk's: on generated specs, alternatives (valid values, any JSON, `$omitted`,
nulls) and produced values, the pair's count equals the number of mismatches the walk lists,
and is 0 exactly when the walk finds none (issue 30: most of BFCL's optional arguments are
`$any`, so matching and diagnosis take this step for most pairs)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from spec_strategies import ANY_JSON, SETTINGS, build_specs, spec_dicts, valid_values
from toolscore.core.arguments import call_matches, call_mismatches, mismatch_count
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


@SETTINGS
@given(any_of_pairs())
def test_a_dollar_any_argument_counts_what_the_walk_describes(
    found: tuple[ObjectRule, Call, Call],
) -> None:
    rule, expected, produced = found
    for rules in (rule, rule.lowercased()):
        assert isinstance(rules, ObjectRule)
        count = mismatch_count(rules, expected, produced)
        described = call_mismatches(rules, expected, produced)
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
