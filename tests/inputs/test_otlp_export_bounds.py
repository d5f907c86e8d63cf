"""A collector export is held within bounds (issue 25): of each kept span only what the otel
reader reads, and at most a bounded number of spans per trace, one past it refused in one
line naming the file, the line and the trace."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from toolscore.errors import InputError
from toolscore.inputs.conversion import Conversion
from toolscore.inputs.formats.otel import read
from toolscore.inputs.formats.transcript import Transcript
from toolscore.inputs.otlp_export import ENV_VAR, convert

TRACE = "5b8efff798038103d269b633813f0001"
NOISE = "x" * 2000
"""What an SDK writes besides the call: an unread attribute, events, a status message."""


def pair(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def tool_span(n: int) -> dict[str, Any]:
    """A tool span as the SDK writes it, with 2 KB of what the otel reader does not read."""
    return {
        "traceId": TRACE,
        "spanId": f"{n + 2:016x}",
        "parentSpanId": f"{1:016x}",
        "name": "execute_tool get_order",
        "kind": 1,
        "startTimeUnixNano": str(1764450000000000000 + n),
        "endTimeUnixNano": str(1764450000000000001 + n),
        "attributes": [
            pair("gen_ai.operation.name", "execute_tool"),
            pair("gen_ai.tool.name", "get_order"),
            pair("gen_ai.tool.call.id", f"call_{n}"),
            pair("gen_ai.tool.call.arguments", json.dumps({"order_id": f"order-{n}"})),
            pair("gen_ai.tool.call.result", '{"status": "shipped"}'),
            pair("http.response.body", NOISE),
        ],
        "events": [{"name": "log", "attributes": [pair("message", NOISE)]}],
        "status": {"code": 2, "message": NOISE},
        "flags": 256,
    }


def export(path: Path, spans: int) -> Path:
    root = {"traceId": TRACE, "spanId": f"{1:016x}", "name": "invoke_agent support"}
    batch = [root] + [tool_span(n) for n in range(spans)]
    line = {"resourceSpans": [{"scopeSpans": [{"spans": batch}]}]}
    path.write_bytes(orjson.dumps(line) + b"\n")
    return path


def converted(path: Path) -> bytes:
    out = io.BytesIO()
    convert(str(path), Conversion("outputs"), out)
    return out.getvalue()


def transcript(spans: Any) -> Transcript:
    t = Transcript("", None, "otel")
    read(spans, "spans", t)
    return t


def test_a_kept_span_holds_only_what_the_reader_reads(tmp_path: Path) -> None:
    """The reproducer, scaled down: 2,000 tool spans of one trace, each over 6 KB as written,
    are kept in under 1 KB each, and read into the same calls as the spans whole."""
    path = export(tmp_path / "export.jsonl", 2000)
    (line,) = converted(path).splitlines()
    kept = json.loads(line)["spans"]
    assert len(kept) == 2001
    assert len(line) / len(kept) < 1000, f"{len(line) / len(kept):.0f} bytes a span"
    assert NOISE not in line.decode()
    assert set(kept[1]) == {"traceId", "spanId", "parentSpanId", "name", "startTimeUnixNano"} | {
        "status",
        "attributes",
    }
    whole = [tool_span(n) for n in range(2000)]
    calls = transcript(whole).calls
    assert len(calls) == 2000
    assert transcript(kept[1:]).calls == calls


def test_a_trace_past_the_span_bound_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$TOOLSCORE_MAX_TRACE_SPANS lowers the 100,000 bound; the root span counts too."""
    path = export(tmp_path / "export.jsonl", 100)
    monkeypatch.setenv(ENV_VAR, "101")
    assert len(json.loads(converted(path))["spans"]) == 101
    monkeypatch.setenv(ENV_VAR, "100")
    with pytest.raises(InputError) as caught:
        converted(path)
    assert str(caught.value) == (
        f"{path}:1: resourceSpans[0].scopeSpans[0].spans[100]: trace {TRACE} holds more than "
        f"100 tool, inference and root spans (the bound; ${ENV_VAR} sets another)"
    )
    monkeypatch.setenv(ENV_VAR, "lots")
    with pytest.raises(InputError, match="must be a whole number of spans above 0, got 'lots'"):
        converted(path)
