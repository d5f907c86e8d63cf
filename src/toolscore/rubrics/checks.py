"""Deterministic rubrics: checks on a produced text that need no model and no network.

A check says why a text fails it (a reason), or nothing when it passes; a check that cannot
judge this text at all (a regex stopped by its time limit, a `mentions` of an argument the
call did not send) raises `Unscorable`. A `LocalRubric` runs its checks in order: its score
is the fraction of checks passed, and it passes when every check passes (docs/formats.md).

Texts and phrases are compared after Unicode NFC normalisation, so that a composed `é` and
`e` + combining accent are the same text; `casefold` also folds case (`ß` matches `SS`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from toolscore.core.rules.strings import limits_module
from toolscore.core.values import json_type
from toolscore.rubrics.base import RubricVerdict

REGEX_SECONDS = 1.0
"""How long one regex search may run on one text before the target is left unscored: a
pattern that backtracks catastrophically must not hang the scorer."""

REGEX_TIMEOUTS = 3
"""After this many texts on which one rubric's regex search ran out of time, a run stops
running that rubric (a regex check's `max_timeouts` changes it): a pattern that backtracks
on most texts would otherwise cost its time limit on every case."""

_TIMED_OUT = "the regex search did not finish within"


def timed_out(reason: str | None) -> bool:
    """Whether an unscored `reason` is a regex search stopped by its time limit."""
    return reason is not None and reason.startswith(_TIMED_OUT)


class Unscorable(Exception):  # noqa: N818 - a verdict, not a program error
    """The check cannot judge this text; `reason` says why (the target is left unscored)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def normal(text: str, casefold: bool = False) -> str:
    """`text` as checks compare it: NFC-normalised, and case-folded with `casefold`."""
    if text.isascii():  # already NFC, and folding ASCII is lowering it
        return text.lower() if casefold else text
    text = unicodedata.normalize("NFC", text)
    return unicodedata.normalize("NFC", text.casefold()) if casefold else text


def _quoted(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


@dataclass(frozen=True, slots=True)
class Check:
    """One deterministic check; `failure` is None when the text passes it."""

    kind: ClassVar[str] = ""

    def failure(self, text: str, arguments: Mapping[str, Any]) -> str | None:
        """Why `text` (sent with the call's `arguments`) fails this check, or None."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class RegexCheck(Check):
    """The text must (or, with `must_match` false, must not) contain a match of `pattern`
    (`re.search`). Each search runs under a time limit of `REGEX_SECONDS`, which only a
    signal can enforce: off the main thread, or where the process's interval timer is
    taken, the target is left unscored rather than risk a search that never ends."""

    kind: ClassVar[str] = "regex"

    pattern: re.Pattern[str]
    must_match: bool = True
    max_timeouts: int = REGEX_TIMEOUTS
    """Timeouts of the rubric in one run after which it is no longer run (`REGEX_TIMEOUTS`)."""

    def failure(self, text: str, arguments: Mapping[str, Any]) -> str | None:
        limits = limits_module()
        CallTimeout, time_limit = limits.CallTimeout, limits.time_limit  # noqa: N806
        if not limits.alarms_in_force():
            raise Unscorable("a regex check runs only under its time limit (the main thread)")
        try:
            with time_limit(REGEX_SECONDS):
                found = self.pattern.search(normal(text)) is not None
        except CallTimeout:
            raise Unscorable(f"{_TIMED_OUT} {REGEX_SECONDS:g} s") from None
        if found == self.must_match:
            return None
        pattern = _quoted(self.pattern.pattern)
        return f"does not match {pattern}" if self.must_match else f"matches {pattern}"


@dataclass(frozen=True, slots=True)
class PhrasesCheck(Check):
    """`contains`: every phrase must appear in the text; `not_contains` (`present` false):
    none may. Phrases are plain text (no pattern), compared as `normal` gives them."""

    kind: ClassVar[str] = "contains"

    phrases: tuple[str, ...]
    """The phrases as written, for messages."""
    casefold: bool = False
    present: bool = True
    folded: tuple[str, ...] = ()
    """The phrases normalised once (`normal`)."""

    def __post_init__(self) -> None:
        folded = tuple(normal(p, self.casefold) for p in self.phrases)
        object.__setattr__(self, "folded", folded)

    def failure(self, text: str, arguments: Mapping[str, Any]) -> str | None:
        text = normal(text, self.casefold)
        if self.present:
            lacking = [p for p, f in zip(self.phrases, self.folded, strict=True) if f not in text]
            if lacking:
                return "lacks " + ", ".join(_quoted(p) for p in lacking[:3]) + _more(lacking)
            return None
        found = [p for p, f in zip(self.phrases, self.folded, strict=True) if f in text]
        if found:
            return "contains " + ", ".join(_quoted(p) for p in found[:3]) + _more(found)
        return None


def _more(items: list[str]) -> str:
    return f" and {len(items) - 3} more" if len(items) > 3 else ""


@dataclass(frozen=True, slots=True)
class MentionsCheck(Check):
    """The text must mention the value the call gave its argument `argument` (a note that
    names the order id): the value's text, case-folded, standing as a word of its own (not
    inside a longer run of letters and digits, so `77` is not mentioned by `1770`). A
    number is mentioned by its decimal form (`12.5`; `12` or `12.0` for 12.0)."""

    kind: ClassVar[str] = "mentions"

    argument: str

    def failure(self, text: str, arguments: Mapping[str, Any]) -> str | None:
        value = arguments.get(self.argument, _ABSENT)
        if type(value) is str and value.strip():  # the common case, without a tuple of forms
            if text.isascii() and value.isascii():  # `normal` in line: this runs every case
                found = _stands_alone(text.lower(), value.lower())
            else:
                found = _stands_alone(normal(text, casefold=True), normal(value, casefold=True))
            return None if found else f"does not mention {self.argument} {_quoted(value)}"
        forms = _mention_forms(value)
        if forms is None:
            value = arguments.get(self.argument, _ABSENT)
            if value is _ABSENT:
                raise Unscorable(f"the call has no {self.argument!r} to mention")
            raise Unscorable(
                f"{self.argument!r} is {json_type(value)}: only a string or a number is mentioned"
            )
        folded = normal(text, casefold=True)
        if any(_stands_alone(folded, normal(form, casefold=True)) for form in forms):
            return None
        return f"does not mention {self.argument} {_quoted(forms[0])}"


_ABSENT = object()


def _mention_forms(value: Any) -> tuple[str, ...] | None:
    """The texts that mention `value`, or None when it cannot be mentioned (absent, empty,
    or not a string or number)."""
    if isinstance(value, str):
        return (value,) if value.strip() else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and value.is_integer():
        return (str(int(value)), repr(value))
    return (repr(value),) if isinstance(value, float) else (str(value),)


def _stands_alone(text: str, word: str) -> bool:
    """Whether `word` occurs in `text` with no letter or digit right before or after it."""
    start = text.find(word)
    while start != -1:
        end = start + len(word)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() and word[0].isalnum()) and not (
            after.isalnum() and word[-1].isalnum()
        ):
            return True
        start = text.find(word, start + 1)
    return False


@dataclass(frozen=True, slots=True)
class LengthCheck(Check):
    """The text has at least `min` and at most `max` characters (code points after NFC)."""

    kind: ClassVar[str] = "length"

    min: int | None = None
    max: int | None = None

    def failure(self, text: str, arguments: Mapping[str, Any]) -> str | None:
        length = len(normal(text))
        if self.min is not None and length < self.min:
            return f"has {length} characters, fewer than {self.min}"
        if self.max is not None and length > self.max:
            return f"has {length} characters, more than {self.max}"
        return None


@dataclass(frozen=True, slots=True)
class NotEmptyCheck(Check):
    """The text holds something besides white space."""

    kind: ClassVar[str] = "not_empty"

    def failure(self, text: str, arguments: Mapping[str, Any]) -> str | None:
        return None if text.strip() else "is empty" if not text else "is only white space"


@dataclass(frozen=True, slots=True)
class LocalRubric:
    """A named set of deterministic checks. Score: the fraction of checks passed; passed:
    every check passed; unscored when any check cannot judge the text."""

    name: str
    checks: tuple[Check, ...]
    version: str | None = None

    @property
    def max_timeouts(self) -> int | None:
        """Regex timeouts in one run after which the rubric is no longer run (the smallest
        `max_timeouts` of its regex checks), or None when it has no regex check."""
        limits = [c.max_timeouts for c in self.checks if isinstance(c, RegexCheck)]
        return min(limits) if limits else None

    def score(self, text: str, arguments: Mapping[str, Any]) -> RubricVerdict:
        """The rubric's verdict on one produced text sent with the call's `arguments`."""
        score, passed, reason, unscored = self.judge(text, arguments)
        return RubricVerdict(self.name, score, passed, reason, unscored=unscored)

    def judge(
        self, text: str, arguments: Mapping[str, Any]
    ) -> tuple[float | None, bool | None, str, str | None]:
        """(score, passed, reason, unscored) of `score`, without building the verdict:
        the scorer calls this once a case."""
        checks = self.checks
        try:
            if len(checks) == 1:
                failure = checks[0].failure(text, arguments)
                return (
                    (1.0, True, "passed", None) if failure is None else (0.0, False, failure, None)
                )
            failures = [f for check in checks if (f := check.failure(text, arguments)) is not None]
        except Unscorable as error:
            return None, None, error.reason, error.reason
        total = len(checks)
        if not failures:
            return 1.0, True, f"passed all {total} checks", None
        reason = f"failed {len(failures)} of {total} checks: {'; '.join(failures)}"
        return (total - len(failures)) / total, False, reason, None
