"""Provider response objects: what one request to the model returned, read as one assistant turn.

An outputs line may be a response object as the provider's SDK dumps it, with the case id in
its `id` (`{**response.model_dump(), "id": case_id}`), or hold one under `response`
(`{"id": case_id, "response": response.model_dump()}`). Each kind is told by fields only its
provider writes (`SHAPES`), never by guessing, and is read by the transcript reader of its
provider as one assistant message: the calls are those a `messages` transcript ending with
that reply gives. A ChatCompletion with several choices, or a Gemini response with several
candidates, is read only when the line (`choice`) or the run (`score --choice`) says which.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from toolscore.core.values import json_type
from toolscore.inputs.formats import anthropic, gemini, langchain, openai_chat, openai_responses
from toolscore.inputs.formats.transcript import Transcript


class Shape(NamedTuple):
    """A kind of response object: its name, the transcript format that reads it, and its
    own top-level fields (part of the object, so never counted as keys no reader uses)."""

    name: str
    format: str
    fields: frozenset[str]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _both(*names: str) -> frozenset[str]:
    return frozenset(names) | frozenset(map(_camel, names))


CHAT_COMPLETION: Final = Shape(
    "ChatCompletion",
    "openai-chat",
    frozenset(
        {"id", "object", "choices", "created", "model", "service_tier", "system_fingerprint"}
        | {"usage", "metadata", "moderation"}
    ),
)
RESPONSE: Final = Shape(
    "Response",
    "openai-responses",
    frozenset(
        {"id", "object", "output", "created_at", "completed_at", "status", "error", "model"}
        | {"incomplete_details", "instructions", "metadata", "parallel_tool_calls", "tools"}
        | {"temperature", "tool_choice", "top_p", "background", "conversation", "user"}
        | {"max_output_tokens", "max_tool_calls", "previous_response_id", "prompt", "text"}
        | {"prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "usage"}
        | {"prompt_cache_diagnostics", "reasoning", "safety_identifier", "service_tier"}
        | {"top_logprobs", "truncation", "tool_usage", "moderation", "image"}
        | {"access_programs", "input_transformations"}
    ),
)
MESSAGE: Final = Shape(
    "Message",
    "anthropic",
    frozenset(
        {"id", "type", "role", "content", "model", "stop_reason", "stop_sequence", "usage"}
        | {"container", "stop_details", "diagnostics"}
    ),
)
GENERATE_CONTENT_RESPONSE: Final = Shape(
    "GenerateContentResponse",
    "gemini",
    _both(
        "candidates",
        "automatic_function_calling_history",
        "create_time",
        "model_status",
        "model_version",
        "parsed",
        "prompt_feedback",
        "response_id",
        "sdk_http_response",
        "usage_metadata",
    ),
)
AI_MESSAGE: Final = Shape(
    "AIMessage",
    "langchain",
    frozenset(
        {"type", "data", "content", "additional_kwargs", "response_metadata", "name", "id"}
        | {"tool_calls", "invalid_tool_calls", "usage_metadata", "tool_call_chunks"}
        | {"chunk_position"}
    ),
)
SHAPES: Final = (CHAT_COMPLETION, RESPONSE, MESSAGE, GENERATE_CONTENT_RESPONSE, AI_MESSAGE)

LANGCHAIN_AI: Final = frozenset({"ai", "AIMessageChunk"})
PROMPT_FEEDBACK: Final = ("prompt_feedback", "promptFeedback")
HISTORY: Final = ("automatic_function_calling_history", "automaticFunctionCallingHistory")


def shape_of(node: Any) -> Shape | None:
    """The kind of response object `node` is, told by fields only its provider writes:
    `object: "chat.completion"` with a list of `choices`; `object: "response"` with a list
    `output`; an Anthropic `type: "message"` with `role: "assistant"`, a string `model` and a
    `content`; Gemini `candidates` (a list; or none beside `prompt_feedback`, a blocked
    prompt); a LangChain `type: "ai"` without a `role`. None for anything else."""
    if not isinstance(node, Mapping):
        return None
    kind = node.get("object")
    if kind == "chat.completion":
        return CHAT_COMPLETION if isinstance(node.get("choices"), list) else None
    if kind == "response":
        return RESPONSE if isinstance(node.get("output"), list) else None
    kind = node.get("type")
    if kind == "message":
        anthropic_reply = (
            node.get("role") == "assistant" and isinstance(node.get("model"), str)
        ) and "content" in node
        return MESSAGE if anthropic_reply else None
    if isinstance(kind, str) and kind in LANGCHAIN_AI and "role" not in node:
        written = "content" in node or isinstance(node.get("data"), Mapping)
        return AI_MESSAGE if written else None
    candidates = node.get("candidates")
    if isinstance(candidates, list):
        return GENERATE_CONTENT_RESPONSE
    if candidates is None and any(node.get(key) is not None for key in PROMPT_FEEDBACK):
        return GENERATE_CONTENT_RESPONSE
    return None


def joined(where: str, key: str) -> str:
    """The path of `key` inside the object at `where` ('' for the line itself)."""
    return f"{where}.{key}" if where else key


def read_response(
    node: Mapping[str, Any], shape: Shape, where: str, t: Transcript, choice: int | None
) -> None:
    """Read the response object `node` (at `where`) into `t` as one assistant turn;
    `choice` picks one of several choices or candidates."""
    READERS[shape.name](node, where, t, choice)


def choose(
    options: list[Any], where: str, noun: str, choice: int | None, t: Transcript
) -> tuple[str, Any] | None:
    """(path, option) of the choice to read: the only one, or the one `choice` names;
    None when there is none (no call). Several and no `choice` is an input error."""
    count = len(options)
    if count == 0:
        t.notes.append(f"{t.format}: the response has no {noun}s (no call read)")
        return None
    if choice is None:
        if count > 1:
            message = (
                f"a response with {count} {noun}s: say which to score, with "
                '"choice": N on the line or score --choice N (counted from 0)'
            )
            raise t.error(where, message)
        choice = 0
    elif not 0 <= choice < count:
        message = f"choice {choice}, but the response has {count} {noun}{'s' if count > 1 else ''}"
        raise t.error(where, f"{message} (counted from 0)")
    if count > 1:
        t.notes.append(f"{t.format}: {noun} {choice} of {count} read")
    return f"{where}[{choice}]", options[choice]


def _chat_completion(
    node: Mapping[str, Any], where: str, t: Transcript, choice: int | None
) -> None:
    picked = choose(node["choices"], joined(where, "choices"), "choice", choice, t)
    if picked is not None:
        at, option = picked
        with t.part():
            openai_chat.reply(t.mapping(option, at).get("message"), f"{at}.message", t)


def _response(node: Mapping[str, Any], where: str, t: Transcript, choice: int | None) -> None:
    openai_responses.read(node["output"], joined(where, "output"), t)


def _message(node: Mapping[str, Any], where: str, t: Transcript, choice: int | None) -> None:
    anthropic.reply(node, where, t)


def _gemini(node: Mapping[str, Any], where: str, t: Transcript, choice: int | None) -> None:
    for key in HISTORY:
        history = node.get(key)
        if history is not None and history != []:
            # The calls the SDK ran itself (automatic function calling), each answered; the
            # candidate is the model's reply after them.
            if isinstance(history, list):
                gemini.read(history, joined(where, key), t)
            else:
                t.unread(joined(where, key), f"must be a list, got {json_type(history)}")
            break
    picked = choose(
        node.get("candidates") or [], joined(where, "candidates"), "candidate", choice, t
    )
    if picked is not None:
        at, option = picked
        with t.part():
            content = t.mapping(option, at).get("content")
            if content is None:
                reason = option.get("finish_reason", option.get("finishReason"))
                t.notes.append(f"gemini: {at} has no content (finish reason {reason})")
            else:
                gemini.reply(content, f"{at}.content", t)


def _ai_message(node: Mapping[str, Any], where: str, t: Transcript, choice: int | None) -> None:
    langchain.reply(node, where, t)


READERS: Final[Mapping[str, Callable[[Mapping[str, Any], str, Transcript, int | None], None]]] = {
    CHAT_COMPLETION.name: _chat_completion,
    RESPONSE.name: _response,
    MESSAGE.name: _message,
    GENERATE_CONTENT_RESPONSE.name: _gemini,
    AI_MESSAGE.name: _ai_message,
}
