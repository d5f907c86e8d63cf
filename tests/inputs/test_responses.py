"""Provider response objects and saved streams as outputs lines.

Every file under tests/formats/responses/ (written by the SDKs: make_response_fixtures.py)
holds an outputs line that is a response object or a stream, the same calls as a plain
`calls` list, and the expected reading (tests/response_lines.py reads them). Lines no reader
understands, and keys no reader uses: tests/inputs/test_unknown_lines.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from response_lines import (
    FILES,
    REFUNDS,
    SPECS,
    fixture,
    line_of,
    read,
    refused,
    run,
    stream_of,
    unread,
    write_run,
)
from toolscore.errors import OutputError
from toolscore.inputs.formats import FORMATS
from toolscore.inputs.outputs import parse_output, read_outputs
from toolscore.integrations.evaluators import produced_of
from toolscore.scoring.check import check

ONE_PER_PROVIDER = [
    "openai_chat_dump.json",
    "openai_responses_dump.json",
    "anthropic_dump.json",
    "gemini_snake.json",
    "langchain_dump.json",
]


def test_sdk_dumps_saved_as_outputs_lines_are_scored_as_the_calls_they_hold(
    tmp_path: Path,
) -> None:
    """The reproducer: each response object saved with the case id, one line each, was read
    as a line without calls (1 of 5 passing, "missed calls 4", exit 0, no warning)."""
    outputs = [line_of(name, id=f"case-{n}") for n, name in enumerate(ONE_PER_PROVIDER[:4])]
    outputs.append({"id": "case-4", "response": line_of(ONE_PER_PROVIDER[4])})
    cases: list[dict[str, Any]] = [{"id": f"case-{n}", "plans": [REFUNDS]} for n in range(4)]
    cases.append({"id": "case-4", "plans": [REFUNDS]})
    report = tmp_path / "report.json"
    result = run(*write_run(tmp_path, outputs, cases), "--json", str(report))
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert (data["summary"]["passed"], data["summary"]["missed_calls"]) == (5, 0)
    assert data["summary"]["ignored_keys"] == {}
    assert [c["format"] for c in data["cases"]] == [
        "openai-chat", "openai-responses", "anthropic", "gemini", "langchain",
    ]  # fmt: skip
    assert data["cases"][0]["notes"] == ["format detected: openai-chat (ChatCompletion)"]


@pytest.mark.parametrize("name", FILES)
def test_a_response_reads_like_its_calls_twin(name: str) -> None:
    data = fixture(name)
    made = read(data["line"])
    twin = parse_output({"id": "twin", "calls": data["calls"]})
    assert [(c.name, c.args, c.call_id, c.result) for c in made.calls] == [
        (c.name, c.args, c.call_id, c.result) for c in twin.calls
    ]
    assert [c.turn for c in made.calls] == [spec["turn"] for spec in data["calls"]]
    assert made.case_id == data["line"]["id"]
    assert (made.format, made.final_turn, made.response) == (
        data["format"], data["final_turn"], data["response"]
    )  # fmt: skip
    assert list(made.notes) == data["notes"]
    assert (made.unread, made.ignored, made.line) == ((), (), 3)
    verdict = check(SPECS, [REFUNDS], data["line"], case_id=made.case_id)
    assert verdict.passed is (name != "gemini_automatic_function_calling.json")  # + a lookup


def test_every_format_a_response_can_be_written_in_has_a_fixture() -> None:
    # an MCP log is a transcript only: no provider answers with one as a response object
    assert {fixture(name)["format"] for name in FILES} == set(FORMATS) - {"otel", "inspect", "mcp"}


@pytest.mark.parametrize("name", FILES)
def test_an_explicit_format_reads_the_same_without_the_detection_note(name: str) -> None:
    data = fixture(name)
    made = read({**data["line"], "format": data["format"]})
    assert made.calls == read(data["line"]).calls
    assert list(made.notes) == data["notes"][1:]
    wrong = next(f for f in FORMATS if f != data["format"])
    error = refused({**data["line"], "format": wrong})
    assert error.field == "format"
    assert f"is {data['format']}, but its format is {wrong!r}" in error.message


def test_the_response_objects_own_id_is_replaced_by_the_case_id_and_never_counted() -> None:
    line = line_of("openai_chat_dump.json", id="refund-7")
    assert read(line).case_id == "refund-7"
    beside = line_of("openai_chat_dump_beside.json")
    assert beside["response"]["id"] == "chatcmpl-01"
    assert read(beside).case_id == "response-openai_chat"


def test_the_objects_fields_are_part_of_it_and_other_keys_are_counted() -> None:
    merged = read(line_of("anthropic_dump.json", latency_ms=812, run="nightly"))
    assert merged.ignored == ("latency_ms", "run")
    beside = read(line_of("anthropic_dump_beside.json", model="claude", usage={}))
    assert beside.ignored == ("model", "usage")  # beside the object: the line's own keys


def test_a_text_response_on_the_line_wins_over_the_replys_text() -> None:
    made = read(line_of("openai_chat_dump.json", response="from the harness"))
    assert made.response == "from the harness"
    assert len(made.calls) == 2


# Several choices or candidates


@pytest.mark.parametrize("name", ["openai_chat_two_choices.json", "gemini_two_candidates.json"])
def test_several_choices_need_the_line_or_the_run_to_say_which(name: str) -> None:
    line = line_of(name)
    del line["choice"]
    error = refused(line)
    noun = "choice" if "chat" in name else "candidate"
    assert error.field == f"{noun}s"
    assert f"a response with 2 {noun}s: say which to score" in error.message
    assert "score --choice N" in error.message
    first = read(line, choice=0)
    assert [c.name for c in first.calls] == ["get_order"]
    assert f"{first.format}: {noun} 0 of 2 read" in first.notes
    assert [c.name for c in read(line, choice=1).calls] == ["refund", "refund"]
    assert [c.name for c in read({**line, "choice": 0}, choice=1).calls] == ["get_order"]
    assert "choice 2, but the response has 2" in refused(line, choice=2).message
    assert refused({**line, "choice": -1}).field == "choice"
    assert refused({**line, "choice": "1"}).field == "choice"
    assert refused({**line, "choice": True}).field == "choice"


def test_one_choice_is_read_whatever_the_run_asks_only_if_it_exists() -> None:
    line = line_of("openai_chat_dump.json")
    assert read(line, choice=0).calls == read(line).calls
    assert "choice 1, but the response has 1 choice " in refused(line, choice=1).message


def test_score_choice_picks_a_choice_for_the_lines_that_do_not_say(tmp_path: Path) -> None:
    line = line_of("openai_chat_two_choices.json", id="two")
    del line["choice"]
    args = write_run(tmp_path, [line])
    failed = run(*args)
    assert failed.exit_code == 2
    assert failed.output.strip().endswith("(counted from 0)")
    assert "outputs.jsonl:1: choices: a response with 2 choices" in failed.output
    report = tmp_path / "report.json"
    for workers in ("1", "2"):
        result = run(*args, "--choice", "1", "--json", str(report), "--workers", workers)
        assert result.exit_code == 0, result.output
        assert json.loads(report.read_text())["summary"]["passed"] == 1
    assert run(*args, "--choice", "0").exit_code == 0  # scored: the lookup fails the case
    assert run(*args, "--choice", "-1").exit_code == 2


def test_choice_on_a_line_without_a_response_object_is_an_input_error() -> None:
    for line in ({"id": "a", "calls": [], "choice": 0}, {"id": "a", "choice": 1}):
        assert refused(line).field == "choice"


def test_gemini_without_candidates_or_content_is_no_call_noted() -> None:
    blocked = {"id": "a", "candidates": None, "promptFeedback": {"blockReason": "SAFETY"}}
    made = read(blocked)
    assert made.calls == ()
    assert "gemini: the response has no candidates (no call read)" in made.notes
    empty = read({"id": "a", "candidates": [{"finishReason": "SAFETY"}]})
    assert empty.calls == ()
    assert "gemini: candidates[0] has no content (finish reason SAFETY)" in empty.notes


# Streams


def test_a_chat_stream_cut_before_its_finish_cannot_pass() -> None:
    events = stream_of("stream_openai_chat_chunks.json")
    cut = events[:-3]  # the last fragments, the finish and the usage
    made = read({"id": "s", "stream": cut})
    assert made.unread == (
        "stream: choice 0 has no finish_reason: the stream stops before its end",
    )
    assert made.calls[1].args is None  # the truncated arguments do not parse
    result = check(SPECS, [REFUNDS], {"stream": cut})
    assert not result.passed
    assert "transcript_unread" in [m.code for m in result.mismatches]


def test_an_anthropic_stream_cut_before_message_stop_cannot_pass() -> None:
    events = stream_of("stream_anthropic_events.json")
    assert unread(events[:-1]) == (
        "stream: no message_stop event: the stream stops before its end",
    )
    assert unread(events[1:])[-1] == "stream: no message_start event: no message to read"


def test_a_responses_stream_without_its_final_response_cannot_pass() -> None:
    events = stream_of("stream_openai_responses_events.json")
    made = read({"id": "s", "stream": events[:-1]})
    assert made.unread == ("stream: no response.completed event: the stream stops before its end",)
    assert [c.args for c in made.calls] == [call["args"] for call in REFUNDS[:1]] + [
        {"order_id": "order-31", "amount": 5, "unit": "EUR"}
    ]


def test_a_responses_stream_reads_its_items_when_the_final_response_omits_them() -> None:
    events = stream_of("stream_openai_responses_events_no_output.json")
    assert "output" not in events[-1]["response"]
    unfinished = [
        e
        for e in events
        if not (e["type"] == "response.output_item.done" and e["output_index"] == 3)
    ]
    assert unread(unfinished) == ("stream: output item 3 was added but never done",)


@pytest.mark.parametrize(
    ("name", "index", "change", "where"),
    [
        (
            "stream_openai_chat_chunks.json",
            4,
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 7}}]},
                    }
                ]
            },
            "stream[4].choices[0].delta.tool_calls[0].function.arguments: must be a string, "
            "got number",
        ),
        (
            "stream_openai_chat_chunks.json",
            4,
            {"object": "chat.completion"},
            "stream[4].object: not a ChatCompletionChunk",
        ),
        (
            "stream_openai_chat_chunks.json",
            4,
            {"choices": [{"delta": {}}]},
            "stream[4].choices[0].index: must be an index, got null",
        ),
        (
            "stream_anthropic_events.json",
            6,
            {
                "type": "content_block_delta",
                "index": 9,
                "delta": {"type": "text_delta", "text": "x"},
            },
            "stream[6].index: no content_block_start for this block",
        ),
        (
            "stream_anthropic_events.json",
            6,
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": "{"},
            },
            "stream[6].delta.type: an input_json_delta for a 'thinking' block",
        ),
        (
            "stream_anthropic_events.json",
            6,
            {"type": "content_block_delta", "index": 1, "delta": {"type": "sound_delta"}},
            "stream[6].delta.type: unknown anthropic type 'sound_delta'",
        ),
        (
            "stream_anthropic_events.json",
            6,
            {"type": "error", "error": {"type": "overloaded_error"}},
            'stream[6]: the stream reports an error: {"type":"overloaded_error"}',
        ),
        (
            "stream_openai_responses_events.json",
            3,
            {"type": "response.function_call_arguments.delta", "output_index": 9, "delta": "x"},
            "stream[3].output_index: no function_call item added at this index",
        ),
        (
            "stream_openai_responses_events.json",
            3,
            {"type": "message_start"},
            "stream[3].type: not an OpenAI Responses event: 'message_start'",
        ),
    ],
)
def test_an_event_the_stream_does_not_write_is_unread(
    name: str, index: int, change: dict[str, Any], where: str
) -> None:
    events = stream_of(name)
    events[index] = {**events[index], **change}
    assert where in unread(events)


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        ([], "no chunk or event names a stream toolscore reads"),
        (
            [{"role": "assistant", "tool_calls": []}],
            "(stream holds openai-chat messages: put them under messages)",
        ),
        ([{"candidates": []}], "no chunk or event names a stream toolscore reads"),
        ([{"type": "AIMessageChunk", "content": ""}], "reads (OpenAI ChatCompletionChunk dumps"),
        (
            {"object": "chat.completion.chunk"},
            "must be a list of a stream's chunks or events, got object",
        ),
    ],
)
def test_a_stream_toolscore_does_not_read_is_an_input_error(stream: Any, message: str) -> None:
    error = refused({"id": "s", "stream": stream})
    assert error.field == "stream"
    assert message in error.message


def test_a_chat_stream_of_several_choices_needs_a_choice_too() -> None:
    events = stream_of("stream_openai_chat_chunks.json")
    second = copy.deepcopy(events[:-1])
    for chunk in second:
        chunk["choices"][0]["index"] = 1
        for call in chunk["choices"][0]["delta"].get("tool_calls") or ():
            call["function"]["arguments"] = (call["function"]["arguments"] or "").upper()
    both = [chunk for pair in zip(events, second, strict=False) for chunk in pair] + events[-1:]
    assert "a response with 2 choices" in refused({"id": "s", "stream": both}).message
    first = read({"id": "s", "stream": both, "choice": 0})
    assert first.calls == read({"id": "s", "stream": events}).calls
    assert "openai-chat: choice 0 of 2 read" in first.notes
    other = read({"id": "s", "stream": both}, choice=1)
    assert [c.raw_args for c in other.calls] == [c.raw_args.upper() for c in first.calls]  # type: ignore[union-attr]


def test_a_response_line_keeps_its_trial() -> None:
    assert read(line_of("anthropic_dump.json", trial=3)).trial == 3
    assert read(line_of("stream_anthropic_events.json", trial="b")).trial == "b"
    assert refused(line_of("gemini_snake.json", trial=1.5)).field == "trial"


def test_a_stream_names_its_kind_in_the_notes_and_its_format_is_checked() -> None:
    line = line_of("stream_anthropic_events.json")
    assert read(line).notes == ("format detected: anthropic (Messages stream events)",)
    assert refused({**line, "format": "openai-chat"}).field == "format"


# Python callers


def test_check_and_the_evaluators_take_a_response_object_or_a_stream() -> None:
    dump = copy.deepcopy(fixture("openai_chat_dump_beside.json")["line"]["response"])
    assert check(SPECS, [REFUNDS], dump).passed  # its own id is the provider's
    events = stream_of("stream_anthropic_events.json")
    assert check(SPECS, [REFUNDS], events).passed
    assert check(SPECS, [REFUNDS], produced_of(dump)).passed
    assert check(SPECS, [REFUNDS], produced_of({"response": dump, "latency": 1})).passed
    assert check(SPECS, [REFUNDS], produced_of({"output": {"stream": events}})).passed


def test_read_outputs_passes_the_runs_choice_on(tmp_path: Path) -> None:
    line = line_of("gemini_two_candidates.json")
    del line["choice"]
    path = tmp_path / "outputs.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(OutputError):
        list(read_outputs(path))
    assert [c.name for c in next(read_outputs(path, 1)).calls] == ["refund", "refund"]


def test_the_common_call_is_built_whole() -> None:
    """`produced_call` builds the common call without the named tuple's defaults: it must
    still be the `Call` those defaults make."""
    from toolscore.core.model import Call  # noqa: PLC0415
    from toolscore.inputs.calls import produced_call  # noqa: PLC0415

    made = produced_call({"name": "f", "args": {"x": 1}, "id": "c", "result": 2})
    assert made == Call("f", {"x": 1}, call_id="c", result=2)
    assert type(made) is Call
    assert len(made) == len(Call._fields)
