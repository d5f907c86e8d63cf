"""Document environments (`kind: documents`): JSON-like data, and tools acting on it in place.

The initial data is a JSON file or the value a function of the user's returns (`data:
module:function`: plain data, or Python objects such as a file system class). Tools are
`fn(state, **args)` (plus `ctx=` when declared) and change `state` in place. Every replay
gets its own deep copy, so no case sees another's changes and the user's data never changes:
plain JSON data is kept as JSON bytes and parsed afresh (fast), anything else is
`copy.deepcopy`-ed. The compared state is the data itself, or what `snapshot:
module:function` makes of it (a function from the state to plain JSON: the way to compare
Python objects).
"""

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import orjson

from toolscore.core.values import show
from toolscore.errors import InputError, ReplayInterrupted
from toolscore.state.documents_pool import DocumentPool, ObjectPool
from toolscore.state.environment_common import (
    EnvironmentBase,
    env_error,
    load_function,
    refuse_unknown_keys,
    require_strings,
    shared_fields,
)
from toolscore.state.errors_policy import POLICY_KEYS
from toolscore.state.pointer_diff import Pattern, escape, parse_pointer

DOCUMENTS_KEYS = (
    "kind",
    "data",
    "tools",
    "snapshot",
    "restore",
    "ignore",
    "compare",
    "numbers",
    "now",
    "timeout",
    *POLICY_KEYS,
)
"""The keys of a documents environment block; any other is an error under `--env`."""
_PLAIN_SCALARS = (str, int, bool, type(None))
_INT64 = 2**63


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class DocumentEnvironment(EnvironmentBase):
    """Initial data, the tools that act on it, and how final states compare."""

    data: str
    """The `data` key as written: a JSON file's path or `module:function`."""
    data_sha256: str
    image: bytes | None
    """Plain JSON data as JSON bytes, parsed afresh for each replay; None for other data."""
    original: Any
    """Data that is not plain JSON, deep-copied for each replay (None when `image` is set)."""
    snapshot_function: Callable[[Any], Any] | None
    ignore: tuple[Pattern, ...]
    pool: DocumentPool | None
    """Copies of plain data reused from replay to replay (documents_pool); None for other
    data, or with a `snapshot` function (whose result might hold parts of the state)."""
    objects: ObjectPool | None = None
    """Used states of data that is not plain JSON, brought back by the `restore` function
    (documents_pool); None without one."""
    kind: ClassVar[str] = "documents"

    def __reduce__(self) -> tuple[Any, ...]:
        # Worker processes load the environment again (the tools module is imported there).
        return (load_documents, (dict(self.config), self.base_dir, self.source))

    def fresh(self) -> Any:
        """A private deep copy of the initial data, for one replay."""
        if self.pool is not None:
            return self.pool.take()
        if self.image is not None:
            return orjson.loads(self.image)
        if self.objects is not None:
            return self.objects.take()
        return copy.deepcopy(self.original)

    def release(self, state: Any, compared: Any = None) -> None:
        """Hand back a replay's state that nothing uses any more (for the next `fresh`);
        `compared`, the compared form of that state when known, lets a `restore` function
        bring data that is not plain JSON back."""
        if self.pool is not None:
            self.pool.give_back(state)
        elif self.objects is not None:
            self.objects.give_back(state, compared)

    def save(self, state: Any) -> Any:
        """A copy of `state` to go back to should the next call fail (`on_error: rollback`):
        JSON bytes for plain data, else a copy walked without recursion when the state is
        plain but nested deeper than orjson writes, else a `copy.deepcopy`."""
        if self.image is not None:
            try:
                return orjson.dumps(state)
            except TypeError:  # nested too deep, or a tool stored what JSON cannot hold
                copied = plain_copy(state)
                if copied is not None:
                    return _Saved(copied)
        try:
            return _Saved(copy.deepcopy(state))
        except RecursionError:
            raise InputError(
                self.source,
                "the state is nested too deeply to copy before a call (needed to roll a "
                "failed call back): set on_error: keep",
                field="environment.on_error",
            ) from None

    def restore(self, saved: Any) -> Any:
        """The state `save` kept."""
        return orjson.loads(saved) if isinstance(saved, bytes) else saved.state

    def snapshot(self, state: Any) -> Any:
        """The compared form of a state: the state itself, or `snapshot(state)`."""
        return state if self.snapshot_function is None else self.snapshot_function(state)

    def describe(self) -> dict[str, Any]:
        """Provenance for reports: the data and its hash, the tools module, the rules."""
        return {
            "kind": "documents",
            "data": self.data,
            "sha256": self.data_sha256,
            "tools": self.tools_module,
            "compare": self.compare,
            "numbers": self.numbers,
            "ignore": ["/" + "/".join(map(escape, p)) for p in self.ignore],
            "now": self.now.isoformat(),
            "timeout": self.timeout,
            **self.policy.describe(),
        }


class _Saved:
    """A deep copy kept for a rollback (a class, so that it is never mistaken for bytes)."""

    __slots__ = ("state",)

    def __init__(self, state: Any) -> None:
        self.state = state


def load_documents(config: Mapping[str, Any], base_dir: Path, source: str) -> DocumentEnvironment:
    """Validate a `kind: documents` block, load the data and import the tools."""
    fail = env_error(source)
    refuse_unknown_keys(config, DOCUMENTS_KEYS, fail)
    require_strings(
        config, fail, data="a JSON file or 'module:function'", tools="a module or a path"
    )
    shared = shared_fields(config, base_dir, source, fail)
    ignore = ignore_patterns(config.get("ignore", []), fail)
    data, sha256 = _load_data(config["data"], base_dir, source, fail)
    image = _plain_image(data)
    snapshot_function = None
    if config.get("snapshot") is not None:
        snapshot_function = load_function(config["snapshot"], base_dir, fail, "snapshot")
    original = None if image is not None else _copied(data, fail)
    objects = None
    if config.get("restore") is not None:
        if image is not None or snapshot_function is None:
            raise fail(
                "restore",
                "is for data that is not plain JSON, compared through a `snapshot` function "
                "(plain data is brought back by toolscore itself)",
            )
        restore = load_function(config["restore"], base_dir, fail, "restore")
        objects = ObjectPool(original, restore, snapshot_function)
    return DocumentEnvironment(
        **shared,
        data=config["data"],
        data_sha256=sha256,
        image=image,
        original=original,
        snapshot_function=snapshot_function,
        ignore=ignore,
        pool=DocumentPool(image) if image is not None and snapshot_function is None else None,
        objects=objects,
    )


def ignore_patterns(node: Any, fail: Callable[[str, str], InputError]) -> tuple[Pattern, ...]:
    """Validate `ignore: [pointer, ...]` (`*` as a whole segment matches any key or index)."""
    if not isinstance(node, list):
        raise fail("ignore", "must be a list of JSON pointers such as /orders/*/updated_at")
    patterns: list[Pattern] = []
    for i, text in enumerate(node):
        pattern = parse_pointer(text) if isinstance(text, str) else None
        if pattern is None:
            raise fail(
                f"ignore[{i}]",
                f"not a JSON pointer: {show(text)} (it starts with /, and ~ is written ~0, "
                "/ inside a key ~1)",
            )
        patterns.append(pattern)
    return tuple(patterns)


def _load_data(
    reference: str, base_dir: Path, source: str, fail: Callable[[str, str], InputError]
) -> tuple[Any, str]:
    """The initial data and a sha256 identifying it: a JSON file's, or the function's JSON."""
    if reference.lower().endswith(".json"):
        path = base_dir / reference
        if not path.is_file():
            raise fail("data", f"no such file: {path}")
        content = path.read_bytes()
        try:
            return orjson.loads(content), hashlib.sha256(content).hexdigest()
        except orjson.JSONDecodeError as error:
            raise fail("data", f"{path} is not JSON: {error}") from None
    if ":" not in reference:
        raise fail("data", f"must be a .json file or 'module:function', got {show(reference)}")
    function = load_function(reference, base_dir, fail, "data")
    try:
        data = function()
    except KeyboardInterrupt:
        raise ReplayInterrupted(f"the data function {reference!r}") from None
    except (Exception, SystemExit) as error:
        message = " ".join(str(error).split())
        raise fail("data", f"{reference} raised {type(error).__name__}: {message}") from None
    try:
        sha256 = hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()
    except TypeError:  # Python objects: named by the function, not by content
        sha256 = hashlib.sha256(reference.encode()).hexdigest()
    return data, sha256


def _plain_image(data: Any) -> bytes | None:
    """`data` as JSON bytes when JSON holds it exactly (objects with string keys, lists,
    strings, 64-bit integers, finite floats, booleans, null); None otherwise."""
    stack = [data]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            if not all(type(key) is str for key in value):
                return None
            stack.extend(value.values())
        elif kind is list:
            stack.extend(value)
        elif kind is float:
            if not math.isfinite(value):
                return None
        elif kind not in _PLAIN_SCALARS or (kind is int and not -_INT64 <= value < _INT64):
            return None
    try:
        return orjson.dumps(data)
    except TypeError:  # nested deeper than orjson writes
        return None


def plain_copy(value: Any) -> Any:
    """A deep copy of plain JSON data (dicts, lists, scalars) made without recursion, keys
    in their order, or None when it holds anything else."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        node, parent, key = stack.pop()
        kind = type(node)
        if kind is dict:
            copied: Any = {}
            # pushed last to first, so that keys are set (popped) in their order
            stack.extend(reversed([(child, copied, k) for k, child in node.items()]))
        elif kind is list:
            copied = [None] * len(node)
            stack.extend((child, copied, i) for i, child in enumerate(node))
        elif kind in _PLAIN_SCALARS or kind is float:
            copied = node
        else:
            return None
        parent[key] = copied
    return root[0]


def _copied(data: Any, fail: Callable[[str, str], InputError]) -> Any:
    """A private copy of the user's data (which replay never touches), checked copyable."""
    try:
        return copy.deepcopy(data)
    except RecursionError:
        raise fail("data", "the data is nested too deeply to copy") from None
    except Exception as error:
        message = " ".join(str(error).split())
        raise fail("data", f"cannot be copied: {type(error).__name__}: {message}") from None
