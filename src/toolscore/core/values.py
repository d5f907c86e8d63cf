"""The JSON value helpers every layer shares: a value's JSON type, equality with JSON semantics,
the scalar key that keeps JSON types apart, a short rendering for messages, and the hint for a
mistyped name.

They know nothing of rule kinds (that is `toolscore.core.rules`), so readers, reports and the
state layer use them without the rules.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import orjson

from toolscore.core.model import MISSING, OMITTED


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


def suggest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """A ' (did you mean ...?)' hint for a near name, or an empty string."""
    close = [c for c in choices if len(c) > 2 and (word.startswith(c) or c.startswith(word))]
    close = close or difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
