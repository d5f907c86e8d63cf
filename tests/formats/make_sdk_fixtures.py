"""Write the `sdk_*.json` transcript fixtures from the providers' own SDK objects.

One conversation (a lookup, then two parallel refunds, one refused) is built with the
anthropic, openai and google-genai SDKs, offline, and saved in each spelling their users get:
`model_dump()` with null fields, `model_dump(exclude_none=True)`, the SDKs' `to_dict()`, and for
Gemini the snake_case of `model_dump` and the camelCase of `by_alias=True` (the REST shape).
Each file holds the line, its plain `calls` twin and the expected reading
(tests/inputs/test_formats.py).
`tests/inputs/test_sdk_fixtures.py` runs `build()` again and fails when the SDKs' output drifts from
the committed files. Run from the repository root: `python tests/formats/make_sdk_fixtures.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anthropic.types import (
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from google.genai import types as genai
from openai.types.chat import (
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageToolCallUnion,
)
from openai.types.chat.chat_completion_message_function_tool_call import Function
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_output_message import Content
from openai.types.responses.response_reasoning_item import Summary
from pydantic import BaseModel

HERE = Path(__file__).parent

ASK_1 = "Where is order-12?"
ASK_2 = "Refund 12.50 EUR on order-77 and 5 EUR on order-31."
THINKING = "Two refunds, independent of each other: issue both at once."
SHIPPED = {"order_id": "order-12", "status": "shipped"}
REFUNDED = {"refund_id": "r-1", "amount": 12.5}
REFUSED = "amount exceeds the order total"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_order", {"order_id": "order-12"}),
    ("refund", {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}),
    ("refund", {"order_id": "order-31", "amount": 5, "unit": "EUR"}),
]
ANSWER_1 = "Order-12 has shipped."
ANSWER_2 = "Issuing both refunds."

Dump = Callable[[BaseModel], dict[str, Any]]
"""How a user of the SDK turns one of its objects into JSON data."""

SPELLINGS: dict[str, tuple[str, Dump]] = {
    "dump": ("model_dump(mode='json')", lambda m: m.model_dump(mode="json")),
    "exclude_none": (
        "model_dump(mode='json', exclude_none=True)",
        lambda m: m.model_dump(mode="json", exclude_none=True),
    ),
    "to_dict": ("to_dict()", lambda m: m.to_dict(mode="json")),  # type: ignore[attr-defined]
}
GEMINI_SPELLINGS: dict[str, tuple[str, Dump]] = {
    "snake": ("model_dump(mode='json')", lambda m: m.model_dump(mode="json")),
    "snake_exclude_none": (
        "model_dump(mode='json', exclude_none=True)",
        lambda m: m.model_dump(mode="json", exclude_none=True),
    ),
    "camel": (
        "model_dump(mode='json', by_alias=True)",
        lambda m: m.model_dump(mode="json", by_alias=True),
    ),
    "camel_exclude_none": (
        "model_dump(mode='json', by_alias=True, exclude_none=True), the REST API's shape",
        lambda m: m.model_dump(mode="json", by_alias=True, exclude_none=True),
    ),
}


def _twin(ids: list[str | None], results: list[Any], errors: list[bool]) -> list[dict[str, Any]]:
    """The plain `calls` the transcript must read as: turn 1 the lookup, turn 2 the refunds."""
    calls = []
    for index, (name, args) in enumerate(CALLS):
        call: dict[str, Any] = {"name": name, "args": args, "result": results[index]}
        if ids[index] is not None:
            call["id"] = ids[index]
        call["turn"] = 1 if index == 0 else 2
        if errors[index]:
            call["result_error"] = True
        calls.append(call)
    return calls


def _fixture(
    description: str, fmt: str, line: dict[str, Any], calls: list[dict[str, Any]], notes: list[str]
) -> dict[str, Any]:
    return {
        "description": description,
        "format": fmt,
        "generated_by": "tests/formats/make_sdk_fixtures.py",
        "line": line,
        "calls": calls,
        "final_turn": 2,
        "response": ANSWER_2,
        "notes": notes,
    }


def anthropic(dump: Dump, whole: bool) -> list[Any]:
    """Anthropic Messages: the SDK's `Message` replies, the user's `MessageParam` dicts."""
    ids = ["toolu_01", "toolu_02", "toolu_03"]
    uses = [
        ToolUseBlock(id=i, name=name, input=args, type="tool_use")
        for i, (name, args) in zip(ids, CALLS, strict=True)
    ]
    replies: list[list[ContentBlock]] = [
        [uses[0]],
        [TextBlock(text=ANSWER_1, type="text")],
        [
            ThinkingBlock(thinking=THINKING, signature="c2lnbmF0dXJl", type="thinking"),
            TextBlock(text=ANSWER_2, type="text"),
            uses[1],
            uses[2],
        ],
    ]
    stops = ["tool_use", "end_turn", "tool_use"]
    messages = [
        Message(
            id=f"msg_0{n}",
            content=list(blocks),
            model="claude-sonnet-4-5",
            role="assistant",
            stop_reason=stop,  # type: ignore[arg-type]
            stop_sequence=None,
            type="message",
            usage=Usage(input_tokens=100, output_tokens=20),
        )
        for n, (blocks, stop) in enumerate(zip(replies, stops, strict=True))
    ]

    def reply(message: Message) -> Any:
        if whole:
            return dump(message)
        return {"role": "assistant", "content": [dump(block) for block in message.content]}

    def result(tool_use_id: str, content: str, error: bool = False) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
        block["content"] = content
        if error:
            block["is_error"] = True
        return block

    return [
        {"role": "user", "content": ASK_1},
        reply(messages[0]),
        {"role": "user", "content": [result(ids[0], json.dumps(SHIPPED))]},
        reply(messages[1]),
        {"role": "user", "content": ASK_2},
        reply(messages[2]),
        {
            "role": "user",
            "content": [
                result(ids[1], json.dumps(REFUNDED)),
                result(ids[2], REFUSED, error=True),
            ],
        },
    ]


def openai_chat(dump: Dump) -> list[Any]:
    """Chat Completions: the SDK's `ChatCompletionMessage` replies, the user's dicts."""
    ids = ["call_01", "call_02", "call_03"]
    calls: list[ChatCompletionMessageToolCallUnion] = [
        ChatCompletionMessageFunctionToolCall(
            id=i, type="function", function=Function(name=name, arguments=json.dumps(args))
        )
        for i, (name, args) in zip(ids, CALLS, strict=True)
    ]
    replies = [
        ChatCompletionMessage(role="assistant", content=None, tool_calls=[calls[0]]),
        ChatCompletionMessage(role="assistant", content=ANSWER_1),
        ChatCompletionMessage(role="assistant", content=ANSWER_2, tool_calls=calls[1:]),
    ]
    return [
        {"role": "system", "content": "You handle orders."},
        {"role": "user", "content": ASK_1},
        dump(replies[0]),
        {"role": "tool", "tool_call_id": ids[0], "content": json.dumps(SHIPPED)},
        dump(replies[1]),
        {"role": "user", "content": ASK_2},
        dump(replies[2]),
        {"role": "tool", "tool_call_id": ids[1], "content": json.dumps(REFUNDED)},
        {"role": "tool", "tool_call_id": ids[2], "content": REFUSED},
    ]


def openai_responses(dump: Dump) -> list[Any]:
    """Responses API: the SDK's output items, the user's input items as dicts."""
    ids = ["call_01", "call_02", "call_03"]
    calls = [
        ResponseFunctionToolCall(
            id=f"fc_0{n}",
            call_id=i,
            name=name,
            arguments=json.dumps(args),
            type="function_call",
            status="completed",
        )
        for n, (i, (name, args)) in enumerate(zip(ids, CALLS, strict=True))
    ]

    def said(n: int, text: str) -> ResponseOutputMessage:
        content: list[Content] = [ResponseOutputText(annotations=[], text=text, type="output_text")]
        return ResponseOutputMessage(
            id=f"msg_0{n}", content=content, role="assistant", status="completed", type="message"
        )

    def output(call_id: str, text: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": call_id, "output": text}

    reasoning = ResponseReasoningItem(
        id="rs_01", summary=[Summary(text=THINKING, type="summary_text")], type="reasoning"
    )
    return [
        {"role": "user", "content": ASK_1},
        dump(calls[0]),
        output(ids[0], json.dumps(SHIPPED)),
        dump(said(1, ANSWER_1)),
        {"role": "user", "content": ASK_2},
        dump(reasoning),
        dump(said(2, ANSWER_2)),
        dump(calls[1]),
        dump(calls[2]),
        output(ids[1], json.dumps(REFUNDED)),
        output(ids[2], REFUSED),
    ]


def gemini(dump: Dump) -> list[Any]:
    """Gemini: every turn a google-genai `Content` (no call ids: linked by position)."""
    calls = [genai.Part(function_call=genai.FunctionCall(name=n, args=a)) for n, a in CALLS]
    signed = calls[1].model_copy(update={"thought_signature": b"signature"})
    contents = [
        genai.Content(role="user", parts=[genai.Part(text=ASK_1)]),
        genai.Content(role="model", parts=[calls[0]]),
        genai.Content(
            role="user",
            parts=[genai.Part.from_function_response(name="get_order", response=SHIPPED)],
        ),
        genai.Content(role="model", parts=[genai.Part(text=ANSWER_1)]),
        genai.Content(role="user", parts=[genai.Part(text=ASK_2)]),
        genai.Content(
            role="model",
            parts=[
                genai.Part(text=THINKING, thought=True),
                genai.Part(text=ANSWER_2),
                signed,
                calls[2],
            ],
        ),
        genai.Content(
            role="user",
            parts=[
                genai.Part.from_function_response(name="refund", response={"output": REFUNDED}),
                genai.Part.from_function_response(name="refund", response={"error": REFUSED}),
            ],
        ),
    ]
    return [dump(content) for content in contents]


def build() -> dict[str, dict[str, Any]]:
    """Every SDK fixture by file name."""
    fixtures = {}
    chat_ids: list[str | None] = ["call_01", "call_02", "call_03"]
    for key, (how, dump) in SPELLINGS.items():
        for whole in (False, True):
            shape = "each reply a whole Message" if whole else "each reply's content blocks"
            name = f"sdk_anthropic_{'message_' if whole else ''}{key}.json"
            fixtures[name] = _fixture(
                f"Anthropic SDK, {shape} saved with {how}",
                "anthropic",
                {"id": "sdk-anthropic", "messages": anthropic(dump, whole)},
                _twin(
                    ["toolu_01", "toolu_02", "toolu_03"],
                    [json.dumps(SHIPPED), json.dumps(REFUNDED), REFUSED],
                    [False, False, True],
                ),
                [],
            )
        fixtures[f"sdk_openai_chat_{key}.json"] = _fixture(
            f"OpenAI SDK, Chat Completions replies saved with {how}",
            "openai-chat",
            {"id": "sdk-openai-chat", "messages": openai_chat(dump)},
            _twin(chat_ids, [json.dumps(SHIPPED), json.dumps(REFUNDED), REFUSED], [False] * 3),
            [],
        )
        fixtures[f"sdk_openai_responses_{key}.json"] = _fixture(
            f"OpenAI SDK, Responses API output items saved with {how}",
            "openai-responses",
            {"id": "sdk-openai-responses", "items": openai_responses(dump)},
            _twin(chat_ids, [json.dumps(SHIPPED), json.dumps(REFUNDED), REFUSED], [False] * 3),
            [],
        )
    for key, (how, dump) in GEMINI_SPELLINGS.items():
        fixtures[f"sdk_gemini_{key}.json"] = _fixture(
            f"google-genai SDK, every Content saved with {how}",
            "gemini",
            {"id": "sdk-gemini", "contents": gemini(dump)},
            _twin([None] * 3, [SHIPPED, REFUNDED, REFUSED], [False, False, True]),
            ["3 calls without ids", "gemini: results linked by position (3)"],
        )
    return fixtures


def text(data: dict[str, Any]) -> str:
    """A fixture as the committed file holds it."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    """Write every fixture beside this script."""
    for name, data in build().items():
        (HERE / name).write_text(text(data), encoding="utf-8")
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
