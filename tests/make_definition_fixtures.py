"""Write the tool-definition fixtures that `spec init` is tested on (tests/drafting/), from
their sources:

- `definitions/mcp_tools_list.json`: an MCP server's `tools/list` result, built with the
  `mcp` package's own types (`ListToolsResult(...).model_dump(mode="json", by_alias=True)`);
- `definitions/taubench_retail.json`: the retail tools of tests/taubench_fixture as tau-bench
  sends them to the model (each Tool class's `get_info()`, read by toolscore's tau-bench
  reader without importing the checkout).

`tests/drafting/test_fixtures.py` runs `build_*()` again and fails when the committed files
drift (the MCP one when `mcp` is importable). Run from the repository root:
`python tests/make_definition_fixtures.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TESTS = Path(__file__).parent
DEFINITIONS = TESTS / "drafting" / "definitions"
TAUBENCH = TESTS / "taubench_fixture"


def build_mcp_tools_list() -> dict[str, Any]:
    """A support desk's MCP server's `tools/list` result, dumped as a client logs it."""
    from mcp import types  # noqa: PLC0415 - only this fixture needs the SDK

    tools = [
        types.Tool(
            name="get_order",
            description="One order, with what has been refunded on it so far.",
            input_schema={
                "type": "object",
                "properties": {"order_id": {"type": "string", "description": "The order."}},
                "required": ["order_id"],
            },
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(
            name="refund",
            title="Refund an order",
            description="Pay back part of an order.",
            input_schema={
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "amount": {
                        "type": "number",
                        "x-compare": {
                            "kind": "number",
                            "tol": 0.005,
                            "reason": "cents are what the ledger keeps",
                        },
                    },
                    "currency": {"type": "string", "enum": ["EUR", "USD"], "default": "EUR"},
                    "note": {"type": "string", "description": "A note for the customer."},
                },
                "required": ["order_id", "amount"],
            },
            annotations=types.ToolAnnotations(destructive_hint=True),
        ),
        types.Tool(
            name="create_ticket",
            description="Open a support ticket.",
            input_schema={
                "type": "object",
                "properties": {
                    "customer_email": {"type": "string", "format": "email"},
                    "subject": {"type": "string"},
                    "priority": {"type": "string", "enum": ["low", "normal", "high"]},
                    "due": {"type": "string", "format": "date"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "channel": {"type": "string", "description": "Where the customer wrote."},
                },
                "required": ["customer_email", "subject"],
            },
        ),
        types.Tool(
            name="search_kb",
            description="Search the knowledge base.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "default": 5},
                },
            },
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
    ]
    dumped: dict[str, Any] = types.ListToolsResult(tools=tools).model_dump(
        mode="json", by_alias=True
    )
    return dumped


def build_taubench_retail() -> list[dict[str, Any]]:
    """The retail fixture's tools as tau-bench sends them (`get_info()` of each class)."""
    from toolscore.taubench.source import read_tools  # noqa: PLC0415

    folder = TAUBENCH / "tau_bench" / "envs" / "retail"
    return [tool.info for tool in read_tools(folder)]


def write(path: Path, data: Any) -> None:
    """Write one fixture as indented JSON."""
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write(DEFINITIONS / "taubench_retail.json", build_taubench_retail())
    write(DEFINITIONS / "mcp_tools_list.json", build_mcp_tools_list())
