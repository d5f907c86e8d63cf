"""Mutate JSON documents the way broken harnesses and hostile inputs do, to fuzz the readers.

A mutation changes the type of a value, deletes or duplicates a key or an element, inserts
junk, renames a key (often to another provider's spelling), swaps a string for a word the
readers dispatch on, wraps a value, or truncates the line. Every choice goes through `pick`,
so Hypothesis (tests/inputs/test_fuzz_readers.py) and a seeded `random.Random` (bench/fuzz.py) drive
the same code. `line()` returns the bytes of one mutated JSON line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import orjson

Pick = Callable[[int], int]
"""`pick(n)` returns an index in range(n)."""


class Raw:
    """JSON-ish text written as is: tokens no JSON writer produces (`NaN`, `1e999`, ...)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Dup:
    """An object written with one key twice (valid JSON text; readers keep the last value)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


WORDS = (
    # roles and types every reader dispatches on, across formats
    "user", "assistant", "model", "tool", "function", "system", "developer",
    "text", "tool_use", "tool_result", "thinking", "server_tool_use", "message",
    "function_call", "function_call_output", "reasoning", "web_search_call", "custom",
    "input_text", "output_text", "refusal", "execute_tool", "execute_tool refund",
    "anthropic", "openai-chat", "openai-responses", "gemini", "otel", "all", "final",
    # keys, in both spellings where providers differ
    "functionCall", "function_call", "functionResponse", "function_response", "parts",
    "tool_calls", "tool_call_id", "tool_use_id", "call_id", "arguments", "args", "input",
    "name", "id", "result", "response", "output", "error", "is_error", "content", "role",
    "type", "calls", "messages", "items", "contents", "spans", "resourceSpans", "scopeSpans",
    "attributes", "key", "value", "stringValue", "intValue", "arrayValue", "kvlistValue",
    "startTimeUnixNano", "start_time", "status", "code", "gen_ai.tool.name",
    "gen_ai.tool.call.arguments", "gen_ai.tool.call.id", "gen_ai.tool.call.result",
    "gen_ai.operation.name", "plans", "after", "$ref", "$any", "$omitted", "kind", "tol",
    "rel_tol", "values", "aliases", "default", "coerce", "order", "relax", "allow", "reason",
    "tools", "version", "score_turns", "goal_state", "required_outputs", "prompt", "tags",
    # response objects and streams
    "chat.completion", "chat.completion.chunk", "choices", "candidates", "choice", "stream",
    "delta", "index", "finish_reason", "message_start", "content_block_start",
    "content_block_delta", "message_stop", "input_json_delta", "partial_json", "text_delta",
    "response.completed", "response.output_item.added", "response.output_item.done",
    "response.function_call_arguments.delta", "output_index", "ai", "data",
    "automatic_function_calling_history",
    # values that break naive code
    "", " ", "0", "1e999", "NaN", "2026-02-30", "look#/order_id", "#/", "~01", "\x1b[2J",
    "\u202e", "\ud7ff", "a\nb", "x" * 300,
)  # fmt: skip

JUNK: tuple[Any, ...] = (
    None, True, False, 0, -1, 1.5, -0.0, 1e308, 2**63, 2**64, -(2**63) - 1, 10**40,
    "", "junk", [], {}, [None], {"": None}, {"type": None}, {"$ref": "x#/y"}, {"$any": []},
    Raw("[" * 300 + "]" * 300), Raw('{"a":' * 300 + "1" + "}" * 300),
)  # fmt: skip
"""Values inserted in place of others: every JSON type, extremes, deep nesting."""
RAW: tuple[Raw, ...] = (
    Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e999"), Raw('"\\ud800"'),
    Raw("1" * 500),
)  # fmt: skip
"""Tokens that Python's `json.dumps` can write but strict JSON readers refuse; used sparingly
(one retype in eight), since each makes the whole line unreadable as JSON."""

MUTATIONS = ("retype", "delete", "duplicate", "insert", "word", "rename", "wrap", "dup_key")

Path = tuple[str | int, ...]


def paths(value: Any, path: Path = ()) -> list[Path]:
    """Every node's path, the root first (Raw and Dup nodes are leaves)."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*path, index))
    return found


def _at(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def _replace(value: Any, path: Path, change: Callable[[Any], Any]) -> Any:
    """`value` with the node at `path` replaced by `change(node)`, copied along the path."""
    if not path:
        return change(value)
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, change) if k == head else v) for k, v in value.items()}
    copy = list(value)
    assert isinstance(head, int)
    copy[head] = _replace(copy[head], rest, change)
    return copy


def _choice(options: tuple[Any, ...] | list[Any], pick: Pick) -> Any:
    return options[pick(len(options))]


def _mutate_node(node: Any, kind: str, pick: Pick) -> Any:
    if kind == "retype":
        return _choice(RAW, pick) if pick(8) == 0 else _choice(JUNK, pick)
    if kind == "wrap":
        return [node] if pick(2) else {_choice(WORDS, pick): node}
    if kind == "word":
        return _choice(WORDS, pick)
    if isinstance(node, dict) and node:
        keys = list(node)
        key = _choice(keys, pick)
        if kind == "delete":
            return {k: v for k, v in node.items() if k != key}
        if kind == "rename":
            new = _choice(WORDS, pick)
            return {(new if k == key else k): v for k, v in node.items()}
        if kind == "dup_key":
            first = _choice(JUNK, pick) if pick(2) else node[key]
            return Dup([(key, first), *node.items()])
        if kind == "insert":
            return {**node, _choice(WORDS, pick): _choice(JUNK + WORDS, pick)}
        return {**node, f"{key}_": node[key]}  # duplicate under a near name
    if isinstance(node, list):
        index = pick(len(node) + 1)
        if kind == "insert" or not node:
            return [*node[:index], _choice(JUNK + WORDS, pick), *node[index:]]
        index = min(index, len(node) - 1)
        if kind == "delete":
            return node[:index] + node[index + 1 :]
        if kind == "duplicate":
            return [*node[: index + 1], node[index], *node[index + 1 :]]
        return node[index:] + node[:index]  # rotated: the same elements in another order
    return _choice(JUNK, pick)


def mutate(value: Any, pick: Pick, steps: int) -> Any:
    """`value` after `steps` random mutations (never changed in place)."""
    for _ in range(steps):
        targets = paths(value)
        # The root (the line itself) one time in ten: its own checks are simple.
        path = targets[0] if len(targets) == 1 or pick(10) == 0 else _choice(targets[1:], pick)
        kind: str = _choice(MUTATIONS, pick)

        def change(node: Any, kind: str = kind) -> Any:
            return _mutate_node(node, kind, pick)

        value = _replace(value, path, change)
    return value


def dumps(value: Any) -> str:
    """JSON text of a mutated value: big integers, raw tokens and duplicate keys included."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Dup):
        return "{" + ",".join(f"{dumps(k)}:{dumps(v)}" for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{dumps(k)}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(dumps, value)) + "]"
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "NaN"
    return orjson.dumps(value).decode()  # a string: every one here is valid Unicode


def line(value: Any, pick: Pick, max_steps: int = 4) -> bytes:
    """One mutated JSON line from `value`: 1 to `max_steps` mutations, sometimes truncated."""
    text = dumps(mutate(value, pick, 1 + pick(max_steps))).encode("utf-8", "surrogatepass")
    if pick(20) == 0:
        text = text[: pick(len(text) + 1)]
    return text
