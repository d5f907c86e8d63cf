"""The `inspect` transcript format (Inspect AI ChatMessages on an outputs line): what it reads,
what it skips, what it cannot read, and how it is told from OpenAI Chat Completions."""

from __future__ import annotations

from typing import Any

from toolscore.inputs.formats import read_transcript

USER = {"role": "user", "content": "Where is order-12?"}


def line(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "c1", "messages": [USER, *messages], **extra}


def assistant(*calls: dict[str, Any], content: Any = "") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


LOOKUP = {"id": "t1", "function": "get_order", "arguments": {"order_id": "order-12"}}


def test_a_string_function_gives_the_format_away() -> None:
    read = read_transcript(line(assistant(LOOKUP)))
    assert read.format == "inspect"
    assert read.notes[0] == "format detected: inspect"
    assert [(c.name, c.args, c.call_id) for c in read.calls] == [
        ("get_order", {"order_id": "order-12"}, "t1")
    ]


def test_a_user_message_with_a_tool_call_id_gives_the_format_away() -> None:
    first = {"role": "user", "content": "hi", "tool_call_id": None}
    read = read_transcript({"id": "c1", "messages": [first]})
    assert read.format == "inspect"


def test_openai_chat_tool_calls_are_still_openai_chat() -> None:
    call = {"id": "t1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}}
    read = read_transcript(line({"role": "assistant", "content": None, "tool_calls": [call]}))
    assert read.format == "openai-chat"


def test_a_parse_error_makes_the_arguments_unparseable() -> None:
    broken = {**LOOKUP, "arguments": {}, "parse_error": "Error parsing: {order_id: "}
    (call,) = read_transcript(line(assistant(broken))).calls
    assert call.args is None
    assert call.raw_args == "Error parsing: {order_id: "


def test_a_tool_error_is_kept_as_an_error_result() -> None:
    error = {"type": "timeout", "message": "took too long"}
    tool = {"role": "tool", "tool_call_id": "t1", "function": "get_order", "content": ""}
    (call,) = read_transcript(line(assistant(LOOKUP), {**tool, "error": error})).calls
    assert call.result == "timeout: took too long"
    assert call.result_error
    (kept,) = read_transcript(line(assistant(LOOKUP), {**tool, "content": "late"})).calls
    assert (kept.result, kept.result_error) == ("late", False)


def test_a_tool_output_carried_by_a_user_message_is_no_new_turn() -> None:
    carrier = {"role": "user", "content": [{"type": "image", "image": "x"}], "tool_call_id": ["t1"]}
    read = read_transcript(line(assistant(LOOKUP), carrier, {"role": "assistant", "content": "ok"}))
    assert read.final_turn == 1
    assert read.response == "ok"
    assert read.calls[0].turn == 1


def test_custom_tool_calls_are_skipped_with_a_note() -> None:
    custom = {"id": "t2", "function": "apply_patch", "arguments": {}, "type": "custom"}
    read = read_transcript(line(assistant(LOOKUP, custom), format="inspect"))
    assert [c.name for c in read.calls] == ["get_order"]
    assert read.notes == ("inspect: skipped tool calls of type 'custom' (1)",)


def test_what_inspect_never_writes_is_unread_and_the_rest_is_read() -> None:
    nameless = {"id": "t2", "arguments": {}}
    odd = {"role": "assistant", "content": [{"type": "hologram"}, {"type": "text", "text": "hi"}]}
    read = read_transcript(line(assistant(LOOKUP, nameless), odd, format="inspect"))
    assert [c.name for c in read.calls] == ["get_order"]
    assert read.unread == (
        "messages[1].tool_calls[1].function: must be a string, got null",
        "messages[2].content[0].type: unknown inspect type 'hologram'",
    )
    assert read.response == "hi"


def test_inspect_content_gives_the_format_away_and_reads() -> None:
    image = {"type": "image", "image": "data:image/png;base64,iVBORw0KGgo="}
    question = {"role": "user", "content": [{"type": "text", "text": "What is this?"}, image]}
    read = read_transcript({"id": "c1", "messages": [question]})
    assert read.format == "inspect"
    assert read.unread == ()
    anthropic = {"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo="}}
    other = {"role": "user", "content": [anthropic]}
    assert read_transcript({"id": "c1", "messages": [other]}).format != "inspect"
