"""Read JSON that a harness may write but JSON does not allow, where an agent's values stand.

Python's `json.dumps` writes `NaN` and `Infinity` by default, and an agent may send a number
beyond the range of a double or a string holding a lone surrogate (half of a UTF-16 pair).
orjson refuses all of these, which is right for specs and cases; in an outputs line they are
the agent's doing and must be scored, not make the whole file unreadable. `loads` reads such
a line with the standard library and puts a `Junk` marker where each bad value stood, with
where it stood; `first_junk` finds a marker again inside a call's arguments or result, and
`text_of` writes a value holding markers back as text that reports can show.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

Path = tuple[str | int, ...]

_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN = 40
"""Characters of a bad value a reason quotes."""


@dataclass(frozen=True, slots=True)
class Junk:
    """A value JSON does not allow: how it was written (`text`, valid to show and to store),
    why it is refused (`reason`), and the JSON type it posed as (`kind`)."""

    text: str
    reason: str
    kind: str

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


class Found(NamedTuple):
    """A `Junk` marker and the path of keys and indexes where it stands."""

    path: Path
    junk: Junk


class LenientLine(dict[str, Any]):
    """A line read by `loads`: its object (markers in place) and every marker found."""

    __slots__ = ("junk",)

    def __init__(self, value: dict[str, Any], junk: list[Found]) -> None:
        super().__init__(value)
        self.junk = junk


def loads(raw: bytes | str) -> tuple[Any, list[Found]] | None:
    """The value of `raw`, each value JSON does not allow replaced by a `Junk` marker, and
    where each stood; None when `raw` is not JSON even so, or holds no such value (then the
    strict parser's complaint stands)."""
    try:
        text = raw.decode("utf-8", "surrogatepass") if isinstance(raw, bytes) else raw
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested beyond Python's limit
        return None
    value, found = _mark(value)
    return (value, found) if found else None


def first_junk(value: Any) -> Found | None:
    """The first marker inside `value`, in document order, with its path; None if none."""
    stack: list[tuple[Any, Path]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if type(item) is Junk:
            return Found(path, item)
        if type(item) is dict:
            stack.extend((item[k], (*path, k)) for k in reversed(list(item)))
        elif type(item) is list:
            stack.extend((item[i], (*path, i)) for i in reversed(range(len(item))))
    return None


def text_of(value: Any) -> str:
    """`value` as JSON text, markers written as the agent wrote them and lone surrogates as
    escapes (so that the text can be shown and stored); iterative, so any depth is written."""
    parts: list[str] = []
    stack: list[tuple[bool, Any]] = [(False, value)]  # (is punctuation, item)
    while stack:
        literal, item = stack.pop()
        if literal:
            parts.append(item)
        elif type(item) is Junk:
            parts.append(item.text)
        elif type(item) is dict:
            parts.append("{")
            stack.append((True, "}"))
            entries = list(item.items())
            for index in reversed(range(len(entries))):
                key, entry = entries[index]
                stack.append((False, entry))
                stack.append((True, ("," if index else "") + _string(str(key)) + ":"))
        elif type(item) is list:
            parts.append("[")
            stack.append((True, "]"))
            for index in reversed(range(len(item))):
                stack.append((False, item[index]))
                if index:
                    stack.append((True, ","))
        elif type(item) is str:
            parts.append(_string(item))
        else:
            parts.append(json.dumps(item))
    return "".join(parts)


def escaped(text: str) -> str:
    """`text` with each lone surrogate written as its `\\uXXXX` escape."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _string(text: str) -> str:
    return escaped(json.dumps(text, ensure_ascii=False))


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _constant(name: str) -> Junk:
    return Junk(name, f"{name} is not a JSON number", "number")


def _float(text: str) -> float | Junk:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return Junk(text, f"{_short(text)} is beyond the range of a JSON number", "number")
    return value


def _int(text: str) -> int | float | Junk:
    # As orjson reads them: integers within 64 bits stay exact, longer ones become doubles.
    if len(text) <= 20:
        value = int(text)
        if -(2**63) <= value < 2**64:
            return value
    return _float(text)


def _bad_string(text: str) -> Junk:
    shown = _string(text)
    lone = escaped(_SURROGATE.search(text).group())  # type: ignore[union-attr]
    reason = f"the string {_short(shown)} holds a lone surrogate ({lone}), not valid Unicode"
    return Junk(shown, reason, "string")


def _bad_keys(node: dict[str, Any]) -> Junk:
    key = next(k for k in node if _SURROGATE.search(k))
    shown = _short(_string(key))
    return Junk(
        text_of(node), f"the key {shown} holds a lone surrogate, not valid Unicode", "object"
    )


def _mark(value: Any) -> tuple[Any, list[Found]]:
    """`value` with each lone-surrogate string (or object with such a key) replaced by a
    marker, and every marker with its path, in document order."""
    found: list[tuple[Any, Junk]] = []
    holder = [value]
    # (container, key in it, where: a linked list (parent's where, key) built only as needed)
    stack: list[tuple[Any, Any, Any]] = [(holder, 0, None)]
    while stack:
        container, key, where = stack.pop()
        item = container[key]
        if type(item) is Junk:
            found.append((where, item))
        elif type(item) is str:
            if _SURROGATE.search(item):
                container[key] = junk = _bad_string(item)
                found.append((where, junk))
        elif type(item) is dict:
            if any(_SURROGATE.search(k) for k in item):
                container[key] = junk = _bad_keys(item)
                found.append((where, junk))
            else:
                stack.extend((item, k, (where, k)) for k in reversed(list(item)))
        elif type(item) is list:
            stack.extend((item, i, (where, i)) for i in reversed(range(len(item))))
    return holder[0], [Found(_path(where), junk) for where, junk in found]


def _path(where: Any) -> Path:
    keys: list[str | int] = []
    while where is not None:
        where, key = where
        keys.append(key)
    return tuple(reversed(keys))
