"""The kinds the argument walk handles itself rather than judging: `ignored` (never compared),
`list` (item by item, in order or as a multiset) and `object` (argument by argument)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from toolscore.core.rules.base import Rule, Verdict
from toolscore.core.rules.text import ExactRule, TextRule


@dataclass(frozen=True, slots=True, repr=False)
class IgnoredRule(Rule):
    """Never compared (trace ids, request ids)."""

    kind: ClassVar[str] = "ignored"
    compared: ClassVar[bool] = False

    def judge(self, expected: Any, produced: Any) -> Verdict:
        return None


@dataclass(frozen=True, slots=True, repr=False)
class ListRule(Rule):
    """Arrays compared item by item with `items`, in order or as a multiset."""

    kind: ClassVar[str] = "list"
    scalar: ClassVar[bool] = False

    items: Rule = field(default_factory=ExactRule)
    ordered: bool = True

    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"items": self.items.describe()}
        if not self.ordered:
            opts["order"] = "unordered"
        return opts

    def describe(self) -> str:
        order = "" if self.ordered else " unordered"
        return f"list{order} of {self.items.describe()}"

    def judge(self, expected: Any, produced: Any) -> Verdict:
        raise TypeError("lists are walked by arguments.iter_mismatches, not judged")

    def lowercased(self) -> Rule:
        return replace(self, items=self.items.lowercased())


@dataclass(frozen=True, slots=True, repr=False)
class ObjectRule(Rule):
    """Objects with their own `args`; unknown keys fail unless `allow_unknown`.

    `ignore_missing` is only set by the lowercase baseline, which ignores omitted arguments.
    """

    kind: ClassVar[str] = "object"
    scalar: ClassVar[bool] = False

    args: Mapping[str, Rule] = field(default_factory=dict)
    allow_unknown: bool = False
    ignore_missing: bool = False
    compared_args: tuple[tuple[str, Rule, Any, bool], ...] = field(default=(), compare=False)
    """For each argument the walk compares (not `text` or `ignored`): its name, rule, default,
    and whether the rule is a scalar that judges two present values directly; precomputed
    because the walk runs for every call of every case."""
    nested_args: frozenset[str] = field(default=frozenset(), compare=False)
    """The arguments whose rule is not scalar (an object or a list), whose expected values
    reading a case checks key by key; precomputed for the same reason."""

    def __post_init__(self) -> None:
        compared = tuple(
            (name, rule, rule.default, rule.scalar)
            for name, rule in self.args.items()
            if rule.compared
        )
        object.__setattr__(self, "compared_args", compared)
        nested = frozenset(name for name, rule in self.args.items() if not rule.scalar)
        object.__setattr__(self, "nested_args", nested)

    def describe(self) -> str:
        return "object"

    def judge(self, expected: Any, produced: Any) -> Verdict:
        raise TypeError("objects are walked by arguments.iter_mismatches, not judged")

    def lowercased(self) -> Rule:
        args = {name: rule.lowercased() for name, rule in self.args.items()}
        return replace(self, args=args, ignore_missing=True)


def rubric_rules(
    args: Mapping[str, Rule], path: tuple[str, ...] = (), in_list: bool = False
) -> Iterator[tuple[tuple[str, ...], TextRule | None]]:
    """Each text rule with a rubric and its path (None in place of a rule inside a list):
    what the spec loader links to the spec's rubrics (`toolscore.rubrics.spec`)."""
    for name, rule in args.items():
        here = (*path, name)
        if isinstance(rule, TextRule):
            if rule.rubric is not None:
                yield here, None if in_list else rule
        elif isinstance(rule, ObjectRule):
            yield from rubric_rules(rule.args, here, in_list)
        elif isinstance(rule, ListRule):
            yield from rubric_rules({"[]": rule.items}, here, True)
