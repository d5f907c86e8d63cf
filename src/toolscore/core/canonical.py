"""Canonical forms of calls: hashable values that two calls share exactly when they name the
same tool and their arguments are equal under the tool's rules (aliases and letter case
folded, lists as multisets where unordered, numbers compared as numbers).

`core.partial` counts repeated calls by these forms. This module stays pure Python even in the
compiled build: its walks recurse as deep as the values nest, and a compiled function meets
the recursion limit where the interpreted one does not (tests/scoring/test_robustness.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolscore.core.model import Call
from toolscore.core.rules import ExactRule, ListRule, ObjectRule, Rule


def repeated_by_form(tools: Mapping[str, ObjectRule], calls: Sequence[Call]) -> int:
    """`repeated_calls`, comparing every call's whole canonical form."""
    forms: set[Any] = set()
    try:
        for call in calls:
            args, rule = call.args, tools.get(call.name)
            if (
                rule is not None
                and type(args) is dict
                and mapped_arguments(rule).isdisjoint(args)
                and set(map(type, args.values())) <= _SCALARS
            ):
                # Strings and numbers outside keyed kinds other than `exact`: their own form.
                forms.add((call.name, frozenset(args.items())))
            else:
                forms.add(canonical_call(rule, call))
    except RecursionError:
        return _repeated_one_by_one(tools, calls)
    return len(calls) - len(forms)


_SCALARS = frozenset({str, int, float})
"""The values that are their own canonical form (`1` and `1.0` alike; a NaN equals nothing)."""


def _repeated_one_by_one(tools: Mapping[str, ObjectRule], calls: Sequence[Call]) -> int:
    """`repeated_calls` when some call is nested too deep to compare: that one repeats none."""
    seen: set[Any] = set()
    repeated = 0
    for j, call in enumerate(calls):
        try:
            form = canonical_call(tools.get(call.name), call)
        except RecursionError:
            form = ("deep", j)
        if form in seen:
            repeated += 1
        else:
            seen.add(form)
    return repeated


def canonical_call(rule: ObjectRule | None, call: Call) -> Any:
    """A hashable form of a call: two calls have the same form when they name the same tool
    and their arguments have the same canonical form (`canonical`); unparsed arguments by
    their raw text. `rule` is the tool's, None for a tool the spec lacks (plain JSON)."""
    args = call.args
    if args is None:
        return (call.name, "raw", call.raw_args)
    if rule is None or type(args) is not dict:
        return (call.name, plain_form(args))
    return (call.name, _object_form(rule, args))


_MAPPED: dict[int, tuple[ObjectRule, frozenset[str]]] = {}
"""For each object rule met (by id, the rule kept alive beside it): its arguments whose
canonical form is not their plain JSON form (`mapped_arguments`)."""


def mapped_arguments(rule: ObjectRule) -> frozenset[str]:
    """The arguments of `rule` whose values need their rule to be put in canonical form: a
    keyed kind other than `exact` (whose key is the plain value's), an object or a list."""
    found = _MAPPED.get(id(rule))
    if found is not None and found[0] is rule:
        return found[1]
    names = frozenset(
        name
        for name, sub in rule.args.items()
        if (sub.keyed and type(sub) is not ExactRule) or type(sub) in (ObjectRule, ListRule)
    )
    if len(_MAPPED) < MAPPED_KEPT:
        _MAPPED[id(rule)] = (rule, names)
    return names


MAPPED_KEPT = 10_000
"""How many object rules `_mapped` remembers (a spec's tools and their object arguments)."""


def _object_form(rule: ObjectRule, value: dict[str, Any]) -> frozenset[tuple[str, Any]]:
    """An object's canonical form: its (argument, canonical form) pairs, as a set."""
    mapped = mapped_arguments(rule)
    forms = []
    for name, item in value.items():
        if name in mapped:
            forms.append((name, canonical(rule.args[name], item)))
            continue
        kind = type(item)
        if kind is str or kind is int or kind is float:
            forms.append((name, item))
        else:
            forms.append((name, plain_form(item)))
    return frozenset(forms)


def canonical(rule: Rule, value: Any) -> Any:
    """`value`'s canonical form under `rule`: a keyed rule's key (`Rule.key`) where the value
    has one, objects by argument, lists item by item (as a multiset when unordered), and
    anything else as plain JSON (`plain_form`)."""
    if rule.keyed:
        key = rule.key(value)
        if key is not None:
            return key
    if type(rule) is ObjectRule and type(value) is dict:
        return ("object", _object_form(rule, value))
    if type(rule) is ListRule and type(value) is list:
        items = [canonical(rule.items, item) for item in value]
        return ("array", tuple(items) if rule.ordered else tuple(sorted(items, key=repr)))
    return plain_form(value)


def plain_form(value: Any) -> Any:
    """A hashable form of a JSON value: objects with sorted keys, numbers compared as numbers
    (`1` is `1.0`) but never as booleans (a NaN equals nothing, not even itself)."""
    kind = type(value)
    if kind is dict:
        return ("object", frozenset([(k, plain_form(v)) for k, v in value.items()]))
    if kind is list or kind is tuple:
        return ("array", tuple(plain_form(v) for v in value))
    if kind is bool:
        return ("boolean", value)
    return value
