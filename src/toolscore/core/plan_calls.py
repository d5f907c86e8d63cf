"""The calls a correct agent makes for a plan: in dependency order, each `$any` as its first
alternative, each `$ref` as the value the call it names returned.

`lint` scores them as an agent's output (docs/formats.md 3.4). Under an environment the
values come from replay (`lint_replay`); without one, a call that others refer to is given a
stand-in result, `null` at each pointer they read (`null` equals `null` under every rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.core.dataflow import (
    dependencies,
    first_options,
    has_unresolved,
    iter_refs,
    substitute,
    topological,
)
from toolscore.core.model import MISSING, Call, Plan

MAX_STAND_IN_INDEX = 1_000
"""Above this index, a stand-in result holds an object with the index as its key rather
than an array (so that a pointer such as `/items/999999999` builds no huge array)."""


def made_call(call: Call, sources: Mapping[str, Call]) -> Call:
    """The call an agent makes for plan call `call`: each `$any` its first alternative (a
    first `$omitted` leaves the argument out), each `$ref` resolved from `sources` (the
    calls made for the labels, with their results) where it can be."""
    args = call.args or {}
    return Call(call.name, first_options(substitute(args, sources) if sources else args))


def plan_calls(plan: Plan) -> tuple[Call, ...]:
    """The calls of `plan` as an agent makes them without an environment: in dependency
    order, each call that others refer to given a stand-in result (`stand_in_results`)."""
    results = stand_in_results(plan)
    sources: dict[str, Call] = {}
    calls = []
    for i in topological(range(len(plan)), dependencies(plan)):
        expected = plan[i]
        call = made_call(expected, sources)
        assert not has_unresolved(call.args)  # the stand-ins hold every pointer read
        if expected.label is not None:
            call = call._replace(result=results.get(expected.label, MISSING))
            sources[expected.label] = call
        calls.append(call)
    return tuple(calls)


def stand_in_results(plan: Plan) -> dict[str, Any]:
    """Per label that the plan's chosen values refer to, a result holding `null` at each
    pointer they read (an object, or an array where every key read is an index)."""
    read: dict[str, dict[str, Any]] = {}
    for call in plan:
        for _, ref in iter_refs(first_options(call.args or {})):
            node = read.setdefault(ref.label, {})
            if ref.pointer:
                for token in ref.pointer[1:].split("/"):
                    node = node.setdefault(token.replace("~1", "/").replace("~0", "~"), {})
    return {label: _built(tree) for label, tree in read.items()}


def _built(tree: dict[str, Any]) -> Any:
    """The document a tree of pointer tokens stands for, built without recursion."""
    holder: list[Any] = [None]
    stack: list[tuple[dict[str, Any], Any, Any]] = [(tree, holder, 0)]
    while stack:
        node, container, key = stack.pop()
        if not node:
            continue  # a leaf: null
        value: Any
        if all(_index(token) for token in node):
            value = [None] * (max(int(token) for token in node) + 1)
            stack.extend((child, value, int(token)) for token, child in node.items())
        else:
            value = dict.fromkeys(node)
            stack.extend((child, value, token) for token, child in node.items())
        container[key] = value
    return holder[0]


def _index(token: str) -> bool:
    """Whether a pointer token reads an array index (as `dataflow.resolve_pointer` does)."""
    return (
        token.isascii()
        and token.isdigit()
        and (token == "0" or token[0] != "0")
        and int(token) <= MAX_STAND_IN_INDEX
    )
