"""Write the `langchain_core_*.json` transcript fixtures from langchain-core's own messages.

One conversation (a lookup; then two refunds, one refused by its tool, and a third call whose
arguments LangChain could not parse) is built from `langchain_core.messages` objects, offline,
and saved as LangChain users get it: each message's `model_dump()`, and `messages_to_dict()`
(`{"type": "ai", "data": {...}}`). Each file holds the line, its plain `calls` twin and the
expected reading, as every file under tests/formats/ does (tests/inputs/test_formats.py);
`tests/inputs/test_langchain.py` runs `build()` again and fails when langchain-core's output drifts
from the committed files. Run from the repository root:
`python tests/formats/make_langchain_fixtures.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
    messages_to_dict,
)

HERE = Path(__file__).parent
REFUSED = "refund refused: order-31 was already refunded"
BROKEN = '{"order_id": "order-31", "amount": 5, "unit": '


def conversation() -> list[BaseMessage]:
    """The conversation, as a LangChain agent's message history holds it."""
    lookup = ToolCall(name="get_order", args={"order_id": "order-12"}, id="c1")
    refund_77 = {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}
    refund_31 = {"order_id": "order-31", "amount": 5, "unit": "EUR"}
    broken = InvalidToolCall(
        type="invalid_tool_call", name="refund", args=BROKEN, id="c4", error="bad JSON"
    )
    return [
        SystemMessage("You are the support desk of a web shop."),
        HumanMessage("Where is order-12?"),
        AIMessage("", tool_calls=[lookup]),
        ToolMessage('{"order_id": "order-12", "status": "shipped"}', tool_call_id="c1"),
        AIMessage("Order-12 has shipped."),
        HumanMessage("Refund 12.50 EUR on order-77 and 5 EUR on order-31, twice if need be."),
        AIMessage(
            [{"type": "text", "text": "Issuing the refunds."}],
            tool_calls=[
                ToolCall(name="refund", args=refund_77, id="c2"),
                ToolCall(name="refund", args=refund_31, id="c3"),
            ],
            invalid_tool_calls=[broken],
        ),
        ToolMessage('{"refund_id": "r-1"}', tool_call_id="c2"),
        ToolMessage(REFUSED, tool_call_id="c3", status="error"),
        AIMessage("Refunded 12.50 EUR on order-77; order-31 was already refunded."),
    ]  # fmt: skip


CALLS: list[dict[str, Any]] = [
    {"name": "get_order", "args": {"order_id": "order-12"}, "id": "c1",
     "result": '{"order_id": "order-12", "status": "shipped"}', "turn": 1},
    {"name": "refund", "args": {"order_id": "order-77", "amount": 12.5, "unit": "EUR"},
     "id": "c2", "result": '{"refund_id": "r-1"}', "turn": 2},
    {"name": "refund", "args": {"order_id": "order-31", "amount": 5, "unit": "EUR"},
     "id": "c3", "result": REFUSED, "result_error": True, "turn": 2},
    {"name": "refund", "args": BROKEN, "id": "c4", "turn": 2},
]  # fmt: skip
"""The calls the conversation holds, written by hand as a plain `calls` list."""


def fixture(description: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "description": description,
        "format": "langchain",
        "generated_by": "tests/formats/make_langchain_fixtures.py",
        "line": {"id": "langchain-1", "messages": messages},
        "calls": CALLS,
        "final_turn": 2,
        "response": "Refunded 12.50 EUR on order-77; order-31 was already refunded.",
        "notes": [],
    }


def build() -> dict[str, dict[str, Any]]:
    """Every fixture by file name."""
    messages = conversation()
    return {
        "langchain_core_dump.json": fixture(
            "langchain-core messages, each saved with model_dump(mode='json')",
            [message.model_dump(mode="json") for message in messages],
        ),
        "langchain_core_to_dict.json": fixture(
            "langchain-core messages saved with messages_to_dict ({type, data})",
            messages_to_dict(messages),
        ),
    }


def text(data: dict[str, Any]) -> str:
    """A fixture as its file holds it."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    for name, data in build().items():
        (HERE / name).write_text(text(data), encoding="utf-8")
