"""The pool of document copies (state/documents_pool.py) changes no verdict: a copy handed
back after any changes is, when taken again, the initial data exactly (types and key order
included), and cases scored on reused copies get the verdicts, diffs and hashes they get on
fresh ones."""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from document_envs import env, make_case, produced, specs
from toolscore import parse_case
from toolscore.state import check_state, pointer_diff
from toolscore.state.documents_pool import DocumentPool
from toolscore.state.pointer_diff import diff_documents


def _exact(value: Any) -> Any:
    """`value` with every type and every key order spelled out, to compare strictly (`2`
    and `2.0`, a list and a tuple, `{a, b}` and `{b, a}` all differ)."""
    if type(value) is dict:
        return ("dict", [(key, _exact(child)) for key, child in value.items()])
    if type(value) in (list, tuple):
        return (type(value).__name__, [_exact(child) for child in value])
    if type(value) is float and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 0.5]),
    st.sampled_from(["", "a", "b"]),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)
_DATA = st.dictionaries(
    st.sampled_from(["orders", "users", "flights", "meta"]),
    st.dictionaries(st.sampled_from(["#1", "#2", "#3"]), _JSON, max_size=3) | _JSON,
    max_size=3,
)
_WRITTEN = st.one_of(
    _JSON,
    st.sampled_from([(), (1,), (0.5,), math.nan, math.inf, {1, 2}]),  # written alike, or not JSON
)
_EFFECT = st.tuples(
    st.sampled_from(["set", "delete", "append", "reorder", "clear", "set_same", "tuple"]),
    st.integers(0, 50),
    st.sampled_from(["a", "b", "c", "#1", "#2", "orders"]),
    _WRITTEN,
)


def _containers(value: Any) -> list[Any]:
    found: list[Any] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            found.append(node)
            stack.extend(node.values())
        elif type(node) is list:
            found.append(node)
            stack.extend(node)
    return found


def _apply(state: Any, effect: tuple[str, int, str, Any]) -> None:
    """One change a tool might make, somewhere in the state."""
    kind, where, key, value = effect
    containers = _containers(state)
    node = containers[where % len(containers)]
    if type(node) is dict:
        if kind == "delete":
            node.pop(key, None)
        elif kind == "reorder" and node:
            first = next(iter(node))
            node[first] = node.pop(first)
        elif kind == "clear":
            node.clear()
        elif kind == "set_same" and key in node:
            node[key] = copy.deepcopy(node[key])  # the value already there, a copy
        elif kind == "tuple" and type(node.get(key)) is list:
            node[key] = tuple(node[key])
        else:
            node[key] = value
    elif kind == "delete" and node:
        node.pop()
    elif kind == "clear":
        node.clear()
    elif kind == "set" and node:
        node[where % len(node)] = value
    else:
        node.append(value)


@settings(max_examples=300, deadline=None)
@given(data=_DATA, replays=st.lists(st.lists(_EFFECT, max_size=4), min_size=1, max_size=4))
def test_a_copy_taken_again_is_the_initial_data_exactly(
    data: dict[str, Any], replays: list[list[tuple[str, int, str, Any]]]
) -> None:
    image = orjson.dumps(data)
    pool = DocumentPool(image)
    wanted = _exact(orjson.loads(image))
    for effects in replays:
        state = pool.take()
        assert _exact(state) == wanted
        for effect in effects:
            _apply(state, effect)
        other = pool.take()  # two copies out at once are separate objects
        assert other is not state
        assert _exact(other) == wanted
        pool.give_back(other)
        pool.give_back(state)
    assert _exact(pool.take()) == wanted
    assert _exact(pool.take()) == wanted


def test_a_copy_holding_what_json_cannot_hold_is_dropped() -> None:
    pool = DocumentPool(b'{"users": {"u1": {"tags": []}}}')
    state = pool.take()
    state["users"]["u1"]["tags"] = {"set"}
    pool.give_back(state)
    again = pool.take()
    assert again is not state
    assert again == {"users": {"u1": {"tags": []}}}


def test_only_the_changed_documents_are_parsed_again() -> None:
    pool = DocumentPool(b'{"users": {"u1": {"n": 1}, "u2": {"n": 2}}, "meta": [1]}')
    state = pool.take()
    kept_user, kept_meta = state["users"]["u2"], state["meta"]
    state["users"]["u1"]["n"] = 1.0  # equal to 1, written differently
    changed = state["users"]["u1"]
    pool.give_back(state)
    again = pool.take()
    assert again is state
    assert again["users"]["u2"] is kept_user
    assert again["meta"] is kept_meta
    assert again["users"]["u1"] is not changed
    assert _exact(again["users"]["u1"]) == _exact({"n": 1})


_CALLS = st.one_of(
    st.builds(lambda o: ("cancel_order", {"order_id": o}), st.sampled_from(["#W1", "#W2", "#W9"])),
    st.builds(
        lambda o, w: ("touch", {"order_id": o, "when": w}),
        st.sampled_from(["#W1", "#W2"]),
        _SCALARS,
    ),
    st.builds(
        lambda i, p: ("set_price", {"order_id": "#W1", "item": i, "price": p}),
        st.integers(0, 2),
        st.sampled_from([10, 10.0, 5, 5.0, 7.5]),
    ),
    st.builds(
        lambda p: ("add_item", {"order_id": "#W2", "item_id": "i9", "price": p}),
        st.sampled_from([1, 1.0]),
    ),
    st.builds(lambda o: ("remove_last_item", {"order_id": o}), st.sampled_from(["#W1", "#W2"])),
    st.builds(lambda a: ("refund", {"user_id": "u1", "amount": a}), st.sampled_from([0, 5, 60])),
    st.builds(lambda a: ("charge", {"user_id": "u2", "amount": a}), st.sampled_from([0, 5, 30])),
    st.builds(lambda n: ("flag", {"user_id": "u2", "note": n}), st.sampled_from(["x", "!y"])),
    st.builds(
        lambda k, v: ("set_setting", {"key": k, "value": v}), st.sampled_from(["a", "b"]), _JSON
    ),
)
_CASE = st.tuples(st.lists(_CALLS, max_size=4), st.lists(_CALLS, max_size=4))
_OPTIONS = st.sampled_from(
    [
        {"compare": "exact", "numbers": "typed", "on_error": "keep"},
        {"compare": "exact"},
        {"compare": "diff", "numbers": "typed"},
        {"compare": "diff", "on_error": "keep", "ignore": ["/orders/*/updated_at"]},
    ]
)


def _verdict(fixture: Any, plan: list[Any], made: list[Any], n: int) -> Any:
    case = make_case({"plans": [[{"name": name, "args": args} for name, args in plan]]}, f"c{n}")
    calls = produced([{"name": name, "args": args} for name, args in made])
    verdict = check_state(fixture, case, calls, None)
    return (
        verdict.passed,
        None if verdict.diff is None else verdict.diff.to_json(),
        verdict.diff.lines() if verdict.diff is not None else None,
        verdict.hashes,
        [call.to_json() for call in verdict.calls],
    )


@settings(max_examples=150, deadline=None)
@given(options=_OPTIONS, cases=st.lists(_CASE, min_size=1, max_size=5))
def test_cases_scored_on_reused_copies_get_the_verdicts_of_fresh_ones(
    options: dict[str, Any], cases: list[tuple[list[Any], list[Any]]]
) -> None:
    pooled = env(**options)
    assert pooled.pool is not None
    fresh = dataclasses.replace(pooled, pool=None)
    for n, (plan, made) in enumerate(cases):
        assert _verdict(pooled, plan, made, n) == _verdict(fresh, plan, made, n)


def test_a_document_added_at_the_end_is_removed_and_the_others_kept() -> None:
    pool = DocumentPool(b'{"orders": {"#1": {"n": 1}, "#2": {"n": 2}}}')
    state = pool.take()
    kept = state["orders"]["#1"]
    state["orders"]["#3"] = {"n": 3}
    pool.give_back(state)
    again = pool.take()
    assert again is state
    assert again["orders"]["#1"] is kept
    assert list(again["orders"]) == ["#1", "#2"]


_WIDE = st.dictionaries(
    st.sampled_from([f"#{i}" for i in range(40)]),
    st.dictionaries(st.sampled_from("ab"), _JSON, max_size=2)
    | st.lists(_JSON, max_size=2)
    | _SCALARS,
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(goal=_WIDE, edits=st.lists(_EFFECT, max_size=4), typed=st.booleans())
def test_a_diff_finding_equal_children_by_halving_is_the_diff_comparing_each(
    goal: dict[str, Any], edits: list[tuple[str, int, str, Any]], typed: bool
) -> None:
    """pointer_diff halves runs of many children to find the equal ones; the changes it
    lists are the ones a pair-by-pair comparison lists."""
    final = orjson.loads(orjson.dumps(goal))
    for edit in edits:
        if not isinstance(edit[3], set):
            _apply(final, edit)
    for state in (goal, final):
        state.setdefault("list", [{"n": i} for i in range(20)])  # a wide list as well
    final["list"][len(edits)] = {"n": -1}
    halved = diff_documents(goal, final, (), typed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pointer_diff, "HALVING_FROM", 10**9)
        each = diff_documents(goal, final, (), typed)
    assert halved == each
    assert halved.lines() == each.lines()


def test_a_verdict_keeps_what_it_saw_when_its_copies_are_reused() -> None:
    """A plan result that is a part of the state (get_order returns the order itself) is
    copied into the verdict before the copy goes back to the pool and is changed again."""
    fixture = env()
    line = {
        "id": "reads",
        "plans": [[{"name": "get_order", "args": {"order_id": "#W1"}}]],
        "goal_state": "plan",
        "results_from_plan": 0,
    }
    reads = parse_case(line, specs(), "cases.jsonl", 1)
    first = check_state(fixture, reads, produced([]), None)
    assert first.missing_results is not None
    assert first.missing_results[0]["status"] == "pending"
    cancel = [{"name": "cancel_order", "args": {"order_id": "#W1"}}]
    for _ in range(2):  # both copies out again, each changing the order
        writes = make_case({"plans": [cancel]}, "writes")
        check_state(fixture, writes, produced(cancel), None)
        check_state(fixture, writes, produced([]), None)
    assert first.missing_results[0]["status"] == "pending"
