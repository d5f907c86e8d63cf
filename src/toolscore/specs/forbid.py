"""Read `forbid` entries, the spec's (`{tool, args?, reason}`) and a case's (`{name, args?}`),
into `Forbid` values checked against the spec: the tool and each argument must exist, and
each argument must be one the tool's rules compare (an ignored one would match anything).
Their `args` are read as plan arguments are, so `$any` works in them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from toolscore.core.model import Forbid
from toolscore.core.values import suggest
from toolscore.specs.markers import Fail, known_keys, parse_markers

SPEC_KEYS = ("tool", "args", "reason")
CASE_KEYS = ("name", "args")


class _EntryError(Exception):
    """A problem with one entry, raised through `Fail` and collected as a spec problem."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


def forbid_entry(
    node: Any, tools: Mapping[str, Any], where: str, fail: Fail, *, spec: bool
) -> Forbid:
    """One entry at `where` (`forbid[1]`), of the spec (`spec=True`: keys tool, args, reason)
    or of a case (keys name, args); `fail(field, message)` makes the error to raise."""
    keys, tool_key = (SPEC_KEYS, "tool") if spec else (CASE_KEYS, "name")
    if not isinstance(node, Mapping):
        raise fail(where, f"must be an object with {', '.join(keys)} ({tool_key} required)")
    for key in node:
        if key not in keys:
            raise fail(f"{where}.{key}", f"unknown key{suggest(str(key), keys)}")
    name = node.get(tool_key)
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is None:
        known = ", ".join(sorted(tools))
        raise fail(f"{where}.{tool_key}", f"{name!r} is not a tool in the spec (tools: {known})")
    reason = node.get("reason")
    if spec and (not isinstance(reason, str) or not reason.strip()):
        raise fail(f"{where}.reason", "every forbid entry needs a reason")
    args = node.get("args", {})
    if not isinstance(args, dict):
        raise fail(f"{where}.args", "must be an object of argument names to values")
    rules = tool.args.args
    for arg in args:
        rule = rules.get(arg)
        if rule is None:
            raise fail(f"{where}.args.{arg}", f"tool {name!r} has no argument {arg!r}")
        if not rule.compared:
            raise fail(
                f"{where}.args.{arg}",
                f"argument {arg!r} is never compared ({rule.kind}): an entry cannot test it",
            )
    args = parse_markers(args, tool.args, [], f"{where}.args", fail)
    for arg, value in args.items():
        if not rules[arg].scalar:
            known_keys(value, rules[arg], f"{where}.args.{arg}", fail)
    owner = "the spec's" if spec else "the case's"
    return Forbid(tool.name, args, reason if spec else None, f"{owner} {where}")


def spec_forbid(
    node: Any,
    tools: Mapping[str, Any],
    declared: Mapping[str, Any],
    add: Callable[[str, str], None],
) -> Iterator[Forbid]:
    """The spec's `forbid` list; each bad entry is a problem (`add(field, message)`). An entry
    naming a declared tool whose rules did not compile is left to that tool's own problem."""
    if not isinstance(node, list):
        add("forbid", "must be a list of {tool, args, reason} entries")
        return
    for index, entry in enumerate(node):
        name = entry.get("tool") if isinstance(entry, Mapping) else None
        if isinstance(name, str) and name in declared and name not in tools:
            continue
        try:
            yield forbid_entry(entry, tools, f"forbid[{index}]", _EntryError, spec=True)
        except _EntryError as refused:
            add(refused.where, refused.message)
