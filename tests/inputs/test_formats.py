"""Transcript readers: each provider format gives the same trajectory as its plain `calls` twin.

Every file under tests/formats/ holds a realistic outputs line in one provider format (`line`),
the same calls written by hand as a plain `calls` list (`calls`, each with its expected `turn`
and `result_error`), and the expected `final_turn`, `response` and reader `notes`. The
`sdk_*.json` files are written by the providers' SDKs (tests/formats/make_sdk_fixtures.py).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolscore.core.model import MISSING, Call, Trajectory
from toolscore.errors import OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.formats import FORMATS, has_transcript, read_transcript
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case
from toolscore.scoring.stream import score
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import parse_specs

FORMATS_DIR = Path(__file__).parents[1] / "formats"
FILES = sorted(path.name for path in FORMATS_DIR.glob("*.json"))


@cache
def fixture(name: str) -> dict[str, Any]:
    data = json.loads((FORMATS_DIR / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def twin(data: dict[str, Any]) -> Trajectory:
    return parse_output({"id": data["line"]["id"], "calls": data["calls"]})


def same_call(produced: Call, expected: Call, spec: dict[str, Any]) -> None:
    assert produced.name == expected.name
    assert produced.args == expected.args
    assert (produced.args_error is None) == (expected.args_error is None)
    assert produced.call_id == expected.call_id
    assert produced.result == expected.result
    assert produced.result_error is spec.get("result_error", False)
    assert produced.turn == spec["turn"]


def test_every_format_has_a_fixture() -> None:
    assert {fixture(name)["format"] for name in FILES} == set(FORMATS)


@pytest.mark.parametrize("name", FILES)
def test_transcript_reads_like_its_calls_twin(name: str) -> None:
    data = fixture(name)
    read = read_transcript(data["line"], name, 1)
    expected = twin(data)
    assert len(read.calls) == len(expected.calls)
    for produced, wanted, spec in zip(read.calls, expected.calls, data["calls"], strict=True):
        same_call(produced, wanted, spec)
    assert read.case_id == data["line"]["id"]
    assert read.format == data["format"]
    assert read.final_turn == data["final_turn"]
    assert read.response == data["response"]
    assert read.line == 1
    assert read.unread == ()


@pytest.mark.parametrize("name", FILES)
def test_format_is_detected_and_noted(name: str) -> None:
    data = fixture(name)
    read = read_transcript(data["line"])
    assert read.format == data["format"]
    assert read.notes == (f"format detected: {data['format']}", *data["notes"])


@pytest.mark.parametrize("name", FILES)
def test_explicit_format_reads_the_same_without_a_detection_note(name: str) -> None:
    data = fixture(name)
    read = read_transcript({**data["line"], "format": data["format"]})
    assert read.calls == read_transcript(data["line"]).calls
    assert read.notes == tuple(data["notes"])


@pytest.mark.parametrize(
    ("name", "wrong"),
    [(name, wrong) for name in FILES for wrong in FORMATS if wrong != fixture(name)["format"]],
)
def test_wrong_explicit_format_is_an_input_error(name: str, wrong: str) -> None:
    with pytest.raises(OutputError) as failure:
        read_transcript({**fixture(name)["line"], "format": wrong}, "out.jsonl", 4)
    assert failure.value.line == 4
    assert failure.value.field


def under_messages(line: dict[str, Any]) -> dict[str, Any]:
    """The same line with its Gemini contents or Responses items under `messages`."""
    key = next(key for key in ("contents", "items") if key in line)
    return {"messages" if k == key else k: v for k, v in line.items()}


MOVABLE = [name for name in FILES if {"contents", "items"} & set(fixture(name)["line"])]


@pytest.mark.parametrize("name", MOVABLE)
def test_transcripts_under_messages_are_detected_too(name: str) -> None:
    data = fixture(name)
    read = read_transcript(under_messages(data["line"]))
    assert read.format == data["format"]
    assert read.calls == read_transcript(data["line"]).calls


@pytest.mark.parametrize(
    ("name", "wrong"),
    [(name, wrong) for name in MOVABLE for wrong in FORMATS if wrong != fixture(name)["format"]],
)
def test_wrong_explicit_format_under_messages_is_an_input_error(name: str, wrong: str) -> None:
    line = {**under_messages(fixture(name)["line"]), "format": wrong}
    with pytest.raises(OutputError) as failure:
        read_transcript(line)
    assert failure.value.field is not None
    assert failure.value.field.startswith("messages")


def test_broken_arguments_are_scored_later_not_raised() -> None:
    read = read_transcript(fixture("anthropic.json")["line"])
    broken = read.calls[-1]
    assert broken.args is None
    assert broken.raw_args == '{"order_id": "order-31", "amount": 5, "unit": '
    assert broken.args_error is not None
    assert broken.args_error.startswith("not valid JSON")


def test_arguments_given_as_an_object_stay_an_object() -> None:
    read = read_transcript(fixture("openai_chat.json")["line"])
    assert read.calls[0].args == {"order_id": "order-12"}
    assert read.calls[0].raw_args is None


def test_a_response_on_the_line_wins_over_the_transcript() -> None:
    line = {**fixture("anthropic.json")["line"], "response": "from the harness"}
    assert read_transcript(line).response == "from the harness"


def test_has_transcript() -> None:
    assert not has_transcript({"id": "a", "calls": []})
    for key in ("messages", "items", "contents", "spans", "resourceSpans"):
        assert has_transcript({"id": "a", key: []})
    assert not has_transcript({"id": "a", "messages": None})


def test_results_are_linked_by_id_whatever_their_order() -> None:
    line = {
        "id": "a",
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "2", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "2", "content": "second"},
            {"role": "tool", "tool_call_id": "1", "content": "first"},
            {"role": "tool", "tool_call_id": "9", "content": "stray"},
        ],
    }
    read = read_transcript(line)
    assert [call.result for call in read.calls] == ["first", "second"]
    assert read.notes == (
        "format detected: openai-chat",
        "openai-chat: results matching no call (1)",
    )


def test_gemini_positions_prefer_the_same_tool_name() -> None:
    calls: list[Any] = [{"functionCall": {"name": name, "args": {}}} for name in ("a", "b")]
    answers = [
        {"functionResponse": {"name": name, "response": {"output": name}}} for name in ("b", "a")
    ]
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": calls},
        {"role": "function", "parts": answers},
    ]
    read = read_transcript({"id": "a", "contents": contents})
    assert [(call.name, call.result) for call in read.calls] == [("a", "a"), ("b", "b")]
    assert read.final_turn == 1


def test_gemini_ids_link_when_present() -> None:
    contents = [
        {"role": "model", "parts": [{"functionCall": {"id": "x", "name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "x", "name": "f", "response": {}}}]},
    ]
    read = read_transcript({"id": "a", "messages": contents})
    assert read.calls[0].result == {}
    assert read.notes == ("format detected: gemini",)
    assert read.final_turn == 0


def test_a_user_message_with_text_beside_tool_results_is_a_new_turn() -> None:
    messages = [
        {"role": "user", "content": "one"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "done"},
                {"type": "text", "text": "now the second thing"},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "u", "name": "g", "input": {}}],
        },
    ]
    read = read_transcript({"id": "a", "messages": messages})
    assert [(call.name, call.turn) for call in read.calls] == [("f", 1), ("g", 2)]
    assert read.final_turn == 2
    assert read.response is None


def test_junk_from_the_agent_never_raises() -> None:
    messages = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t", "input": {}},
                {"type": "tool_use", "id": "u", "name": "f", "input": [1, 2]},
                {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
            ],
        }
    ]
    read = read_transcript({"id": "a", "format": "anthropic", "messages": messages})
    assert [call.name for call in read.calls] == ["<null>", "f"]
    assert read.calls[1].args_error == "a array, not an object"
    assert read.notes == ("anthropic: skipped server_tool_use blocks (1)",)


def test_otel_without_start_times_keeps_file_order() -> None:
    spans = [
        {"name": "execute_tool b", "attributes": {"gen_ai.tool.call.id": "1"}},
        {"name": "execute_tool a", "attributes": {"gen_ai.tool.call.id": "2"}},
    ]
    read = read_transcript({"id": "a", "spans": {"resourceSpans": [{"scopeSpans": []}]}})
    assert read.calls == ()
    read = read_transcript({"id": "a", "spans": spans})
    assert [call.name for call in read.calls] == ["b", "a"]
    assert read.calls[0].result is MISSING
    assert read.notes == (
        "format detected: otel",
        "otel: spans without a start time kept in file order",
        "otel: tool spans without recorded arguments (2)",
    )


def _jsonl(name: str) -> list[dict[str, Any]]:
    text = (FORMATS_DIR / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


MALFORMED = _jsonl("malformed.jsonl")
"""Lines whose transcript is not one at all, each with the field the input error must name."""


@pytest.mark.parametrize("case", MALFORMED, ids=[case["description"] for case in MALFORMED])
def test_malformed_transcript_names_the_field(case: dict[str, Any]) -> None:
    with pytest.raises(OutputError) as failure:
        read_transcript({"id": "bad", **case["line"]}, "out.jsonl", 7)
    assert failure.value.field == case["field"]
    assert str(failure.value).startswith(f"out.jsonl:7: {case['field']}: ")
    assert "\n" not in str(failure.value)


UNREAD = _jsonl("unread.jsonl")
"""Transcripts holding one part their reader cannot understand, with where it is."""


@pytest.mark.parametrize("case", UNREAD, ids=[case["description"] for case in UNREAD])
def test_a_part_not_understood_is_unread_and_fails_the_case(case: dict[str, Any]) -> None:
    read = parse_output({"id": "bad", **case["line"]}, "out.jsonl", 7)
    assert len(read.unread) == 1, read.unread
    assert read.unread[0].startswith(f"{case['unread']}: ")
    assert "\n" not in read.unread[0]
    specs, problems = parse_specs({"tools": {"f": {"args": {}}}}, "spec")
    assert specs is not None, problems
    for plans in ([], [[{"name": "f", "args": {}}]]):
        case_ = parse_case({"id": "bad", "plans": plans}, specs)
        result = score_case(specs, case_, read)
        assert not result.passed
        # doing nothing is a verdict on the case alone, whatever was read
        assert result.baselines == {"exact": False, "lowercase": False, "nothing": not plans}
        assert [m.code for m in result.mismatches].count("transcript_unread") == 1
        assert result.unread == read.unread


def test_unknown_format_suggests_a_near_name() -> None:
    with pytest.raises(OutputError, match=r"did you mean 'anthropic'\?"):
        read_transcript({"id": "a", "format": "anthropc", "messages": []})


def test_a_line_needs_its_case_id() -> None:
    with pytest.raises(OutputError) as failure:
        read_transcript({"messages": []})
    assert failure.value.field == "id"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(name=JSON, args=JSON, call_id=JSON, result=JSON)
def test_any_call_content_reads_without_error(
    name: Any, args: Any, call_id: Any, result: Any
) -> None:
    lines = [
        {
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": call_id, "function": {"name": name, "arguments": args}}],
                },
                {"role": "tool", "tool_call_id": call_id, "content": result},
            ]
        },
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": call_id,
                            "content": result,
                            "is_error": args,
                        }
                    ],
                },
            ]
        },
        {
            "items": [
                {"type": "function_call", "call_id": call_id, "name": name, "arguments": args},
                {"type": "function_call_output", "call_id": call_id, "output": result},
            ]
        },
        {
            "contents": [
                {
                    "role": "model",
                    "parts": [{"functionCall": {"id": call_id, "name": name, "args": args}}],
                },
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"id": call_id, "name": name, "response": result}}
                    ],
                },
            ]
        },
        {
            "spans": [
                {
                    "name": "execute_tool",
                    "status": {"code": result},
                    "attributes": {
                        "gen_ai.tool.name": name,
                        "gen_ai.tool.call.id": call_id,
                        "gen_ai.tool.call.arguments": args,
                        "gen_ai.tool.call.result": result,
                    },
                }
            ]
        },
    ]
    for line in lines:
        read = read_transcript({"id": "a", **line})
        assert len(read.calls) == 1


def test_calls_beside_a_transcript_is_an_input_error_whichever_comes_first() -> None:
    with pytest.raises(OutputError) as failure:
        parse_output({"id": "a", "calls": [{"name": "f"}], "messages": []}, "out.jsonl", 2)
    assert str(failure.value).startswith("out.jsonl:2: calls: ")


def test_unread_parts_are_counted_on_the_case_in_the_report_and_in_the_summary() -> None:
    specs, problems = parse_specs({"tools": {"f": {"args": {}}}}, "spec")
    assert specs is not None, problems
    cases = [parse_case({"id": i, "plans": []}, specs) for i in ("a", "b", "c")]
    junk = [{"role": "assistant", "content": [{"type": ["tool_use"]}, {"type": 3}]}]
    outputs = [
        parse_output({"id": "a", "messages": junk}),
        parse_output({"id": "b", "messages": [{"role": "user", "content": "hi"}]}),
        parse_output({"id": "c", "messages": [*junk, {"role": "robot"}]}),
    ]
    run = score(specs, cases, outputs)
    results = list(run)
    assert [r.passed for r in results] == [False, True, False]
    assert case_to_json(results[0])["unread"] == [
        "messages[0].content[0].type: must be a string, got array",
        "messages[0].content[1].type: must be a string, got number",
    ]
    assert "unread" not in case_to_json(results[1])
    summary = run.summary().to_dict()
    assert (summary["unread_cases"], summary["unread_parts"]) == (2, 5)
    assert summary["codes"] == {"transcript_unread": 5}
    first, second = SummaryBuilder(specs), SummaryBuilder(specs)
    first.add(cases[0], results[0])
    second.add(cases[2], results[2])
    first.merge(second)
    assert (first.finish().unread_cases, first.finish().unread_parts) == (2, 5)
