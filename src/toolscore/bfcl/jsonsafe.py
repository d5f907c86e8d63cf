"""What toolscore's own readers accept in a JSON value, checked before a BFCL import writes one.

BFCL's files are read with Python's `json` and its answers with `ast`; both accept what
toolscore's readers (orjson) refuse for a whole file: lone surrogates, NaN and infinities,
integers too large for a double. `json_problem` finds the first such value (and any nesting
deeper than `MAX_DEPTH`), so that the importers can refuse a bad input file, or record an
agent's bad answer as a malformed call, instead of writing a file `score` cannot read.
Every check here is one pass over the value, without recursion.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import Any, Final

MAX_DEPTH: Final = 200
"""The deepest nesting of lists and objects written: the nesting Python's parser allows in a
prompting-form answer, so both BFCL forms get the same bound, far above any tool's arguments
and well within what toolscore's readers and scorer walk."""

INT64_MIN: Final = -(2**63)
UINT64_MAX: Final = 2**64 - 1
_LONGEST_INT: Final = 330
"""Integer texts longer than this are never converted: no double holds such a number."""


class LongInteger(float):
    """An integer in a JSON text too long for any double: kept as infinity (what a double
    reader makes of it) with its number of digits, so the reason can say what it was."""

    digits: int

    def __new__(cls, digits: int) -> LongInteger:
        value = super().__new__(cls, "inf")
        value.digits = digits
        return value


def _parse_int(text: str) -> int | float:
    # Converting a very long digit string is quadratic in CPython, and refused past 4,300
    # digits; such a number is unreadable for toolscore anyway.
    if len(text) > _LONGEST_INT:
        return LongInteger(len(text.lstrip("-")))
    return int(text)


def loads(text: str | bytes) -> Any:
    """Python's `json.loads`, but an overlong integer is a `LongInteger` instead of an error.

    NaN, infinities and lone surrogates are accepted as Python's reader accepts them, for
    `json_problem` to name; nesting beyond the interpreter's reach raises RecursionError.
    """
    return json.loads(text, parse_int=_parse_int)


def has_lone_surrogate(text: str) -> bool:
    """Whether the text holds a lone surrogate, which no UTF-8 file can hold."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def escape_surrogates(text: str) -> str:
    """The text with each lone surrogate written as a `\\udXXX` escape (valid UTF-8 text)."""
    if has_lone_surrogate(text):
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _number_problem(value: int | float) -> str | None:
    if isinstance(value, LongInteger):
        return f"an integer of {value.digits:,} digits is too large for a JSON number"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number"
    if INT64_MIN <= value <= UINT64_MAX:
        return None
    try:
        float(value)  # beyond 64 bits, a JSON reader makes it a double
    except OverflowError:
        try:
            digits = f"{len(str(abs(value))):,}"
        except ValueError:  # beyond the digits Python itself converts to text
            digits = f"more than {sys.get_int_max_str_digits():,}"
        return f"an integer of {digits} digits is too large for a JSON number"
    return None


JsonPath = tuple[str | int, ...]
"""The keys and indexes from a value down to one inside it."""


def json_problem(value: Any, max_depth: int = MAX_DEPTH) -> tuple[JsonPath, str] | None:
    """The first value toolscore's readers would refuse, as (path, reason); None if none.

    The path leads from `value` down to the bad value. Refused: strings
    (values and keys) with lone surrogates, NaN and infinities, integers no double can hold,
    types JSON lacks, and lists and objects nested deeper than `max_depth`.
    """
    # Each entry: a value, its depth, and its path as (key, parent path) links, so that a
    # long key is never copied into the paths of everything below it.
    stack: list[tuple[Any, int, tuple[Any, ...] | None]] = [(value, 1, None)]
    while stack:
        item, depth, trail = stack.pop()
        reason: str | None = None
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, str):
            reason = _text_problem(item)
        elif isinstance(item, int | float):
            reason = _number_problem(item)
        elif isinstance(item, list | tuple | dict):
            if depth > max_depth:
                reason = f"lists and objects nested deeper than {max_depth} levels"
            elif isinstance(item, dict):
                for key in reversed(item):
                    if not isinstance(key, str):
                        reason = f"an object key that is not a string ({type(key).__name__})"
                        break
                    if has_lone_surrogate(key):
                        reason = "an object key with a lone surrogate is not Unicode text"
                        break
                    stack.append((item[key], depth + 1, (key, trail)))
            else:
                stack.extend(
                    (element, depth + 1, (index, trail))
                    for index, element in reversed(list(enumerate(item)))
                )
        else:
            reason = f"a {type(item).__name__} is not a JSON value"
        if reason is not None:
            return _path(trail), reason
    return None


def _text_problem(text: str) -> str | None:
    if has_lone_surrogate(text):
        return "a lone surrogate (half of a UTF-16 pair) is not Unicode text"
    return None


def _path(trail: tuple[Any, ...] | None) -> JsonPath:
    keys: list[str | int] = []
    while trail is not None:
        keys.append(trail[0])
        trail = trail[1]
    return tuple(reversed(keys))


SHOWN_KEY = 40
"""Keys longer than this are cut in a message's pointer (a key may be megabytes long)."""


def pointer(path: Sequence[str | int]) -> str:
    """A JSON pointer for a path, for a message (`/a/0/b`; `~` and `/` in keys escaped, long
    keys cut short with `...`, lone surrogates escaped)."""
    parts = []
    for key in path:
        text = escape_surrogates(str(key)).replace("~", "~0").replace("/", "~1")
        parts.append("/" + (text if len(text) <= SHOWN_KEY else text[:SHOWN_KEY] + "..."))
    return "".join(parts)


def json_text(value: Any) -> str:
    """A value as JSON text to keep as a malformed call's raw arguments: non-finite numbers
    as `NaN`/`Infinity`, lone surrogates escaped; what no JSON text can show is described."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True, default=_unshown)
    except (ValueError, RecursionError) as error:
        return f"<not shown: {type(error).__name__}>"
    return escape_surrogates(text)


def _unshown(value: Any) -> str:
    return f"<{type(value).__name__}>"
