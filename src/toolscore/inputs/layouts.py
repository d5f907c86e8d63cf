"""How each file layout other than JSON Lines is recognised from a file's first bytes.

The sniffers live apart from their converters, in a module that imports neither: every run
sniffs its cases and outputs files, and a converter (with the provider readers it needs) is
imported only when its layout is met (`converted`)."""

from __future__ import annotations

import re

from toolscore.inputs.conversion import first_object
from toolscore.inputs.zip_members import ZIP_MAGIC

INSPECT_JSON_LOG = re.compile(
    rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"[a-z_]*"\s*,\s*"eval"\s*:'
)
"""How Inspect begins a `.json` log: its `version`, `status` and `eval` keys, in that order."""


def inspect_log(path: str, head: bytes) -> bool:
    """An Inspect log: a zip naming Inspect's members (or called `.eval`), or a JSON object
    beginning as Inspect writes its `.json` logs. No JSON Lines file begins either way."""
    if head.startswith(ZIP_MAGIC):
        return path.endswith(".eval") or b"header.json" in head or b"_journal/" in head
    return INSPECT_JSON_LOG.match(head) is not None


def otlp_export(_: str, head: bytes) -> bool:
    """A collector export: its first line an object with `resourceSpans` and no `id` (a line
    with an `id` is an outputs line, read as it always was). A first line longer than the head
    is recognised by its first key, which the collector writes first."""
    first = first_object(head, "resourceSpans")
    return first is not None and "resourceSpans" in first and "id" not in first


def mcp_log(_: str, head: bytes) -> bool:
    """An MCP log: its first line an object holding a JSON-RPC message, flat (`jsonrpc` at
    the top) or under `message`. An outputs line never has either (its transcript is under
    `mcp`). A first line longer than the head is recognised by a first key `jsonrpc`."""
    first = first_object(head, "jsonrpc")
    if first is None:
        return False
    message = first.get("message")
    return "jsonrpc" in first or (isinstance(message, dict) and "jsonrpc" in message)


def parquet(_: str, head: bytes) -> bool:
    """A Parquet file: its magic bytes."""
    return head[:4] == b"PAR1"
