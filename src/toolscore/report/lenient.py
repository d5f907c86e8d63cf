"""The lenient rules of a spec set, listed beside the relaxations in force.

A relaxation excuses whole calls; a lenient rule accepts, for one argument, values other than
the expected one as written (another letter case, a number as a string, a value within a
tolerance, an alias, a date in another format, a normalisation, a pattern or set of values
the plan's value is not compared with, an argument never compared). Reports list both
with their reasons, so that a reader sees every difference the score forgives.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from toolscore.core.rules import (
    BooleanRule,
    CasefoldRule,
    DateRule,
    DatetimeRule,
    EnumRule,
    IgnoredRule,
    IntegerRule,
    ListRule,
    NormalizedRule,
    NumberRule,
    ObjectRule,
    OneOfRule,
    PatternRule,
    Rule,
    TextRule,
)
from toolscore.specs.loading import SpecSet
from toolscore.stats.records import fields_json


class LenientRule(NamedTuple):
    """One argument whose rule forgives differences: where, the rule, what, and why."""

    tool: str
    argument: str
    """The argument within its tool: `city`, `address.city`, `tags[]` (every item of a list)."""
    kind: str
    rule: str
    """The rule with its options, as mismatches name it (`number tol=0.005`)."""
    forgives: tuple[str, ...]
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        """The entry as the report JSON's `lenient_rules` lists it."""
        return {
            **fields_json(self, "tool", "argument", "kind", "rule"),
            "forgives": list(self.forgives),
            "reason": self.reason,
        }

    def line(self) -> str:
        """The entry as the terminal report prints it."""
        reason = self.reason or "(no reason given)"
        return f"{self.tool}.{self.argument}: {self.kind}: {'; '.join(self.forgives)} - {reason}"


_NORMALIZED_FORGIVES = {
    "nfkc": "compatibility forms (NFKC: full-width letters, ligatures)",
    "casefold": "letter case and Unicode composition",
    "strip_punctuation": "punctuation (Unicode category P)",
    "collapse_whitespace": "runs of whitespace",
    "strip": "whitespace at either end",
}
"""What each option of `normalized` forgives, in words."""


def forgiven(rule: Rule) -> tuple[str, ...]:
    """What `rule` accepts beyond the expected value as written, in a few words each (empty
    for a strict rule). Nested rules are listed on their own, not here."""
    found: list[str] = []
    if isinstance(rule, TextRule | IgnoredRule):
        found.append("any value: never compared by the call scorer")
    elif isinstance(rule, CasefoldRule):
        found.append("letter case and Unicode composition")
    elif isinstance(rule, NormalizedRule):
        found += [_NORMALIZED_FORGIVES[name] for name in rule.set_options()]
    elif isinstance(rule, PatternRule):
        found.append(f"any string matching {rule.source!r}: the plan's value is not compared")
    elif isinstance(rule, OneOfRule):
        found.append(f"any of {rule.listed()}: the plan's value is not compared")
    elif isinstance(rule, NumberRule):
        if rule.tol:
            found.append(f"differences up to {rule.tol}")
        if rule.rel_tol:
            found.append(f"relative differences up to {rule.rel_tol}")
        if rule.coerce:
            found.append("numbers written as strings")
    elif isinstance(rule, IntegerRule) and rule.coerce:
        found.append("integers written as strings")
    elif isinstance(rule, BooleanRule) and rule.coerce:
        found.append('the strings "true" and "false"')
    elif isinstance(rule, EnumRule) and rule.aliases:
        pairs = ", ".join(f"{alias} for {value}" for alias, value in rule.aliases.items())
        found.append(f"aliases {pairs}")
    elif isinstance(rule, DateRule) and rule.formats:
        found.append(f"dates written as {', '.join(rule.formats)}")
    elif isinstance(rule, DatetimeRule):
        if rule.tol:
            found.append(f"instants up to {rule.tol} s apart")
        if rule.naive_tz:
            found.append(f"times without an offset read as {rule.naive_tz}")
    elif isinstance(rule, ListRule) and not rule.ordered:
        found.append("the order of the items")
    return tuple(found)


_last: tuple[SpecSet, tuple[LenientRule, ...]] | None = None
"""The spec set last asked about and its lenient rules: a run asks once per report it writes
(terminal, JSON, store), and a spec may hold thousands of arguments to walk."""


def lenient_rules(specs: SpecSet) -> list[LenientRule]:
    """Every lenient rule of the spec set, tool by tool, in the order the spec gives them."""
    global _last  # noqa: PLW0603 - a one-entry cache, keyed by the (immutable) spec set itself
    if _last is None or _last[0] is not specs:
        found = tuple(
            LenientRule(tool, argument, rule.kind, rule.describe(), forgives, rule.reason)
            for tool, spec in specs.tools.items()
            for argument, rule in arguments(spec.args)
            if (forgives := forgiven(rule))
        )
        _last = (specs, found)
    return list(_last[1])


def arguments(rule: ObjectRule, prefix: str = "") -> Iterator[tuple[str, Rule]]:
    """Every argument of an object rule with its own rule, in spec order, each followed by
    its nested ones: `address`, `address.city`, `tags`, `tags[]` (every item of a list)."""
    for name, sub in rule.args.items():
        yield from with_nested(sub, f"{prefix}{name}")


def with_nested(rule: Rule, where: str) -> Iterator[tuple[str, Rule]]:
    """The argument at `where` with its rule, then each argument nested in it (`arguments`)."""
    yield where, rule
    if isinstance(rule, ObjectRule):
        yield from arguments(rule, f"{where}.")
    elif isinstance(rule, ListRule):
        yield from with_nested(rule.items, f"{where}[]")
