"""What every rule kind shares: the `Rule` base class, `RuleError`, a scalar rule's `Verdict`
and the helpers that word one.

A scalar rule only *judges* two present, non-null values and returns a code and a message; it
never builds paths or walks containers (that is `arguments.iter_mismatches`).
Container rules (`list`, `object`) only carry what the walker needs.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from toolscore.core.model import MISSING
from toolscore.core.values import json_type, show

Verdict = tuple[str, Callable[[], str]] | None
"""What a scalar rule says about two values: None when equal, else (code, explanation).

The explanation is a function, called only when a report needs the words: deciding whether
two calls match is the hot path and must not format messages it will throw away."""


class RuleError(ValueError):
    """A spec node that cannot become a rule; `path` names the argument within its tool."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def type_error(expected_type: str, value: Any) -> Verdict:
    """The produced value is not of the rule's type; `expected_type` says which, e.g. `a number`."""
    return (
        "type_mismatch",
        lambda: f"expected {expected_type}, got {json_type(value)} {show(value)}",
    )


def bad_expected(expected_type: str, value: Any) -> Verdict:
    """The plan's own value is not of the rule's type: said as such, not as the agent's fault."""
    return "type_mismatch", lambda: f"expected value {show(value)} is not {expected_type}"


def unequal(expected: Any, produced: Any, how: str) -> Verdict:
    """Two values of the rule's type that differ; `how` says under which comparison."""
    return "value_mismatch", lambda: _unequal_words(expected, produced, how)


def given_options(**options: Any) -> dict[str, Any]:
    """The options that are set (not 0, empty, False or None), in order: what `options()`
    shows of a rule is only what differs from its defaults."""
    return {name: value for name, value in options.items() if value}


def _unequal_words(expected: Any, produced: Any, how: str) -> str:
    return f"{show(produced)} does not equal {show(expected)} {how}".rstrip()


@dataclass(frozen=True, slots=True, repr=False)
class Rule:
    """The options every kind shares: a `default` (MISSING when none) and a `reason`."""

    kind: ClassVar[str] = ""
    compared: ClassVar[bool] = True
    scalar: ClassVar[bool] = True
    judges_null: ClassVar[bool] = False
    keyed: ClassVar[bool] = False
    """Whether `key` gives keys (for some values): the matcher looks such arguments up."""

    default: Any = MISSING
    reason: str | None = None

    def judge(self, expected: Any, produced: Any) -> Verdict:
        """Compare two present, non-null values; None means equal."""
        raise NotImplementedError

    def key(self, value: Any) -> Any:
        """A hashable stand-in for `value`: two values that both have one are equal under this
        rule exactly when their keys are equal (null included). None when `value` has none.

        It lets the matcher find which calls can agree on an argument by looking keys up,
        instead of judging every pair of calls; kinds without keys are always judged.
        """
        return None

    def options(self) -> dict[str, Any]:
        """The kind-specific options that differ from their defaults, for display."""
        return {}

    def describe(self) -> str:
        """The rule as reports show it: its kind and options, e.g. `number tol=0.005`."""
        opts = " ".join(f"{k}={v}" for k, v in self.options().items())
        return f"{self.kind} {opts}" if opts else self.kind

    def lowercased(self) -> Rule:
        """This rule as the `lowercase` baseline sees it: strings compared casefolded."""
        return self

    def is_lenient(self) -> bool:
        """True when the rule forgives differences and so should say why (`lint` warns)."""
        return False

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


def fold_case(text: str) -> str:
    """A string as the case-blind kinds compare it: NFC-normalised, casefolded, NFC again."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
