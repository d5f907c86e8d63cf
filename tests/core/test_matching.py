"""Matching on its own: every mismatch carries its rule, expected and produced values (reports
show them), and a failure is explained the same way whatever order the agent made its calls."""

from __future__ import annotations

from typing import Any

import pytest

from toolscore import parse_case, parse_output, parse_specs, score_case
from toolscore.core.arguments import iter_mismatches, matches
from toolscore.core.diagnosis import diagnose_plan
from toolscore.core.model import MISSING, OMITTED, AnyOf, Call, Mismatch
from toolscore.core.rules import ObjectRule, compile_args, compile_rule
from toolscore.specs.loading import SpecSet

TOOL = ObjectRule(
    args=compile_args(
        {
            "id": "exact",
            "n": {"kind": "integer", "default": 1},
            "tags": {"kind": "list", "items": "exact"},
            "set": {"kind": "list", "items": "exact", "order": "unordered"},
            "place": {"kind": "object", "args": {"city": "exact"}},
        }
    )
)


@pytest.mark.parametrize(
    ("expected", "produced", "mismatch"),
    [
        (
            {"id": "a"},
            {"id": None},
            Mismatch("value_mismatch", ("id",), "exact", "a", None, "null does not equal 'a'"),
        ),
        (
            {"id": "a"},
            {"id": "b"},
            Mismatch(
                "value_mismatch", ("id",), "exact", "a", "b", "'b' does not equal 'a' exactly"
            ),
        ),
        (
            {"id": "a", "n": 2},
            {"id": "a"},
            Mismatch("value_mismatch", ("n",), "integer", 2, 1, "1 does not equal 2"),
        ),
        (
            {"id": "a", "tags": ["x"]},
            {"id": "a"},
            Mismatch(
                "missing_argument",
                ("tags",),
                "list of exact",
                ["x"],
                MISSING,
                "argument 'tags' is missing (expected [\"x\"])",
            ),
        ),
        (
            {"id": "a"},
            {"id": "a", "tags": ["x"]},
            Mismatch(
                "unexpected_argument",
                ("tags",),
                "list of exact",
                MISSING,
                ["x"],
                "argument 'tags' was given ([\"x\"]) but the plan omits it and it has no default",
            ),
        ),
        (
            {"id": "a"},
            {"id": "a", "what": 3},
            Mismatch(
                "unexpected_argument",
                ("what",),
                None,
                MISSING,
                3,
                "argument 'what' is not in the spec",
            ),
        ),
        (
            {"id": AnyOf(["a", "b"])},
            {"id": "c"},
            Mismatch(
                "value_mismatch",
                ("id",),
                "exact",
                ["a", "b"],
                "c",
                "'c' matches none of the acceptable values 'a', 'b'",
            ),
        ),
        (
            {"id": "a", "tags": ["x"]},
            {"id": "a", "tags": "x"},
            Mismatch(
                "type_mismatch",
                ("tags",),
                "list of exact",
                ["x"],
                "x",
                "the value is not an array: 'x'",
            ),
        ),
        (
            {"id": "a", "tags": "x"},
            {"id": "a", "tags": ["x"]},
            Mismatch(
                "type_mismatch",
                ("tags",),
                "list of exact",
                "x",
                ["x"],
                'the expected value is not an array: ["x"]',
            ),
        ),
        (
            {"id": "a", "tags": ["x"]},
            {"id": "a", "tags": ["x", "y"]},
            Mismatch(
                "value_mismatch",
                ("tags",),
                "list of exact",
                ["x"],
                ["x", "y"],
                "expected 1 items, got 2",
            ),
        ),
        (
            {"id": "a", "set": ["x", "x"]},
            {"id": "a", "set": ["x", "y"]},
            Mismatch(
                "value_mismatch",
                ("set",),
                "list unordered of exact",
                ["x", "x"],
                ["x", "y"],
                "as a multiset: 1 of 2 expected items have no equal, 2 items given",
            ),
        ),
        (
            {"id": "a", "place": {"city": "P"}},
            {"id": "a", "place": "P"},
            Mismatch(
                "type_mismatch",
                ("place",),
                "object",
                {"city": "P"},
                "P",
                "the value is not an object: 'P'",
            ),
        ),
        (
            {"id": "a", "place": {"city": "P"}},
            {"id": "a", "place": {"city": "Q"}},
            Mismatch(
                "value_mismatch",
                ("place", "city"),
                "exact",
                "P",
                "Q",
                "'Q' does not equal 'P' exactly",
            ),
        ),
    ],
)
def test_a_mismatch_carries_rule_expected_and_produced(
    expected: dict[str, Any], produced: dict[str, Any], mismatch: Mismatch
) -> None:
    assert list(iter_mismatches(TOOL, expected, produced)) == [mismatch]
    assert not matches(TOOL, expected, produced)


def test_every_mismatch_is_found_not_only_the_first() -> None:
    found = list(iter_mismatches(TOOL, {"id": "a", "n": 2}, {"id": "b", "n": 3, "x": 0}))
    assert [(m.code, m.path) for m in found] == [
        ("value_mismatch", ("id",)),
        ("value_mismatch", ("n",)),
        ("unexpected_argument", ("x",)),
    ]
    assert len(list(iter_mismatches(TOOL, {"id": "a"}, {"id": "a", "x": 0, "y": 1}))) == 2
    omitted = AnyOf([OMITTED, 5])
    assert matches(TOOL, {"id": "a", "n": omitted}, {"id": "a", "n": 5})
    assert matches(TOOL, {"id": "a", "n": omitted}, {"id": "a"})
    later = list(iter_mismatches(TOOL, {"n": omitted, "id": "a"}, {"id": "b"}))
    assert [m.path for m in later] == [("id",)]
    assert matches(compile_rule("exact"), [1, {"a": None}], [1.0, {"a": None}])


def _specs() -> SpecSet:
    tools = {
        "refund": {"args": {"order_id": "exact", "amount": "number"}},
        "log": {"args": {"event": "exact"}},
        "ping": {"args": {}},
    }
    specs, problems = parse_specs({"tools": tools}, "tools.yaml")
    assert specs is not None, problems
    return specs


SPECS = _specs()


def _diagnose(plan: list[dict[str, Any]], calls: list[Any]) -> list[tuple[Any, ...]]:
    """The mismatches of a failed case, each with the produced call it names (not its index)."""
    case = parse_case({"id": "x", "plans": [plan]}, SPECS)
    made = parse_output({"id": "x", "calls": calls})
    result = score_case(SPECS, case, made)
    assert not result.passed
    return [
        (m.code, m.plan_call, None if m.call is None else calls[m.call], m.path, m.expected,
         m.produced, m.rule)
        for m in result.mismatches
    ]  # fmt: skip


def refund(order_id: str, amount: float, first: str = "order_id") -> dict[str, Any]:
    args = {"order_id": order_id, "amount": amount}
    if first != "order_id":
        args = {"amount": amount, "order_id": order_id}
    return {"name": "refund", "args": args}


@pytest.mark.parametrize(
    ("plan", "calls"),
    [
        ([refund("o-1", 1)], [refund("o-3", 1), refund("o-2", 1)]),
        ([refund("o-1", 1)], [refund("o-3", 1, first="amount"), refund("o-2", 1)]),
        (
            [refund("o-1", 1), refund("o-5", 5)],
            [refund("o-3", 1), refund("o-2", 1), refund("o-4", 5)],
        ),
        (
            [refund("o-1", 1)],
            [{"name": "log", "args": {"event": "b"}}, {"name": "log", "args": {"event": "a"}}],
        ),
        (
            [refund("o-1", 1)],
            [{"name": "refund", "args": "{bad"}, {"name": "refund", "args": "{also bad"}],
        ),
        (
            [{"name": "ping", "args": {}}],
            [
                {"name": "log", "args": {"event": "b"}},
                {"name": "refund", "args": {"order_id": "o"}},
                {"name": "log", "args": {"event": "a"}},
            ],
        ),
    ],
)
def test_ties_are_broken_by_content_so_order_never_changes_the_explanation(
    plan: list[dict[str, Any]], calls: list[Any]
) -> None:
    forward = _diagnose(plan, calls)
    backward = _diagnose(plan, calls[::-1])
    assert sorted(map(repr, forward)) == sorted(map(repr, backward))


def test_a_tie_pairs_the_call_that_sorts_first_and_leaves_the_other_extra() -> None:
    found = _diagnose([refund("o-1", 1)], [refund("o-3", 1), refund("o-2", 1)])
    assert found == [
        ("value_mismatch", 0, refund("o-2", 1), ("order_id",), "o-1", "o-2", "exact"),
        ("extra_call", None, refund("o-3", 1), (), MISSING, "refund", None),
    ]


def test_call_level_mismatches_name_the_tools() -> None:
    found = _diagnose(
        [refund("o-1", 1), {"name": "log", "args": {"event": "e"}}],
        [
            {"name": "ping", "args": {}},
            {"name": "drop", "args": {}},
            {"name": "refund", "args": "{"},
        ],
    )
    assert found == [
        ("arguments_unparseable", 0, {"name": "refund", "args": "{"}, (), MISSING, "{", None),
        ("wrong_tool", 1, {"name": "ping", "args": {}}, (), "log", "ping", None),
        ("unknown_tool", None, {"name": "drop", "args": {}}, (), MISSING, "drop", None),
    ]
    missing = _diagnose(
        [refund("o-1", 1), {"name": "log", "args": {"event": "e"}}], [refund("o-1", 1)]
    )
    assert missing == [("missing_call", 1, None, (), "log", MISSING, None)]


def test_mismatches_follow_the_plan_order() -> None:
    found = _diagnose([refund("o-2", 2), refund("o-1", 1)], [refund("o-1", 9), refund("o-2", 8)])
    assert [(plan_call, path) for _, plan_call, _, path, *_ in found] == [
        (0, ("amount",)),
        (1, ("amount",)),
    ]


def test_calls_too_deep_to_write_still_tie_and_are_diagnosed() -> None:
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    calls = [{"name": "refund", "args": {"order_id": deep}}, refund("o-2", 1)]
    assert len(_diagnose([refund("o-1", 1)], calls)) == len(
        _diagnose([refund("o-1", 1)], calls[::-1])
    )


def test_a_plan_diagnosed_directly_pairs_and_reports_leftovers() -> None:
    plan = [Call("refund", {"order_id": "o-1", "amount": 1})]
    calls = [Call("log", {"event": "x"}), Call("log", {"event": "a"})]
    pairs, found = diagnose_plan(SPECS.rules, frozenset(), plan, calls)
    assert pairs == ()
    assert [(m.code, m.call, m.plan_call) for m in found] == [
        ("wrong_tool", 1, 0),
        ("extra_call", 0, None),
    ]


def test_link_mismatches_carry_the_label_and_the_reference() -> None:
    look = {"id": "l", "name": "log", "args": {"event": "x"}}
    late = _diagnose(
        [look, {"name": "ping", "args": {}, "after": ["l"]}],
        [{"name": "ping", "args": {}}, {"name": "log", "args": {"event": "x"}}],
    )
    assert late == [("order_violation", 1, {"name": "ping", "args": {}}, (), "l", 1, None)]
    uses = {"name": "refund", "args": {"order_id": {"$ref": "l#/id"}, "amount": 1}}
    unresolved = _diagnose([look, uses], [{"name": "log", "args": {"event": "x"}}, refund("A", 1)])
    assert unresolved == [
        ("unresolved_ref", 1, refund("A", 1), ("order_id",), "l#/id", MISSING, None),
    ]
