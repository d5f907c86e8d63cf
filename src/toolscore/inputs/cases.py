"""Read a cases file (JSON Lines) into `Case` values, checked against the spec set.

A case is the target of scoring: a broken one is an input error naming the line and the field
(it cannot be scored), unlike a broken produced call, which is a scored failure.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterator, Mapping
from pathlib import Path
from typing import Any

from toolscore.core.answers import parse_required_outputs
from toolscore.core.dataflow import find_cycle, is_linked, iter_refs
from toolscore.core.model import NO_EXTRA, Call, Case, Plan, Turn
from toolscore.core.values import suggest
from toolscore.errors import CaseError
from toolscore.inputs.case_limits import case_limits, check_plans
from toolscore.inputs.jsonl import ByteCounter, read_jsonl
from toolscore.rubrics.response import KEY as RESPONSE_RUBRICS
from toolscore.rubrics.response import ResponseRubricError, parse_response_rubrics
from toolscore.specs.loading import SpecSet
from toolscore.specs.markers import known_keys as _known_keys
from toolscore.specs.markers import parse_markers as _markers

CALL_KEYS = frozenset({"name", "args", "id", "after"})
"""The keys of a plan's call; any other is an input error."""
_PLAIN_CASE_KEYS = frozenset({"id", "plans", "prompt"})
CASE_KEYS = (
    "id", "plans", "turns", "prompt", "tags", "score_turns", "required_outputs", "forbid",
    RESPONSE_RUBRICS, "max_calls", "variant_of", "variant",
)  # fmt: skip
"""The case keys this module reads (docs/formats.md 3.1); `state` reads its own (9.2), and
any other key is kept on the case, unscored."""
TURN_KEYS = frozenset({"prompt", "plans", "goal_state", "state_checks", "required_outputs",
                        "results_from_plan"})  # fmt: skip
"""The keys of one entry of a conversation case's `turns`."""
TURN_OUTCOME_SHAPES: dict[str, tuple[type, ...]] = {
    "goal_state": (dict, str),
    "state_checks": (list,),
    "required_outputs": (list,),
    "results_from_plan": (int,),
}
"""The JSON types a turn's outcome keys may have (their values are read only when calls are
replayed)."""
_SHAPE_NAMES = {dict: "an object", int: "an integer"}

Fail = Callable[[str, str], CaseError]
"""Builds the error for a field of the case being read."""


def read_cases(
    path: str | Path, specs: SpecSet, counter: ByteCounter | None = None
) -> Iterator[Case]:
    """Stream the cases of a JSONL file, validating each line against `specs`."""
    source = str(path)
    for number, raw, data in read_jsonl(path, CaseError, counter):
        yield parse_case(data, specs, source, number, has_markers=may_hold_markers(raw))


def may_hold_markers(raw: bytes) -> bool:
    """False when a case's JSON line surely holds no `$any`/`$ref`/`$omitted` key (no `"$`,
    nor a `$` written as the escape `\\u0024`): `parse_case` may then skip that walk."""
    return b'"$' in raw or b"\\u0024" in raw


def parse_case(
    data: Mapping[str, Any],
    specs: SpecSet,
    source: str = "<cases>",
    line: int | None = None,
    has_markers: bool = True,
) -> Case:
    """Build one `Case` from its parsed JSON object; CaseError names the field at fault.

    `has_markers=False` promises that no value is a `$any`/`$ref` marker, skipping that walk.
    This runs once per case of files with millions of lines, so it checks cheaply first and
    builds error messages only when something is wrong.
    """

    def fail(where: str, message: str) -> CaseError:
        return CaseError(source, message, line=line, field=where)

    case_id = data.get("id")
    if type(case_id) is not str or not case_id:
        raise fail("id", "every case needs a non-empty string id")
    plans_node = data.get("plans")
    if type(plans_node) is not list:
        if "turns" in data and plans_node is None:
            return _conversation(data, case_id, specs, fail, line, has_markers)
        if "turns" in data:
            raise fail("turns", "a case gives plans or turns, not both")
        raise fail("plans", "must be a list of plans (use [] when no call is expected)")
    plans: list[Plan] = []
    linked = False
    for p, plan_node in enumerate(plans_node):
        if type(plan_node) is not list:
            raise fail(f"plans[{p}]", "a plan must be a list of calls")
        plan, links = _plan(plan_node, specs, p, fail, has_markers)
        plans.append(plan)
        linked = linked or links
    if data.keys() <= _PLAIN_CASE_KEYS:
        if specs.forbidden:
            check_plans(plans, specs.rules, specs.forbidden, fail)
        return Case(case_id, tuple(plans), data.get("prompt"), (), line, NO_EXTRA, linked)
    if "turns" in data:
        raise fail("turns", "a case gives plans or turns, not both")
    tags = _tags(data, fail)
    if data.get("score_turns", "final") not in ("final", "all"):
        raise fail("score_turns", "must be 'final' (the default) or 'all'")
    forbid, max_calls = case_limits(data, specs, plans, fail)
    if data.get("required_outputs") is not None:
        labels = {call.label for plan in plans for call in plan if call.label is not None}
        parse_required_outputs(data["required_outputs"], labels, specs.tools, fail)
    if RESPONSE_RUBRICS in data:
        _response_rubrics(data, specs, fail)
    extra = {k: v for k, v in data.items() if k not in _PLAIN_CASE_KEYS}
    return Case(
        case_id, tuple(plans), data.get("prompt"), tags, line, extra, linked,
        forbid, max_calls,
    )  # fmt: skip


def _check_variant(data: Mapping[str, Any], fail: Fail) -> None:
    """`variant_of` (the group of cases giving one task other ways) and `variant` (which way
    this case gives it) are non-empty strings, and a `variant` belongs to a group."""
    for key in ("variant_of", "variant"):
        value = data.get(key)
        if key in data and (type(value) is not str or not value):
            raise fail(key, "must be a non-empty string")
    if "variant" in data and "variant_of" not in data:
        raise fail("variant", "needs variant_of: the id its group of variants shares")


def _tags(data: Mapping[str, Any], fail: Fail) -> tuple[str, ...]:
    """The case's tags, its variant keys checked on the way: both label a case for the
    summary, never for scoring."""
    _check_variant(data, fail)
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise fail("tags", "must be a list of strings")
    return tuple(tags)


def _conversation(
    data: Mapping[str, Any],
    case_id: str,
    specs: SpecSet,
    fail: Fail,
    line: int | None,
    has_markers: bool,
) -> Case:
    """A conversation case (`turns` instead of `plans`): each turn's plans read as a case's
    are, a `$ref` may name a label of an earlier turn, and labels are unique across turns."""
    node = data["turns"]
    if type(node) is not list or not node:
        raise fail("turns", "must be a non-empty list of turns ({prompt?, plans, ...})")
    if "score_turns" in data:
        raise fail("score_turns", "a conversation case scores every turn: drop score_turns")
    turns: list[Turn] = []
    earlier: dict[str, int] = {}  # the labels of earlier turns, in order, each with its turn
    for k, entry in enumerate(node):
        where = f"turns[{k}]"
        if type(entry) is not dict:
            raise fail(where, "a turn must be an object with plans")
        if not entry.keys() <= TURN_KEYS:
            raise _unknown_turn_key(entry, where, fail)
        plans_node = entry.get("plans")
        if type(plans_node) is not list:
            raise fail(
                f"{where}.plans", "must be a list of plans (use [] when no call is expected)"
            )
        for key, shapes in TURN_OUTCOME_SHAPES.items():
            if key in entry and not isinstance(entry[key], shapes):
                names = " or ".join(_SHAPE_NAMES.get(t, f"a {t.__name__}") for t in shapes)
                raise fail(f"{where}.{key}", f"must be {names}")
        plans: list[Plan] = []
        linked = False
        refs: list[tuple[int, int]] = []
        mine: set[str] = set()
        for p, plan_node in enumerate(plans_node):
            if type(plan_node) is not list:
                raise fail(f"{where}.plans[{p}]", "a plan must be a list of calls")
            try:
                plan, links = _plan(
                    plan_node, specs, p, fail, has_markers, f"{where}.plans", earlier
                )
            except CaseError as error:
                raise _later_label(error, node, k) from None
            plans.append(plan)
            linked = linked or links
            for c, call in enumerate(plan):
                if call.label is not None and call.label in earlier:
                    raise fail(
                        f"{where}.plans[{p}][{c}].id",
                        f"label {call.label!r} is already used by an earlier turn "
                        "(labels are unique across a conversation)",
                    )
                if call.label is not None:
                    mine.add(call.label)
                if (
                    has_markers
                    and earlier
                    and any(ref.label in earlier for _, ref in iter_refs(call.args))
                ):
                    refs.append((p, c))
        earlier.update(dict.fromkeys(sorted(mine), k))
        extra = {k: v for k, v in entry.items() if k not in ("prompt", "plans")}
        turn = Turn(entry.get("prompt"), tuple(plans), linked, extra or NO_EXTRA, tuple(refs))
        turns.append(turn)
    every_plan = [plan for turn in turns for plan in turn.plans]
    forbid, max_calls = case_limits(data, specs, every_plan, fail)
    if max_calls is not None:
        fewest = sum(min(map(len, turn.plans), default=0) for turn in turns)
        if fewest > max_calls:
            message = (
                f"the turns' shortest plans make {fewest} calls, more than max_calls "
                f"{max_calls}: the case could never pass"
            )
            raise fail("max_calls", message)
    _conversation_outputs(data, node, earlier, specs, fail)
    extra = {k: v for k, v in data.items() if k not in ("id", "turns", "prompt")}
    return Case(
        case_id, (), data.get("prompt"), _tags(data, fail), line, extra, False, forbid,
        max_calls, tuple(turns),
    )  # fmt: skip


def _response_rubrics(data: Mapping[str, Any], specs: SpecSet, fail: Fail) -> None:
    """Check a case's `response_rubrics` against the spec's rubrics (docs/formats.md 2.7)."""
    try:
        parse_response_rubrics(data[RESPONSE_RUBRICS], specs.rubrics)
    except ResponseRubricError as error:
        raise fail(error.where, error.message) from None


def _unknown_turn_key(entry: Mapping[str, Any], where: str, fail: Fail) -> CaseError:
    """The error for a turn's first unknown key, with the near known key it may misspell
    (`goal_sate`, `plan`)."""
    unknown = sorted(entry.keys() - TURN_KEYS)[0]
    if unknown == "outputs":  # a name the first sketch used: never read, so refused
        return fail(f"{where}.outputs", "a turn's outputs are not judged: give required_outputs")
    known = ", ".join(sorted(TURN_KEYS))
    hint = suggest(unknown, sorted(TURN_KEYS - entry.keys()))
    return fail(f"{where}.{unknown}", f"unknown key{hint}; a turn has {known}")


def _later_label(error: CaseError, turns: list[Any], k: int) -> CaseError:
    """`error` (from reading turn k's plans) said better when it is a `$ref` to a label of a
    later turn's call: a turn is matched before the later turns' calls are made."""
    if "$ref to unknown label " not in error.message:
        return error
    for later in range(k + 1, len(turns)):
        plans = turns[later].get("plans") if isinstance(turns[later], dict) else None
        for plan in plans if isinstance(plans, list) else ():
            for call in plan if isinstance(plan, list) else ():
                label = call.get("id") if isinstance(call, dict) else None
                if isinstance(label, str) and f"unknown label {label!r} " in error.message:
                    message = (
                        f"$ref to {label!r}, a label of a later turn (turns[{later}]): a $ref "
                        "names a label of its own turn or an earlier one"
                    )
                    return CaseError(error.source, message, line=error.line, field=error.field)
    return error


def _conversation_outputs(
    data: Mapping[str, Any],
    turns: list[Any],
    turn_of: Mapping[str, int],
    specs: SpecSet,
    fail: Fail,
) -> None:
    """Check the `required_outputs` of each turn and of the conversation (a case's own may
    name a label of any turn: its answer is looked for in the final response), and the
    case's `response_rubrics`."""
    if RESPONSE_RUBRICS in data:
        _response_rubrics(data, specs, fail)
    for k, entry in enumerate(turns):
        if entry.get("required_outputs") is not None:
            _turn_outputs(entry["required_outputs"], k, turn_of, specs, fail)
    if data.get("required_outputs") is not None:
        parse_required_outputs(data["required_outputs"], turn_of, specs.tools, fail)


def _turn_outputs(
    node: Any, k: int, turn_of: Mapping[str, int], specs: SpecSet, fail: Fail
) -> None:
    """Check turn k's `required_outputs`: a `$ref` names a label of this turn or an earlier
    one (a later turn's call has not been made when the turn's answer is given)."""
    where = f"turns[{k}].required_outputs"
    if isinstance(node, list):
        for n, item in enumerate(node):
            target = item.get("$ref") if isinstance(item, dict) else None
            label = target.split("#", 1)[0] if isinstance(target, str) else None
            later = turn_of.get(label) if label is not None else None
            if later is not None and later > k:
                message = (
                    f"names {label!r}, a label of a later turn (turns[{later}]): a turn's "
                    "answer can carry only what this turn's or an earlier turn's calls returned"
                )
                raise fail(f"{where}[{n}].$ref", message)

    def turn_fail(field: str, message: str) -> CaseError:
        return fail(f"turns[{k}].{field}", message)

    parse_required_outputs(node, _LabelsUpTo(turn_of, k), specs.tools, turn_fail)


class _LabelsUpTo(Collection[str]):
    """The labels of turns 0..k of a conversation, looked up without copying them."""

    __slots__ = ("k", "turn_of")

    def __init__(self, turn_of: Mapping[str, int], k: int) -> None:
        self.turn_of = turn_of
        self.k = k

    def __contains__(self, label: object) -> bool:
        turn = self.turn_of.get(label) if isinstance(label, str) else None
        return turn is not None and turn <= self.k

    def __iter__(self) -> Iterator[str]:
        return (label for label, turn in self.turn_of.items() if turn <= self.k)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _plan(
    nodes: list[Any],
    specs: SpecSet,
    p: int,
    fail: Fail,
    has_markers: bool,
    plans: str = "plans",
    earlier: Mapping[str, Any] | None = None,
) -> tuple[Plan, bool]:
    """One plan's calls, and whether any of them is linked to another (`$ref`, `after`).

    `plans` names the list the plan is in; `earlier` lists the labels of a conversation's
    earlier turns, which a `$ref` may name too (never an `after`)."""
    calls: list[Call] = []
    tools = specs.tools
    labels = [n["id"] for n in nodes if type(n) is dict and n.get("id") is not None]
    ref_labels: Container[Any] = labels if not earlier else _TurnLabels(labels, earlier)
    for c, node in enumerate(nodes):
        if type(node) is not dict:
            raise fail(f"{plans}[{p}][{c}]", "a call must be an object with name and args")
        if not node.keys() <= CALL_KEYS:
            unknown = sorted(node.keys() - CALL_KEYS)[0]
            raise fail(
                f"{plans}[{p}][{c}].{unknown}", "unknown key (a call has name, args, id, after)"
            )
        name = node.get("name")
        tool = tools.get(name) if type(name) is str else None
        if tool is None:
            known = ", ".join(sorted(tools))
            raise fail(
                f"{plans}[{p}][{c}].name", f"{name!r} is not a tool in the spec (tools: {known})"
            )
        args = node.get("args", {})
        if type(args) is not dict:
            raise fail(f"{plans}[{p}][{c}].args", "must be an object")
        rules = tool.args.args
        if not args.keys() <= rules.keys():
            arg = next(a for a in args if a not in rules)
            raise fail(f"{plans}[{p}][{c}].args.{arg}", f"tool {name!r} has no argument {arg!r}")
        if labels or "after" in node:
            call = _labelled(node, tool.name, args, labels, f"{plans}[{p}][{c}]", fail)
        else:
            call = Call(tool.name, args)
        if has_markers:
            args = _markers(args, tool.args, ref_labels, f"{plans}[{p}][{c}].args", fail)
            call = call._replace(args=args)
        calls.append(call)
        nested = tool.args.nested_args
        if nested and not nested.isdisjoint(args):
            for arg, value in args.items():
                rule = rules[arg]
                if not rule.scalar:
                    _known_keys(value, rule, f"{plans}[{p}][{c}].args.{arg}", fail)
    if not labels:  # a link (`$ref`, `after`) names a label: a plan without labels has none
        return tuple(calls), False
    cycle = find_cycle(calls)
    if cycle:
        raise fail(f"{plans}[{p}]", f"$ref/after links form a cycle: {' -> '.join(cycle)}")
    return tuple(calls), is_linked(calls)


class _TurnLabels:
    """The labels a `$ref` in a conversation turn's plan may name: the plan's own and the
    earlier turns' (looked up without copying them, so that parsing stays linear)."""

    __slots__ = ("earlier", "own")

    def __init__(self, own: list[Any], earlier: Mapping[str, Any]) -> None:
        self.own = own
        self.earlier = earlier

    def __contains__(self, label: object) -> bool:
        return label in self.own or label in self.earlier

    def __repr__(self) -> str:
        return repr([*self.own, *self.earlier])


def _labelled(
    node: dict[str, Any], name: str, args: dict[str, Any], labels: list[Any], where: str, fail: Fail
) -> Call:
    """A call that has a label or lists calls it must come `after`."""
    label = node.get("id")
    if label is not None and (not isinstance(label, str) or labels.count(label) > 1):
        raise fail(f"{where}.id", "a call label must be a string, unique within its plan")
    after = node.get("after", [])
    if not isinstance(after, list) or not all(a in labels for a in after):
        raise fail(f"{where}.after", f"must list labels of calls in this plan {labels}")
    return Call(name, args, label=label, after=tuple(after))
