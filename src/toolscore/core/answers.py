"""Required outputs that name what a tool returned: `{"$ref": "LABEL#/pointer"}` or
`{"$result": {"tool": NAME, "path": "/pointer"}}` in a case's `required_outputs`.

The answer must carry the value the agent's own call returned at the pointer, rendered as text
under the value's rule: strings under the case's normalisation, numbers found anywhere in the
text and compared under a `number` rule (exact numeric equality by default), dates in any of a
`date` rule's formats, booleans as the words `true`/`false`. Pure: the texts and the calls come
in, the missing entries (each with the value it held) go out, so a turn can be checked alone.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Iterator, Sequence
from datetime import date
from typing import Any, Final, NamedTuple

import orjson

from toolscore.core.dataflow import pointer_problem, resolve_pointer, result_document
from toolscore.core.model import MISSING, Call, Case, Pairs, TurnResult
from toolscore.core.rules import Rule, RuleError, compile_rule
from toolscore.core.rules.numbers import NumberRule
from toolscore.core.rules.times import DateRule
from toolscore.core.values import show

Fail = Callable[[str, str], Exception]
"""Builds the input error for a field of the case (`required_outputs[0].$ref`, message)."""

Normalise = Callable[[str], str]

RULE_KINDS = ("number", "date")
"""The kinds an entry's own `rule` may have."""

_MINUS = frozenset("-\u2212")
# Single character classes, matched forwards only: each scan is linear in the text.
_DIGIT = re.compile("[0-9]")
_DIGITS = re.compile("[0-9]+")
_LETTERS = re.compile(r"[^\W\d_]+")
_ENTRY_FORMS = (
    'a non-empty string, {"$ref": "LABEL#/pointer"} or {"$result": {"tool", "path"}} '
    "(each reference with an optional rule)"
)


class ResultRef(NamedTuple):
    """A required output naming a value the agent's call returned: the call standing for the
    plan call labelled `label`, or the last call of `tool` with a result; `rule` is the
    entry's own rule (None: the value's type decides); `written` the entry as reports show it."""

    pointer: str
    label: str | None = None
    tool: str | None = None
    rule: Rule | None = None
    written: str = ""


RequiredOutput = str | ResultRef
"""One entry of `required_outputs`: a string to find, or a value a call returned."""


class ScoredCalls(NamedTuple):
    """The calls a verdict paired with a plan, for resolving `$ref` outputs: the scored calls,
    each one's position among all the trajectory's calls (where replay outcomes stand), the
    (plan call, scored call) pairs, and the calls of the plan they pair with."""

    calls: tuple[Call, ...] = ()
    positions: tuple[int, ...] = ()
    pairs: Pairs = ()
    plan: tuple[Call, ...] = ()


NO_CALLS: Final = ScoredCalls()
"""No call stands for any label (a verdict without calls, or `replay` outside a run)."""


def written(entry: RequiredOutput) -> str:
    """An entry as the report lists it: a string as written, a reference as compact JSON."""
    return entry if isinstance(entry, str) else entry.written


def case_required_outputs(
    case: Case, fail: Fail, tools: Collection[str] | None = None
) -> tuple[RequiredOutput, ...] | None:
    """The case's `required_outputs`, checked (None when it has none). A `$ref` must name a
    label of one of the case's plans (of a conversation, of any turn's); with `tools`, a
    `$result` must name one of them."""
    node = case.extra.get("required_outputs")
    if node is None:
        return None
    plans = [*case.plans, *(plan for turn in case.turns for plan in turn.plans)]
    labels = {call.label for plan in plans for call in plan if call.label is not None}
    return parse_required_outputs(node, labels, tools, fail)


def conversation_calls(
    case: Case, turns: Sequence[TurnResult], calls: Sequence[Call], upto: int | None = None
) -> ScoredCalls:
    """The calls a conversation's `$ref`/`$result` outputs of turn `upto` read (None: the
    case's own, after every call): the agent's calls up to the end of that turn, and each
    labelled call of turns 0..upto's chosen plans paired with the agent's call that turn's
    verdict paired it with (a later turn's label is never one: the cases reader refuses it)."""
    last = len(turns) - 1 if upto is None else min(upto, len(turns) - 1)
    plan: list[Call] = []
    pairs: list[tuple[int, int]] = []
    end = 0
    for k in range(last + 1):
        result = turns[k]
        end = max(end, result.calls[1])
        if result.plan is None or k >= len(case.turns):
            continue
        chosen = case.turns[k].plans[result.plan]
        for i, j in result.pairs:
            if chosen[i].label is not None:
                pairs.append((len(plan), j))
                plan.append(chosen[i])
    made = tuple(calls) if upto is None else tuple(calls[:end])
    return ScoredCalls(made, tuple(range(len(made))), tuple(pairs), tuple(plan))


def parse_required_outputs(
    node: Any, labels: Collection[str], tools: Collection[str] | None, fail: Fail
) -> tuple[RequiredOutput, ...]:
    """`required_outputs` read: a list of strings and reference objects (see the module)."""
    if not isinstance(node, list):
        raise fail(
            "required_outputs",
            f"must be a list of non-empty strings and references: {_ENTRY_FORMS}",
        )
    return tuple(
        _entry(item, f"required_outputs[{k}]", labels, tools, fail) for k, item in enumerate(node)
    )


def _entry(
    item: Any, where: str, labels: Collection[str], tools: Collection[str] | None, fail: Fail
) -> RequiredOutput:
    if isinstance(item, str):
        if not item.strip():
            raise fail(where, "must be a non-empty string")
        return item
    if not isinstance(item, dict) or len(item.keys() & {"$ref", "$result"}) != 1:
        raise fail(where, f"must be {_ENTRY_FORMS}")
    unknown = sorted(k for k in item if k not in ("$ref", "$result", "rule"))
    if unknown:
        raise fail(f"{where}.{unknown[0]}", "unknown key (an entry has $ref or $result, and rule)")
    rule = _rule(item["rule"], f"{where}.rule", fail) if "rule" in item else None
    if "$ref" in item:
        target = item["$ref"]
        if not isinstance(target, str) or "#" not in target:
            raise fail(f"{where}.$ref", 'must be a string "LABEL#/json/pointer"')
        label, pointer = target.split("#", 1)
        if label not in labels:
            known = ", ".join(sorted(labels)) or "none"
            raise fail(f"{where}.$ref", f"no plan has a call labelled {label!r} (labels: {known})")
        _pointer(pointer, f"{where}.$ref", fail)
        text = f'{{"$ref": {_json(target)}}}'
        return ResultRef(pointer, label=label, rule=rule, written=text)
    spec = item["$result"]
    if not isinstance(spec, dict) or not spec.keys() <= {"tool", "path"} or "tool" not in spec:
        raise fail(f"{where}.$result", 'must be {"tool": NAME, "path": "/json/pointer"}')
    tool, pointer = spec["tool"], spec.get("path", "")
    if not isinstance(tool, str) or (tools is not None and tool not in tools):
        known = ", ".join(sorted(tools or ()))
        raise fail(f"{where}.$result.tool", f"{show(tool)} is not a tool in the spec ({known})")
    if not isinstance(pointer, str):
        raise fail(f"{where}.$result.path", "must be a JSON pointer string")
    _pointer(pointer, f"{where}.$result.path", fail)
    text = f'{{"$result": {{"tool": {_json(tool)}, "path": {_json(pointer)}}}}}'
    return ResultRef(pointer, tool=tool, rule=rule, written=text)


def _json(text: str) -> str:
    return orjson.dumps(text).decode()


def _pointer(pointer: str, where: str, fail: Fail) -> None:
    problem = pointer_problem(pointer)
    if problem:
        raise fail(where, problem)


def _rule(node: Any, where: str, fail: Fail) -> Rule:
    try:
        rule = compile_rule(node)
    except RuleError as error:
        raise fail(where, error.message) from None
    if rule.kind not in RULE_KINDS:
        raise fail(where, f"must be a rule of kind {' or '.join(RULE_KINDS)}, not {rule.kind!r}")
    return rule


def missing_ref_outputs(
    refs: Sequence[ResultRef],
    texts: Sequence[str],
    scored: ScoredCalls,
    *,
    of_value: Normalise,
    of_text: Normalise,
) -> tuple[str, ...]:
    """The references whose value no one of `texts` carries, each written with why: the value
    it held (`{"$ref": "lookup#/balance"} (held 1250.5)`) or why there was none.

    Values come from `scored.calls` (their recorded or replayed results); `of_value` and
    `of_text` normalise a string value and a text as the case's `normalise` says.
    """
    missing: list[str] = []
    for ref in refs:
        value, why = resolve_output(ref, scored)
        if why is None:
            why = _unsaid(value, ref.rule, texts, of_value, of_text)
        if why is not None:
            missing.append(f"{ref.written} ({why})")
    return tuple(missing)


def resolve_output(ref: ResultRef, scored: ScoredCalls) -> tuple[Any, str | None]:
    """The scalar value `ref` names, or MISSING and why there is none to look for."""
    if ref.label is not None:
        index = next((i for i, c in enumerate(scored.plan) if c.label == ref.label), None)
        produced = next((j for i, j in scored.pairs if i == index), None)
        if produced is None:
            return MISSING, f"no call of the agent stands for {ref.label}"
        call = scored.calls[produced]
        if call.result_error:
            return MISSING, f"the call standing for {ref.label} returned an error"
        if call.result is MISSING:
            return MISSING, f"the call standing for {ref.label} has no result"
    else:
        found = [c for c in scored.calls if c.name == ref.tool]
        found = [c for c in found if c.result is not MISSING and not c.result_error]
        if not found:
            return MISSING, f"no call of {ref.tool} returned a result"
        call = found[-1]
    document = result_document(call)
    value = resolve_pointer(document, ref.pointer)
    at = ref.pointer or "(root)"
    if value is MISSING:
        return MISSING, f"nothing at {at} in its result {show(document)}"
    if value is None or isinstance(value, dict | list):
        what = "null" if value is None else "an object" if isinstance(value, dict) else "an array"
        return MISSING, f"the value at {at} is {what}"
    return value, None


def _unsaid(
    value: Any, rule: Rule | None, texts: Sequence[str], of_value: Normalise, of_text: Normalise
) -> str | None:
    """None when some text carries `value` under `rule`; else why not (the value held)."""
    held = f"held {show(value)}" + (f", rule {rule.describe()}" if rule is not None else "")
    if isinstance(rule, DateRule):
        day = rule.parse(value)
        if day is None:
            return f"{held}: not a date"
        return None if _date_said(day, rule, texts, of_value, of_text) else held
    if type(value) is bool:
        if isinstance(rule, NumberRule):
            return f"{held}: not a number"
        word = "true" if value else "false"
        return None if any(word in _words(text) for text in texts) else held
    if isinstance(value, int | float):
        number = rule if isinstance(rule, NumberRule) else NumberRule()
        said = any(number.judge(value, n) is None for text in texts for n in numbers_in(text))
        return None if said else held
    if isinstance(rule, NumberRule):
        return f"{held}: not a number"
    wanted = of_value(str(value))
    if not wanted.strip():
        return f"{held}: an empty string"
    return None if any(wanted in of_text(text) for text in texts) else held


def _date_said(
    day: date, rule: DateRule, texts: Sequence[str], of_value: Normalise, of_text: Normalise
) -> bool:
    """Whether some text holds `day` written in ISO 8601 or in one of the rule's formats."""
    forms = {of_value(day.isoformat())} | {of_value(day.strftime(f)) for f in rule.formats}
    return any(form in said for said in map(of_text, texts) for form in forms)


def _words(text: str) -> set[str]:
    """The runs of letters of `text`, casefolded."""
    return set(_LETTERS.findall(text.casefold()))


def numbers_in(text: str) -> list[int | float]:
    """Every number written in `text`, in order, read in one forward pass: an optional minus
    sign (not after a letter or digit, so `2024-03-05` holds 2024, 3 and 5), digits with
    optional thousands commas (`1,234,567`), an optional fraction (`.50`) and exponent
    (`e-05`). A `+` sign is read as no sign."""
    return list(_numbers(unicodedata.normalize("NFKC", text)))


def _numbers(text: str) -> Iterator[int | float]:
    n = len(text)
    digit = _DIGIT.search(text)
    while digit is not None:
        i = digit.start()
        negative = i > 0 and text[i - 1] in _MINUS and (i < 2 or not text[i - 2].isalnum())
        j = _digits_end(text, i)
        parts = [text[i:j]]
        if j - i <= 3:
            while j < n and text[j] == "," and _digits_end(text, j + 1) == j + 4:
                parts.append(text[j + 1 : j + 4])
                j += 4
        real = False
        if j + 1 < n and text[j] == "." and "0" <= text[j + 1] <= "9":
            end = _digits_end(text, j + 1)
            parts.append(text[j:end])
            j, real = end, True
        if j + 1 < n and text[j] in "eE":
            k = j + 2 if text[j + 1] in "+-" else j + 1
            end = _digits_end(text, k)
            if end > k:
                parts.append(text[j:end])
                j, real = end, True
        yield _number(("-" if negative else "") + "".join(parts), real)
        digit = _DIGIT.search(text, j)


def _digits_end(text: str, i: int) -> int:
    """Where the run of ASCII digits starting at `i` ends (`i` itself when there is none)."""
    run = _DIGITS.match(text, i)
    return i if run is None else run.end()


def _number(written_number: str, real: bool) -> int | float:
    if not real:
        try:
            return int(written_number)
        except ValueError:  # more digits than Python converts to an int
            pass
    return float(written_number)
