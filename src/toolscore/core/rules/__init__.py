"""One small, frozen rule object per argument kind, and the factory that builds them from a spec.

A scalar rule only *judges* two present, non-null values and returns a code and a message; it
never builds paths or walks containers (that is `arguments.iter_mismatches`).
Container rules (`list`, `object`) only carry what the walker needs.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from toolscore.core.model import MISSING, OMITTED

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


def json_type(value: Any) -> str:
    """Name the JSON type of a parsed value, keeping booleans apart from numbers."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict | Mapping):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any) -> bool:
    """Equality with JSON semantics: `true` is not `1`, `1` equals `1.0`, at any depth."""
    if a is True or a is False or b is True or b is False:
        return a is b
    ta, tb = type(a), type(b)
    if ta is dict or tb is dict or ta is list or tb is list:
        return _containers_equal(a, b)
    if (ta is str) is not (tb is str):
        return False
    return bool(a == b)


def _containers_equal(a: Any, b: Any) -> bool:
    """`json_equal` for objects and arrays, with a stack rather than recursion: an agent may
    send values nested deeper than Python's recursion limit."""
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        ta, tb = type(a), type(b)
        if ta is dict or tb is dict:
            if ta is not tb or a.keys() != b.keys():
                return False
            stack.extend((a[k], b[k]) for k in a)
        elif ta is list or tb is list:
            if ta is not tb or len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif not json_equal(a, b):
            return False
    return True


def show(value: Any) -> str:
    """A short, JSON-like rendering of a value for messages (any value an agent sent)."""
    if value is MISSING or value is OMITTED:
        return "(omitted)"
    if value is None or value is True or value is False:
        return "null" if value is None else str(value).lower()
    if isinstance(value, str | int | float):
        text = repr(value)
    else:
        try:
            text = orjson.dumps(value, default=repr).decode()
        except (orjson.JSONEncodeError, RecursionError):  # nested deeper than JSON writers go
            text = "[...]" if isinstance(value, list | tuple) else "{...}"
    return text if len(text) <= 60 else text[:57] + "..."


def _type_error(expected_type: str, value: Any) -> Verdict:
    return (
        "type_mismatch",
        lambda: f"expected {expected_type}, got {json_type(value)} {show(value)}",
    )


def _bad_expected(expected_type: str, value: Any) -> Verdict:
    """The plan's own value is not of the rule's type: said as such, not as the agent's fault."""
    return "type_mismatch", lambda: f"expected value {show(value)} is not {expected_type}"


def _unequal(expected: Any, produced: Any, how: str) -> Verdict:
    return "value_mismatch", lambda: _unequal_words(expected, produced, how)


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


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


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
            return None if expected == produced else _unequal(expected, produced, "exactly")
        if json_equal(expected, produced):
            return None
        if json_type(expected) != json_type(produced):
            return _type_error(f"a {json_type(expected)}", produced)
        return _unequal(expected, produced, "exactly")

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
            return None if _fold(expected) == _fold(produced) else _unequal(expected, produced, "")
        return None if json_equal(expected, produced) else _unequal(expected, produced, "")

    def key(self, value: Any) -> Any:
        return ("string", _fold(value)) if type(value) is str else _scalar_key(value)


@dataclass(frozen=True, slots=True, repr=False)
class CasefoldRule(Rule):
    """Strings equal after Unicode NFC normalisation and `str.casefold()`."""

    kind: ClassVar[str] = "casefold"
    keyed: ClassVar[bool] = True

    def is_lenient(self) -> bool:
        return True

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(produced) is not str:
            return _type_error("a string", produced)
        if type(expected) is not str:
            return _bad_expected("a string", expected)
        if expected == produced:
            return None
        if expected.isascii() and produced.isascii():
            same = expected.lower() == produced.lower()  # casefold and NFC are plain on ASCII
        else:
            same = _fold(expected) == _fold(produced)
        if same:
            return None
        return _unequal(expected, produced, "ignoring case")

    def key(self, value: Any) -> Any:
        # On ASCII, the `lower()` that `judge` compares is `_fold`.
        return _fold(value) if type(value) is str else None


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
        opts: dict[str, Any] = {}
        if self.tol:
            opts["tol"] = self.tol
        if self.rel_tol:
            opts["rel_tol"] = self.rel_tol
        if self.coerce:
            opts["coerce"] = "true"
        return opts

    def judge(self, expected: Any, produced: Any) -> Verdict:
        kinds = (type(expected), type(produced))
        if kinds in _PLAIN_NUMBERS:
            e, p = expected, produced
        else:
            p = _coerce_number(produced, self.coerce)
            if p is None:
                return _type_error("a number", produced)
            e = _coerce_number(expected, self.coerce)
            if e is None:
                return _bad_expected("a number", expected)
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
        return {"coerce": "true"} if self.coerce else {}

    def convert(self, value: Any) -> Any:
        """The value the tool would see, or None when it is not one of this kind."""
        raise NotImplementedError

    def judge(self, expected: Any, produced: Any) -> Verdict:
        p = self.convert(produced)
        if p is None:
            return _type_error(self.expects, produced)
        e = self.convert(expected)
        if e is None:
            return _bad_expected(self.expects, expected)
        return None if e == p else _unequal(expected, produced, "")


@dataclass(frozen=True, slots=True, repr=False)
class IntegerRule(_CoercingRule):
    """Integral numbers (`2.0` counts as 2); strings only with `coerce`."""

    kind: ClassVar[str] = "integer"
    expects: ClassVar[str] = "an integer"

    def convert(self, value: Any) -> Any:
        return _coerce_integer(value, self.coerce)


@dataclass(frozen=True, slots=True, repr=False)
class BooleanRule(_CoercingRule):
    """Booleans only; with `coerce`, the strings "true" and "false" too (any case)."""

    kind: ClassVar[str] = "boolean"
    expects: ClassVar[str] = "a boolean"

    def convert(self, value: Any) -> Any:
        return _coerce_boolean(value, self.coerce)


def enum_key(value: Any) -> tuple[str, Any] | None:
    """A hashable key for a scalar that keeps JSON types apart (`true` is not `1`)."""
    if value is True or value is False:
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if value is None:
        return ("null", None)
    return None


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
    return ("string", _fold(key[1])) if key[0] == "string" else key


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _parse_date(value: Any, formats: tuple[str, ...]) -> date | None:
    if type(value) is not str:
        return None
    text = value.strip()
    if _ISO_DATE.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return None
    for fmt in formats:
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


@dataclass(frozen=True, slots=True, repr=False)
class DateRule(Rule):
    """ISO 8601 calendar dates (`YYYY-MM-DD`) compared as dates, plus any extra `formats`."""

    kind: ClassVar[str] = "date"

    formats: tuple[str, ...] = ()

    def options(self) -> dict[str, Any]:
        return {"formats": ",".join(self.formats)} if self.formats else {}

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(produced) is not str:
            return _type_error("a date string", produced)
        p = _parse_date(produced, self.formats)
        if p is None:
            return "value_mismatch", lambda: f"{show(produced)} is not a date (YYYY-MM-DD)"
        e = _parse_date(expected, self.formats)
        if e is None:
            return "value_mismatch", lambda: f"expected value {show(expected)} is not a date"
        return None if e == p else _unequal(expected, produced, "as a date")


def parse_timezone(text: str) -> tzinfo:
    """A fixed offset (`+02:00`, `Z`) or an IANA zone name (`Europe/Paris`)."""
    if text in ("Z", "UTC"):
        return UTC
    match = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", text)
    if match:
        sign = 1 if match.group(1) == "+" else -1
        offset = timedelta(hours=int(match.group(2)), minutes=int(match.group(3)))
        return timezone(sign * offset)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(f"unknown time zone {text!r}") from error


def _parse_datetime(value: Any, naive_tz: tzinfo | None) -> datetime | None:
    if type(value) is not str:
        return None
    try:
        instant = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if instant.tzinfo is None and naive_tz is not None:
        instant = instant.replace(tzinfo=naive_tz)
    return instant


@dataclass(frozen=True, slots=True, repr=False)
class DatetimeRule(Rule):
    """ISO 8601 instants; offsets honoured (`Z` equals `+00:00`), within `tol` seconds."""

    kind: ClassVar[str] = "datetime"

    tol: float = 0.0
    naive_tz: str | None = None
    _zone: tzinfo | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.naive_tz is not None:
            object.__setattr__(self, "_zone", parse_timezone(self.naive_tz))

    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {}
        if self.tol:
            opts["tol"] = self.tol
        if self.naive_tz:
            opts["naive_tz"] = self.naive_tz
        return opts

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(produced) is not str:
            return _type_error("a date-time string", produced)
        p = _parse_datetime(produced, self._zone)
        if p is None:
            return "value_mismatch", lambda: f"{show(produced)} is not an ISO 8601 date-time"
        e = _parse_datetime(expected, self._zone)
        if e is None:
            return "value_mismatch", lambda: f"expected value {show(expected)} is not a date-time"
        if (e.tzinfo is None) is not (p.tzinfo is None):
            return (
                "value_mismatch",
                lambda: (
                    f"{show(produced)} and {show(expected)}: one has no UTC offset "
                    "(set naive_tz to say which zone such times are in)"
                ),
            )
        if e.tzinfo is not None:
            # Aware times sharing one tzinfo object subtract as wall-clock times in Python;
            # converting to UTC makes the difference the real elapsed time (DST gaps).
            e, p = e.astimezone(UTC), p.astimezone(UTC)
        if abs((e - p).total_seconds()) <= self.tol:
            return None
        return _unequal(expected, produced, "as an instant")


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


# --- the factory: spec node -> rule ---------------------------------------------------------

_COMMON_OPTIONS = ("kind", "default", "reason")
_KIND_OPTIONS: dict[str, tuple[str, ...]] = {
    "exact": (),
    "casefold": (),
    "number": ("tol", "rel_tol", "coerce"),
    "integer": ("coerce",),
    "boolean": ("coerce",),
    "enum": ("values", "aliases"),
    "date": ("formats",),
    "datetime": ("tol", "naive_tz"),
    "text": ("rubric",),
    "ignored": (),
    "list": ("items", "order"),
    "object": ("args",),
}
KINDS: tuple[str, ...] = tuple(_KIND_OPTIONS)


def suggest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """A ' (did you mean ...?)' hint for a near name, or an empty string."""
    close = [c for c in choices if len(c) > 2 and (word.startswith(c) or c.startswith(word))]
    close = close or difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _tolerance(node: Mapping[str, Any], key: str, path: tuple[str | int, ...]) -> float:
    value = node.get(key, 0)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise RuleError(path, f"{key} must be a number, got {show(value)}")
    if not math.isfinite(value) or value < 0:
        raise RuleError(path, f"{key} must be a finite number >= 0, got {show(value)}")
    return float(value)


def _flag(node: Mapping[str, Any], key: str, path: tuple[str | int, ...]) -> bool:
    value = node.get(key, False)
    if not isinstance(value, bool):
        raise RuleError(path, f"{key} must be true or false, got {show(value)}")
    return value


def compile_rule(node: Any, path: tuple[str | int, ...] = ()) -> Rule:
    """Build the rule for one spec node: a kind name or a mapping with `kind` and options.

    Raises RuleError naming the argument path and, for typos, the nearest valid name.
    """
    if isinstance(node, str):
        node = {"kind": node}
    if not isinstance(node, Mapping):
        raise RuleError(path, f"expected a kind name or a mapping, got {show(node)}")
    kind = node.get("kind")
    if not isinstance(kind, str):
        raise RuleError(path, "missing 'kind'" if kind is None else "kind must be a string")
    if kind not in _KIND_OPTIONS:
        raise RuleError(path, f"unknown kind {kind!r}{suggest(kind, KINDS)}")
    allowed = _COMMON_OPTIONS + _KIND_OPTIONS[kind]
    for option in node:
        if option == "rubric" and kind != "text":
            raise RuleError(
                path, f"a rubric scores only a 'text' argument, not one of kind {kind!r}"
            )
        if option not in allowed:
            hint = suggest(str(option), list(allowed))
            raise RuleError(path, f"unknown option {option!r} for kind {kind!r}{hint}")
    reason = node.get("reason")
    if reason is not None and not (isinstance(reason, str) and reason.strip()):
        raise RuleError(path, "reason must be a non-empty string")
    rule = _build(kind, node, path)
    return replace(rule, default=node.get("default", MISSING), reason=reason)


def _build(kind: str, node: Mapping[str, Any], path: tuple[str | int, ...]) -> Rule:
    if kind == "exact":
        return ExactRule()
    if kind == "casefold":
        return CasefoldRule()
    if kind == "number":
        return NumberRule(
            tol=_tolerance(node, "tol", path),
            rel_tol=_tolerance(node, "rel_tol", path),
            coerce=_flag(node, "coerce", path),
        )
    if kind == "integer":
        return IntegerRule(coerce=_flag(node, "coerce", path))
    if kind == "boolean":
        return BooleanRule(coerce=_flag(node, "coerce", path))
    if kind == "enum":
        return _build_enum(node, path)
    if kind == "date":
        formats = node.get("formats", [])
        if not isinstance(formats, list) or not all(isinstance(f, str) for f in formats):
            raise RuleError(path, "formats must be a list of strptime format strings")
        return DateRule(formats=tuple(formats))
    if kind == "datetime":
        naive_tz = node.get("naive_tz")
        if naive_tz is not None:
            if not isinstance(naive_tz, str):
                raise RuleError(path, "naive_tz must be a string such as 'UTC' or '+02:00'")
            try:
                parse_timezone(naive_tz)
            except ValueError as error:
                raise RuleError(path, f"naive_tz: {error}") from None
        return DatetimeRule(tol=_tolerance(node, "tol", path), naive_tz=naive_tz)
    if kind == "text":
        rubric = node.get("rubric")
        if rubric is not None and not isinstance(rubric, str | Mapping):
            raise RuleError(path, "rubric must be a rubric's name or a rubric mapping")
        return TextRule(rubric=rubric)
    if kind == "ignored":
        return IgnoredRule()
    if kind == "list":
        order = node.get("order", "ordered")
        if order not in ("ordered", "unordered"):
            raise RuleError(
                path,
                "order must be 'ordered' or 'unordered'"
                + suggest(str(order), ["ordered", "unordered"]),
            )
        items = compile_rule(node.get("items", "exact"), (*path, "items"))
        return ListRule(items=items, ordered=order == "ordered")
    args = node.get("args", {})
    if not isinstance(args, Mapping):
        raise RuleError(path, "args must be a mapping of argument names to rules")
    return ObjectRule(args=compile_args(args, path))


def _build_enum(node: Mapping[str, Any], path: tuple[str | int, ...]) -> EnumRule:
    values = node.get("values")
    if not isinstance(values, list) or not values:
        raise RuleError(path, "enum needs 'values': a non-empty list")
    keys = [enum_key(v) for v in values]
    if None in keys:
        raise RuleError(path, "enum values must be strings, numbers, booleans or null")
    if len(set(keys)) != len(keys):
        raise RuleError(path, "enum values must be unique")
    aliases = node.get("aliases", {})
    if not isinstance(aliases, Mapping):
        raise RuleError(path, "aliases must be a mapping of alias to value")
    for alias, target in aliases.items():
        if enum_key(target) not in keys:
            raise RuleError(
                path,
                f"alias {alias!r} points to {show(target)}, which is not in values"
                f"{suggest(str(target), [str(v) for v in values])}",
            )
        if enum_key(alias) in keys:
            raise RuleError(path, f"alias {alias!r} is also a value")
    return EnumRule(values=tuple(values), aliases=dict(aliases))


def compile_args(node: Mapping[str, Any], path: tuple[str | int, ...] = ()) -> dict[str, Rule]:
    """Compile a mapping of argument names to rules (a tool's `args` or an object's)."""
    compiled: dict[str, Rule] = {}
    for name, sub in node.items():
        if not isinstance(name, str):
            raise RuleError(path, f"argument names must be strings, got {show(name)}")
        compiled[name] = compile_rule(sub, (*path, name))
    return compiled
