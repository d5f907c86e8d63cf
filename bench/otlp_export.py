"""How converting an OpenTelemetry Collector export grows: time and peak memory for N traces and
2N, and for the same traces among many spans that hold no calls (which must cost no memory).

With `--one-trace SPANS`, one trace instead: a root span and SPANS execute_tool spans, each
with what an SDK writes besides the call (an unread 1 KB attribute, an event, a status
message): the kept-span size and the span bound's reproducer (issue 25).

Each trace has a root agent span, two chat spans with messages, one execute_tool span and
`--filler` HTTP spans; the traces' spans are spread over lines of 50 spans, interleaved the
way a collector batches them. Peak memory is tracemalloc's, during the conversion alone.

    PYTHONPATH=src python bench/otlp_export.py --n 20000
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from toolscore.inputs.converted import Conversion
from toolscore.inputs.otlp_export import convert

LINE_SPANS = 50


def _attrs(**values: str) -> list[dict[str, Any]]:
    return [{"key": k.replace("__", "."), "value": {"stringValue": v}} for k, v in values.items()]


def _span(t: int, k: int, name: str, attributes: list[dict[str, Any]]) -> dict[str, Any]:
    """Span k of trace t; span 1 is the root, the others its children."""
    node = {
        "traceId": f"{t + 1:032x}",
        "spanId": f"{t * 16 + k:016x}",
        "name": name,
        "startTimeUnixNano": str(1_764_450_000_000_000_000 + t * 1000 + k),
        "attributes": attributes,
    }
    if k > 1:
        node["parentSpanId"] = f"{t * 16 + 1:016x}"
    return node


def _spans(n: int, filler: int) -> list[dict[str, Any]]:
    spans = []
    for t in range(n):
        ask = json.dumps([{"role": "user", "parts": [{"type": "text", "content": f"q{t}"}]}])
        call = {"type": "tool_call", "id": f"c{t}", "name": "get_order", "arguments": {}}
        said = json.dumps([{"role": "assistant", "parts": [call]}])
        tool = _attrs(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__call__id=f"c{t}",
            gen_ai__tool__name="get_order",
            gen_ai__tool__call__arguments='{"order_id": "x"}',
        )
        spans += [
            _span(t, 1, "invoke_agent", _attrs(gen_ai__conversation__id=f"conv-{t // 2}")),
            _span(t, 2, "chat m", _attrs(gen_ai__operation__name="chat",
                                         gen_ai__input__messages=ask,
                                         gen_ai__output__messages=said)),
            _span(t, 3, "execute_tool get_order", tool),
            _span(t, 4, "chat m", _attrs(gen_ai__operation__name="chat",
                                         gen_ai__input__messages=ask)),
        ]  # fmt: skip
        filling = _attrs(http__method="GET", http__url="/x" * 40)
        spans += [_span(t, 5 + i, "GET /x", filling) for i in range(filler)]
    # Interleave neighbouring traces, as batches of a busy collector do.
    spans.sort(key=lambda s: (int(s["traceId"], 16) // 8, s["spanId"][-1], s["traceId"]))
    return spans


def _write(path: Path, spans: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(0, len(spans), LINE_SPANS):
            batch = spans[i : i + LINE_SPANS]
            out.write(
                json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": batch}]}]})
                + "\n"
            )


def _one_trace(spans: int) -> list[dict[str, Any]]:
    """A root span and `spans` tool spans of one trace, with what the reader does not read."""
    noise = "x" * 1000
    found = [_span(0, 1, "invoke_agent", [])]
    for k in range(spans):
        tool = _attrs(
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__call__id=f"c{k}",
            gen_ai__tool__name="get_order",
            gen_ai__tool__call__arguments=json.dumps({"order_id": f"order-{k}"}),
            gen_ai__tool__call__result='{"status": "shipped"}',
            http__response__body=noise,
        )
        span = _span(0, 2 + k, "execute_tool get_order", tool)
        span["events"] = [{"name": "log", "attributes": _attrs(message=noise)}]
        span["status"] = {"code": 1, "message": noise}
        found.append(span)
    return found


def measure(path: Path, group_by: str | None) -> tuple[float, int, int]:
    """Seconds, peak bytes and outputs lines of one conversion."""
    out = io.BytesIO()
    tracemalloc.start()
    started = time.perf_counter()
    convert(str(path), Conversion("outputs", group_by), out)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak, out.getvalue().count(b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="traces in the smaller export")
    parser.add_argument("--filler", type=int, default=20, help="HTTP spans per trace")
    parser.add_argument("--one-trace", type=int, default=0, help="tool spans in one trace")
    args = parser.parse_args()
    print("| export | size | group by | outputs | seconds | peak MiB |")
    print("|---|---|---|---|---|---|")
    if args.one_trace:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "one-trace.jsonl"
            _write(path, _one_trace(args.one_trace))
            size = path.stat().st_size / 2**20
            seconds, peak, lines = measure(path, None)
            print(f"| 1 trace, {args.one_trace} tool spans | {size:.0f} MiB | trace_id | "
                  f"{lines} | {seconds:.2f} | {peak / 2**20:.1f} |")  # fmt: skip
        return
    with tempfile.TemporaryDirectory() as folder:
        for n, filler in ((args.n, 0), (2 * args.n, 0), (args.n, args.filler)):
            path = Path(folder) / f"export-{n}-{filler}.jsonl"
            _write(path, _spans(n, filler))
            size = path.stat().st_size / 2**20
            for key in (None, "gen_ai.conversation.id"):
                seconds, peak, lines = measure(path, key)
                label = f"{n} traces, {filler} filler spans each"
                print(f"| {label} | {size:.0f} MiB | {key or 'trace_id'} | {lines} | "
                      f"{seconds:.2f} | {peak / 2**20:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
