"""Rule objects on their own: how each shows itself in reports, what it forgives, and the
edges of coercion that golden cases do not reach."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

import pytest

from toolscore.core.arguments import matches
from toolscore.core.model import MISSING, OMITTED
from toolscore.core.rules import (
    KINDS,
    EnumRule,
    ExactRule,
    ListRule,
    LowercaseRule,
    NumberRule,
    ObjectRule,
    Rule,
    RuleError,
    TextRule,
    compile_rule,
    parse_timezone,
)
from toolscore.core.values import json_equal, json_type, show, suggest


@pytest.mark.parametrize(
    ("node", "shown"),
    [
        ("exact", "exact"),
        ({"kind": "casefold", "reason": "r"}, "casefold"),
        ({"kind": "number", "tol": 0.005}, "number tol=0.005"),
        ({"kind": "number", "rel_tol": 0.01, "coerce": True}, "number rel_tol=0.01 coerce=true"),
        ({"kind": "integer", "coerce": True}, "integer coerce=true"),
        (
            {"kind": "number", "tol": 0.5, "rel_tol": 0.01, "coerce": True},
            "number tol=0.5 rel_tol=0.01 coerce=true",
        ),
        ({"kind": "datetime", "naive_tz": "+02:00"}, "datetime naive_tz=+02:00"),
        ("boolean", "boolean"),
        (
            {"kind": "enum", "values": ["EUR", "USD"], "aliases": {"euro": "EUR", "$": "USD"}},
            "enum values=EUR|USD aliases=euro->EUR,$->USD",
        ),
        ({"kind": "date", "formats": ["%d/%m/%Y", "%Y%m%d"]}, "date formats=%d/%m/%Y,%Y%m%d"),
        ({"kind": "datetime", "tol": 60, "naive_tz": "UTC"}, "datetime tol=60.0 naive_tz=UTC"),
        ({"kind": "text", "rubric": "polite"}, "text"),
        ("ignored", "ignored"),
        ("list", "list of exact"),
        ({"kind": "list", "items": "casefold", "order": "unordered"}, "list unordered of casefold"),
        ({"kind": "object", "args": {"a": "exact"}}, "object"),
    ],
)
def test_a_rule_shows_its_kind_and_options(node: Any, shown: str) -> None:
    rule = compile_rule(node)
    assert rule.describe() == shown
    assert repr(rule) == f"<{shown}>"


def test_list_options_name_items_and_order() -> None:
    assert ListRule().options() == {"items": "exact"}
    unordered = ListRule(items=NumberRule(tol=0.5), ordered=False)
    assert unordered.options() == {"items": "number tol=0.5", "order": "unordered"}


@pytest.mark.parametrize(
    ("node", "lenient"),
    [
        ("exact", False),
        ({"kind": "casefold"}, True),
        ({"kind": "number", "tol": 1}, False),
        ({"kind": "number", "coerce": True}, True),
        ({"kind": "integer", "coerce": True}, True),
        ({"kind": "boolean", "coerce": False}, False),
        ({"kind": "enum", "values": ["a"]}, False),
        ("text", False),
    ],
)
def test_lenient_rules_are_the_ones_that_should_say_why(node: Any, lenient: bool) -> None:
    assert compile_rule(node).is_lenient() is lenient


def test_containers_are_walked_never_judged() -> None:
    for rule in (ListRule(), ObjectRule()):
        with pytest.raises(TypeError, match=r"walked by arguments\.iter_mismatches"):
            rule.judge([], [])
    with pytest.raises(NotImplementedError):
        Rule().judge(1, 1)


def test_the_lowercase_view_of_each_rule() -> None:
    exact = ExactRule(default="x", reason="r")
    assert exact.lowercased() == LowercaseRule(default="x", reason="r")
    enum = compile_rule({"kind": "enum", "values": ["EUR", "USD"], "aliases": {"euro": "EUR"}})
    assert isinstance(enum, EnumRule)
    folded = enum.lowercased()
    assert isinstance(folded, EnumRule)
    assert folded.fold
    assert not enum.fold
    assert folded.judge("EUR", "Euro") is None
    assert folded.judge("EUR", "eur") is None
    assert folded.judge("EUR", "usd") is not None
    assert enum.judge("EUR", "Euro") is not None
    nested = compile_rule({"kind": "object", "args": {"a": {"kind": "list", "items": "exact"}}})
    assert isinstance(nested, ObjectRule)
    lowered = nested.lowercased()
    assert isinstance(lowered, ObjectRule)
    assert lowered.ignore_missing
    assert not nested.ignore_missing
    inner = lowered.args["a"]
    assert isinstance(inner, ListRule)
    assert isinstance(inner.items, LowercaseRule)
    assert matches(lowered, {"a": ["X"]}, {"a": ["x"]})
    assert matches(lowered, {"a": ["X"]}, {})
    assert not matches(nested, {"a": ["X"]}, {"a": ["x"]})


def test_enum_aliases_and_values_mean_the_very_same_value() -> None:
    enum = compile_rule(
        {"kind": "enum", "values": ["EUR", 1, True, None], "aliases": {"euro": "EUR", "one": 1}}
    )
    assert isinstance(enum, EnumRule)
    assert enum.canonical("euro") is enum.values[0]
    assert enum.canonical("one") is enum.values[1]
    assert enum.canonical(1.0) == 1
    assert enum.canonical(True) is True
    assert enum.canonical(None) is None
    assert enum.canonical("EURO") is MISSING
    assert enum.canonical([1]) is MISSING
    assert enum.judge("euro", "EUR") is None
    assert enum.judge(1, True) is not None
    assert enum.judge(True, 1) is not None


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),
        (False, "boolean"),
        (0, "number"),
        (1.5, "number"),
        ("", "string"),
        ([], "array"),
        ((), "array"),
        ({}, "object"),
        (MappingProxyType({}), "object"),
        (b"x", "bytes"),
    ],
)
def test_json_types_keep_booleans_apart(value: Any, name: str) -> None:
    assert json_type(value) == name


def test_show_is_short_and_json_like() -> None:
    assert show(MISSING) == show(OMITTED) == "(omitted)"
    assert (show(None), show(True), show(False)) == ("null", "true", "false")
    assert show("a") == "'a'"
    assert show({"a": [1, None]}) == '{"a":[1,null]}'
    long = show("x" * 100)
    assert len(long) == 60
    assert long.endswith("...")
    assert show("x" * 58) == repr("x" * 58)
    deep: list[Any] = []
    for _ in range(600):
        deep = [deep]
    assert show(deep) == "[...]"


def test_rule_errors_carry_path_and_message() -> None:
    with pytest.raises(RuleError) as caught:
        compile_rule({"kind": "number", "tol": -1}, ("refund", "amount"))
    assert caught.value.path == ("refund", "amount")
    assert caught.value.message == str(caught.value) == "tol must be a finite number >= 0, got -1"


def test_integer_strings_are_compared_exactly_up_to_the_digit_limit() -> None:
    rule = NumberRule(coerce=True)
    big = "1" * 4300
    assert rule.judge(big, big) is None
    assert rule.judge(big, big[:-1] + "2") is not None  # not both infinity
    assert rule.judge(2**60 + 1, str(2**60 + 1)) is None
    assert rule.judge(2**60 + 1, str(2**60)) is not None


@pytest.mark.parametrize(
    ("text", "offset_minutes"),
    [("Z", 0), ("UTC", 0), ("+02:00", 120), ("-05:30", -330), ("+0130", 90), ("-00:45", -45)],
)
def test_fixed_offsets_and_utc(text: str, offset_minutes: int) -> None:
    zone = parse_timezone(text)
    offset = zone.utcoffset(datetime(2026, 1, 1))
    assert offset == timedelta(minutes=offset_minutes)


def test_named_zones_follow_daylight_saving_and_unknown_ones_are_refused() -> None:
    paris = parse_timezone("Europe/Paris")
    assert paris.utcoffset(datetime(2026, 1, 15)) == timedelta(hours=1)
    assert paris.utcoffset(datetime(2026, 7, 15)) == timedelta(hours=2)
    for bad in ("Mars/Base", "+2:00", "", "../etc/passwd"):
        with pytest.raises(ValueError, match=re.escape(f"unknown time zone {bad!r}")):
            parse_timezone(bad)


@pytest.mark.parametrize(
    ("node", "path", "message"),
    [
        (3, ("a",), "expected a kind name or a mapping, got 3"),
        ({"tol": 1}, ("a",), "missing 'kind'"),
        ({"kind": 3}, ("a",), "kind must be a string"),
        ({"kind": "exact", "reason": "  "}, ("a",), "reason must be a non-empty string"),
        ({"kind": "exact", "reason": 3}, ("a",), "reason must be a non-empty string"),
        ({"kind": "number", "coerce": "yes"}, ("a",), "coerce must be true or false, got 'yes'"),
        ({"kind": "integer", "coerce": 1}, ("a",), "coerce must be true or false, got 1"),
        ({"kind": "boolean", "coerce": None}, ("a",), "coerce must be true or false, got null"),
        (
            {"kind": "date", "formats": "%d/%m"},
            ("a",),
            "formats must be a list of strptime format strings",
        ),
        (
            {"kind": "date", "formats": ["%d", 1]},
            ("a",),
            "formats must be a list of strptime format strings",
        ),
        (
            {"kind": "datetime", "naive_tz": 1},
            ("a",),
            "naive_tz must be a string such as 'UTC' or '+02:00'",
        ),
        (
            {"kind": "datetime", "naive_tz": "Nowhere"},
            ("a",),
            "naive_tz: unknown time zone 'Nowhere'",
        ),
        (
            {"kind": "text", "rubric": 1},
            ("a",),
            "rubric must be a rubric's name or a rubric mapping",
        ),
        (
            {"kind": "list", "order": "sorted"},
            ("a",),
            "order must be 'ordered' or 'unordered' (did you mean 'ordered'?)",
        ),
        (
            {"kind": "list", "order": "unorderd"},
            ("a",),
            "order must be 'ordered' or 'unordered' (did you mean 'unordered'?)",
        ),
        ({"kind": "list", "items": "nope"}, ("a", "items"), "unknown kind 'nope'"),
        (
            {"kind": "list", "items": {"kind": "list", "items": 1}},
            ("a", "items", "items"),
            "expected a kind name or a mapping, got 1",
        ),
        (
            {"kind": "object", "args": ["b"]},
            ("a",),
            "args must be a mapping of argument names to rules",
        ),
        ({"kind": "object", "args": {1: "exact"}}, ("a",), "argument names must be strings, got 1"),
        (
            {"kind": "object", "args": {"b": {"kind": "object", "args": {"c": "x"}}}},
            ("a", "b", "c"),
            "unknown kind 'x'",
        ),
        ({"kind": "enum", "values": []}, ("a",), "enum needs 'values': a non-empty list"),
        ({"kind": "enum", "values": "ab"}, ("a",), "enum needs 'values': a non-empty list"),
        (
            {"kind": "enum", "values": ["a"], "aliases": ["b"]},
            ("a",),
            "aliases must be a mapping of alias to value",
        ),
        (
            {"kind": "enum", "values": ["EUR", "USD"], "aliases": {"e": "EUX"}},
            ("a",),
            "alias 'e' points to 'EUX', which is not in values (did you mean 'EUR'?)",
        ),
        (
            {"kind": "enum", "values": ["EUR"], "aliases": {"e": "XYZ"}},
            ("a",),
            "alias 'e' points to 'XYZ', which is not in values",
        ),
        ({"kind": "exakt"}, ("a",), "unknown kind 'exakt' (did you mean 'exact'?)"),
        ({"kind": "num"}, ("a",), "unknown kind 'num' (did you mean 'number'?)"),
        ({"kind": "zz"}, ("a",), "unknown kind 'zz'"),
        (
            {"kind": "number", "tolerance": 1},
            ("a",),
            "unknown option 'tolerance' for kind 'number' (did you mean 'tol'?)",
        ),
        ({"kind": "exact", "values": [1]}, ("a",), "unknown option 'values' for kind 'exact'"),
    ],
)
def test_compile_errors_name_the_path_and_say_what_is_wrong(
    node: Any, path: tuple[str, ...], message: str
) -> None:
    with pytest.raises(RuleError) as caught:
        compile_rule(node, ("a",))
    assert (caught.value.path, caught.value.message) == (path, message)


def test_compiled_rules_keep_their_options() -> None:
    text = compile_rule({"kind": "text", "rubric": "polite", "reason": "free text"})
    assert isinstance(text, TextRule)
    assert (text.rubric, text.reason) == ("polite", "free text")
    number = compile_rule({"kind": "number", "tol": 1, "default": None, "coerce": True})
    assert isinstance(number, NumberRule)
    assert (number.tol, number.rel_tol, number.coerce, number.default) == (1.0, 0.0, True, None)
    assert compile_rule("exact").default is MISSING
    assert compile_rule({"kind": "integer", "coerce": True}).options() == {"coerce": "true"}
    listed = compile_rule({"kind": "list", "items": {"kind": "casefold", "reason": "r"}})
    assert isinstance(listed, ListRule)
    assert listed.items.reason == "r"
    assert listed.ordered
    empty = compile_rule({"kind": "object"})
    assert isinstance(empty, ObjectRule)
    assert empty.args == {}


@pytest.mark.parametrize(
    ("word", "hint"),
    [
        ("exakt", " (did you mean 'exact'?)"),
        ("list_", " (did you mean 'list'?)"),
        ("da", " (did you mean 'date'?)"),
        ("int", " (did you mean 'integer'?)"),
        ("qqqq", ""),
    ],
)
def test_suggestions_for_near_names(word: str, hint: str) -> None:
    assert suggest(word, KINDS) == hint


def test_a_short_name_is_no_prefix_hint_and_one_near_name_is_given() -> None:
    assert suggest("abxyz", ["ab"]) == ""
    assert suggest("colour", ["color", "colors"]) == " (did you mean 'color'?)"


def test_json_equality_keeps_false_apart_from_zero_at_any_depth() -> None:
    assert not json_equal(False, 0)
    assert not json_equal(0, False)
    assert not json_equal([0], [False])
    assert not json_equal({"a": 0}, {"a": False})
    assert json_equal({"a": [1, None]}, {"a": [1.0, None]})
    assert not json_equal({"a": 1}, [("a", 1)])
    assert not json_equal("1", 1)


def test_show_writes_values_json_cannot_hold_with_their_repr() -> None:
    assert show({"k": {1}}) == '{"k":"{1}"}'
    deep: dict[str, Any] = {}
    for _ in range(600):
        deep = {"k": deep}
    assert show(deep) == "{...}"
    assert show("x" * 59) == "'" + "x" * 56 + "..."  # 61 characters as repr: cut to 60


def test_number_edges_beyond_floats() -> None:
    huge, other = "1" * 400, "1" * 399 + "2"
    assert NumberRule(tol=0.5, coerce=True).judge(huge, other) is not None
    assert NumberRule(tol=0.5, coerce=True).judge(huge, huge) is None
    assert NumberRule(rel_tol=0.01, coerce=True).judge(huge, "2" * 400) is not None
    assert NumberRule(rel_tol=0.01, coerce=True).judge(huge, other) is None
    assert NumberRule(rel_tol=0.5, coerce=True).judge(5, "1e999") is not None
    assert NumberRule(tol=0.5, coerce=True).judge("1e999", "1e999") is None
    verdict = NumberRule(tol=0.5, rel_tol=0.01).judge(100, 102)
    assert verdict is not None
    assert verdict[1]() == "102 is not 100 within tol=0.5 rel_tol=0.01"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"k": 1}, {"k": 1, "extra": 2}),  # a key only the second object has
        ({"k": 1, "extra": 2}, {"k": 1}),  # a key only the first has
        ({"k": 1}, {"k": 1, "extra": None}),  # null is a value, not an absence
        ([{"k": 1}], [{"k": 1, "extra": 2}]),  # at any depth
        ({}, {"extra": 2}),
    ],
)
def test_json_equal_objects_need_the_same_keys_both_ways(a: Any, b: Any) -> None:
    assert not json_equal(a, b)
    assert not json_equal(b, a)
    assert ExactRule().judge(a, b) is not None  # `exact` on objects is JSON equality


@pytest.mark.parametrize("produced", ["id-7 ", " id-7", "id-7\n", "\tid-7", "id-7\u00a0"])
def test_exact_strings_keep_their_whitespace(produced: str) -> None:
    assert ExactRule().judge("id-7", produced) is not None
    assert ExactRule().judge(produced, "id-7") is not None
    assert ExactRule().judge(produced, produced) is None
