"""The numeric kinds: `number` within a tolerance, `integer` and `boolean`, each of which may
also accept its values written as strings (`coerce`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from toolscore.core.rules.base import (
    Rule,
    Verdict,
    bad_expected,
    given_options,
    type_error,
    unequal,
)
from toolscore.core.values import show

_NUMBER_TEXT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")
_INTEGER_TEXT = re.compile(r"\s*[-+]?\d+\s*")
_LARGEST_EXPONENT = 4300
"""Integers written with more digits than Python prints by default are not integers here:
building one from `1e1000000` would take the scorer minutes."""


def _coerce_number(value: Any, coerce: bool) -> float | int | None:
    """The number a value stands for, or None; strings count only when `coerce` is set."""
    if value is True or value is False:
        return None
    if isinstance(value, int | float):
        return value
    if coerce and type(value) is str and _NUMBER_TEXT.fullmatch(value):
        if _INTEGER_TEXT.fullmatch(value) and len(value) <= _LARGEST_EXPONENT:
            return int(value)  # exactly, beyond 2**53 too
        number = float(value)
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    return None


_PLAIN_NUMBERS = frozenset({(int, int), (int, float), (float, int), (float, float)})
"""Pairs of types that need no coercion or type check (bool is not int here: type() is exact)."""

_CLEARLY_INSIDE = 1 - 1e-9
_CLEARLY_OUTSIDE = 1 + 1e-9
"""Binary floating point decides outside this band around a tolerance; decimals inside it."""


def _finite(value: float | int) -> bool:
    return type(value) is int or math.isfinite(value)


def _exact_decimal(value: float | int) -> Decimal:
    """The decimal a JSON number was written as, so that tolerance edges are inclusive."""
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


@dataclass(frozen=True, slots=True, repr=False)
class NumberRule(Rule):
    """Numbers (not booleans) equal within `tol` (absolute) or `rel_tol` (relative)."""

    kind: ClassVar[str] = "number"

    tol: float = 0.0
    rel_tol: float = 0.0
    coerce: bool = False

    def is_lenient(self) -> bool:
        return self.coerce

    def options(self) -> dict[str, Any]:
        coerce = "true" if self.coerce else None
        return given_options(tol=self.tol, rel_tol=self.rel_tol, coerce=coerce)

    def judge(self, expected: Any, produced: Any) -> Verdict:
        kinds = (type(expected), type(produced))
        if kinds in _PLAIN_NUMBERS:
            e, p = expected, produced
        else:
            p = _coerce_number(produced, self.coerce)
            if p is None:
                return type_error("a number", produced)
            e = _coerce_number(expected, self.coerce)
            if e is None:
                return bad_expected("a number", expected)
        if e == p:
            return None
        if (self.tol or self.rel_tol) and _finite(e) and _finite(p):
            try:
                bound = max(self.tol, self.rel_tol * max(abs(e), abs(p)))
                diff = abs(e - p)
                inside, outside = bound * _CLEARLY_INSIDE, bound * _CLEARLY_OUTSIDE
            except OverflowError:  # integers beyond floats: decide on decimals alone
                inside, outside, diff = 0.0, math.inf, 0.0
            if diff < inside:
                return None
            if diff <= outside and self._within_decimal(e, p):
                return None
        return (
            "value_mismatch",
            lambda: f"{show(produced)} is not {show(expected)} {self._within()}",
        )

    def _within_decimal(self, e: float | int, p: float | int) -> bool:
        """The tolerance check on the numbers as written, for values near its edge."""
        diff = abs(_exact_decimal(e) - _exact_decimal(p))
        if diff <= Decimal(repr(self.tol)):
            return True
        scale = max(abs(_exact_decimal(e)), abs(_exact_decimal(p)))
        return diff <= Decimal(repr(self.rel_tol)) * scale

    def _within(self) -> str:
        bounds = " ".join(f"{k}={v}" for k, v in self.options().items() if k != "coerce")
        return f"within {bounds}" if bounds else "exactly"


def _coerce_integer(value: Any, coerce: bool) -> int | None:
    if value is True or value is False:
        return None
    if type(value) is int:
        return value
    if type(value) is float:
        return int(value) if value.is_integer() else None
    if coerce and type(value) is str:
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            return None
        if (
            number.is_finite()
            and number.adjusted() < _LARGEST_EXPONENT
            and number == number.to_integral_value()
        ):
            return int(number)
    return None


_BOOLEAN_TEXT = {"true": True, "false": False}


def _coerce_boolean(value: Any, coerce: bool) -> bool | None:
    if value is True or value is False:
        return value
    if coerce and type(value) is str:
        return _BOOLEAN_TEXT.get(value.strip().lower())
    return None


@dataclass(frozen=True, slots=True, repr=False)
class _CoercingRule(Rule):
    """A kind whose values may also come as strings when `coerce` says the tool accepts them."""

    expects: ClassVar[str] = ""

    coerce: bool = False

    def is_lenient(self) -> bool:
        return self.coerce

    def options(self) -> dict[str, Any]:
        return given_options(coerce="true" if self.coerce else None)

    def convert(self, value: Any) -> Any:
        """The value the tool would see, or None when it is not one of this kind."""
        raise NotImplementedError

    def judge(self, expected: Any, produced: Any) -> Verdict:
        p = self.convert(produced)
        if p is None:
            return type_error(self.expects, produced)
        e = self.convert(expected)
        if e is None:
            return bad_expected(self.expects, expected)
        return None if e == p else unequal(expected, produced, "")


@dataclass(frozen=True, slots=True, repr=False)
class IntegerRule(_CoercingRule):
    """Integral numbers (`2.0` counts as 2); strings only with `coerce`."""

    kind: ClassVar[str] = "integer"
    expects: ClassVar[str] = "an integer"

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(expected) is int and type(produced) is int:  # the commonest pair (no bool)
            return None if expected == produced else unequal(expected, produced, "")
        return _CoercingRule.judge(self, expected, produced)

    def convert(self, value: Any) -> Any:
        return _coerce_integer(value, self.coerce)


@dataclass(frozen=True, slots=True, repr=False)
class BooleanRule(_CoercingRule):
    """Booleans only; with `coerce`, the strings "true" and "false" too (any case)."""

    kind: ClassVar[str] = "boolean"
    expects: ClassVar[str] = "a boolean"

    def convert(self, value: Any) -> Any:
        return _coerce_boolean(value, self.coerce)
