"""Collector exports as outputs (`--group-by`) and verdicts as OpenTelemetry events
(`--emit-otel`): the SDK-made fixture, its hand-written twin, malformed variants, and the
events read back with OpenTelemetry's own protobuf messages."""

from __future__ import annotations

import base64
import io
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from toolscore.cli.app import cli
from toolscore.errors import InputError
from toolscore.inputs.converted import HEAD_BYTES, Conversion, layout_of
from toolscore.inputs.layouts import otlp_export as sniff
from toolscore.inputs.otlp_export import convert
from toolscore.inputs.otlp_ids import hex_id

HERE = Path(__file__).parents[1] / "formats" / "otel_export"
EXPORT = HERE / "collector.jsonl"
HAND = HERE / "collector_hand.jsonl"
TRACES = [f"5b8efff798038103d269b633813f000{n}" for n in (1, 2, 3, 4)]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def score(outputs: Path, cases: Path, *extra: str) -> Result:
    return run(
        "score", "--specs", str(HERE / "tools.yaml"), "--cases", str(cases),
        "--outputs", str(outputs), *extra,
    )  # fmt: skip


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0].removeprefix("toolscore: error: ")


def converted(path: Path, group_by: str | None = None) -> list[dict[str, Any]]:
    out = io.BytesIO()
    convert(str(path), Conversion("outputs", group_by), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_fixture_is_what_the_sdk_writes() -> None:
    sys.path.insert(0, str(HERE))
    try:
        from make_fixtures import build  # noqa: PLC0415
    finally:
        sys.path.remove(str(HERE))
    assert build() == EXPORT.read_text(encoding="utf-8"), (
        "regenerate: python tests/formats/otel_export/make_fixtures.py"
    )


def test_groups_by_trace_id_by_default_in_order_of_appearance() -> None:
    lines = converted(EXPORT)
    assert [line["id"] for line in lines] == TRACES
    assert {line["format"] for line in lines} == {"otel"}
    # Trace 1's spans sit on both lines of the export; its group holds them all.
    first = lines[0]["spans"]
    assert {span["name"] for span in first} == {
        "chat gpt-4.1",
        "execute_tool get_order",
        "invoke_agent support",
    }
    assert len(first) == 4


def test_groups_by_an_attribute_its_traces_inherit() -> None:
    lines = converted(EXPORT, "gen_ai.conversation.id")
    assert [line["id"] for line in lines] == ["conv-1", "conv-2", "conv-3"]
    assert {span["traceId"] for span in lines[0]["spans"]} == set(TRACES[:2])


def test_keeps_only_spans_that_can_hold_calls_or_roots() -> None:
    lines = converted(HAND)
    names = [span["name"] for line in lines for span in line["spans"]]
    assert "GET /orders" not in names
    assert sorted(names) == ["chat claude", "chat gpt-4.1", "invoke_agent shop"]


def test_a_resource_attribute_groups_too() -> None:
    assert [line["id"] for line in converted(HAND, "session.id")] == ["s-9"]


def test_traces_lacking_the_key_are_skipped_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolscore"):
        lines = converted(HAND, "gen_ai.conversation.id")
    assert [line["id"] for line in lines] == ["c-1"]
    assert [record.getMessage() for record in caplog.records] == [
        f"{HAND}: 1 spans of 1 traces lack gen_ai.conversation.id: skipped "
        "(try --group-by trace_id)"
    ]


def test_score_by_conversation_scores_the_last_turn_of_each() -> None:
    result = score(EXPORT, HERE / "cases.jsonl", "--group-by", "gen_ai.conversation.id",
                   "--json", "-")  # fmt: skip
    assert result.exit_code == 0, result.output
    cases = {case["id"]: case for case in json.loads(result.stdout)["cases"]}
    assert {key: case["passed"] for key, case in cases.items()} == {
        "conv-1": True,  # the two refunds of turn 2 (the lookup of turn 1 is not scored)
        "conv-2": True,  # OpenInference
        "conv-3": False,  # OpenLLMetry, ORDER-13 is not order-13
    }
    assert cases["conv-1"]["trace"] == {"trace_id": TRACES[1], "span_id": "a000000000000005"}


def test_the_hand_written_twin_scores_alike() -> None:
    result = score(HAND, HERE / "cases_hand.jsonl", "--group-by", "gen_ai.conversation.id",
                   "--json", "-")  # fmt: skip
    assert result.exit_code == 0, result.output
    (case,) = json.loads(result.stdout)["cases"]
    assert case["passed"], case
    assert case["trace"] == {"trace_id": "0af7651916cd43dd8448eb211c80319c",
                             "span_id": "00f067aa0ba902b7"}  # fmt: skip


def test_the_sniffer_leaves_json_lines_outputs_alone(tmp_path: Path) -> None:
    line = json.loads(EXPORT.read_text(encoding="utf-8").splitlines()[0])
    with_id = tmp_path / "outputs.jsonl"
    with_id.write_text(json.dumps({"id": "a", **line}) + "\n", encoding="utf-8")
    assert layout_of(str(with_id)) is None
    assert layout_of(str(EXPORT)) is not None
    long_first_line = b'{"resourceSpans": [' + b" " * HEAD_BYTES
    assert sniff("x", long_first_line[:HEAD_BYTES])
    assert not sniff("x", b'{"id": "a", "calls": []}\n')
    assert not sniff("x", b"")


def _variant(tmp_path: Path, number: int, change: Any) -> Path:
    lines = HAND.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = change(lines[number - 1])
    path = tmp_path / "variant.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _edit(edit: Any) -> Any:
    def change(text: str) -> str:
        data = json.loads(text)
        edit(data)
        return json.dumps(data)

    return change


SPAN = ("resourceSpans", 0, "scopeSpans", 0, "spans", 1)


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


@pytest.mark.parametrize(
    ("number", "change", "message"),
    [
        (2, lambda text: text[:40], ":2: not valid JSON"),
        (
            2,
            _edit(lambda data: _at(data, SPAN).pop("traceId")),
            ":2: resourceSpans[0].scopeSpans[0].spans[1].traceId: every span needs its traceId",
        ),
        (
            2,
            _edit(lambda data: data.update(id="c-1")),
            ":2: id: a collector export has no ids",
        ),
        (
            1,
            _edit(lambda data: _at(data, ("resourceSpans", 0, "scopeSpans", 0)).update(spans={})),
            ":1: resourceSpans[0].scopeSpans[0].spans: must be a list, got object",
        ),
        (2, lambda text: "[]", ":2: resourceSpans: every line of a collector export"),
    ],
)
def test_a_malformed_export_is_one_line_naming_file_line_and_field(
    tmp_path: Path, number: int, change: Any, message: str
) -> None:
    path = _variant(tmp_path, number, change)
    line = one_error_line(score(path, HERE / "cases_hand.jsonl"))
    assert line.startswith(f"{path}{message}"), line


def test_group_by_needs_a_collector_export() -> None:
    cases = HERE / "cases_hand.jsonl"
    result = score(cases, cases, "--group-by", "trace_id")
    assert result.exit_code == 2, result.output
    assert "Invalid value for --group-by: groups the spans of an OpenTelemetry collector " in (
        result.stderr
    )


def test_an_export_is_no_cases_file() -> None:
    with pytest.raises(InputError, match="holds outputs, not cases"):
        convert(str(EXPORT), Conversion("cases"), io.BytesIO())


def _protobuf(text: str) -> Any:
    """An OTLP JSON logs export as OpenTelemetry's protobuf message (protobuf's JSON mapping
    wants the ids in base64 where OTLP JSON writes hex)."""
    from google.protobuf.json_format import Parse  # noqa: PLC0415
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # noqa: PLC0415
        ExportLogsServiceRequest,
    )

    data = json.loads(text)
    for resource in data["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                for key in ("traceId", "spanId"):
                    if key in record:
                        record[key] = base64.b64encode(bytes.fromhex(record[key])).decode()
    return Parse(json.dumps(data), ExportLogsServiceRequest())


def _normalized(text: str) -> str:
    """The events with their time stamps zeroed (they say when the run was) and without
    toolscore's version."""
    lines = []
    for line in text.splitlines():
        data = json.loads(line)
        for resource in data["resourceLogs"]:
            for scope in resource["scopeLogs"]:
                scope["scope"].pop("version")
                for record in scope["logRecords"]:
                    record["timeUnixNano"] = record["observedTimeUnixNano"] = "0"
        lines.append(json.dumps(data, indent=1))
    return "\n".join(lines) + "\n"


def test_emit_otel_writes_evaluation_events_the_sdk_reads(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    result = score(EXPORT, HERE / "cases.jsonl", "--group-by", "gen_ai.conversation.id",
                   "--emit-otel", str(events))  # fmt: skip
    assert result.exit_code == 0, result.output
    text = events.read_text(encoding="utf-8")
    request = _protobuf(text)
    records = request.resource_logs[0].scope_logs[0].log_records
    assert [record.event_name for record in records] == ["gen_ai.evaluation.result"] * 3
    attributes = [
        {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in r.attributes}
        for r in records
    ]
    assert [a["toolscore.case.id"] for a in attributes] == ["conv-1", "conv-2", "conv-3"]
    assert [a["gen_ai.evaluation.score.value"] for a in attributes] == [1.0, 1.0, 0.0]
    assert [a["gen_ai.evaluation.score.label"] for a in attributes] == ["pass", "pass", "fail"]
    assert attributes[2]["gen_ai.evaluation.explanation"] == (
        "value_mismatch at call 0 /order_id: 'ORDER-13' does not equal 'order-13' exactly"
    )
    assert [r.trace_id.hex() for r in records] == TRACES[1:]
    assert records[0].span_id.hex() == "a000000000000005"
    golden = HERE / "events.golden.json"
    assert _normalized(text) == golden.read_text(encoding="utf-8")


def test_emit_otel_without_traces_links_nothing(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "plans": []}\n{"id": "b", "plans": []}\n', encoding="utf-8")
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text('{"id": "a", "calls": []}\n', encoding="utf-8")
    result = score(outputs, cases, "--emit-otel", str(events))
    assert result.exit_code == 1, result.output  # an output is missing
    records = _protobuf(events.read_text(encoding="utf-8")).resource_logs[0].scope_logs[0]
    assert [(r.trace_id, r.span_id) for r in records.log_records] == [(b"", b""), (b"", b"")]
    scores = [
        {a.key: a.value for a in r.attributes}["gen_ai.evaluation.score.label"].string_value
        for r in records.log_records
    ]
    assert scores == ["pass", "fail"]  # a missing output is never a pass
    explanations = [
        {a.key: a.value.string_value for a in r.attributes}["gen_ai.evaluation.explanation"]
        for r in records.log_records
    ]
    assert explanations == ["the calls match the case's plan", "no output for this case"]
    excluded = score(outputs, cases, "--emit-otel", str(events), "--missing", "exclude")
    assert excluded.exit_code == 0, excluded.output
    records = _protobuf(events.read_text(encoding="utf-8")).resource_logs[0].scope_logs[0]
    assert len(records.log_records) == 1  # the case left out has no event


def test_emit_otel_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("earlier\n", encoding="utf-8")
    bad = tmp_path / "outputs.jsonl"
    bad.write_text('{"id": "c-1", "calls": []}\n{"id": \n', encoding="utf-8")
    one_error_line(score(bad, HERE / "cases_hand.jsonl", "--emit-otel", str(events)))
    assert events.read_text(encoding="utf-8") == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl", "outputs.jsonl"]
    nowhere = tmp_path / "missing" / "events.jsonl"
    line = one_error_line(score(HAND, HERE / "cases_hand.jsonl", "--emit-otel", str(nowhere)))
    assert line.startswith(f"{nowhere}: cannot write"), line


def test_a_saved_run_keeps_the_trace_link(tmp_path: Path) -> None:
    from toolscore.report.json_report import case_to_json  # noqa: PLC0415
    from toolscore.store.restore import result_from_json  # noqa: PLC0415

    db = tmp_path / "results.db"
    result = score(EXPORT, HERE / "cases.jsonl", "--group-by", "gen_ai.conversation.id",
                   "--db", str(db), "--json", "-")  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = run("show", "1", "--db", str(db), "--json")
    assert shown.exit_code == 0, shown.output
    cases = json.loads(shown.stdout)["cases"]
    assert cases[0]["trace"] == {"trace_id": TRACES[1], "span_id": "a000000000000005"}
    restored = result_from_json(cases[0])
    assert restored.trace == (TRACES[1], "a000000000000005")
    assert case_to_json(restored)["trace"] == cases[0]["trace"]


def _base64_ids(export: Path, target: Path) -> Path:
    """`export` with every span's ids in base64, as protobuf's JSON mapping writes them."""
    lines = []
    for line in export.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        for resource in data["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if span.get(key):
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        lines.append(json.dumps(data))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def test_base64_ids_group_and_link_as_their_hex(tmp_path: Path) -> None:
    """An export with base64 ids (protobuf's JSON mapping, not OTLP JSON's hex) groups by the
    hex trace id and gives the events the same hex links as the hex export does."""
    export = _base64_ids(EXPORT, tmp_path / "collector-base64.jsonl")
    assert "5b8efff798038103d269b633813f0001" not in export.read_text(encoding="utf-8")
    assert [line["id"] for line in converted(export)] == TRACES
    events = tmp_path / "events.jsonl"
    result = score(export, HERE / "cases.jsonl", "--group-by", "gen_ai.conversation.id",
                   "--emit-otel", str(events), "--json", "-")  # fmt: skip
    assert result.exit_code == 0, result.output
    cases = {case["id"]: case for case in json.loads(result.stdout)["cases"]}
    assert cases["conv-1"]["trace"] == {"trace_id": TRACES[1], "span_id": "a000000000000005"}
    text = events.read_text(encoding="utf-8")
    assert _normalized(text) == (HERE / "events.golden.json").read_text(encoding="utf-8")
    records = _protobuf(text).resource_logs[0].scope_logs[0].log_records
    assert [record.trace_id.hex() for record in records] == TRACES[1:]


@pytest.mark.parametrize(
    ("value", "length", "expected"),
    [
        ("5b8efff798038103d269b633813fc60c", 32, "5b8efff798038103d269b633813fc60c"),
        ("0x5B8EFFF798038103D269B633813FC60C", 32, "5b8efff798038103d269b633813fc60c"),
        ("W47/95gDgQPSabYzgT/GDA==", 32, "5b8efff798038103d269b633813fc60c"),
        ("W47_95gDgQPSabYzgT_GDA", 32, "5b8efff798038103d269b633813fc60c"),  # URL-safe, unpadded
        ("7uGbfsGxsXQ=", 16, "eee19b7ec1b1b174"),
        ("7uGbfsGxsXQ=", 32, None),  # a span id is no trace id
        ("AAAAAAAAAAAAAAAAAAAAAA==", 32, None),  # all zeros: OTLP's "no id"
        ("not an id at all", 16, None),
        ("W47/95gDgQPSabYzgT/GDA=", 32, None),  # padding that does not fit
        (12, 16, None),
    ],
)
def test_otlp_ids_are_read_from_hex_or_base64(value: object, length: int, expected: str) -> None:
    assert hex_id(value, length) == expected


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
SPAN_FIELDS = st.sampled_from(["traceId", "parentSpanId", "name", "attributes", "spanId"])


@given(st.lists(st.dictionaries(SPAN_FIELDS, JUNK), max_size=4), st.sampled_from([None, "k"]))
def test_any_export_converts_or_is_one_input_error(
    spans: list[dict[str, Any]], key: str | None
) -> None:
    line = json.dumps(
        {"resourceSpans": [{"resource": {"attributes": "x"}, "scopeSpans": [{"spans": spans}]}]}
    )
    path = Path(tempfile.mkdtemp()) / "export.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    failure: InputError | None = None
    try:
        lines = converted(path, key)
    except InputError as error:
        failure, lines = error, []
    finally:
        shutil.rmtree(path.parent)
    if failure is not None:
        assert failure.line == 1
    assert sum(len(out["spans"]) for out in lines) <= len(spans)


def test_emit_otel_is_the_same_on_two_workers(tmp_path: Path) -> None:
    texts = []
    for workers in ("1", "2"):
        events = tmp_path / f"events-{workers}.jsonl"
        result = score(EXPORT, HERE / "cases.jsonl", "--group-by", "gen_ai.conversation.id",
                       "--emit-otel", str(events), "--workers", workers)  # fmt: skip
        assert result.exit_code == 0, result.output
        texts.append(_normalized(events.read_text(encoding="utf-8")))
    assert texts[0] == texts[1] == (HERE / "events.golden.json").read_text(encoding="utf-8")
