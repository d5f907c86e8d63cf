"""`score --emit-otel PATH`: each case's verdict as an OpenTelemetry `gen_ai.evaluation.result`
event, so that it lands beside the traces it judges.

The file is OTLP JSON Lines, as the collector's file exporter writes and its `otlpjsonfile`
receiver reads: each line an `{"resourceLogs": [...]}` export of up to `BATCH` log records,
one per case, in the report's order. A record carries the event name, the GenAI evaluation
attributes (`gen_ai.evaluation.name`, `.score.value` 1 or 0, `.score.label` pass or fail,
`.explanation`), the case id, and the `traceId` / `spanId` of the trace its calls were read
from, when the outputs were spans. The file is written whole or not at all.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import orjson

from toolscore._version import __version__
from toolscore.errors import InputError
from toolscore.files import atomic_file

if TYPE_CHECKING:
    from toolscore.report.sink import Late, Scored
    from toolscore.scoring.summary import Summary

EVENT = "gen_ai.evaluation.result"
EVALUATION = "toolscore.tool_calls"
BATCH = 1000
"""Records per line: a collector reads each line whole."""
SHOWN_MISMATCHES = 5
SEVERITY_INFO = 9


class EventWriter:
    """Writes the events of the cases given as report JSON lines, `BATCH` per line."""

    def __init__(self, out: IO[bytes], now_ns: int | None = None) -> None:
        self.out = out
        self.now = str(time.time_ns() if now_ns is None else now_ns)
        self.records: list[dict[str, Any]] = []

    def add_encoded(self, cases_json: Sequence[bytes]) -> None:
        """Add the events of cases encoded as the report writes them (`case_to_json`)."""
        for line in cases_json:
            self.add(orjson.loads(line))

    def add(self, case: Mapping[str, Any]) -> None:
        self.records.append(evaluation_record(case, self.now))
        if len(self.records) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if self.records:
            self.out.write(orjson.dumps(export(self.records)) + b"\n")
            self.records = []


@contextlib.contextmanager
def emitting(path: str, now_ns: int | None = None) -> Iterator[EventWriter]:
    """An event writer onto `path`, which appears only if the block ends without an error;
    a file that cannot be written is one InputError line, found before scoring begins."""
    try:
        with atomic_file(path) as out:
            writer = EventWriter(out, now_ns)
            yield writer
            writer.flush()
    except OSError as error:
        raise InputError(path, f"cannot write: {error.strerror or error}") from None


class EventSink:
    """The events file as a run's output (a `report.sink.Sink`), written as `emitting`
    writes it: the file is made beside `path` at once (one that cannot be written is found
    before scoring) and renamed into place by `finish`, or removed by `discard`."""

    def __init__(self, path: str, now_ns: int | None = None) -> None:
        self.path = path
        self._file: contextlib.AbstractContextManager[IO[bytes]] | None = None
        opened = atomic_file(path)
        with self._writing():
            self.writer = EventWriter(opened.__enter__(), now_ns)
        self._file = opened

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except OSError as error:
            self.discard()
            raise InputError(self.path, f"cannot write: {error.strerror or error}") from None

    def add(self, outcome: Scored) -> None:
        """Add the events of the batch's cases."""
        with self._writing():
            self.writer.add_encoded(outcome.report_lines)

    def finish(self, summary: Summary, late: Late, run_id: int | None) -> None:
        """Write the last events and put the file in place."""
        with self._writing():
            self.writer.flush()
            opened, self._file = self._file, None
            if opened is not None:
                opened.__exit__(None, None, None)  # an error here has removed the file

    def discard(self) -> None:
        """Remove the file begun beside `path`, writing nothing."""
        opened, self._file = self._file, None
        if opened is not None:
            # Thrown into `atomic_file`, which removes its file and lets it through.
            with contextlib.suppress(GeneratorExit, OSError):
                opened.__exit__(GeneratorExit, GeneratorExit(), None)


def export(records: list[dict[str, Any]]) -> dict[str, Any]:
    """An OTLP logs export (`ExportLogsServiceRequest` as OTLP JSON) of `records`."""
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": [_text("service.name", "toolscore")]},
                "scopeLogs": [
                    {
                        "scope": {"name": "toolscore", "version": __version__},
                        "logRecords": records,
                    }
                ],
            }
        ]
    }


def evaluation_record(case: Mapping[str, Any], now: str) -> dict[str, Any]:
    """The `gen_ai.evaluation.result` log record of one case of the report."""
    passed = bool(case["passed"])
    attributes = [
        _text("gen_ai.evaluation.name", EVALUATION),
        {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": float(passed)}},
        _text("gen_ai.evaluation.score.label", "pass" if passed else "fail"),
        _text("gen_ai.evaluation.explanation", explanation(case)),
        _text("toolscore.case.id", str(case["id"])),
    ]
    if case.get("trial") is not None:
        attributes.append(_text("toolscore.trial", str(case["trial"])))
    record: dict[str, Any] = {
        "timeUnixNano": now,
        "observedTimeUnixNano": now,
        "severityNumber": SEVERITY_INFO,
        "severityText": "INFO",
        "eventName": EVENT,
        "attributes": attributes,
    }
    trace = case.get("trace")
    if isinstance(trace, Mapping):
        record["traceId"] = trace["trace_id"]
        if trace.get("span_id"):
            record["spanId"] = trace["span_id"]
    return record


def explanation(case: Mapping[str, Any]) -> str:
    """Why the case passed or failed, in a line: its first mismatches as `score` names them."""
    if case.get("missing_output"):
        return "no output for this case"
    mismatches = case.get("mismatches") or []
    if not mismatches:
        return "the calls match the case's plan" if case["passed"] else "failed"
    shown = [_mismatch(m) for m in mismatches[:SHOWN_MISMATCHES]]
    more = len(mismatches) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more else "")


def _mismatch(m: Mapping[str, Any]) -> str:
    where = f"call {m['call']}" if m.get("call") is not None else "no call"
    path = f" {m['path']}" if m.get("path") else ""
    message = f": {m['message']}" if m.get("message") else ""
    return f"{m['code']} at {where}{path}{message}"


def _text(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}
