"""Streamed responses, saved as the SDK yields them: the chunks or events put back together
into the response object they stream, which `responses` then reads.

`stream` on an outputs line is a list of one stream's chunks or events, each dumped as the
SDK gives it, in order. Its kind is told by the first entry that names one: OpenAI
`ChatCompletionChunk`s (`object: "chat.completion.chunk"`; the deltas are joined per choice
`index`, and a tool call's argument fragments per tool call `index`); Anthropic stream
events (`message_start`, `content_block_start`, `content_block_delta` with `text_delta` or
`input_json_delta`, `content_block_stop`, `message_delta`, `message_stop`); OpenAI Responses
stream events (`response.*`: the response a `response.completed`, `response.incomplete` or
`response.failed` event carries is read, with the items `response.output_item.done` events
gave as its output when it carries none; a stream without such an event is read from the
items its events built, and cannot pass).

An entry the kind does not write, or a delta for a part that was never started, is unread;
so is a stream that stops before its end (no `finish_reason`, no `message_stop`, no final
response): what it did not deliver may hold a call, and the case cannot pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from toolscore.core.values import json_type, show
from toolscore.inputs.formats.responses import (
    CHAT_COMPLETION,
    MESSAGE,
    RESPONSE,
    Shape,
    read_response,
)
from toolscore.inputs.formats.transcript import Transcript, UnreadableError

ANTHROPIC_EVENTS: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    }
)
ANTHROPIC_DELTAS: Final = frozenset(
    {"text_delta", "input_json_delta", "thinking_delta", "signature_delta", "citations_delta"}
)
TOOL_INPUT_BLOCKS: Final = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
"""Blocks whose `input` streams as `input_json_delta` fragments."""
RESPONSES_FINAL: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""Responses events that carry the final response."""
ARGUMENTS: Final = frozenset(
    {"response.function_call_arguments.delta", "response.function_call_arguments.done"}
)

Accumulate = Callable[[list[Any], str, Transcript], tuple[Mapping[str, Any], str] | None]
"""Put a stream back together: (the response object, its path), or None if there is none."""


class StreamKind(NamedTuple):
    """A kind of stream: what the notes call it, and the response object it streams."""

    name: str
    shape: Shape
    accumulate: Accumulate


def _index(node: Mapping[str, Any], key: str, where: str) -> int:
    value = node.get(key)
    if type(value) is not int or value < 0:
        raise UnreadableError(f"{where}.{key}", f"must be an index, got {show(value)}")
    return value


def _text(node: Mapping[str, Any], key: str, where: str) -> str | None:
    """A text fragment: a string, or None when absent (any other type is unreadable)."""
    value = node.get(key)
    if value is None or isinstance(value, str):
        return value
    raise UnreadableError(f"{where}.{key}", f"must be a string, got {json_type(value)}")


def _append(node: dict[str, Any], key: str, fragment: str | None, where: str) -> None:
    """Add a text fragment to `node[key]`, which the stream began as text (or not at all)."""
    if fragment is None:
        return
    before = node.get(key)
    if before is not None and not isinstance(before, str):
        raise UnreadableError(where, f"a text fragment for a {json_type(before)} {key}")
    node[key] = (before or "") + fragment


def _chat_chunks(events: list[Any], key: str, t: Transcript) -> tuple[Mapping[str, Any], str]:
    """ChatCompletionChunks joined into the ChatCompletion they stream."""
    choices: dict[int, dict[str, Any]] = {}
    for i, event in enumerate(events):
        at = f"{key}[{i}]"
        with t.part():
            chunk = t.mapping(event, at)
            if chunk.get("object") != "chat.completion.chunk":
                raise UnreadableError(f"{at}.object", "not a ChatCompletionChunk")
            found = chunk.get("choices")
            for j, choice in enumerate([] if found is None else t.list_of(found, f"{at}.choices")):
                with t.part():
                    _chat_choice(
                        t.mapping(choice, f"{at}.choices[{j}]"), f"{at}.choices[{j}]", choices
                    )
    for index, choice in sorted(choices.items()):
        if choice["finish_reason"] is None:
            t.unread(key, f"choice {index} has no finish_reason: the stream stops before its end")
    completion = {
        "object": "chat.completion",
        "choices": [_chat_choice_done(choice) for _, choice in sorted(choices.items())],
    }
    return completion, key


def _chat_choice(choice: Mapping[str, Any], where: str, choices: dict[int, dict[str, Any]]) -> None:
    index = _index(choice, "index", where)
    state = choices.setdefault(index, {"message": {}, "calls": {}, "finish_reason": None})
    message = state["message"]
    delta = choice.get("delta")
    if delta is not None:
        if not isinstance(delta, Mapping):
            raise UnreadableError(f"{where}.delta", f"must be an object, got {json_type(delta)}")
        at = f"{where}.delta"
        role = _text(delta, "role", at)
        if role is not None:
            message["role"] = role
        for field in ("content", "refusal"):
            _append(message, field, _text(delta, field, at), at)
        legacy = delta.get("function_call")
        if legacy is not None:
            _function(legacy, f"{at}.function_call", message.setdefault("function_call", {}))
        calls = delta.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise UnreadableError(f"{at}.tool_calls", f"must be a list, got {json_type(calls)}")
            for k, call in enumerate(calls):
                _tool_call_delta(call, f"{at}.tool_calls[{k}]", state["calls"])
    finish = _text(choice, "finish_reason", where)
    if finish is not None:
        state["finish_reason"] = finish


def _tool_call_delta(call: Any, where: str, calls: dict[int, dict[str, Any]]) -> None:
    if not isinstance(call, Mapping):
        raise UnreadableError(where, f"must be an object, got {json_type(call)}")
    made = calls.setdefault(_index(call, "index", where), {"function": {}})
    for field in ("id", "type"):
        value = _text(call, field, where)
        if value and not made.get(field):
            made[field] = value
    function = call.get("function")
    if function is not None:
        _function(function, f"{where}.function", made["function"])


def _function(node: Any, where: str, made: dict[str, Any]) -> None:
    if not isinstance(node, Mapping):
        raise UnreadableError(where, f"must be an object, got {json_type(node)}")
    for field in ("name", "arguments"):
        _append(made, field, _text(node, field, where), where)


def _chat_choice_done(choice: Mapping[str, Any]) -> dict[str, Any]:
    message = dict(choice["message"])
    if choice["calls"]:
        message["tool_calls"] = [call for _, call in sorted(choice["calls"].items())]
    return {"finish_reason": choice["finish_reason"], "message": message}


def _anthropic_events(
    events: list[Any], key: str, t: Transcript
) -> tuple[Mapping[str, Any], str] | None:
    """Anthropic stream events joined into the Message they stream."""
    message: dict[str, Any] | None = None
    blocks: dict[int, Any] = {}
    inputs: dict[int, list[str]] = {}
    stopped = False
    for i, event in enumerate(events):
        at = f"{key}[{i}]"
        with t.part():
            kind = t.kind(t.mapping(event, at), at, ANTHROPIC_EVENTS)
            if kind == "message_start":
                if message is not None:
                    raise UnreadableError(f"{at}.type", "a second message_start in one stream")
                message = dict(t.mapping(event.get("message"), f"{at}.message"))
                begun = message.get("content")  # empty, as the API sends it
                for n, block in enumerate(begun if isinstance(begun, list) else ()):
                    blocks.setdefault(n, dict(block) if isinstance(block, Mapping) else block)
            elif kind == "content_block_start":
                block = t.mapping(event.get("content_block"), f"{at}.content_block")
                blocks[_index(event, "index", at)] = dict(block)
            elif kind == "content_block_delta":
                _anthropic_delta(event, at, blocks, inputs, t)
            elif kind == "content_block_stop" and _index(event, "index", at) not in blocks:
                raise UnreadableError(f"{at}.index", "no content_block_start for this block")
            elif kind == "message_delta" and message is not None:
                delta = t.mapping(event.get("delta"), f"{at}.delta")
                message["stop_reason"] = delta.get("stop_reason")
            elif kind == "message_stop":
                stopped = True
            elif kind == "error":
                raise UnreadableError(
                    at, f"the stream reports an error: {show(event.get('error'))}"
                )
    if message is None:
        t.unread(key, "no message_start event: no message to read")
        return None
    if not stopped:
        t.unread(key, "no message_stop event: the stream stops before its end")
    for index, fragments in inputs.items():
        blocks[index]["input"] = "".join(fragments)  # JSON text, parsed like any arguments
    message["content"] = [block for _, block in sorted(blocks.items())]
    return message, key


def _anthropic_delta(
    event: Mapping[str, Any],
    where: str,
    blocks: dict[int, Any],
    inputs: dict[int, list[str]],
    t: Transcript,
) -> None:
    index = _index(event, "index", where)
    block = blocks.get(index)
    if not isinstance(block, dict):
        raise UnreadableError(f"{where}.index", "no content_block_start for this block")
    at = f"{where}.delta"
    delta = t.mapping(event.get("delta"), at)
    kind = t.kind(delta, at, ANTHROPIC_DELTAS)
    if kind == "text_delta":
        if block.get("type") != "text":
            raise UnreadableError(
                f"{at}.type", f"a text_delta for a {show(block.get('type'))} block"
            )
        _append(block, "text", _text(delta, "text", at), at)
    elif kind == "input_json_delta":
        if not (isinstance(block.get("type"), str) and block["type"] in TOOL_INPUT_BLOCKS):
            message = f"an input_json_delta for a {show(block.get('type'))} block"
            raise UnreadableError(f"{at}.type", message)
        fragment = _text(delta, "partial_json", at)
        inputs.setdefault(index, []).append(fragment or "")


def _responses_events(
    events: list[Any], key: str, t: Transcript
) -> tuple[Mapping[str, Any], str] | None:
    """OpenAI Responses stream events: the final response they carry, its output (when the
    event leaves it out, as the API may) the items the events completed."""
    added: dict[int, dict[str, Any]] = {}
    done: dict[int, dict[str, Any]] = {}
    final: tuple[Mapping[str, Any], str] | None = None
    for i, event in enumerate(events):
        at = f"{key}[{i}]"
        with t.part():
            node = t.mapping(event, at)
            kind = node.get("type")
            if kind == "error":
                raise UnreadableError(
                    at, f"the stream reports an error: {show(node.get('message'))}"
                )
            if not isinstance(kind, str) or not kind.startswith("response."):
                raise UnreadableError(f"{at}.type", f"not an OpenAI Responses event: {show(kind)}")
            if kind in RESPONSES_FINAL:
                final = t.mapping(node.get("response"), f"{at}.response"), f"{at}.response"
            elif kind in ("response.output_item.added", "response.output_item.done"):
                item = dict(t.mapping(node.get("item"), f"{at}.item"))
                (added if kind.endswith(".added") else done)[_index(node, "output_index", at)] = (
                    item
                )
            elif kind in ARGUMENTS:
                _arguments(node, at, kind.endswith(".done"), added)
    if final is None:
        t.unread(key, "no response.completed event: the stream stops before its end")
    elif isinstance(final[0].get("output"), list):
        return {**final[0], "object": "response"}, final[1]
    elif final[0].get("output") is not None:
        t.unread(f"{final[1]}.output", "must be a list of output items")
        return None
    for index in sorted(added.keys() - done.keys()):
        if final is not None:
            t.unread(key, f"output item {index} was added but never done")
    items = {**added, **done}
    return {"object": "response", "output": [items[i] for i in sorted(items)]}, key


def _arguments(
    node: Mapping[str, Any], where: str, done: bool, items: dict[int, dict[str, Any]]
) -> None:
    item = items.get(_index(node, "output_index", where))
    if item is None or item.get("type") != "function_call":
        raise UnreadableError(f"{where}.output_index", "no function_call item added at this index")
    if done:
        item["arguments"] = _text(node, "arguments", where)
    else:
        _append(item, "arguments", _text(node, "delta", where), where)


KINDS: Final = (
    StreamKind("ChatCompletionChunk stream", CHAT_COMPLETION, _chat_chunks),
    StreamKind("Messages stream events", MESSAGE, _anthropic_events),
    StreamKind("Responses stream events", RESPONSE, _responses_events),
)


def stream_kind(events: list[Any]) -> StreamKind | None:
    """The kind of the stream, told by its first entry that names one (an error event
    names none); None when no entry does."""
    for event in events:
        if not isinstance(event, Mapping):
            continue
        if event.get("object") == "chat.completion.chunk":
            return KINDS[0]
        kind = event.get("type")
        if kind == "error" or not isinstance(kind, str):
            continue
        if kind in ANTHROPIC_EVENTS:
            return KINDS[1]
        if kind.startswith("response."):
            return KINDS[2]
    return None


def read_stream(
    events: list[Any], kind: StreamKind, key: str, t: Transcript, choice: int | None
) -> None:
    """Put the stream under `key` back together and read the response it streams."""
    built = kind.accumulate(events, key, t)
    if built is not None:
        read_response(built[0], kind.shape, built[1], t, choice)
