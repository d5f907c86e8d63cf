"""The string kinds between `exact` and `casefold`: `normalized` (named normalisations, each
explicit), `pattern` (the produced value must match a regex; the plan's value is not
compared) and `one_of` (the produced value must be one of a listed set; the plan's value is
not compared).

A `pattern` search runs under the rubric regex's time limit (`toolscore.limits`), so that a
pattern that backtracks catastrophically cannot hang scoring: a search stopped by the limit,
or one that cannot run under it, counts as not matching, with the reason in the message.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from toolscore.core.rules.base import Rule, Verdict, bad_expected, fold_case, type_error, unequal
from toolscore.core.rules.structures import ListRule, ObjectRule
from toolscore.core.values import enum_key, json_type, show

if TYPE_CHECKING:
    from types import ModuleType

NORMALIZATIONS: tuple[str, ...] = (
    "nfkc",
    "casefold",
    "strip_punctuation",
    "collapse_whitespace",
    "strip",
)
"""The options of `normalized`, in the order they are applied (docs/formats.md 2.2)."""

_SPACES = re.compile(r"\s+")

REGEX_SECONDS = 1.0
"""How long one `pattern` search may run on one value: the limit of a rubric's regex search
(`toolscore.rubrics.checks.REGEX_SECONDS`, which a test holds equal to this one)."""

TIMED_OUT_KEPT = 1024
"""How many produced values whose search ran out of time one `pattern` rule remembers, so
that the same value met again (in another pairing of the case) costs nothing more."""


@dataclass(frozen=True, slots=True, repr=False)
class NormalizedRule(Rule):
    """Strings equal after the normalisations that are set, applied in `NORMALIZATIONS`
    order: NFKC, case folding (as `casefold`), removing punctuation (Unicode category P*),
    collapsing runs of whitespace to one space, stripping the ends."""

    kind: ClassVar[str] = "normalized"
    keyed: ClassVar[bool] = True

    nfkc: bool = False
    casefold: bool = False
    strip_punctuation: bool = False
    collapse_whitespace: bool = False
    strip: bool = False

    def is_lenient(self) -> bool:
        return True

    def set_options(self) -> tuple[str, ...]:
        """The normalisations in force, in the order they are applied."""
        return tuple(name for name in NORMALIZATIONS if getattr(self, name))

    def describe(self) -> str:
        return f"normalized: {', '.join(self.set_options())}"

    def normal(self, text: str) -> str:
        """`text` as this rule compares it."""
        if self.nfkc:
            text = unicodedata.normalize("NFKC", text)
        if self.casefold:
            text = fold_case(text)
            if self.nfkc:  # folding can leave compatibility forms (NFKC_Casefold's last step)
                text = unicodedata.normalize("NFKC", text)
        if self.strip_punctuation:
            text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
        if self.collapse_whitespace:
            text = _SPACES.sub(" ", text)
        if self.strip:
            text = text.strip()
        return text

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(produced) is not str:
            return type_error("a string", produced)
        if type(expected) is not str:
            return bad_expected("a string", expected)
        if expected == produced or self.normal(expected) == self.normal(produced):
            return None
        return unequal(expected, produced, f"after {', '.join(self.set_options())}")

    def key(self, value: Any) -> Any:
        return self.normal(value) if type(value) is str else None


@dataclass(frozen=True, slots=True, repr=False)
class PatternRule(Rule):
    """The produced value must be a string that `regex` matches whole (`re.fullmatch`); the
    plan's value is not compared (only `null`, which as under every kind equals only `null`).
    For arguments whose value cannot be known in advance, such as generated ids."""

    kind: ClassVar[str] = "pattern"

    regex: re.Pattern[str] | None = None
    _timed_out: set[str] = field(default_factory=set, compare=False)

    def is_lenient(self) -> bool:
        return True

    def options(self) -> dict[str, Any]:
        return {"regex": self.source}

    @property
    def source(self) -> str:
        """The regex as the spec writes it."""
        return "" if self.regex is None else self.regex.pattern

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(produced) is not str:
            return type_error("a string", produced)
        found = self.search(produced)
        if found is True:
            return None
        if found is False:
            return (
                "value_mismatch",
                lambda: f"{show(produced)} does not match the pattern {self.source!r}",
            )
        return "value_mismatch", lambda: f"{show(produced)} counts as not matching: {found}"

    def search(self, text: str) -> bool | str:
        """Whether the regex matches all of `text`, or why that could not be decided (the
        search ran out of time, or could not run under the time limit)."""
        regex = self.regex
        if regex is None:
            return False
        if text in self._timed_out:
            return _timed_out_words()
        limits = limits_module()
        if not limits.alarms_in_force():
            with limits.alarms_installed():  # once per search: scoring runs install it once
                if not limits.alarms_in_force():
                    return (
                        "a pattern is searched only under its time limit, which needs the "
                        "main thread and a free interval timer"
                    )
                return self._timed(regex, text)
        return self._timed(regex, text)

    def _timed(self, regex: re.Pattern[str], text: str) -> bool | str:
        limits = limits_module()
        try:
            with limits.time_limit(REGEX_SECONDS):
                return regex.fullmatch(text) is not None
        except limits.CallTimeout:
            if len(self._timed_out) < TIMED_OUT_KEPT:
                self._timed_out.add(text)
            return _timed_out_words()


_LIMITS: list[ModuleType] = []


def limits_module() -> ModuleType:
    """`toolscore.limits`, imported on the first timed search (a run without `pattern` rules
    or regex rubrics never needs it), then kept at hand; the regex rubric shares it."""
    if not _LIMITS:
        from toolscore import limits  # noqa: PLC0415

        _LIMITS.append(limits)
    return _LIMITS[0]


def _timed_out_words() -> str:
    return f"the pattern search did not finish within {REGEX_SECONDS:g} s"


@dataclass(frozen=True, slots=True, repr=False)
class OneOfRule(Rule):
    """The produced value must equal (as JSON) one of `values` (strings, numbers, booleans);
    the plan's value is not compared (only `null`, as under every kind). Unlike `enum`, any
    member is right whatever the plan says."""

    kind: ClassVar[str] = "one_of"

    values: tuple[Any, ...] = ()
    _keys: frozenset[tuple[str, Any]] = field(default=frozenset(), compare=False)
    _types: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        keys = frozenset(key for value in self.values if (key := enum_key(value)) is not None)
        object.__setattr__(self, "_keys", keys)
        types = dict.fromkeys(json_type(value) for value in self.values)
        object.__setattr__(self, "_types", tuple(types))

    def is_lenient(self) -> bool:
        return True

    def options(self) -> dict[str, Any]:
        return {"values": "|".join(_plain(v) for v in self.values)}

    def listed(self) -> str:
        """The values as messages list them."""
        return ", ".join(map(show, self.values))

    def judge(self, expected: Any, produced: Any) -> Verdict:
        key = enum_key(produced)
        if key is not None and key in self._keys:
            return None
        if json_type(produced) not in self._types:
            return type_error(" or ".join(f"a {t}" for t in self._types), produced)
        return "value_mismatch", lambda: f"{show(produced)} is not one of {self.listed()}"


def _plain(value: Any) -> str:
    return str(value).lower() if type(value) is bool else str(value)


def holds_pattern(rule: Rule) -> bool:
    """Whether `rule` or a rule nested in it is a `pattern`: scoring with it then installs
    the time limit's alarm once for a whole batch instead of once per search."""
    if isinstance(rule, PatternRule):
        return True
    if isinstance(rule, ObjectRule):
        return any(holds_pattern(sub) for sub in rule.args.values())
    if isinstance(rule, ListRule):
        return holds_pattern(rule.items)
    return False
