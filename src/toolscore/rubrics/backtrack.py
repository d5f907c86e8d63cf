"""Regex shapes known to backtrack catastrophically in Python's `re`, found by reading the
parsed pattern, so that `toolscore lint` can warn before a run spends its time limit on them.

Two shapes are flagged: a repeat over a part of variable length (nested quantifiers,
`(a+)+`, `(\\w*\\s?)*`, `(.*,){12}`, and alternatives of different lengths, `(a|aa)+`), and a
repeat over alternatives that can begin with the same character (`(.|\\s)*`). Alternatives
of one character each (`(\\d|\\w)+`) are a character class to the parser and never
backtrack. Possessive repeats and atomic groups
(`a++`, `(?>...)`) do not backtrack and are never flagged. The check is a heuristic on the
pattern alone: a flagged pattern may be harmless on the texts it meets, and a pattern not
flagged may still be slow (`\\d+\\d+x` is quadratic); the run-time limit covers both. The
pattern is read by CPython's own parser (`re._parser`, what `re.compile` uses), so the check
sees the pattern exactly as `re` runs it (alternatives of one character already merged into a
class, common prefixes of alternatives already factored out).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from re import _constants as _c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT)
_SAMPLE = [chr(i) for i in range(32, 127)] + ["\t", "\n", "é", "٣", "中", "\u00a0"]
"""The characters two alternatives are tried on to see whether both can begin with one."""


def backtracking(pattern: str) -> str | None:
    """Why `pattern` may backtrack catastrophically (a sentence for a lint warning), or None
    when neither flagged shape is in it (or it does not parse)."""
    try:
        with warnings.catch_warnings():  # loading the spec already warned (a nested set)
            warnings.simplefilter("ignore")
            parsed = _parser.parse(pattern)
    except (re.error, RecursionError):
        return None
    return _find(list(parsed))


def _find(items: list[tuple[Any, Any]]) -> str | None:
    for op, av in items:
        if op in _REPEATS:
            low, high, body = av
            body = list(body)
            if high == _c.MAXREPEAT or high > 1:
                if _varies(body, _starts(body)):
                    return (
                        f"a repeat {_shown(low, high)} over a part that holds another repeat "
                        "of the same characters (nested quantifiers)"
                    )
                alternatives = _branch(body)
                if alternatives is not None and _overlap(alternatives):
                    return (
                        f"a repeat {_shown(low, high)} over alternatives that can begin with the "
                        "same character"
                    )
            found = _find(body)
        else:
            found = None
            for sub in _children(op, av):
                found = found or _find(sub)
        if found:
            return found
    return None


def _children(op: Any, av: Any) -> Iterable[list[tuple[Any, Any]]]:
    """The sub-patterns of one parsed item (none inside an atomic group: it never backtracks)."""
    if op is _c.SUBPATTERN:
        yield list(av[3])
    elif op is _c.BRANCH:
        yield from (list(sub) for sub in av[1])
    elif op in (_c.ASSERT, _c.ASSERT_NOT):
        yield list(av[1])
    elif op is _c.GROUPREF_EXISTS:
        yield from (list(sub) for sub in av[1:] if sub is not None)


def _varies(items: list[tuple[Any, Any]], starts: set[str] | None) -> bool:
    """Whether a part of variable length inside `items` can match a character that also
    begins `items` (`starts`; None when unknown), so that the text splits into repeats in
    many ways. A part of variable length is a repeat such as `+`, `*`, `?` or `{2,5}`, or
    alternatives of different lengths (`a|aa`, which the parser keeps as `a(?:|a)`).
    Nor are `(-[a-z]+)*` (each repeat begins with a `-` its inner part never takes) and
    `(\\d+\\.)+` (the inner part must stop at a `.` it never takes)."""
    for k, (op, av) in enumerate(items):
        if op in _REPEATS:
            low, high, body = av
            takes = _starts(list(body))
            pinned = not _meets(takes, _starts(list(items[k + 1 :])))
            if high != low and not pinned and _meets(takes, starts):
                return True
            if _varies(list(body), starts):
                return True
        elif op is _c.BRANCH and len({sub.getwidth() for sub in av[1]}) > 1:
            if any(_meets(_starts(list(sub)), starts) for sub in av[1] if len(sub)):
                return True
        elif any(_varies(sub, starts) for sub in _children(op, av)):
            return True
    return False


def _meets(one: set[str] | None, other: set[str] | None) -> bool:
    return one is None or other is None or bool(one & other)


def _branch(items: list[tuple[Any, Any]]) -> list[list[tuple[Any, Any]]] | None:
    """The alternatives when `items` is one alternation (in groups or not), else None."""
    while len(items) == 1 and items[0][0] is _c.SUBPATTERN:
        items = list(items[0][1][3])
    if len(items) == 1 and items[0][0] is _c.BRANCH:
        return [list(sub) for sub in items[0][1][1]]
    return None


def _overlap(alternatives: list[list[tuple[Any, Any]]]) -> bool:
    """Whether two alternatives can begin with the same character (on `_SAMPLE`)."""
    seen: set[str] = set()
    for alternative in alternatives:
        starts = _starts(alternative)
        if starts is None or starts & seen:
            return True
        seen |= starts
    return False


def _starts(items: list[tuple[Any, Any]]) -> set[str] | None:
    """The sample characters a match of `items` can begin with; None when unknown (an empty
    alternative, a group reference, anything not a character test)."""
    if not items:
        return None
    op, av = items[0]
    if op is _c.SUBPATTERN:
        return _starts(list(av[3]) + items[1:])
    if op in _REPEATS and av[0] >= 1:
        return _starts(list(av[2]))
    test = _tester(op, av)
    return None if test is None else {ch for ch in _SAMPLE if test(ch)}


_CATEGORIES: dict[Any, Callable[[str], bool]] = {
    _c.CATEGORY_DIGIT: str.isdigit,
    _c.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdigit(),
    _c.CATEGORY_SPACE: str.isspace,
    _c.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
    _c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    _c.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
}


def _tester(op: Any, av: Any) -> Callable[[str], bool] | None:
    """Whether one character matches the parsed item `(op, av)`, or None for other items."""
    if op is _c.LITERAL:
        return lambda ch: ord(ch) == av
    if op is _c.NOT_LITERAL:
        return lambda ch: ord(ch) != av
    if op is _c.ANY:
        return lambda ch: ch != "\n"
    if op is _c.IN:
        tests = [t for item in av if (t := _tester(*item)) is not None]
        negate = any(item[0] is _c.NEGATE for item in av)
        return lambda ch: any(t(ch) for t in tests) != negate
    if op is _c.RANGE:
        low, high = av
        return lambda ch: low <= ord(ch) <= high
    if op is _c.CATEGORY:
        return _CATEGORIES.get(av)
    return None


def _shown(low: int, high: int) -> str:
    if high == _c.MAXREPEAT:
        return {0: "'*'", 1: "'+'"}.get(low, f"'{{{low},}}'")
    return f"'{{{low},{high}}}'"
