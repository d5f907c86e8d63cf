"""An MCP session log (JSON Lines of JSON-RPC messages), turned into one outputs line per session.

An MCP proxy or client logs each message it passes as one line, with the session it belongs to
beside it: flat (`{"session_id": "s1", "jsonrpc": "2.0", "id": 7, "method": "tools/call",
...}`) or wrapped (`{"session_id": "s1", "direction": "...", "message": {...}}`, the
message an object, a batch, or its JSON text). `score --group-by KEY` makes one outputs line
`{"id": SESSION, "format": "mcp", "mcp": [...]}` of every session's messages, in the order the
sessions first appear: KEY is a top-level field of the line (`session_id` by default), a
string or an integer. Lines whose KEY is absent, null or empty are counted, skipped, and one
warning line says how many (and how many of them were `tools/call` requests).

Only what the `mcp` reader reads is kept: `tools/call` requests, cancellations and the
responses to calls whole (their JSON-RPC fields only); of any other request its id and method,
and of its response its id (so that the reader still knows it answers no call); notifications
are dropped. Memory grows with the sessions' calls, never with the rest of the log. A session
may keep at most `max_session_messages` messages (100,000, or $TOOLSCORE_MAX_SESSION_MESSAGES):
one past it is an input error naming the line and the session.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from toolscore.core.values import json_type
from toolscore.errors import InputError
from toolscore.inputs.bounds import env_limit, max_line_bytes
from toolscore.inputs.conversion import Conversion
from toolscore.inputs.formats.mcp import CALL, CANCELLED, Key, id_key
from toolscore.inputs.lines import bounded_lines

SESSION_ID = "session_id"
MAX_SESSION_MESSAGES = 100_000
"""The most messages one session may keep by default: far past any agent's session."""
ENV_VAR = "TOOLSCORE_MAX_SESSION_MESSAGES"
JSONRPC_FIELDS = ("jsonrpc", "id", "method", "params", "result", "error")
"""The fields of a flat line that are the message's; the others are the proxy's."""
MARKERS = ("jsonrpc", "method", "result", "error")
"""A line holding one of these is a flat message."""


@dataclass
class _Session:
    """One session's kept messages, and the ids that tell which responses answer calls."""

    messages: list[bytes] = field(default_factory=list)
    """The kept messages, as JSON (a fifth of the memory of the parsed objects)."""
    calls: set[Key] = field(default_factory=set)
    """The ids of the session's `tools/call` requests: their responses are kept whole."""
    others: Counter[Key] = field(default_factory=Counter)
    """The ids of its other requests awaiting a response."""


@dataclass
class _Skipped:
    """The lines skipped for lacking the key, and how many of them were calls."""

    messages: int = 0
    calls: int = 0


def convert(path: str, conversion: Conversion, out: IO[bytes]) -> None:
    """Write one outputs line per session of the log (see the module's docstring)."""
    if conversion.kind != "outputs":
        raise InputError(path, "an MCP session log holds outputs, not cases")
    key = conversion.group_by or SESSION_ID
    sessions: dict[str, _Session] = {}
    skipped = _Skipped()
    bound = max_session_messages(path)
    cap = max_line_bytes(path)
    with open(path, "rb") as source:
        for number, line in enumerate(bounded_lines(source, path, cap), 1):
            if line.strip():
                _read_line(path, number, line, key, sessions, skipped, bound)
    for group, session in sessions.items():
        head = orjson.dumps({"id": group, "format": "mcp"})[:-1]
        out.write(head + b',"mcp":[' + b",".join(session.messages) + b"]}\n")
    if skipped.messages:
        import logging  # noqa: PLC0415 - not at start-up: `score` imports this module's sniffer

        logging.getLogger("toolscore").warning(
            "%s: %d messages (%d tools/call requests) lack %s: skipped (try --group-by KEY)",
            path,
            skipped.messages,
            skipped.calls,
            key,
        )


def max_session_messages(path: str) -> int:
    """The most messages a session may keep: $TOOLSCORE_MAX_SESSION_MESSAGES, else 100,000."""
    return env_limit(ENV_VAR, MAX_SESSION_MESSAGES, path, "messages")


def _read_line(
    path: str,
    number: int,
    line: bytes,
    key: str,
    sessions: dict[str, _Session],
    skipped: _Skipped,
    bound: int,
) -> None:
    """Read line `number` of the log into its session (see the module's docstring)."""

    def fail(message: str, where: str | None = None) -> InputError:
        """The error about this line (and its field `where`)."""
        return InputError(path, message, line=number, field=where)

    try:
        record = orjson.loads(line.rstrip())
    except orjson.JSONDecodeError as error:
        raise fail(f"not valid JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise fail(f"every line of an MCP log is an object, got {json_type(record)}")
    message = _message(record, fail)
    group = record.get(key)
    if group is None or group == "":
        skipped.messages += 1
        skipped.calls += isinstance(message, dict) and message.get("method") == CALL
        return
    if isinstance(group, bool) or not isinstance(group, str | int):
        raise fail(f"a session key is a string or an integer, got {json_type(group)}", key)
    session = sessions.setdefault(str(group), _Session())
    kept = _kept(message, session)
    if kept is None:
        return
    if len(session.messages) >= bound:
        text = (
            f"session {str(group)!r} holds more than {bound:,} messages (the bound; "
            f"${ENV_VAR} sets another)"
        )
        raise fail(text, key)
    session.messages.append(bytes(memoryview(orjson.dumps(kept))))


def _message(record: dict[str, Any], fail: Any) -> Any:
    """The JSON-RPC message a line holds: the line's own JSON-RPC fields, or its `message`."""
    if any(marker in record for marker in MARKERS):
        return {name: record[name] for name in JSONRPC_FIELDS if name in record}
    message = record.get("message")
    if isinstance(message, str):
        try:
            message = orjson.loads(message)
        except orjson.JSONDecodeError as error:
            raise fail(f"its JSON text is not valid JSON ({error.msg})", "message") from None
    if isinstance(message, dict | list):
        return message
    text = (
        "neither a JSON-RPC message (jsonrpc, method, result or error) nor a record holding "
        "one under message"
    )
    raise fail(text, "message" if "message" in record else None)


def _kept(message: Any, session: _Session) -> Any:
    """What of `message` the `mcp` reader needs (None: nothing); a message it cannot read is
    kept whole, for the reader to say what is wrong with it."""
    if not isinstance(message, Mapping):
        return message  # a batch, kept whole
    method = message.get("method")
    request = id_key(message.get("id"))
    if method is None and request is not None and ("result" in message or "error" in message):
        if request not in session.calls and session.others[request] > 0:
            session.others[request] -= 1
            return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        return message
    if not isinstance(method, str) or method in (CALL, CANCELLED):
        if method == CALL and request is not None:
            session.calls.add(request)
        return message
    if "id" not in message:
        return None  # a notification: it holds no call
    if request is not None:
        session.others[request] += 1
    return {"jsonrpc": "2.0", "id": message["id"], "method": method}
