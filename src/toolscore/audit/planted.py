"""Planted mistakes: known-bad answers and known-harmless variants made from a case's own
plans, so that `toolscore audit` can say which mistakes a spec forgives and which harmless
differences it fails (docs/formats.md, "toolscore audit").

Each plan is first made as a correct agent makes it (`core.plan_calls`: dependency order,
each `$any` its first alternative, each `$ref` a stand-in result); every planted answer is
that answer with one documented change. A kind is planted only where the spec gives it a
target: a wrong enum value only on an `enum` argument, a number outside tolerance only on a
numeric one, and so on (`BAD_KINDS`, `HARMLESS_KINDS`). Pure functions: no I/O, no scoring;
the random choices (which character, which member, which alias) come from the seed.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal, NamedTuple

import orjson

from toolscore.core.dataflow import dependencies, topological
from toolscore.core.model import MISSING, OMITTED, AnyOf, Call, Case, Forbid, Plan, Ref
from toolscore.core.plan_calls import plan_calls
from toolscore.core.rules import (
    CasefoldRule,
    DateRule,
    DatetimeRule,
    EnumRule,
    ExactRule,
    IntegerRule,
    NumberRule,
    Rule,
)
from toolscore.core.rules.base import fold_case
from toolscore.core.values import json_equal
from toolscore.specs.loading import SpecSet

Family = Literal["bad", "harmless"]

BAD_KINDS = (
    "wrong_id_char",
    "wrong_id_case",
    "dropped_argument",
    "extra_argument",
    "wrong_enum",
    "number_outside_tol",
    "wrong_date",
    "swapped_dependent",
    "missing_call",
    "extra_write_call",
    "forbidden_call",
)
"""The known-bad answers, in report order (each documented in docs/formats.md)."""

HARMLESS_KINDS = (
    "parallel_reordered",
    "omitted_default",
    "alias",
    "casefold_case",
    "number_inside_tol",
    "arguments_as_string",
)
"""The known-harmless variants, in report order."""

IDENTIFIER = re.compile(
    r"(?:^|[_\-.])(?:id|ids|uuid|guid|key|code|sku|ref)$|[a-z0-9](?:Id|ID|Ids|Uuid|Key|Code|Ref)$",
    re.IGNORECASE,
)
"""An argument name that reads as an identifier (`order_id`, `userId`, `sku`): such an
argument under `casefold` is still a target of the wrong-identifier kinds."""

_IDENT_CAMEL = re.compile(r"[a-z0-9](?:Id|ID|Ids|Uuid|Key|Code|Ref)$")

READ_VERBS = (
    "get",
    "list",
    "search",
    "find",
    "read",
    "fetch",
    "lookup",
    "look",
    "query",
    "describe",
    "show",
    "view",
    "count",
    "check",
)
"""A tool whose name starts with one of these words (`get_order`, `searchFlights`) is taken to
read, not write: the extra-write-call kind duplicates calls to the other tools only."""

EXTRA_ARGUMENT = "audit_extra"
"""The name of the unknown argument the extra-argument kind adds (a suffix when taken)."""

_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


class Planted(NamedTuple):
    """One planted answer: its kind and family, the tool and argument it concerns (`argument`
    None for a whole call), the produced calls as an outputs line's `calls` entries, the
    index of the plan it was made from (None for a case without plans), and what in the
    spec would forgive it (`forgiver`, named as reports name a rule)."""

    kind: str
    family: Family
    tool: str
    argument: str | None
    calls: tuple[dict[str, Any], ...]
    plan: int | None
    forgiver: str


class Answer(NamedTuple):
    """A plan as a correct agent makes it: the produced calls in order, and for each the plan
    call it carries out (its index in the plan)."""

    calls: tuple[Call, ...]
    plan_index: tuple[int, ...]


def correct_answer(plan: Plan) -> Answer:
    """The calls a correct agent makes for `plan` (`core.plan_calls`) and which plan call
    each one carries out."""
    order = topological(range(len(plan)), dependencies(plan))
    return Answer(plan_calls(plan), tuple(order))


def entries(calls: Sequence[Call]) -> tuple[dict[str, Any], ...]:
    """Calls as an outputs line's `calls` entries (`name`, `args`, and `result` when set)."""
    return tuple(entry(call) for call in calls)


def entry(call: Call, args: Any = MISSING) -> dict[str, Any]:
    """One call as an outputs entry, with `args` in place of its own when given."""
    made: dict[str, Any] = {"name": call.name, "args": dict(call.args or {})}
    if args is not MISSING:
        made["args"] = args
    if call.result is not MISSING:
        made["result"] = call.result
    return made


def rng_for(seed: int, *parts: object) -> random.Random:
    """A random source for one planted answer: the same seed and place give the same choice
    in every process (a string seed is hashed by SHA-512, never by `hash`)."""
    return random.Random(":".join(str(part) for part in (seed, *parts)))


def rule_name(tool: str, argument: str, rule: Rule) -> str:
    """An argument's rule as reports name it: `refund.order_id [casefold]`."""
    return f"{tool}.{argument} [{rule.describe()}]"


def relaxation_name(specs: SpecSet, allow: str, tool: str) -> str:
    """The relaxation of kind `allow` that covers `tool`, named with its reason."""
    for relax in specs.relaxations:
        if relax.allow == allow and tool in relax.tools:
            return f"relax {allow} [{relax.reason}]"
    return f"relax {allow}"


def plan_answers(case: Case) -> Iterator[tuple[int | None, Answer]]:
    """Each plan of a case (its index and correct answer); a case without plans gives one
    empty answer with index None. Conversation cases give none (the caller counts them)."""
    if case.turns:
        return
    if not case.plans:
        yield None, Answer((), ())
        return
    for index, plan in enumerate(case.plans):
        yield index, correct_answer(plan)


def planted_answers(
    specs: SpecSet, case: Case, plan: int | None, answer: Answer, seed: int = 0
) -> Iterator[Planted]:
    """Every bad answer and harmless variant of one plan's correct answer, kinds in the
    order of BAD_KINDS then HARMLESS_KINDS."""
    source = case.plans[plan] if plan is not None else ()
    maker = _Maker(specs, case, plan, answer, source, seed)
    yield from maker.bad()
    yield from maker.harmless()


class _Target(NamedTuple):
    """A top-level argument of a produced call with a plain plan value: the call's position,
    the tool, the argument, its rule and its value."""

    position: int
    tool: str
    argument: str
    rule: Rule
    value: Any


class _Maker:
    """Plants the kinds of one plan's answer (kept together: they share its targets)."""

    def __init__(
        self,
        specs: SpecSet,
        case: Case,
        plan: int | None,
        answer: Answer,
        source: Plan,
        seed: int,
    ) -> None:
        self.specs = specs
        self.case = case
        self.plan = plan
        self.calls = answer.calls
        self.answer = answer
        self.source = source
        self.seed = seed
        self.targets = list(self._targets())

    def _targets(self) -> Iterator[_Target]:
        for position, call in enumerate(self.calls):
            planned = self.source[self.answer.plan_index[position]].args or {}
            rules = self.specs.rules[call.name].args
            for name, value in (call.args or {}).items():
                rule = rules.get(name)
                given = planned.get(name, MISSING)
                if rule is None or not rule.compared or _marked(given) or value is None:
                    continue
                yield _Target(position, call.name, name, rule, value)

    def _rng(self, kind: str, *where: object) -> random.Random:
        return rng_for(self.seed, self.case.id, self.plan, kind, *where)

    def _with_value(self, target: _Target, value: Any) -> tuple[dict[str, Any], ...]:
        """The answer with one argument's value changed (MISSING: left out)."""
        made = list(entries(self.calls))
        args = dict(made[target.position]["args"])
        if value is MISSING:
            del args[target.argument]
        else:
            args[target.argument] = value
        made[target.position] = {**made[target.position], "args": args}
        return tuple(made)

    def _planted(
        self,
        kind: str,
        family: Family,
        tool: str,
        argument: str | None,
        calls: Sequence[dict[str, Any]],
        forgiver: str,
    ) -> Planted:
        return Planted(kind, family, tool, argument, tuple(calls), self.plan, forgiver)

    def _on_argument(self, kind: str, family: Family, target: _Target, value: Any) -> Planted:
        forgiver = rule_name(target.tool, target.argument, target.rule)
        calls = self._with_value(target, value)
        return self._planted(kind, family, target.tool, target.argument, calls, forgiver)

    # The bad kinds.

    def bad(self) -> Iterator[Planted]:
        for target in self.targets:
            if _identifier_target(target):
                rng = self._rng("wrong_id_char", target.position, target.argument)
                yield self._on_argument(
                    "wrong_id_char", "bad", target, changed_char(target.value, rng)
                )
            if _identifier_target(target) and target.value.swapcase() != target.value:
                yield self._on_argument("wrong_id_case", "bad", target, target.value.swapcase())
        for target in self.targets:
            if target.rule.default is MISSING:
                yield self._on_argument("dropped_argument", "bad", target, MISSING)
        yield from self._extra_arguments()
        for target in self.targets:
            if isinstance(target.rule, EnumRule):
                rng = self._rng("wrong_enum", target.position, target.argument)
                other = other_member(target.rule, target.value, rng)
                if other is not MISSING:
                    yield self._on_argument("wrong_enum", "bad", target, other)
        for target in self.targets:
            shifted = outside_tolerance(target.rule, target.value)
            if shifted is not MISSING:
                yield self._on_argument("number_outside_tol", "bad", target, shifted)
        for target in self.targets:
            later = later_date(target.rule, target.value)
            if later is not MISSING:
                yield self._on_argument("wrong_date", "bad", target, later)
        yield from self._swapped()
        yield from self._missing_calls()
        yield from self._extra_writes()
        yield from self._forbidden()

    def _extra_arguments(self) -> Iterator[Planted]:
        for position, call in enumerate(self.calls):
            known = self.specs.tools[call.name].args.args
            name = EXTRA_ARGUMENT
            while name in known or name in (call.args or {}):
                name += "_"
            made = list(entries(self.calls))
            made[position] = {**made[position], "args": {**made[position]["args"], name: "x"}}
            forgiver = relaxation_name(self.specs, "unknown_args", call.name)
            yield self._planted("extra_argument", "bad", call.name, None, made, forgiver)

    def _swapped(self) -> Iterator[Planted]:
        """Each pair (source, dependent) of linked plan calls with their produced calls
        swapped (a swap of two equal calls changes nothing and is skipped)."""
        where = {plan_call: position for position, plan_call in enumerate(self.answer.plan_index)}
        for dependent, sources in enumerate(dependencies(self.source)):
            for source in sorted(sources):
                i, j = where[source], where[dependent]
                made = list(entries(self.calls))
                if made[i] == made[j]:
                    continue
                made[i], made[j] = made[j], made[i]
                tool = self.calls[j].name
                yield self._planted("swapped_dependent", "bad", tool, None, made, "call order")

    def _missing_calls(self) -> Iterator[Planted]:
        for position, call in enumerate(self.calls):
            made = [e for k, e in enumerate(entries(self.calls)) if k != position]
            yield self._planted("missing_call", "bad", call.name, None, made, "the plans")

    def _extra_writes(self) -> Iterator[Planted]:
        for position, call in enumerate(self.calls):
            if not is_write_tool(call.name):
                continue
            made = [*entries(self.calls), entries(self.calls)[position]]
            forgiver = relaxation_name(self.specs, "extra_calls", call.name)
            yield self._planted("extra_write_call", "bad", call.name, None, made, forgiver)

    def _forbidden(self) -> Iterator[Planted]:
        for entry_ in (*self.specs.forbid, *self.case.forbid):
            call = forbidden_call(entry_)
            if call is None:
                continue
            made = [*entries(self.calls), call]
            forgiver = f"{entry_.where} (does not match the call)"
            yield self._planted("forbidden_call", "bad", entry_.tool, None, made, forgiver)

    # The harmless kinds.

    def harmless(self) -> Iterator[Planted]:
        if len(self.calls) > 1 and not any(dependencies(self.source)):
            made = entries(self.calls)[::-1]
            if list(made) != list(entries(self.calls)):
                tool = "+".join(sorted({call.name for call in self.calls}))
                yield self._planted("parallel_reordered", "harmless", tool, None, made, "")
        for target in self.targets:
            default = target.rule.default
            if default is not MISSING and json_equal(default, target.value):
                yield self._on_argument("omitted_default", "harmless", target, MISSING)
        for target in self.targets:
            if isinstance(target.rule, EnumRule):
                rng = self._rng("alias", target.position, target.argument)
                alias = an_alias(target.rule, target.value, rng)
                if alias is not MISSING:
                    yield self._on_argument("alias", "harmless", target, alias)
        for target in self.targets:
            value = target.value
            cased = isinstance(value, str) and value.swapcase() != value
            if isinstance(target.rule, CasefoldRule) and cased:
                yield self._on_argument("casefold_case", "harmless", target, value.swapcase())
        for target in self.targets:
            inside = inside_tolerance(target.rule, target.value)
            if inside is not MISSING:
                yield self._on_argument("number_inside_tol", "harmless", target, inside)
        if self.calls:
            text = [
                entry(call, orjson.dumps(dict(call.args or {})).decode()) for call in self.calls
            ]
            tool = "+".join(sorted({call.name for call in self.calls}))
            yield self._planted("arguments_as_string", "harmless", tool, None, text, "")


def _marked(value: Any) -> bool:
    """True when a plan value holds a marker (`$any`, `$ref`): changing its first choice
    may land on another acceptable value, so the argument is no target."""
    if type(value) in (AnyOf, Ref) or value is OMITTED:
        return True
    if isinstance(value, dict):
        return any(_marked(item) for item in value.values())
    if isinstance(value, list):
        return any(_marked(item) for item in value)
    return False


def is_identifier(argument: str) -> bool:
    """True when an argument's name reads as an identifier (`IDENTIFIER`)."""
    return bool(IDENTIFIER.search(argument) or _IDENT_CAMEL.search(argument))


def _identifier_target(target: _Target) -> bool:
    """A target of the wrong-identifier kinds: a non-empty string under `exact`, or under
    `casefold` when the argument's name reads as an identifier."""
    if not isinstance(target.value, str) or not target.value:
        return False
    rule = target.rule
    return type(rule) is ExactRule or (
        isinstance(rule, CasefoldRule) and is_identifier(target.argument)
    )


def changed_char(value: str, rng: random.Random) -> str:
    """`value` with one character replaced by another of its class (a digit by another digit,
    a letter by another letter of the same case, anything else by `x`), so that it differs
    even ignoring letter case."""
    position = rng.randrange(len(value))
    char = value[position]
    if char.isdigit():
        pool = [d for d in "0123456789" if d != char]
    elif char.isalpha():
        letters = "abcdefghijklmnopqrstuvwxyz"
        letters = letters.upper() if char.isupper() else letters
        pool = [c for c in letters if fold_case(c) != fold_case(char)]
    else:
        pool = ["x"]
    return value[:position] + rng.choice(pool) + value[position + 1 :]


def other_member(rule: EnumRule, value: Any, rng: random.Random) -> Any:
    """Another member of an enum than the one `value` stands for (MISSING when there is
    none)."""
    mine = rule.canonical(value)
    others = [v for v in rule.values if not json_equal(rule.canonical(v), mine)]
    return rng.choice(others) if others else MISSING


def an_alias(rule: EnumRule, value: Any, rng: random.Random) -> Any:
    """An alias of the member `value` stands for, other than `value` (MISSING when none)."""
    mine = rule.canonical(value)
    if mine is MISSING:
        return MISSING
    aliases = [
        alias
        for alias, target in rule.aliases.items()
        if json_equal(rule.canonical(target), mine) and not json_equal(alias, value)
    ]
    return rng.choice(aliases) if aliases else MISSING


def _is_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _bound(rule: NumberRule, value: float) -> Decimal:
    """How far a number may be from `value` under the rule (the tolerance it allows there)."""
    return max(Decimal(repr(rule.tol)), Decimal(repr(rule.rel_tol)) * abs(Decimal(repr(value))))


def _as_json_number(value: Decimal, like: Any) -> Any:
    """A decimal as the JSON number it writes: an integer when `like` is one and it is
    integral, else the float nearest it."""
    if type(like) is int and value == value.to_integral_value():
        return int(value)
    return float(value)


def outside_tolerance(rule: Rule, value: Any) -> Any:
    """A number just outside what `rule` accepts for `value` (twice the tolerance away, or 1
    without one), for `number`, `integer` and numeric `exact` arguments; MISSING otherwise,
    and where floating point cannot write such a number. A relative tolerance of 1 or more
    forgives every such number: the audit shows it."""
    if not _is_number(value):
        return MISSING
    if isinstance(rule, NumberRule):
        v = Decimal(repr(value))
        rel = Decimal(repr(rule.rel_tol))
        step = Decimal(repr(rule.tol))
        if rel and rel < 1:
            step = max(step, rel * abs(v) / (1 - rel))
        elif rel:
            step = max(step, abs(v) + 1)
        made = _as_json_number(v + (2 * step if step else Decimal(1)), value)
        return made if _is_number(made) and not json_equal(made, value) else MISSING
    if isinstance(rule, IntegerRule | ExactRule):
        made = value + 1
        return made if _is_number(made) and not json_equal(made, value) else MISSING
    return MISSING


def inside_tolerance(rule: Rule, value: Any) -> Any:
    """A number half the tolerance away from `value`, for a `number` rule with one; MISSING
    otherwise, and where the nearest float is not within the tolerance (huge integers)."""
    if not isinstance(rule, NumberRule) or not _is_number(value):
        return MISSING
    bound = _bound(rule, value)
    if not bound:
        return MISSING
    made = _as_json_number(Decimal(repr(value)) + bound / 2, value)
    if not _is_number(made) or json_equal(made, value):
        return MISSING
    return made if rule.judge(value, made) is None else MISSING


def later_date(rule: Rule, value: Any) -> Any:
    """The date a day later (written as `value` is), for a `date` argument, a `datetime` one
    (a day, or twice its tolerance when that is more), and an `exact` one holding a
    `YYYY-MM-DD` date; MISSING otherwise."""
    if not isinstance(value, str):
        return MISSING
    text = value.strip()
    if isinstance(rule, DateRule) or (type(rule) is ExactRule and _DATE_ONLY.fullmatch(text)):
        formats = ("%Y-%m-%d", *getattr(rule, "formats", ()))
        for fmt in formats:
            try:
                day = datetime.strptime(text, fmt).date()
            except ValueError:
                continue
            after = day + timedelta(days=1)
            return after.isoformat() if fmt == "%Y-%m-%d" else after.strftime(fmt)
        return MISSING
    if isinstance(rule, DatetimeRule):
        zulu = text.endswith(("Z", "z"))
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if zulu else text)
        except ValueError:
            return MISSING
        moved = moment + timedelta(seconds=max(86_400.0, 2 * rule.tol + 1))
        written = moved.isoformat()
        return written.replace("+00:00", "Z") if zulu else written
    return MISSING


def is_write_tool(name: str) -> bool:
    """True unless the tool's name starts with a read verb (`READ_VERBS`): `refund`,
    `delete_user` write; `get_order`, `searchFlights` read."""
    words = re.findall(r"[a-z]+|[A-Z][a-z]*", name)
    return not words or words[0].lower() not in READ_VERBS


def forbidden_call(entry_: Forbid) -> dict[str, Any] | None:
    """A call that a `forbid` entry forbids: its tool with the entry's arguments (each
    `$any` its first alternative that is not `$omitted`); None when the entry cannot be
    made so."""
    args: dict[str, Any] = {}
    for name, value in entry_.args.items():
        chosen = _chosen(value)
        if chosen is MISSING:
            return None
        if chosen is not OMITTED:
            args[name] = chosen
    return {"name": entry_.tool, "args": args}


def _chosen(value: Any) -> Any:
    if type(value) is AnyOf:
        present = [v for v in value if v is not OMITTED]
        return _chosen(present[0]) if present else OMITTED
    if type(value) is Ref:
        return MISSING
    if isinstance(value, Mapping):
        made = {key: _chosen(item) for key, item in value.items()}
        if any(item is MISSING for item in made.values()):
            return MISSING
        return {key: item for key, item in made.items() if item is not OMITTED}
    if isinstance(value, list):
        items = [_chosen(item) for item in value]
        return MISSING if any(item is MISSING for item in items) else items
    return value
