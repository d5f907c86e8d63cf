"""The sha256 of a JSON document in canonical form: the `exact` comparison of documents.

Canonical JSON: object keys sorted, no spaces, ignored paths left out, numbers by the
environment's rule (`numbers: numeric`: a float in the 12-significant-digit form the diff
compares, so `2.0` hashes as `2`; `typed`: as written, so `2` and `2.0` differ, as in
tau-bench's hash). Written by an iterative walk, so that depth costs no recursion.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from toolscore.state.pointer_diff import Pattern, step
from toolscore.state.snapshot import canonical


def document_hash(value: Any, ignore: Iterable[Pattern] = (), typed: bool = False) -> str:
    """The sha256 of `value` as canonical JSON (see the module docstring)."""
    ignore = tuple(ignore)
    if typed and not ignore:  # the same bytes, written by orjson in C when it can
        try:
            return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()
        except TypeError:  # deeper than orjson writes, or not JSON: walked below
            pass
    digest = hashlib.sha256()
    stack: list[Any] = [(value, 0, tuple(ignore))]
    while stack:
        item = stack.pop()
        if type(item) is bytes:
            digest.update(item)
            continue
        node, depth, alive = item
        if isinstance(node, Mapping):
            members = [
                (key, child, kept)
                for key, child in node.items()
                for kept, ignored in [step(alive, depth, str(key))]
                if not ignored
            ]
            members.sort(key=lambda member: str(member[0]))
            _push(stack, b"{", b"}", members, depth, keyed=True)
        elif isinstance(node, list | tuple):
            members = [
                (i, child, kept)
                for i, child in enumerate(node)
                for kept, ignored in [step(alive, depth, str(i))]
                if not ignored
            ]
            _push(stack, b"[", b"]", members, depth, keyed=False)
        else:
            digest.update(_scalar(node, typed))
    return digest.hexdigest()


def _push(
    stack: list[Any],
    opening: bytes,
    closing: bytes,
    members: list[tuple[Any, Any, tuple[Pattern, ...]]],
    depth: int,
    keyed: bool,
) -> None:
    """Push a container's text in reverse: its closing bracket, members, opening bracket."""
    stack.append(closing)
    for n, (key, child, kept) in enumerate(reversed(members)):
        stack.append((child, depth + 1, kept))
        if keyed:
            stack.append(orjson.dumps(str(key)) + b":")
        if n < len(members) - 1:
            stack.append(b",")
    stack.append(opening)


def _scalar(value: Any, typed: bool) -> bytes:
    if type(value) is float and not typed:
        value = canonical(value)
    try:
        return orjson.dumps(value)
    except TypeError:
        return orjson.dumps(repr(value))
