"""What a person labelling a case sees: the plans, the produced calls, and where they differ.

The view is plain JSON kept with the batch, so that labelling needs neither the original
files nor the specs. Differences are found with exact JSON equality, argument by argument
along the rule scorer's pairing, and each says whether the rule scorer accepted it: that is
what a person is asked to judge. The stratum names the rule that decided the disagreement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from toolscore.calibration.spec_notes import rules_view
from toolscore.core.model import MISSING, OMITTED, AnyOf, Call, Case, CaseResult, Ref, pointer_of
from toolscore.core.values import json_equal, show
from toolscore.report.json_report import safe_value
from toolscore.scoring.case import exact_difference
from toolscore.specs.loading import SpecSet

CALL_LEVEL = (
    "missing_call", "extra_call", "unknown_tool", "wrong_tool", "arguments_unparseable",
    "order_violation",
)  # fmt: skip


def case_view(
    specs: SpecSet, case: Case, result: CaseResult, stored: Mapping[str, Any]
) -> dict[str, Any]:
    """The labelling view of one case: `result` is the case scored again (for its pairing),
    `stored` the run's report JSON of the case (its mismatches are the run's verdict)."""
    spans = turn_plan_calls(case, result) if case.turns else None
    if case.turns:
        case, result, stored = as_one_plan(case, result, stored)
    plan_index, plan = compared_plan(case, result)
    mismatches = list(stored.get("mismatches", ()))
    view: dict[str, Any] = {
        "prompt": _prompt(case.prompt),
        "plans": [[_plan_call(call) for call in each] for each in case.plans],
        "plan": plan_index,
        "produced": [_produced_call(call) for call in result.calls],
        "pairs": [list(pair) for pair in result.pairs],
        "differences": differences(specs, plan, result, mismatches),
        "mismatches": mismatches,
        "exact_reason": exact_difference(case.plans, result.calls),
        "rules": rules_view(
            specs,
            [call.name for plan in case.plans for call in plan] + [c.name for c in result.calls],
        ),
    }
    if spans is not None:
        view["turn_plan_calls"] = spans
    return view


def compared_plan(case: Case, result: CaseResult) -> tuple[int | None, Sequence[Call]]:
    """The plan the rule scorer compared the calls with (the first when it chose none), and
    its index (None for a case with no plans)."""
    index = result.plan if result.plan is not None else (0 if case.plans else None)
    return index, case.plans[index] if index is not None else ()


def turn_plan_calls(case: Case, result: CaseResult) -> list[list[int]]:
    """For each turn of a conversation case, `[start, end)` of its calls in the one plan
    `as_one_plan` lays out (the turn's chosen plan, else its first), so that a view of the
    one plan can be cut back into turns."""
    spans: list[list[int]] = []
    start = 0
    for turn, verdict in zip(case.turns, result.turns, strict=True):
        index = verdict.plan if verdict.plan is not None else (0 if turn.plans else None)
        end = start + (len(turn.plans[index]) if index is not None else 0)
        spans.append([start, end])
        start = end
    return spans


def as_one_plan(
    case: Case, result: CaseResult, stored: Mapping[str, Any]
) -> tuple[Case, CaseResult, Mapping[str, Any]]:
    """A conversation case seen as one plan, for the views made for one plan: each turn's
    chosen plan (else its first) in turn order, the pairs and the stored mismatches' plan
    calls moved to their place in it (a turn-by-turn view is a later step)."""
    plan: list[Call] = []
    pairs: list[tuple[int, int]] = []
    moved: list[Any] = []
    stored_turns = stored.get("turns", ())
    for k, (turn, verdict) in enumerate(zip(case.turns, result.turns, strict=True)):
        offset = len(plan)
        index = verdict.plan if verdict.plan is not None else (0 if turn.plans else None)
        plan += turn.plans[index] if index is not None else ()
        pairs += [(offset + i, j) for i, j in verdict.pairs]
        for mismatch in stored_turns[k]["mismatches"] if k < len(stored_turns) else ():
            at = mismatch.get("plan_call")
            moved.append({**mismatch, "plan_call": None if at is None else offset + at})
    in_turns = sum(len(t.get("mismatches", ())) for t in stored_turns)
    moved += list(stored.get("mismatches", ()))[in_turns:]
    one = case._replace(plans=(tuple(plan),), turns=())
    return (
        one,
        result._replace(plan=0, pairs=tuple(pairs), turns=()),
        {**stored, "mismatches": moved},
    )


def stratum_view(specs: SpecSet, case: Case, result: CaseResult) -> dict[str, Any]:
    """Just what `stratum` reads of a view (tool names and differences): cheaper than
    `case_view`, for finding the stratum of every disagreement of a large run."""
    if case.turns:
        case, result, _ = as_one_plan(case, result, {})
    plan_index, plan = compared_plan(case, result)
    return {
        "plans": [[{"name": call.name} for call in each] for each in case.plans],
        "plan": plan_index,
        "produced": [{"name": call.name} for call in result.calls],
        "differences": differences(specs, plan, result, (), with_values=False),
    }


def differences(
    specs: SpecSet,
    plan: Sequence[Call],
    result: CaseResult,
    mismatches: Sequence[Mapping[str, Any]],
    with_values: bool = True,
) -> list[dict[str, Any]]:
    """Every argument where a produced call differs from its paired plan call as exact JSON,
    and every unpaired call, each marked with whether the rule scorer accepted it (without
    the two values, and a message, unless `with_values`)."""
    rejected = {(m.get("plan_call"), m.get("call"), _top(m.get("path", ""))) for m in mismatches}
    found: list[dict[str, Any]] = []
    for i, j in result.pairs:
        expected, produced = plan[i], result.calls[j]
        if expected.name != produced.name or produced.args is None:
            reason = (
                f"arguments could not be parsed: {produced.args_error}"
                if produced.args is None
                else f"{produced.name!r} made where the plan has {expected.name!r}"
            )
            found.append(_difference(i, j, "", expected.name, produced.name, False, None, reason))
            continue
        rule = specs.rules.get(expected.name)
        for key in sorted(set(expected.args or {}) | set(produced.args)):
            want = (expected.args or {}).get(key, MISSING)
            got = produced.args.get(key, MISSING)
            if _same(want, got):
                continue
            path = pointer_of((key,))
            accepted = (i, j, path) not in rejected and (i, j, "") not in rejected
            kind = rule.args[key].kind if rule is not None and key in rule.args else None
            if not with_values:
                message = ""
            elif accepted:
                how = "no value" if got is MISSING else show(got)
                message = f"{kind or 'the'} rule accepts {how} for {_shown(want)}"
            else:
                message = _message(mismatches, i, j, path)
            found.append(_difference(i, j, path, want, got, accepted, kind, message, with_values))
    paired_plan = {i for i, _ in result.pairs}
    paired_calls = {j for _, j in result.pairs}
    for i, call in enumerate(plan):
        if i not in paired_plan:
            found.append(_difference(i, None, "", call.name, MISSING, False, None, "missing call"))
    for j, call in enumerate(result.calls):
        if j not in paired_calls:
            accepted = not any(
                m.get("call") == j and m.get("plan_call") is None for m in mismatches
            )
            message = "extra call, allowed by a relaxation" if accepted else "extra call"
            found.append(_difference(None, j, "", MISSING, call.name, accepted, None, message))
    return found


def stratum(
    view: Mapping[str, Any],
    stored: Mapping[str, Any],
    tools: Sequence[str | None],
    as_planned: bool = False,
) -> str:
    """The rule that decided the case, as `tool.argument [kind]` or `tool [code]`.

    When the rule scorer failed the case, its first mismatch decided; when it passed, the
    first difference it accepted did (or the order of the calls, when only that differs;
    `tool [as planned]` instead when `as_planned`: exact JSON passed the case too).
    """
    mismatches = stored.get("mismatches", ())
    if mismatches:
        first = mismatches[0]
        tool = tools[0] if tools and tools[0] else _tool_of(view, first)
        if first["code"] in CALL_LEVEL or not first["path"]:
            return f"{tool} [{first['code']}]"
        return f"{tool}{_dotted(first['path'])} [{first['rule'] or first['code']}]"
    for found in view["differences"]:
        if found["accepted"]:
            tool = _tool_of(view, found)
            if not found["path"]:
                return f"{tool} [relaxed extra call]"
            kind = "omitted default" if "produced" not in found else found["rule"]
            return f"{tool}{_dotted(found['path'])} [{kind}]"
    if not view["plans"] or not any(view["plans"]):
        return "(abstention)"
    return f"{_tool_of(view, {})} [{'as planned' if as_planned else 'call order'}]"


def _tool_of(view: Mapping[str, Any], item: Mapping[str, Any]) -> str:
    plan_call, call = item.get("plan_call"), item.get("call")
    if view["plan"] is not None and plan_call is not None:
        return str(view["plans"][view["plan"]][plan_call]["name"])
    if call is not None and call < len(view["produced"]):
        return str(view["produced"][call]["name"])
    if view["plan"] is not None and view["plans"][view["plan"]]:
        return str(view["plans"][view["plan"]][0]["name"])
    return "(no call)"


def _same(want: Any, got: Any) -> bool:
    """Whether a produced value is the expected one as exact JSON (markers unwrapped)."""
    if type(want) is Ref:
        return True  # a reference is judged by the data flow, reported as a mismatch if wrong
    if want is OMITTED or (type(want) is AnyOf and OMITTED in want):
        if got is MISSING:
            return True
        if want is OMITTED:
            return False
    if type(want) is AnyOf:
        return any(_same(alternative, got) for alternative in want if alternative is not OMITTED)
    if want is MISSING or got is MISSING:
        return False
    return json_equal(want, got)


def _message(mismatches: Sequence[Mapping[str, Any]], i: int, j: int, path: str) -> str:
    for m in mismatches:
        if m.get("plan_call") == i and m.get("call") == j and _top(m.get("path", "")) == path:
            return str(m["message"])
    return "the rule scorer rejects this difference"


def _difference(
    plan_call: int | None,
    call: int | None,
    path: str,
    expected: Any,
    produced: Any,
    accepted: bool,
    rule: str | None,
    message: str,
    with_values: bool = True,
) -> dict[str, Any]:
    """One difference; without values, `expected` and `produced` only say whether there is
    one (None), which is all the stratum reads."""
    found: dict[str, Any] = {"plan_call": plan_call, "call": call, "path": path}
    if expected is not MISSING:
        found["expected"] = safe_value(expected, markers=True) if with_values else None
    if produced is not MISSING:
        found["produced"] = safe_value(produced) if with_values else None
    found.update(accepted=accepted, rule=rule, message=message)
    return found


def _top(pointer: str) -> str:
    """The top-level argument of a JSON pointer (`/a/0/b` -> `/a`)."""
    if not pointer:
        return ""
    end = pointer.find("/", 1)
    return pointer if end < 0 else pointer[:end]


def _dotted(pointer: str) -> str:
    return pointer.replace("/", ".")


def _shown(value: Any) -> str:
    if value is MISSING or value is OMITTED:
        return "no value"
    return show(safe_value(value))


def _plan_call(call: Call) -> dict[str, Any]:
    return {"name": call.name, "args": safe_value(dict(call.args or {}), markers=True)}


def _produced_call(call: Call) -> dict[str, Any]:
    return {
        "name": call.name,
        "args": None if call.args is None else safe_value(call.args),
        "raw_args": call.raw_args if isinstance(call.raw_args, str) else None,
        "error": call.args_error,
    }


def _prompt(prompt: Any) -> str | None:
    if prompt is None or isinstance(prompt, str):
        return prompt
    try:
        return orjson.dumps(prompt, option=orjson.OPT_INDENT_2).decode()
    except (orjson.JSONEncodeError, TypeError):
        return show(prompt)
