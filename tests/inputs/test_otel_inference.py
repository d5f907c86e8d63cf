"""The otel reader on inference spans: calls in model outputs, results by id, turns, the rule
that scores each call once, OpenInference and OpenLLMetry spellings, and the trace link."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolscore.core.model import MISSING, Trajectory
from toolscore.inputs.cases import parse_case
from toolscore.inputs.formats import read_transcript
from toolscore.scoring.case import score_case
from toolscore.specs.loading import parse_specs

ORDER = {"order_id": "order-12"}


def _span(name: str, start: int, **attributes: Any) -> dict[str, Any]:
    return {
        "name": name,
        "traceId": "5b8efff798038103d269b633813f0001",
        "spanId": f"a00000000000{start:04x}",
        "parentSpanId": "a000000000000001",
        "startTimeUnixNano": str(1_764_450_000_000_000_000 + start),
        "attributes": {key.replace("__", "."): value for key, value in attributes.items()},
    }


def _chat(start: int, inputs: list[Any] | None, outputs: list[Any] | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"gen_ai__operation__name": "chat"}
    if inputs is not None:
        attributes["gen_ai__input__messages"] = json.dumps(inputs)
    if outputs is not None:
        attributes["gen_ai__output__messages"] = json.dumps(outputs)
    return _span("chat gpt-4.1", start, **attributes)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def _asks(*calls: tuple[str | None, str, dict[str, Any]]) -> dict[str, Any]:
    parts = [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return {"role": "assistant", "parts": parts}


def _answer(call_id: str, value: Any) -> dict[str, Any]:
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": call_id, "response": value}],
    }


def _tool(start: int, name: str, call_id: str | None, args: Any, result: Any) -> dict[str, Any]:
    attributes = {
        "gen_ai__operation__name": "execute_tool",
        "gen_ai__tool__name": name,
        "gen_ai__tool__call__arguments": json.dumps(args),
        "gen_ai__tool__call__result": result,
    }
    if call_id is not None:
        attributes["gen_ai__tool__call__id"] = call_id
    return _span(f"execute_tool {name}", start, **attributes)


def _read(*spans: dict[str, Any]) -> Trajectory:
    return read_transcript({"id": "a", "spans": list(spans)})


def test_calls_of_model_outputs_with_results_from_later_inputs() -> None:
    ask = _asks(("c1", "get_order", ORDER))
    read = _read(
        _chat(1, [_user("Where is order-12?")], [ask]),
        _chat(2, [_user("Where is order-12?"), ask, _answer("c1", {"status": "shipped"})],
              [{"role": "assistant", "parts": [{"type": "text", "content": "Shipped."}]}]),
    )  # fmt: skip
    assert [(c.name, dict(c.args or {}), c.call_id) for c in read.calls] == [
        ("get_order", ORDER, "c1")
    ]
    assert read.calls[0].result == {"status": "shipped"}
    assert read.response == "Shipped."
    assert read.final_turn == 1
    assert "otel: calls read from inference spans (1)" in read.notes


def test_a_tool_span_and_the_model_output_asking_for_it_are_one_call() -> None:
    read = _read(
        _chat(1, [_user("q")], [_asks(("c1", "get_order", ORDER), ("c2", "get_order", ORDER))]),
        _tool(2, "get_order", "c1", ORDER, "from the tool span"),
    )
    # c1 is the tool span's call (its result kept); c2 was asked for and never run: scored too.
    assert [(c.call_id, c.result) for c in read.calls] == [
        ("c1", "from the tool span"),
        ("c2", MISSING),
    ]


def test_model_calls_without_ids_are_left_to_tool_spans() -> None:
    read = _read(
        _chat(1, [_user("q")], [_asks((None, "get_order", ORDER))]),
        _tool(2, "get_order", "c1", ORDER, "r"),
    )
    assert [c.call_id for c in read.calls] == ["c1"]


def test_tool_spans_without_ids_win_over_every_model_call() -> None:
    read = _read(
        _chat(1, [_user("q")], [_asks(("c1", "get_order", ORDER))]),
        _tool(2, "get_order", None, ORDER, "r"),
    )
    assert len(read.calls) == 1
    assert read.calls[0].result == "r"
    assert "otel: inference-span calls left to the tool spans, which lack call ids (1)" in (
        read.notes
    )


def test_turns_come_from_the_user_messages_of_each_model_input() -> None:
    first = [_user("Where is order-12?")]
    ask = _asks(("c1", "get_order", ORDER))
    second = [*first, ask, _answer("c1", "shipped"), _user("And order-13?")]
    read = _read(
        _chat(1, first, [ask]),
        _tool(2, "get_order", "c1", ORDER, "shipped"),
        _chat(3, second, [_asks(("c2", "get_order", {"order_id": "order-13"}))]),
    )
    assert [(c.call_id, c.turn) for c in read.calls] == [("c1", 1), ("c2", 2)]
    assert read.final_turn == 2
    # Only the answer to the last user message is scored.
    specs, problems = parse_specs({"tools": {"get_order": {"args": {"order_id": "exact"}}}}, "s")
    assert specs is not None, problems
    plan = [[{"name": "get_order", "args": {"order_id": "order-13"}}]]
    case = parse_case({"id": "a", "plans": plan}, specs)
    assert score_case(specs, case, read).passed


def test_openllmetry_flattened_attributes_in_the_order_of_their_numbers() -> None:
    flat = {
        f"gen_ai__completion__0__tool_calls__{m}__{field}": value
        for m in (0, 2, 10)
        for field, value in (
            ("name", "get_order"),
            ("id", f"c{m}"),
            ("arguments", json.dumps(ORDER)),
        )
    }
    read = _read(
        _span("openai.chat", 1, llm__request__type="chat", gen_ai__prompt__0__role="user",
              gen_ai__prompt__0__content="q", **flat),
        _span("openai.chat", 2, llm__request__type="chat", gen_ai__prompt__0__role="user",
              gen_ai__prompt__1__role="tool", gen_ai__prompt__1__tool_call_id="c2",
              gen_ai__prompt__1__content="found", gen_ai__completion__0__content="Done."),
    )  # fmt: skip
    assert [c.call_id for c in read.calls] == ["c0", "c2", "c10"]
    assert [c.result for c in read.calls] == [MISSING, "found", MISSING]
    assert read.response == "Done."


def test_openinference_llm_and_tool_spans() -> None:
    prefix = "llm__output_messages__0__message__tool_calls__0__tool_call__"
    llm = _span("ChatOpenAI", 1, openinference__span__kind="LLM", **{
        prefix + "id": "c1",
        prefix + "function__name": "get_order",
        prefix + "function__arguments": json.dumps(ORDER),
    })  # fmt: skip
    tool = _span("get_order", 2, openinference__span__kind="TOOL", tool__name="get_order",
                 tool__parameters='{"order_id": "string"}', input__value=json.dumps(ORDER),
                 output__value="shipped")  # fmt: skip
    alone = _read(llm)
    assert [(c.name, dict(c.args or {}), c.call_id) for c in alone.calls] == [
        ("get_order", ORDER, "c1")
    ]
    both = _read(llm, tool)  # the TOOL span has no call id: it is the one call
    assert [(c.name, dict(c.args or {}), c.result) for c in both.calls] == [
        ("get_order", ORDER, "shipped")
    ]


def test_unreadable_model_messages_are_unread_and_the_case_cannot_pass() -> None:
    broken = _span("chat x", 1, gen_ai__operation__name="chat", gen_ai__output__messages="[{")
    read = _read(broken, _chat(2, None, [{"role": "assistant", "parts": "text"}]))
    assert len(read.unread) == 2
    assert read.unread[0].startswith("spans[0].attributes.gen_ai.output.messages: not valid JSON")
    assert (
        read.unread[1]
        == "spans[1].attributes.gen_ai.output.messages[0].parts: must be a list, got string"
    )


def test_chat_spans_without_messages_change_nothing() -> None:
    read = _read(_span("chat gpt-4.1", 1, gen_ai__operation__name="chat"),
                 _tool(2, "get_order", "c1", ORDER, "r"))  # fmt: skip
    assert [c.call_id for c in read.calls] == ["c1"]
    assert read.final_turn == 0
    assert not any("inference" in note for note in read.notes)


def test_the_trace_link_is_the_latest_root_span_in_hex() -> None:
    sdk_span = {
        "name": "invoke_agent",
        "context": {
            "trace_id": "0x5B8EFFF798038103D269B633813F0009",
            "span_id": "0x00000000000000a1",
        },
        "parent_id": None,
        "start_time": "2026-11-29T21:00:00.000000Z",
        "attributes": {},
    }
    earlier = {**sdk_span, "start_time": "2026-11-29T20:00:00.000000Z",
               "context": {"trace_id": "0x" + "1" * 32, "span_id": "0x" + "2" * 16}}  # fmt: skip
    read = _read(earlier, sdk_span, _tool(2, "get_order", "c1", ORDER, "r"))
    assert read.trace == ("5b8efff798038103d269b633813f0009", "00000000000000a1")
    assert _read(_tool(2, "get_order", "c1", ORDER, "r")).trace == (
        "5b8efff798038103d269b633813f0001",
        None,
    )
    assert read_transcript({"id": "a", "messages": []}).trace is None


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYS = st.sampled_from([
    "gen_ai.operation.name", "gen_ai.input.messages", "gen_ai.output.messages",
    "gen_ai.completion.0.tool_calls.0.name", "gen_ai.completion.0.tool_calls.0.arguments",
    "gen_ai.completion.0.tool_calls.0.id", "gen_ai.prompt.0.role", "gen_ai.prompt.0.tool_call_id",
    "openinference.span.kind", "llm.output_messages.0.message.tool_calls.0.tool_call.id",
    "llm.input_messages.0.message.role", "gen_ai.tool.call.id", "tool.name", "input.value",
])  # fmt: skip


@given(st.lists(st.dictionaries(KEYS, JUNK | st.sampled_from(["chat", "LLM", "TOOL", "user"]))))
def test_any_attribute_values_read_without_error(attributes: list[dict[str, Any]]) -> None:
    spans = [
        {"name": "chat x", "attributes": a, "startTimeUnixNano": i}
        for i, a in enumerate(attributes)
    ]
    read = _read(*spans)
    turns = [call.turn for call in read.calls]
    assert turns == sorted(turns)
    assert all(isinstance(call.name, str) for call in read.calls)
    assert read.final_turn >= max(turns, default=0)
