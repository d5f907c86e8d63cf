"""The string rules between `exact` and `casefold` (issue 29, part 5): `normalized` is refused
without an option and with `casefold` alone is the `casefold` kind; `pattern` compiles once,
refuses a bad regex or a default it rejects, and never searches without its time limit;
`one_of` refuses sets it cannot key. Verdicts on whole cases are golden data
(tests/cases/string_rules.json)."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolscore.core.arguments import matches
from toolscore.core.rules import CasefoldRule, RuleError, compile_rule
from toolscore.core.rules import strings as string_rules
from toolscore.core.rules.strings import NORMALIZATIONS, PatternRule
from toolscore.rubrics import checks
from toolscore.specs.loading import parse_specs

TEXTS = st.text(st.sampled_from("aAbBßSsé\u0301É \t-.ﬁ"), max_size=8)


@given(st.dictionaries(st.sampled_from(NORMALIZATIONS), st.just(False)))
def test_normalized_with_every_option_off_is_refused_naming_the_options(
    off: dict[str, bool],
) -> None:
    with pytest.raises(RuleError) as error:
        compile_rule({"kind": "normalized", **off}, ("city",))
    assert error.value.path == ("city",)
    for name in NORMALIZATIONS:
        assert name in error.value.message


@given(TEXTS, TEXTS)
def test_normalized_casefold_alone_equals_the_casefold_kind(one: str, other: str) -> None:
    rule = compile_rule({"kind": "normalized", "casefold": True})
    assert matches(rule, one, other) is matches(CasefoldRule(), one, other)
    assert (rule.key(one) == rule.key(other)) is matches(rule, one, other)


@given(TEXTS, TEXTS, st.lists(st.sampled_from(NORMALIZATIONS), min_size=1, unique=True))
def test_normalized_keys_agree_with_its_verdicts(one: str, other: str, chosen: list[str]) -> None:
    rule = compile_rule({"kind": "normalized", **dict.fromkeys(chosen, True)})
    assert (rule.key(one) == rule.key(other)) is matches(rule, one, other)


def test_normalized_applies_its_options_in_one_order_whatever_the_spec_writes() -> None:
    one = compile_rule({"kind": "normalized", "strip": True, "casefold": True})
    other = compile_rule({"kind": "normalized", "casefold": True, "strip": True})
    assert one == other
    assert one.describe() == "normalized: casefold, strip"


@pytest.mark.parametrize(
    ("node", "words"),
    [
        ({"kind": "pattern"}, "pattern needs 'regex'"),
        ({"kind": "pattern", "regex": 5}, "pattern needs 'regex'"),
        ({"kind": "pattern", "regex": "("}, "regex '(' is not a valid regular expression"),
        ({"kind": "pattern", "regex": "[[a]"}, "is not a valid regular expression"),
        ({"kind": "one_of", "values": []}, "one_of needs 'values'"),
        ({"kind": "one_of", "values": ["a", "a"]}, "must be unique"),
        ({"kind": "one_of", "values": ["a", None]}, "null is not a member"),
        ({"kind": "one_of", "values": [["a"]]}, "strings, numbers or booleans"),
        ({"kind": "normalized", "strip": "yes"}, "strip must be true or false"),
        ({"kind": "pattern", "regex": "x", "strip": True}, "unknown option 'strip'"),
    ],
)
def test_bad_string_rules_are_refused_naming_why(node: dict[str, object], words: str) -> None:
    with pytest.raises(RuleError) as error:
        compile_rule(node, ("order_id",))
    assert words in error.value.message
    assert error.value.path == ("order_id",)


def test_a_pattern_default_that_does_not_match_is_a_spec_error_naming_the_rule() -> None:
    spec = {
        "tools": {
            "create": {
                "args": {"order_id": {"kind": "pattern", "regex": "ord_[0-9]+", "default": "x"}}
            }
        }
    }
    specs, errors = parse_specs(spec, "tools.yaml")
    assert specs is None
    assert len(errors) == 1
    assert "tools.create.args.order_id" in str(errors[0])
    assert "does not match the pattern" in str(errors[0])


def test_the_pattern_time_limit_is_the_rubric_regex_limit() -> None:
    assert string_rules.REGEX_SECONDS == checks.REGEX_SECONDS


def test_a_pattern_off_the_main_thread_counts_as_not_matching_with_the_reason() -> None:
    rule = compile_rule({"kind": "pattern", "regex": "[a-z]+"})
    assert isinstance(rule, PatternRule)
    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(rule.search("abc")))
    thread.start()
    thread.join()
    assert found == [
        "a pattern is searched only under its time limit, which needs the main thread and a "
        "free interval timer"
    ]
    assert rule.search("abc") is True  # on the main thread, it runs under its limit


def test_a_pattern_search_that_times_out_is_remembered_not_repeated() -> None:
    rule = compile_rule({"kind": "pattern", "regex": "(a+)+b"})
    assert isinstance(rule, PatternRule)
    text = "a" * 60 + "c"
    first = rule.search(text)
    assert isinstance(first, str)
    assert "did not finish within 1 s" in first
    assert text in rule._timed_out
    assert rule.search(text) == first
    assert rule.search("aab") is True  # other values are still searched


def test_one_of_keeps_json_types_apart() -> None:
    rule = compile_rule({"kind": "one_of", "values": [1, "a", True]})
    assert matches(rule, 1, 1.0)
    assert matches(rule, "a", True)
    assert not matches(rule, 1, "1")
    assert not matches(rule, "a", "A")
    assert not matches(rule, True, 2)
