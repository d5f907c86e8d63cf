"""Proposals from a cases file for `spec init --cases`: where the plans' own values suggest a
rule more lenient than the draft's, say so in a comment above the argument, never in the
rule itself (a person decides; docs/formats.md 2.9).

- Strings the plans write in several letter cases (`Paris`, `PARIS`) under an `exact` rule:
  propose `casefold`, with a reason, if the tool resolves them so.
- Values that differ from an `enum` member only in letter case: propose them as `aliases`;
  values outside the members are named too (the cases would not load otherwise).
- Numbers of a `number` argument written with different numbers of decimals (integral
  values aside): propose a tolerance of half a unit in the last decimal of the least
  precise one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from toolscore.core.values import show
from toolscore.drafting.draft import Draft, DraftRule
from toolscore.errors import CaseError
from toolscore.inputs.jsonl import read_jsonl

PROPOSAL = "proposal (from the cases):"
"""How a proposal's comment begins."""
_SHOWN = 6


def propose(draft: Draft, cases_path: str | Path) -> int:
    """Add proposals from the cases' plan values to the draft's comments; how many."""
    values = _plan_values(cases_path)
    added = 0
    for tool in draft.tools:
        for name, rule in tool.args.items():
            seen = values.get((tool.name, name), [])
            for proposal in _proposals(rule, seen):
                rule.comments.append(f"{PROPOSAL} {proposal}")
                added += 1
    return added


def _plan_values(cases_path: str | Path) -> dict[tuple[str, str], list[Any]]:
    """Every scalar value the plans give each (tool, argument), `$any` options included."""
    found: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for _, _, case in read_jsonl(cases_path, CaseError):
        for plans in _plans_of(case):
            for plan in plans if isinstance(plans, list) else []:
                for call in plan if isinstance(plan, list) else []:
                    if not isinstance(call, dict) or not isinstance(call.get("args"), dict):
                        continue
                    for arg, value in call["args"].items():
                        found[(str(call.get("name")), str(arg))].extend(_scalars(value))
    return found


def _plans_of(case: dict[str, Any]) -> Iterator[Any]:
    yield case.get("plans")
    turns = case.get("turns")
    for turn in turns if isinstance(turns, list) else []:
        if isinstance(turn, dict):
            yield turn.get("plans")


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict) and isinstance(value.get("$any"), list):
        for option in value["$any"]:
            yield from _scalars(option)
    elif value is None or isinstance(value, str | int | float):
        yield value


def _proposals(rule: DraftRule, values: list[Any]) -> Iterator[str]:
    kind = rule.node.get("kind")
    strings = sorted({v for v in values if isinstance(v, str)})
    if kind == "exact":
        spellings = defaultdict(set)
        for value in strings:
            spellings[value.casefold()].add(value)
        several = [sorted(group) for group in spellings.values() if len(group) > 1]
        if several:
            shown = "; ".join(", ".join(show(v) for v in group) for group in several[:_SHOWN])
            yield (
                f"the plans write one value in several letter cases ({shown}): "
                "casefold, with a reason, if the tool resolves it case-insensitively"
            )
    if kind == "enum":
        members = rule.node.get("values") or []
        folded = {m.casefold(): m for m in members if isinstance(m, str)}
        aliases = {
            v: folded[v.casefold()] for v in strings if v not in members and v.casefold() in folded
        }
        if aliases:
            written = ", ".join(f"{show(k)}: {show(v)}" for k, v in list(aliases.items())[:_SHOWN])
            yield f"aliases {{{written}}}, if the tool accepts these spellings"
        outside = [v for v in strings if v not in members and v not in aliases]
        if outside:
            listed = ", ".join(show(v) for v in outside[:_SHOWN])
            yield f"the plans use values outside the enum: {listed}"
    if kind == "number":
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        places = {_decimals(v) for v in numbers} - {0}  # an integral value says no precision
        if len(places) > 1:
            fewest = min(places)
            tol = Decimal(5).scaleb(-(fewest + 1))
            yield (
                f"the plans write these numbers to {min(places)} to {max(places)} decimals: "
                f"tol: {tol:f}, with a reason, if a value stands for any that rounds to it"
            )


def _decimals(value: float) -> int:
    """How many decimals a number is written with (`12.5` has 1, `3` none)."""
    exponent = Decimal(repr(value)).normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0
