"""A tiny Inspect AI task whose samples carry toolscore plans, answered offline by Inspect's
mock model: the scorer's test runs it, and make_logs.py runs it to write the log fixtures.

The "agent" is a function of the conversation (so that samples may run in any order): for
each prompt it makes the call written in AGENT, then answers with the tool's output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import Tool, ToolChoice, ToolError, ToolInfo, tool

from toolscore.integrations.inspect import tool_calls

SPECS = Path(__file__).parents[2] / "src" / "toolscore" / "examples" / "support" / "tools.yaml"
ORDERS = {"order-12": {"order_id": "order-12", "status": "shipped"}}

SAMPLES = [
    # plans in the target as a list of plans; the agent's "euro" is EUR under the spec's alias
    Sample(
        id="refund-1",
        input="Refund 12.50 EUR on order-77",
        target=json.dumps([[{"name": "refund", "args": {"order_id": "order-77", "amount": 12.5}}]]),
    ),
    # one plan in the target, an integer id; the agent looks up the wrong order (a tool error)
    Sample(
        id=2,
        input="Where is order-12?",
        target=json.dumps([{"name": "get_order", "args": {"order_id": "order-12"}}]),
    ),
    # no call is right: an abstention case
    Sample(id="thanks", input="thanks, that is all", target="[]"),
    # plans in the metadata
    Sample(
        id="lookup",
        input="Has order-12 shipped?",
        metadata={"plans": [[{"name": "get_order", "args": {"order_id": "order-12"}}]]},
    ),
]

AGENT: dict[str, tuple[str, dict[str, Any]] | None] = {
    "Refund 12.50 EUR on order-77": (
        "refund",
        {"order_id": "order-77", "amount": 12.5, "unit": "euro"},
    ),
    "Where is order-12?": ("get_order", {"order_id": "order-13"}),
    "thanks, that is all": None,
    "Has order-12 shipped?": ("get_order", {"order_id": "order-12"}),
}


@tool
def get_order() -> Tool:
    async def execute(order_id: str) -> str:
        """Look an order up.

        Args:
            order_id: The order's id.
        """
        if order_id not in ORDERS:
            raise ToolError(f"no order {order_id}")
        return json.dumps(ORDERS[order_id])

    return execute


@tool
def refund() -> Tool:
    async def execute(order_id: str, amount: float, unit: str = "EUR") -> str:
        """Refund an amount on an order.

        Args:
            order_id: The order's id.
            amount: How much to refund.
            unit: The currency.
        """
        return json.dumps({"refund_id": "rf-901", "order_id": order_id, "status": "done"})

    return execute


def agent(
    messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
) -> ModelOutput:
    """The mock model's next output: the call for the prompt, then the tool's answer. (Its
    token usage is given, else the mock model would fetch a tokenizer to count them.)"""
    last = messages[-1]
    planned = AGENT.get(last.text) if last.role == "user" else None
    if last.role == "tool":
        output = ModelOutput.from_content("mockllm/model", f"Done: {last.text}")
    elif planned is None:
        output = ModelOutput.from_content("mockllm/model", "You are welcome.")
    else:
        name, args = planned
        output = ModelOutput.for_tool_call("mockllm/model", name, args, tool_call_id=f"call-{name}")
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def mock_model() -> Model:
    return get_model("mockllm/model", custom_outputs=agent)


@task
def refunds(epochs: int = 1) -> Task:
    return Task(
        dataset=SAMPLES,
        solver=[use_tools(get_order(), refund()), generate()],
        scorer=tool_calls(str(SPECS)),
        epochs=epochs,
    )
