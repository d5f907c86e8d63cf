"""Forbidden calls and call limits: what fails a case whatever its plans and relaxations say.

A `forbid` entry (the spec's or a case's) names a tool and optionally some of its arguments;
a produced call to that tool whose given arguments match, each under the tool's rule for it,
fails the case with `forbidden_call`. A case's `max_calls` fails it with `too_many_calls`
when more calls were made. Both are checked beside the verdict, never through the pairing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolscore.core.arguments import matches
from toolscore.core.dataflow import first_options
from toolscore.core.model import MISSING, OMITTED, AnyOf, Call, Case, Forbid, Mismatch, Ref
from toolscore.core.rules import ObjectRule, Rule

ByTool = Mapping[str, tuple[Forbid, ...]]
"""Forbid entries by the tool they name: a call to a tool without entries costs one lookup."""


def by_tool(entries: Iterable[Forbid]) -> dict[str, tuple[Forbid, ...]]:
    """`entries` grouped by tool, in their order."""
    grouped: dict[str, tuple[Forbid, ...]] = {}
    for entry in entries:
        grouped[entry.tool] = (*grouped.get(entry.tool, ()), entry)
    return grouped


def with_case(spec_forbid: ByTool, case_forbid: Sequence[Forbid]) -> ByTool:
    """The spec's entries by tool with a case's own added after them."""
    if not case_forbid:
        return spec_forbid
    merged = dict(spec_forbid)
    for tool, entries in by_tool(case_forbid).items():
        merged[tool] = (*merged.get(tool, ()), *entries)
    return merged


def call_forbidden(rule: ObjectRule, entry: Forbid, call: Call) -> bool:
    """Whether produced `call` (to `entry.tool`) matches `entry`: every argument the entry
    gives is present in the call and matches under its rule (`$any`: one alternative does;
    an `$omitted` alternative matches the argument's absence). Arguments that could not be
    parsed match only an entry without arguments."""
    if not entry.args:
        return True
    args = call.args
    if args is None:
        return False
    for name, value in entry.args.items():
        produced = args.get(name, MISSING)
        if produced is MISSING:
            if not (type(value) is AnyOf and OMITTED in value):
                return False
        elif not matches(rule.args[name], value, produced):
            return False
    return True


def limit_mismatches(
    rules: Mapping[str, ObjectRule], spec_forbid: ByTool, case: Case, calls: Sequence[Call]
) -> tuple[Mismatch, ...]:
    """The `forbidden_call` mismatch of each produced call an entry of the spec or the case
    forbids (the first entry that matches names the reason), then `too_many_calls` when the
    case allows fewer calls than were made."""
    forbidden = with_case(spec_forbid, case.forbid)
    found: list[Mismatch] = []
    if forbidden:
        for position, call in enumerate(calls):
            entries = forbidden.get(call.name)
            if entries is None:
                continue
            rule = rules[call.name]
            for entry in entries:
                if call_forbidden(rule, entry, call):
                    found.append(forbidden_mismatch(entry, position))
                    break
    limit = case.max_calls
    if limit is not None and len(calls) > limit:
        message = f"{len(calls)} calls made, at most {limit} allowed"
        found.append(Mismatch("too_many_calls", message=message))
    return tuple(found)


def forbidden_mismatch(entry: Forbid, position: int) -> Mismatch:
    """The `forbidden_call` mismatch of the produced call at `position`, naming the entry and
    its reason."""
    reason = f": {entry.reason}" if entry.reason else ""
    message = f"call {position} to {entry.tool!r} is forbidden by {entry.where}{reason}"
    return Mismatch("forbidden_call", message=message, call=position)


def plan_call_forbidden(rule: ObjectRule, entry: Forbid, call: Call) -> bool:
    """Whether plan call `call` accepts a call `entry` forbids: for every argument the entry
    gives, some alternative of the plan's value (nested `$any` taken as its first) matches it.
    A `$ref` value is known only at run time and is taken not to match."""
    if not entry.args:
        return True
    args = call.args or {}
    for name, value in entry.args.items():
        planned = args.get(name, MISSING)
        options = list(planned) if type(planned) is AnyOf else [planned]
        if not any(_option_matches(rule.args[name], value, option) for option in options):
            return False
    return True


def _option_matches(rule: Rule, value: Any, option: Any) -> bool:
    if option is MISSING or option is OMITTED:
        return type(value) is AnyOf and OMITTED in value
    if type(option) is Ref:
        return False
    return matches(rule, value, first_options(option))
