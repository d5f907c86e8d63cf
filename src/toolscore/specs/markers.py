"""The value markers of expected values: `{"$any": [...]}`, `{"$omitted": true}` among its
alternatives, and `{"$ref": "LABEL#/pointer"}`, read into `AnyOf`, `OMITTED` and `Ref`
where the spec has a rule for the value; and the check that an expected object names only
keys the spec has. Plans of cases and `forbid` entries of specs and cases share them."""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from typing import Any

from toolscore.core.dataflow import pointer_problem
from toolscore.core.model import OMITTED, AnyOf, Ref
from toolscore.core.rules import ListRule, ObjectRule, Rule

_MARKER_KEYS = frozenset({"$any", "$ref", "$omitted"})
_OMITTED_NODE = {"$omitted": True}

Fail = Callable[[str, str], Exception]
"""Builds the error for a field of the entry being read (raised by the caller's reader)."""


def parse_markers(value: Any, rule: Rule, labels: Container[Any], where: str, fail: Fail) -> Any:
    """Turn `{"$any": [...]}` and `{"$ref": "L#/p"}` into AnyOf and Ref, recursively.

    A marker stands where the spec has a rule for the value (an argument, a key of an
    `object` argument, an item of a `list`), since that rule compares its alternatives.
    """
    if not isinstance(value, dict | list):
        return value  # a scalar: neither a marker nor a place for one
    if isinstance(value, dict) and "$any" in value:
        options = value["$any"]
        if len(value) != 1 or not isinstance(options, list) or not options:
            raise fail(where, "$any must be the only key, with a non-empty list")
        return AnyOf(
            OMITTED if o == _OMITTED_NODE else parse_markers(o, rule, labels, where, fail)
            for o in options
        )
    if isinstance(value, dict) and "$omitted" in value:
        raise fail(where, '{"$omitted": true} stands only among the alternatives of $any')
    if isinstance(value, dict) and "$ref" in value:
        return _ref(value, labels, where, fail)
    if isinstance(rule, ObjectRule) and isinstance(value, dict):
        return {
            k: parse_markers(v, rule.args[k], labels, f"{where}.{k}", fail)
            if k in rule.args and isinstance(v, dict | list)
            else v
            for k, v in value.items()
        }
    if isinstance(rule, ListRule) and isinstance(value, list):
        return [
            parse_markers(v, rule.items, labels, f"{where}[{i}]", fail) for i, v in enumerate(value)
        ]
    if _has_marker(value):
        raise fail(
            where,
            f"$any and $ref cannot stand inside a value compared as {rule.kind}; "
            "put them where the spec has a rule (an argument, object key or list item)",
        )
    return value


def known_keys(value: Any, rule: Rule, where: str, fail: Fail) -> None:
    """Refuse a key of an expected object that the spec lacks, at any depth: the agent could
    never match it (a produced key outside the spec fails), so such a case is unscorable."""
    if type(value) is AnyOf:
        for option in value:
            known_keys(option, rule, where, fail)
    elif isinstance(rule, ObjectRule) and type(value) is dict:
        for key, item in value.items():
            sub = rule.args.get(key)
            if sub is None:
                raise fail(f"{where}.{key}", f"not in the spec (keys: {', '.join(rule.args)})")
            if not sub.scalar:
                known_keys(item, sub, f"{where}.{key}", fail)
    elif isinstance(rule, ListRule) and type(value) is list and not rule.items.scalar:
        for index, item in enumerate(value):
            known_keys(item, rule.items, f"{where}[{index}]", fail)


def _has_marker(value: Any) -> bool:
    stack = [value]  # not recursion: a case's value may be nested deeper than Python recurses
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if value.keys() & _MARKER_KEYS:
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def _ref(value: Mapping[str, Any], labels: Container[Any], where: str, fail: Fail) -> Ref:
    target = value["$ref"]
    if len(value) != 1 or not isinstance(target, str) or "#" not in target:
        raise fail(where, '$ref must be the only key, a string "LABEL#/json/pointer"')
    label, pointer = target.split("#", 1)
    if label not in labels:
        raise fail(where, f"$ref to unknown label {label!r} (labels in this plan: {labels})")
    problem = pointer_problem(pointer)
    if problem:
        raise fail(where, problem)
    return Ref(label, pointer)
