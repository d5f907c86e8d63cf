"""The calendar kinds: `date` (ISO 8601 or declared formats) and `datetime` (instants within a
tolerance, offsets honoured), and the time-zone names a spec may give."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from typing import Any, ClassVar

from toolscore.core.rules.base import Rule, Verdict, given_options, type_error, unequal
from toolscore.core.values import show

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
class _CalendarRule(Rule):
    """A kind whose values are strings read as dates or instants: a produced value that is not
    a string, or does not read as one, fails before the two are compared."""

    what: ClassVar[str] = ""
    """What a value is, as the messages name it (`a date`)."""
    readable: ClassVar[str] = ""
    """What a produced value that does not read should have been (`a date (YYYY-MM-DD)`)."""

    def parse(self, value: Any) -> Any:
        """The date or instant `value` stands for, or None when it does not read as one."""
        raise NotImplementedError

    def compare(self, expected: Any, produced: Any, e: Any, p: Any) -> Verdict:
        """The verdict on two values that read as `e` and `p`."""
        raise NotImplementedError

    def judge(self, expected: Any, produced: Any) -> Verdict:
        if type(produced) is not str:
            return type_error(f"{self.what} string", produced)
        p = self.parse(produced)
        if p is None:
            return "value_mismatch", lambda: f"{show(produced)} is not {self.readable}"
        e = self.parse(expected)
        if e is None:
            return "value_mismatch", lambda: f"expected value {show(expected)} is not {self.what}"
        return self.compare(expected, produced, e, p)


@dataclass(frozen=True, slots=True, repr=False)
class DateRule(_CalendarRule):
    """ISO 8601 calendar dates (`YYYY-MM-DD`) compared as dates, plus any extra `formats`."""

    kind: ClassVar[str] = "date"
    what: ClassVar[str] = "a date"
    readable: ClassVar[str] = "a date (YYYY-MM-DD)"

    formats: tuple[str, ...] = ()

    def options(self) -> dict[str, Any]:
        return given_options(formats=",".join(self.formats))

    def parse(self, value: Any) -> Any:
        return _parse_date(value, self.formats)

    def compare(self, expected: Any, produced: Any, e: Any, p: Any) -> Verdict:
        return None if e == p else unequal(expected, produced, "as a date")


def parse_timezone(text: str) -> tzinfo:
    """A fixed offset (`+02:00`, `Z`) or an IANA zone name (`Europe/Paris`)."""
    if text in ("Z", "UTC"):
        return UTC
    match = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", text)
    if match:
        sign = 1 if match.group(1) == "+" else -1
        offset = timedelta(hours=int(match.group(2)), minutes=int(match.group(3)))
        return timezone(sign * offset)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # noqa: PLC0415 - 7 ms of start-up

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
class DatetimeRule(_CalendarRule):
    """ISO 8601 instants; offsets honoured (`Z` equals `+00:00`), within `tol` seconds."""

    kind: ClassVar[str] = "datetime"
    what: ClassVar[str] = "a date-time"
    readable: ClassVar[str] = "an ISO 8601 date-time"

    tol: float = 0.0
    naive_tz: str | None = None
    _zone: tzinfo | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.naive_tz is not None:
            object.__setattr__(self, "_zone", parse_timezone(self.naive_tz))

    def options(self) -> dict[str, Any]:
        return given_options(tol=self.tol, naive_tz=self.naive_tz)

    def parse(self, value: Any) -> Any:
        return _parse_datetime(value, self._zone)

    def compare(self, expected: Any, produced: Any, e: Any, p: Any) -> Verdict:
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
        return unequal(expected, produced, "as an instant")
