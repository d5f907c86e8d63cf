"""Data-flow helpers on their own: JSON pointers, result documents, references and links.

The pairing search is exercised end to end by the golden cases (tests/cases/dataflow*.json).
"""

from __future__ import annotations

from typing import Any

import pytest

from toolscore.core.dataflow import (
    dependencies,
    find_cycle,
    has_unresolved,
    iter_refs,
    pointer_problem,
    resolve_pointer,
    result_document,
    substitute,
    topological,
)
from toolscore.core.model import MISSING, AnyOf, Call, Ref

DOC = {"a": {"b": [10, 20, {"c": None}]}, "x/y": 1, "x~y": 2, "~1": 3, "0": "zero", "": "empty"}


@pytest.mark.parametrize(
    ("pointer", "found"),
    [
        ("", DOC),
        ("/a/b/0", 10),
        ("/a/b/1", 20),
        ("/a/b/2/c", None),
        ("/x~1y", 1),
        ("/x~0y", 2),
        ("/~01", 3),
        ("/0", "zero"),
        ("/", "empty"),
        ("/a/b/01", MISSING),
        ("/a/b/3", MISSING),
        ("/a/b/-", MISSING),
        ("/a/b/x", MISSING),
        ("/a/b/0/c", MISSING),
        ("/nope", MISSING),
        ("/a/nope/deeper", MISSING),
    ],
)
def test_resolve_pointer(pointer: str, found: Any) -> None:
    got = resolve_pointer(DOC, pointer)
    if found is MISSING:
        assert got is MISSING
    else:
        assert got == found


@pytest.mark.parametrize(
    ("pointer", "problem"),
    [
        ("", None),
        ("/a/0", None),
        ("/~0~1", None),
        ("a", "'a' is not a JSON pointer (it must be empty or start with '/')"),
        ("/a~", "'/a~' is not a JSON pointer ('~' must be followed by 0 or 1)"),
        ("/~2", "'/~2' is not a JSON pointer ('~' must be followed by 0 or 1)"),
    ],
)
def test_pointer_problems(pointer: str, problem: str | None) -> None:
    assert pointer_problem(pointer) == problem


@pytest.mark.parametrize(
    ("result", "document"),
    [
        ('{"id": 1}', {"id": 1}),
        ("[1, 2]", [1, 2]),
        ("cust-9", "cust-9"),
        ("", ""),
        ({"id": 1}, {"id": 1}),
        (7, 7),
    ],
)
def test_result_documents(result: Any, document: Any) -> None:
    assert result_document(Call("f", {}, result=result)) == document
    assert result_document(Call("f", {})) is MISSING


def test_refs_are_found_and_substituted_where_they_stand() -> None:
    value = {"a": Ref("l", "/id"), "b": [1, AnyOf([Ref("m", ""), 2])], "c": {"d": Ref("l", "/n")}}
    assert list(iter_refs(value)) == [
        (("a",), Ref("l", "/id")),
        (("b", 1), Ref("m", "")),
        (("c", "d"), Ref("l", "/n")),
    ]
    assert has_unresolved(value)
    sources = {"l": Call("look", {}, result={"id": "X"})}
    done = substitute(value, sources)
    assert done == {"a": "X", "b": [1, AnyOf([Ref("m", ""), 2])], "c": {"d": Ref("l", "/n")}}
    assert type(done["b"][1]) is AnyOf
    full = substitute(value, {**sources, "m": Call("m", {}, result="text")})
    assert full["b"] == [1, AnyOf(["text", 2])]
    assert has_unresolved(full)  # /n is still not in l's result
    assert not has_unresolved(substitute({"a": Ref("l", "/id")}, sources))
    assert substitute(Ref("l", "/id"), {"l": Call("look", {})}) == Ref("l", "/id")  # no result


def _plan(*calls: tuple[str | None, list[str], Any]) -> list[Call]:
    return [Call("t", args, label=label, after=tuple(after)) for label, after, args in calls]


def test_dependencies_cycles_and_order() -> None:
    plan = _plan(
        ("a", [], {}),
        ("b", ["a"], {"x": Ref("c", "/x")}),
        ("c", [], {}),
        (None, [], {"y": Ref("b", "/y")}),
    )
    assert dependencies(plan) == [set(), {0, 2}, set(), {1}]
    assert find_cycle(plan) is None
    assert topological([3], dependencies(plan)) == [0, 2, 1, 3]
    assert topological([2, 0], dependencies(plan)) == [2, 0]
    looped = _plan(("a", ["c"], {}), ("b", ["a"], {}), ("c", ["b"], {}), (None, [], {}))
    assert find_cycle(looped) == ["a", "c", "b", "a"]
    unlabelled = [Call("t", {"x": Ref("a", "/")}, label="a"), Call("t", {})]
    assert find_cycle(unlabelled) == ["a", "a"]
    assert find_cycle([Call("t", {}), Call("t", {})]) is None
