"""The difference between two JSON documents, path by path, each path a JSON pointer.

Objects are compared key by key and lists index by index: `added` paths are in the final
document and not the goal (the agent wrote something it should not have), `removed` paths
are in the goal and not the final document, `changed` paths hold different values (two
scalars that differ, or values of different kinds). A list that grew shows its new indices
as added; one that shrank, its lost indices as removed.

Numbers compare by one rule for tables and documents alike (`same_value`): by default
(`numbers: numeric`) as numbers, floats equal to 12 significant digits (so `2` equals `2.0`);
`numbers: typed` keeps `2` and `2.0` apart and compares floats exactly, `0.0` and `-0.0`
apart, as tau-bench's hash (of the numbers' text) does. `true` never equals `1` either way.

The walk is iterative (a state nested a million deep is walked, not recursed), and what it
reports is bounded: at most `MAX_CHANGES` paths (the rest counted), each value shown at most
`MAX_VALUE_CHARS` characters of JSON (a larger one is summarised).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import orjson

from toolscore.core.values import show
from toolscore.state.snapshot import canonical

MAX_CHANGES = 1000
"""Changed paths a diff lists; more are counted, not listed."""
MAX_VALUE_CHARS = 2000
MAX_SEGMENTS = 200
"""The most segments of a path a diff shows (the last ones)."""
"""The longest JSON text of a value a diff shows; a longer one is summarised."""
WILDCARD = "*"

Pattern = tuple[str, ...]


def escape(segment: str) -> str:
    """One key as a JSON pointer segment (RFC 6901: `~` as `~0`, `/` as `~1`)."""
    return segment.replace("~", "~0").replace("/", "~1")


def parse_pointer(text: str) -> Pattern | None:
    """The segments of a JSON pointer (`*` as a whole segment is kept for the caller to read as
    a wildcard), or None when it is not a pointer: empty, not starting with `/`, or holding a
    `~` not followed by 0 or 1."""
    if not text.startswith("/"):
        return None
    segments = text[1:].split("/")
    for segment in segments:
        if "~" in segment.replace("~0", "").replace("~1", ""):
            return None
    return tuple(s.replace("~1", "/").replace("~0", "~") for s in segments)


def same_value(a: Any, b: Any, typed: bool) -> bool:
    """Whether two scalars are equal (see the module docstring for the number rule)."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if typed:
        if type(a) is float and type(b) is float and a == b:
            return math.copysign(1.0, a) == math.copysign(1.0, b)  # -0.0 is written apart
        return type(a) is type(b) and a == b
    if type(a) in (int, float) and type(b) in (int, float):
        return bool(a == b) or canonical(a) == canonical(b)
    return type(a) is type(b) and a == b


class Change(NamedTuple):
    """One path that differs: `kind` is added, removed or changed."""

    kind: str
    path: str
    goal: Any = None
    final: Any = None

    def to_json(self) -> dict[str, Any]:
        """`{"path", "kind", "goal"?, "final"?}`: an added path has no goal value, a removed
        path no final value."""
        found: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.kind != "added":
            found["goal"] = shown(self.goal)
        if self.kind != "removed":
            found["final"] = shown(self.final)
        return found

    def line(self) -> str:
        """The change as one terminal line (the whole document's path shown as `(root)`)."""
        if not self.path:
            return self._replace(path="(root)").line()
        if self.kind == "added":
            return f"added {self.path}: {_short(self.final)} (not in the goal)"
        if self.kind == "removed":
            return (
                f"removed {self.path}: {_short(self.goal)} "
                "(in the goal, missing from the final state)"
            )
        return f"changed {self.path}: goal {_short(self.goal)}, final {_short(self.final)}"


class DocumentDiff(NamedTuple):
    """Every path that differs between the goal document and the final one."""

    changes: tuple[Change, ...] = ()
    unlisted: int = 0
    """Changed paths beyond `MAX_CHANGES`, counted but not listed."""

    @property
    def passed(self) -> bool:
        """True when the final document equals the goal."""
        return not self.changes

    def to_json(self) -> dict[str, Any]:
        """`{"passed", "changes": [...], "unlisted"?}`."""
        found: dict[str, Any] = {
            "passed": self.passed,
            "changes": [change.to_json() for change in self.changes],
        }
        if self.unlisted:
            found["unlisted"] = self.unlisted
        return found

    def lines(self) -> list[str]:
        """One line per changed path (and one counting the paths not listed)."""
        found = [change.line() for change in self.changes]
        if self.unlisted:
            found.append(f"... and {self.unlisted} more changed paths, not listed")
        return found


class _Path(NamedTuple):
    """A path as a linked list, so that a deep walk builds no long tuples."""

    parent: _Path | None
    segment: str


def pointer(path: _Path | None, depth: int) -> str:
    """The JSON pointer of a linked path `depth` segments long; a path deeper than
    `MAX_SEGMENTS` keeps its last segments only, after `/…N levels…`."""
    segments: list[str] = []
    while path is not None and len(segments) < MAX_SEGMENTS:
        segments.append(escape(path.segment))
        path = path.parent
    head = f"/…{depth - len(segments)} levels…" if path is not None else ""
    return head + "".join("/" + s for s in reversed(segments))


def step(alive: tuple[Pattern, ...], depth: int, segment: str) -> tuple[tuple[Pattern, ...], bool]:
    """The ignore patterns still matching after `segment` at `depth`, and whether one of them
    matches the path in full (the path is then ignored)."""
    if not alive:
        return alive, False
    kept = tuple(p for p in alive if p[depth] in (WILDCARD, segment))
    return tuple(p for p in kept if len(p) > depth + 1), any(len(p) == depth + 1 for p in kept)


def children(value: Any) -> Iterable[tuple[str, Any]] | None:
    """The (segment, child) pairs of an object or a list; None for a scalar."""
    if isinstance(value, Mapping):
        return value.items()
    if isinstance(value, list | tuple):
        return ((str(i), item) for i, item in enumerate(value))
    return None


class _Frame(NamedTuple):
    """A pair of values still to compare at `path` (`kind` "added" or "removed" when one side
    is absent: the path then differs whatever the other holds)."""

    goal: Any
    final: Any
    path: _Path | None
    depth: int
    alive: tuple[Pattern, ...]
    kind: str | None = None


def diff_documents(
    goal: Any, final: Any, ignore: Iterable[Pattern] = (), typed: bool = False, differ: bool = False
) -> DocumentDiff:
    """Compare two JSON documents path by path (see the module docstring). `differ`: the
    caller knows the two differ (their `exact` hashes did), so the whole-document byte
    comparison, a fast exit for equal documents only, is skipped. One document compared with
    itself (a snapshot shared between two replays in the same state) has no change, as the
    walk already holds of any child that is the same object on both sides."""
    if goal is final:
        return DocumentDiff()
    if not differ and _same_bytes(goal, final):
        return DocumentDiff()
    changes: list[Change] = []
    count = 0
    stack = [_Frame(goal, final, None, 0, tuple(ignore))]
    while stack:
        frame = stack.pop()
        kind = frame.kind or _compare(frame, typed, stack)
        if kind is not None:
            count += 1
            if len(changes) < MAX_CHANGES:
                changes.append(
                    Change(kind, pointer(frame.path, frame.depth), frame.goal, frame.final)
                )
    return DocumentDiff(tuple(changes), count - len(changes))


def _compare(frame: _Frame, typed: bool, stack: list[_Frame]) -> str | None:
    """ "changed" when the two values differ as leaves; otherwise None, their children (in
    reverse order, so that paths come off the stack in order) pushed to compare."""
    goal, final = frame.goal, frame.final
    pairs: Iterable[tuple[str, Any, Any]]
    if isinstance(goal, Mapping) and isinstance(final, Mapping):
        keys = sorted(goal.keys() | final.keys(), key=str, reverse=True)
        pairs = [(k, goal.get(k, _ABSENT), final.get(k, _ABSENT)) for k in keys]
        same = _same_children(pairs) if frame.depth < _PRUNE_DEPTH else None
    elif isinstance(goal, list | tuple) and isinstance(final, list | tuple):
        pairs = [
            (str(i), goal[i] if i < len(goal) else _ABSENT, final[i] if i < len(final) else _ABSENT)
            for i in reversed(range(max(len(goal), len(final))))
        ]
        same = _same_children(pairs) if frame.depth < _PRUNE_DEPTH else None
    elif children(goal) is None and children(final) is None:
        return None if same_value(goal, final, typed) else "changed"
    else:
        return "changed"
    for position, (segment, wanted, got) in enumerate(pairs):
        kept, ignored = step(frame.alive, frame.depth, str(segment))
        if ignored or wanted is got:
            continue
        where = _Path(frame.path, str(segment))
        if wanted is _ABSENT:
            stack.append(_Frame(None, got, where, frame.depth + 1, (), "added"))
        elif got is _ABSENT:
            stack.append(_Frame(wanted, None, where, frame.depth + 1, (), "removed"))
        elif frame.depth >= _PRUNE_DEPTH or not _known_same(same, position, wanted, got):
            stack.append(_Frame(wanted, got, where, frame.depth + 1, kept))
    return None


def _known_same(same: set[int] | None, position: int, wanted: Any, got: Any) -> bool:
    """`_same_bytes(wanted, got)`, read from `_same_children`'s answer when there is one."""
    if same is None:
        return _same_bytes(wanted, got)
    return position in same


def _same_children(pairs: list[tuple[str, Any, Any]]) -> set[int] | None:
    """For a container with many children, the positions in `pairs` whose two values'
    JSON bytes are equal (what `_same_bytes` says of each pair), found by halving: a run of
    pairs is compared at once, as two JSON arrays written in C, and split only when the
    arrays differ (equal arrays hold equal elements). None for a few children: each pair is
    then compared on its own."""
    both = [
        (position, wanted, got)
        for position, (_, wanted, got) in enumerate(pairs)
        if children(wanted) is not None and children(got) is not None
    ]
    if len(both) < HALVING_FROM:
        return None
    same: set[int] = set()
    stack = [(0, len(both))]
    while stack:
        low, high = stack.pop()
        run = both[low:high]
        if high - low == 1:
            if _same_bytes(run[0][1], run[0][2]):
                same.add(run[0][0])
            continue
        try:
            equal = orjson.dumps([w for _, w, _ in run], option=orjson.OPT_SORT_KEYS) == (
                orjson.dumps([g for _, _, g in run], option=orjson.OPT_SORT_KEYS)
            )
        except TypeError:  # a child deeper than orjson writes, or not JSON: split further
            equal = False
        if equal:
            same.update(position for position, _, _ in run)
        else:
            middle = (low + high) // 2
            stack.extend(((low, middle), (middle, high)))
    return same


_ABSENT: Any = object()
_PRUNE_DEPTH = 32
HALVING_FROM = 16
"""Containers with at least this many child containers find their equal children by halving
(`_same_children`); smaller ones compare each pair."""
"""How deep the walk still skips equal subtrees by their JSON bytes (written in C: two
separate copies of a large state are mostly equal, and walking them in Python is slow)."""


def _same_bytes(goal: Any, final: Any) -> bool:
    """A fast exit for equal documents: equal canonical JSON bytes are equal documents (by
    either number rule). Scalars are left to `same_value`."""
    if children(goal) is None or children(final) is None:
        return False
    try:
        return orjson.dumps(goal, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
            final, option=orjson.OPT_SORT_KEYS
        )
    except TypeError:  # nested too deep for orjson, or not JSON: the walk decides
        return False


def shown(value: Any) -> Any:
    """A value as a diff shows it: itself, or a summary when its JSON is too long."""
    if children(value) is None and not (isinstance(value, str) and len(value) > MAX_VALUE_CHARS):
        return value
    try:
        text = orjson.dumps(value)
    except TypeError:
        text = b""
    if text and len(text) <= MAX_VALUE_CHARS:
        return value
    if isinstance(value, str):
        return {"$elided": f"a string of {len(value)} characters"}
    what, unit = ("an object of", "key") if isinstance(value, Mapping) else ("a list of", "item")
    return {"$elided": f"{what} {len(value)} {unit}{'' if len(value) == 1 else 's'}"}


def _short(value: Any) -> str:
    return show(shown(value))
