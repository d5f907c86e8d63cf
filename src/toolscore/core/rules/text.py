"""The kinds that compare strings and scalars by equality: `exact`, the `lowercase` baseline's
view of it, `casefold`; and `text`, free text the call scorer never compares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from toolscore.core.rules.base import Rule, Verdict, bad_expected, fold_case, type_error, unequal
from toolscore.core.values import enum_key, json_equal, json_type


def _scalar_key(value: Any) -> tuple[str, Any] | None:
    """`enum_key`, but none for NaN, which equals nothing, not even itself."""
    if type(value) is float and value != value:  # noqa: PLR0124 - true for NaN only
        return None
    return enum_key(value)


@dataclass(frozen=True, slots=True, repr=False)
class ExactRule(Rule):
    """Same JSON type and value (`true` is never `1`; `1` equals `1.0`)."""

    kind: ClassVar[str] = "exact"
    keyed: ClassVar[bool] = True

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(expected) is str and type(produced) is str:
            return None if expected == produced else unequal(expected, produced, "exactly")
        if json_equal(expected, produced):
            return None
        if json_type(expected) != json_type(produced):
            return type_error(f"a {json_type(expected)}", produced)
        return unequal(expected, produced, "exactly")

    def key(self, value: Any) -> Any:
        return _scalar_key(value)

    def lowercased(self) -> Rule:
        return LowercaseRule(self.default, self.reason)


@dataclass(frozen=True, slots=True, repr=False)
class LowercaseRule(Rule):
    """The lowercase baseline's view of `exact`: strings casefolded, anything else exact."""

    kind: ClassVar[str] = "lowercase"
    keyed: ClassVar[bool] = True

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(expected) is str and type(produced) is str:
            same = fold_case(expected) == fold_case(produced)
            return None if same else unequal(expected, produced, "")
        return None if json_equal(expected, produced) else unequal(expected, produced, "")

    def key(self, value: Any) -> Any:
        return ("string", fold_case(value)) if type(value) is str else _scalar_key(value)


@dataclass(frozen=True, slots=True, repr=False)
class CasefoldRule(Rule):
    """Strings equal after Unicode NFC normalisation and `str.casefold()`."""

    kind: ClassVar[str] = "casefold"
    keyed: ClassVar[bool] = True

    def is_lenient(self) -> bool:
        return True

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(produced) is not str:
            return type_error("a string", produced)
        if type(expected) is not str:
            return bad_expected("a string", expected)
        if expected == produced:
            return None
        if expected.isascii() and produced.isascii():
            same = expected.lower() == produced.lower()  # casefold and NFC are plain on ASCII
        else:
            same = fold_case(expected) == fold_case(produced)
        if same:
            return None
        return unequal(expected, produced, "ignoring case")

    def key(self, value: Any) -> Any:
        # On ASCII, the `lower()` that `judge` compares is `fold_case`.
        return fold_case(value) if type(value) is str else None


@dataclass(frozen=True, slots=True, repr=False)
class TextRule(Rule):
    """Free text: never compared by the call scorer; a `rubric` may score it separately."""

    kind: ClassVar[str] = "text"
    compared: ClassVar[bool] = False

    rubric: str | Mapping[str, Any] | None = None
    """The name of a rubric in the spec's `rubrics`, or an inline rubric; the spec loader
    checks it (`toolscore.rubrics.spec`), as only it knows the spec's rubrics."""

    def judge(self, expected: Any, produced: Any) -> Verdict:
        return None
