"""Working copies of plain JSON data, reused from one replay to the next.

Each replay needs its own copy of the initial data, and parsing the whole image for each one
costs in proportion to the store (about 20 ms for tau-bench's 3 MB of airline data, twice a
case), though a case changes a few documents. A `DocumentPool` keeps the copies a process has
made: when a replay ends, its copy is brought back to the initial data by parsing again only
the parts that differ, and the next replay takes it. The parts are the data's top-level
members (collections) and, within a collection that is an object, its members (documents).

A part is kept when it writes the same JSON text as the initial data's part, key order
included, and compares equal to it with `==` (which tells a tuple from a list, and NaN from
null, that write alike); a copy holding anything else the check cannot write (a set, a
subclass of str or dict, a datetime, a dataclass) is dropped, and the next replay parses
afresh. The check cannot tell an enum member from the plain value it stands for (orjson writes
it as its value and `==` holds): the one thing a pooled copy may hold that a fresh one would
not.

What the pool assumes of tools, and a fresh copy did not: a tool keeps no reference to the
state once its call returns, and does not put one object at two places of the state where it
writes the value already there (nothing differs to see, and the two places would then change
together in later replays).

Data that is not plain JSON (Python objects) is deep-copied for each replay, unless the
environment gives a `restore` function: an `ObjectPool` then keeps used states and has the
function bring each back to the initial data, from the compared forms of both.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson

_CHECK = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)
"""Refuse (TypeError) what orjson would write as if it were plain JSON."""
KEPT = 4
"""Copies kept for reuse: a case replays the agent's calls and a plan's at once."""


class DocumentPool:
    """Copies of one environment's initial data (an image of JSON bytes) for replays."""

    __slots__ = ("_free", "_members", "_object", "_reference", "_texts", "image")

    def __init__(self, image: bytes) -> None:
        self.image = image
        self._free: list[Any] = []
        self._reference: dict[str, Any] | None = None
        self._object: bool | None = None
        """Whether the initial data is an object (the only data a pool restores)."""
        self._texts: dict[str, bytes] = {}
        self._members: dict[str, tuple[list[str], list[Any], list[bytes]]] = {}

    def take(self) -> Any:
        """A copy of the initial data that no one else holds."""
        return self._free.pop() if self._free else orjson.loads(self.image)

    def give_back(self, state: Any) -> None:
        """Return a replay's copy, which the caller no longer uses: it is brought back to the
        initial data and kept, or dropped when it cannot be."""
        if len(self._free) < KEPT and self._restore(state):
            self._free.append(state)

    def _restore(self, state: Any) -> bool:
        """Parse again each collection (or document) of `state` that differs from the initial
        data's; False when `state` cannot be brought back so (then it is dropped)."""
        reference = self._initial()
        if reference is None or type(state) is not dict or list(state) != list(reference):
            return False
        try:
            for key, part in state.items():
                if _same(part, reference[key], self._texts[key]):
                    continue
                original = reference[key]
                if type(part) is dict and type(original) is dict and _drop_added(part, original):
                    names, originals, texts = self._documents(key)
                    for i in _differing(list(part.values()), originals, texts):
                        part[names[i]] = orjson.loads(texts[i])
                else:
                    state[key] = orjson.loads(self._texts[key])
        except Exception:  # whatever a tool left (a failing __eq__): parse afresh next time
            return False
        return True

    def _initial(self) -> dict[str, Any] | None:
        """The initial data, parsed once and never handed out (None unless an object)."""
        if self._object is None:
            reference = orjson.loads(self.image)
            self._object = type(reference) is dict
            if self._object:
                self._texts = {key: orjson.dumps(part) for key, part in reference.items()}
                self._reference = reference
        return self._reference

    def _documents(self, key: str) -> tuple[list[str], list[Any], list[bytes]]:
        """The names, values and JSON texts of the documents of collection `key` (an object),
        in order; listed on first need."""
        found = self._members.get(key)
        if found is None:
            assert self._reference is not None
            collection = self._reference[key]
            values = list(collection.values())
            found = (list(collection), values, [orjson.dumps(value) for value in values])
            self._members[key] = found
        return found


def _same(part: Any, original: Any, text: bytes) -> bool:
    """Whether `part` is the initial data's part (`original`, written as `text`); raises
    TypeError when it holds what the check refuses."""
    return orjson.dumps(part, option=_CHECK) == text and bool(part == original)


def _drop_added(part: dict[str, Any], original: dict[str, Any]) -> bool:
    """Remove the documents added after the original ones (as a new order or reservation
    is) and say whether the original names are then left, in their order."""
    if len(part) > len(original):
        names = list(part)
        if names[: len(original)] != list(original):
            return False
        for name in names[len(original) :]:
            del part[name]
    return list(part) == list(original)


def _differing(values: list[Any], originals: list[Any], texts: list[bytes]) -> list[int]:
    """The positions where `values` differ from `originals` (written as `texts`), found by
    halving: a run of documents is checked at once, as one JSON array and one list
    comparison (in C), and split only when it differs, so that a case that changed a few of
    thousands of documents costs a few runs, not a check per document."""
    found = []
    stack = [(0, len(values))]
    while stack:
        low, high = stack.pop()
        text = b"[" + b",".join(texts[low:high]) + b"]"
        if _same(values[low:high], originals[low:high], text):
            continue
        if high - low == 1:
            found.append(low)
        else:
            middle = (low + high) // 2
            stack.extend(((middle, high), (low, middle)))
    return found


Restore = Callable[[Any, Any, Any, Any], Any]
"""A `restore` function: `(state, compared, original, initial) -> True` when it brought
`state` back to `original` in place (`compared` and `initial` are their compared forms)."""


class ObjectPool:
    """Used states of data that is not plain JSON (Python objects), brought back to the
    initial data by the environment's `restore` function instead of deep-copying the data
    afresh for each replay (docs/formats.md 9.6). A state is kept only when `restore` says
    True; anything else (False, an exception, no compared form of the final state) drops it,
    and the next replay takes a new deep copy."""

    __slots__ = ("_free", "_initial", "original", "restore", "snapshot")

    def __init__(self, original: Any, restore: Restore, snapshot: Callable[[Any], Any]) -> None:
        self.original = original
        self.restore = restore
        self.snapshot = snapshot
        self._free: list[Any] = []
        self._initial: Any = None

    def take(self) -> Any:
        """A state equal to the initial data that no one else holds."""
        return self._free.pop() if self._free else copy.deepcopy(self.original)

    def give_back(self, state: Any, compared: Any) -> None:
        """Return a replay's state, whose compared form is `compared` (None when unknown:
        the state is dropped): kept when `restore` brings it back."""
        if compared is None or len(self._free) >= KEPT:
            return
        try:
            if self._initial is None:
                self._initial = self.snapshot(self.original)
            restored = self.restore(state, compared, self.original, self._initial)
        except Exception:  # the user's function failed: a fresh copy next time
            return
        if restored is True:
            self._free.append(state)
