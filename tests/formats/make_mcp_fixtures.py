"""Write the MCP session fixtures from the `mcp` package's own client and server.

A small `MCPServer` (get_order, refund; a refund of order-31 is refused with a `ToolError`) is
driven by the SDK's `Client` over its in-memory transport, offline: a lookup, then two refunds
sent at once, answered in the reverse order. The transport's streams are wrapped so that every
JSON-RPC message that crosses is recorded as the SDK's own stdio transport writes it
(`model_dump(by_alias=True, exclude_unset=True)`). The session runs twice: over the initialize
handshake (`mode="legacy"`, protocol 2025-11-25) and over `server/discover` (`mode="auto"`,
protocol 2026-07-28: `resultType` and `_meta` everywhere). Each session is written as an
outputs line with `mcp: [...]` (a fixture beside the other transcript fixtures: the line, its
plain `calls` twin, the expected reading) and both as one grouped JSON Lines log
(`mcp/sdk_sessions.jsonl`: `{session_id, direction, message}` per message). Ids are the SDK's
counters and the server answers in a fixed order, so the files are the same on every run.
`tests/inputs/test_mcp_fixtures.py` runs `build()` again when `mcp` is importable and fails
when the SDK's messages drift. Run from the repository root:
`python tests/formats/make_mcp_fixtures.py`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
from mcp import Client
from mcp.client._memory import InMemoryTransport
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import SessionMessage

HERE = Path(__file__).parent
LOG = HERE / "mcp" / "sdk_sessions.jsonl"
SHIPPED = {"order_id": "order-12", "status": "shipped"}
REFUNDED = {"refund_id": "r-1", "amount": 12.5}
REFUSED = "Error executing tool refund: amount exceeds the order total"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_order", {"order_id": "order-12"}),
    ("refund", {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}),
    ("refund", {"order_id": "order-31", "amount": 5, "unit": "EUR"}),
]
MODES = {
    "legacy": ("2025-11-25", "the initialize handshake, protocol 2025-11-25"),
    "auto": ("2026-07-28", "protocol 2026-07-28, negotiated by server/discover"),
}
"""The client's modes, by the protocol version each gets from this server."""

Recorded = list[tuple[str, dict[str, Any]]]
"""(direction, message) in the order the messages crossed."""


def shop() -> MCPServer:
    """The server: its tools return dicts, so the SDK answers with structuredContent too.
    The refund of order-77 waits until order-31's is refused, so that the responses to the
    two calls sent at once always come in the same order, the later call's first."""
    server = MCPServer("shop")
    refused = anyio.Event()

    @server.tool()
    def get_order(order_id: str) -> dict[str, str]:
        """Look an order up."""
        return {"order_id": order_id, "status": "shipped"}

    @server.tool()
    async def refund(order_id: str, amount: float, unit: str = "EUR") -> dict[str, Any]:
        """Refund part of an order."""
        if order_id == "order-31":
            refused.set()
            raise ToolError("amount exceeds the order total")
        await refused.wait()
        return {"refund_id": "r-1", "amount": amount}

    return server


class _Recording:
    """A stream of the transport that records every message it carries."""

    def __init__(self, inner: Any, direction: str, log: Recorded) -> None:
        self.inner, self.direction, self.log = inner, direction, log

    def _record(self, item: Any) -> None:
        """Keep a message as the SDK's stdio transport would write it (not an exception)."""
        if isinstance(item, SessionMessage):
            dumped = item.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
            self.log.append((self.direction, dumped))

    async def receive(self) -> Any:
        """The next message from the server, recorded."""
        item = await self.inner.receive()
        self._record(item)
        return item

    async def send(self, item: Any) -> None:
        """A message to the server, recorded."""
        self._record(item)
        await self.inner.send(item)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> _Recording:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Recording:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        """Anything else the SDK asks of a stream (its sender's context) is the inner one's."""
        return getattr(self.inner, name)


class RecordingTransport:
    """The SDK's in-memory transport with both of its client-side streams recorded."""

    def __init__(self, server: MCPServer, log: Recorded) -> None:
        self.transport = InMemoryTransport(server)
        self.log = log

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self.transport.__aenter__()
        return (
            _Recording(read, "server_to_client", self.log),
            _Recording(write, "client_to_server", self.log),
        )

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.transport.__aexit__(kind, error, tb)


async def _session(mode: str, log: Recorded) -> None:
    """The session: list the tools, look the order up, then send both refunds at once."""
    async with Client(RecordingTransport(shop(), log), mode=mode) as client:
        await client.list_tools()
        name, args = CALLS[0]
        await client.call_tool(name, args)
        async with anyio.create_task_group() as group:
            for name, args in CALLS[1:]:
                group.start_soon(client.call_tool, name, args)


def record(mode: str) -> Recorded:
    """Every message of one session, in the order it crossed."""
    log: Recorded = []
    logging.getLogger("mcp").setLevel(logging.WARNING)  # the server logs each refused call
    anyio.run(_session, mode, log)
    return log


def _twin(ids: list[str]) -> list[dict[str, Any]]:
    """The plain `calls` the session must read as (all in one turn)."""
    results: list[Any] = [SHIPPED, REFUNDED, REFUSED]
    calls = []
    for (name, args), call_id, result in zip(CALLS, ids, results, strict=True):
        call = {"name": name, "args": args, "id": call_id, "result": result, "turn": 0}
        if result is REFUSED:
            call["result_error"] = True
        calls.append(call)
    return calls


def build() -> dict[str, Any]:
    """Every fixture by file name: the two sessions' lines, and the grouped log's text."""
    fixtures: dict[str, Any] = {}
    log_lines = []
    for mode, (version, how) in MODES.items():
        recorded = record(mode)
        session = f"sdk-{version}"
        messages = [message for _, message in recorded]
        ids = [str(m["id"]) for m in messages if m.get("method") == "tools/call"]
        fixtures[f"mcp_sdk_{version.replace('-', '_')}.json"] = {
            "description": f"mcp SDK's Client and MCPServer over the in-memory transport ({how})",
            "format": "mcp",
            "generated_by": "tests/formats/make_mcp_fixtures.py",
            "line": {"id": session, "mcp": messages},
            "calls": _twin(ids),
            "final_turn": 0,
            "response": None,
            "notes": [],
        }
        for direction, message in recorded:
            record_line = {"session_id": session, "direction": direction, "message": message}
            log_lines.append(json.dumps(record_line, ensure_ascii=False))
    fixtures[str(LOG.relative_to(HERE))] = "\n".join(log_lines) + "\n"
    return fixtures


def text(data: Any) -> str:
    """A fixture as its committed file holds it."""
    if isinstance(data, str):
        return data
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    """Write every fixture beside this script."""
    for name, data in build().items():
        (HERE / name).write_text(text(data), encoding="utf-8")
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
