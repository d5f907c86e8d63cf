"""The `enum` kind: a value from a closed list, with aliases mapped to their canonical value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from toolscore.core.model import MISSING
from toolscore.core.rules.base import Rule, Verdict, fold_case
from toolscore.core.values import enum_key, show


@dataclass(frozen=True, slots=True, repr=False)
class EnumRule(Rule):
    """A value from `values`, after mapping `aliases` to their canonical value.

    `fold` is only set by the lowercase baseline: values that differ by case then also agree.
    """

    kind: ClassVar[str] = "enum"
    judges_null: ClassVar[bool] = True

    values: tuple[Any, ...] = ()
    aliases: Mapping[Any, Any] = field(default_factory=dict)
    fold: bool = False
    _canonical: Mapping[tuple[str, Any], Any] = field(default_factory=dict, compare=False)
    _folded: Mapping[tuple[str, Any], Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # Aliases map to the very objects in `values`, so that equal meanings are identical.
        canonical: dict[tuple[str, Any], Any] = {}
        for value in self.values:
            canonical[_enum_key(value)] = value
        for alias, target in self.aliases.items():
            canonical[_enum_key(alias)] = canonical.get(_enum_key(target), target)
        folded: dict[tuple[str, Any], Any] = {}
        if self.fold:
            for key, value in canonical.items():
                folded.setdefault(_folded_key(key), value)
        object.__setattr__(self, "_canonical", canonical)
        object.__setattr__(self, "_folded", folded)

    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"values": "|".join(map(str, self.values))}
        if self.aliases:
            opts["aliases"] = ",".join(f"{a}->{b}" for a, b in self.aliases.items())
        return opts

    def canonical(self, value: Any) -> Any:
        """The canonical value for `value`, or MISSING when it is neither a value nor alias."""
        if type(value) is str:
            return self._canonical.get(("string", value), MISSING)
        return self._canonical.get(_enum_key(value), MISSING)

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if expected is None and produced is None:
            return None  # null equals null under every kind, whatever the values
        p = self.canonical(produced)
        e = self.canonical(expected)
        if p is not MISSING and e is p:
            return None
        if self.fold:
            fp = self._folded.get(_folded_key(_enum_key(produced)), MISSING)
            if fp is not MISSING and fp is self._folded.get(_folded_key(_enum_key(expected))):
                return None
            p = p if p is not MISSING else fp
        if p is MISSING:
            return (
                "value_mismatch",
                lambda: f"{show(produced)} is not one of {self._listed()} (or an alias)",
            )
        if e is MISSING:
            return "value_mismatch", lambda: f"expected value {show(expected)} is not in the enum"
        return "value_mismatch", lambda: f"{show(produced)} means {show(p)}, expected {show(e)}"

    def _listed(self) -> str:
        return ", ".join(map(show, self.values))

    def lowercased(self) -> Rule:
        return replace(self, fold=True)


def _enum_key(value: Any) -> tuple[str, Any]:
    """`enum_key`, with unhashable values (lists, objects) given a key that matches nothing."""
    return enum_key(value) or ("unhashable", id(value))


def _folded_key(key: tuple[str, Any]) -> tuple[str, Any]:
    return ("string", fold_case(key[1])) if key[0] == "string" else key
