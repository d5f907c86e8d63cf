"""Read a cases file (JSON Lines) into `Case` values, checked against the spec set.

A case is the target of scoring: a broken one is an input error naming the line and the field
(it cannot be scored), unlike a broken produced call, which is a scored failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from toolscore.dataflow import find_cycle, is_linked, pointer_problem
from toolscore.errors import CaseError
from toolscore.jsonl import ByteCounter, read_jsonl
from toolscore.model import AnyOf, Call, Case, Plan, Ref
from toolscore.rules import ListRule, ObjectRule, Rule
from toolscore.specs import SpecSet

_CALL_KEYS = frozenset({"name", "args", "id", "after"})

Fail = Callable[[str, str], CaseError]
"""Builds the error for a field of the case being read."""


def read_cases(
    path: str | Path, specs: SpecSet, counter: ByteCounter | None = None
) -> Iterator[Case]:
    """Stream the cases of a JSONL file, validating each line against `specs`."""
    source = str(path)
    for number, raw, data in read_jsonl(path, CaseError, counter):
        yield parse_case(data, specs, source, number, has_markers=b'"$' in raw)


def parse_case(
    data: Mapping[str, Any],
    specs: SpecSet,
    source: str = "<cases>",
    line: int | None = None,
    has_markers: bool = True,
) -> Case:
    """Build one `Case` from its parsed JSON object; CaseError names the field at fault.

    `has_markers=False` promises that no value is a `$any`/`$ref` marker, skipping that walk.
    """

    def fail(where: str, message: str) -> CaseError:
        return CaseError(source, message, line=line, field=where)

    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise fail("id", "every case needs a non-empty string id")
    plans_node = data.get("plans")
    if not isinstance(plans_node, list):
        raise fail("plans", "must be a list of plans (use [] when no call is expected)")
    plans: list[Plan] = []
    for p, plan_node in enumerate(plans_node):
        if not isinstance(plan_node, list):
            raise fail(f"plans[{p}]", "a plan must be a list of calls")
        plans.append(_plan(plan_node, specs, f"plans[{p}]", fail, has_markers))
    tags = data.get("tags", ())
    if not isinstance(tags, list | tuple) or not all(isinstance(t, str) for t in tags):
        raise fail("tags", "must be a list of strings")
    if data.get("score_turns", "final") not in ("final", "all"):
        raise fail("score_turns", "must be 'final' (the default) or 'all'")
    extra = {k: v for k, v in data.items() if k not in ("id", "plans", "prompt", "tags")}
    maybe_linked = has_markers or any(call.after for plan in plans for call in plan)
    linked = maybe_linked and any(is_linked(plan) for plan in plans)
    return Case(case_id, tuple(plans), data.get("prompt"), tuple(tags), line, extra, linked)


def _plan(nodes: list[Any], specs: SpecSet, where: str, fail: Fail, has_markers: bool) -> Plan:
    calls: list[Call] = []
    labels = [n.get("id") for n in nodes if isinstance(n, dict) and n.get("id") is not None]
    for c, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise fail(f"{where}[{c}]", "a call must be an object with name and args")
        if not node.keys() <= _CALL_KEYS:
            unknown = sorted(node.keys() - _CALL_KEYS)[0]
            raise fail(f"{where}[{c}].{unknown}", "unknown key (a call has name, args, id, after)")
        name = node.get("name")
        tool = specs.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            known = ", ".join(sorted(specs.tools))
            raise fail(f"{where}[{c}].name", f"{name!r} is not a tool in the spec (tools: {known})")
        args = node.get("args", {})
        if not isinstance(args, dict):
            raise fail(f"{where}[{c}].args", "must be an object")
        if not args.keys() <= tool.args.args.keys():
            arg = next(a for a in args if a not in tool.args.args)
            raise fail(f"{where}[{c}].args.{arg}", f"tool {name!r} has no argument {arg!r}")
        label = node.get("id")
        after: Any = ()
        if labels:
            if label is not None and (not isinstance(label, str) or labels.count(label) > 1):
                raise fail(f"{where}[{c}].id", "a call label must be a string, unique in its plan")
            after = node.get("after", ())
        if after or "after" in node:
            after = node["after"]
            if not isinstance(after, list) or not all(a in labels for a in after):
                raise fail(
                    f"{where}[{c}].after", f"must list labels of calls in this plan {labels}"
                )
        if has_markers:
            args = _markers(args, tool.args, labels, f"{where}[{c}].args", fail)
        calls.append(Call(tool.name, args, None, None, label, tuple(after)))
    cycle = find_cycle(calls) if has_markers or any(call.after for call in calls) else None
    if cycle:
        raise fail(where, f"$ref/after links form a cycle: {' -> '.join(cycle)}")
    return tuple(calls)


def _markers(value: Any, rule: Rule, labels: list[Any], where: str, fail: Fail) -> Any:
    """Turn `{"$any": [...]}` and `{"$ref": "L#/p"}` into AnyOf and Ref, recursively.

    A marker stands where the spec has a rule for the value (an argument, a key of an
    `object` argument, an item of a `list`), since that rule compares its alternatives.
    """
    if isinstance(value, dict) and "$any" in value:
        options = value["$any"]
        if len(value) != 1 or not isinstance(options, list) or not options:
            raise fail(where, "$any must be the only key, with a non-empty list")
        return AnyOf(_markers(o, rule, labels, where, fail) for o in options)
    if isinstance(value, dict) and "$ref" in value:
        return _ref(value, labels, where, fail)
    if isinstance(rule, ObjectRule) and isinstance(value, dict):
        return {
            k: _markers(v, rule.args[k], labels, f"{where}.{k}", fail) if k in rule.args else v
            for k, v in value.items()
        }
    if isinstance(rule, ListRule) and isinstance(value, list):
        return [_markers(v, rule.items, labels, f"{where}[{i}]", fail) for i, v in enumerate(value)]
    if _has_marker(value):
        raise fail(
            where,
            f"$any and $ref cannot stand inside a value compared as {rule.kind}; "
            "put them where the spec has a rule (an argument, object key or list item)",
        )
    return value


def _has_marker(value: Any) -> bool:
    if isinstance(value, dict):
        return "$any" in value or "$ref" in value or any(map(_has_marker, value.values()))
    if isinstance(value, list):
        return any(map(_has_marker, value))
    return False


def _ref(value: Mapping[str, Any], labels: list[Any], where: str, fail: Fail) -> Ref:
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
