"""Write the `responses/*.json` fixtures: provider response objects and streams, from the SDKs.

One agent turn (a thought, "Issuing both refunds.", then two parallel refunds) is built with
the openai, anthropic, google-genai and langchain-core SDKs, offline, as the object one
request returns (a ChatCompletion, a Responses `Response`, an Anthropic `Message`, a Gemini
`GenerateContentResponse`, a LangChain `AIMessage`) and as the stream of chunks or events
that delivers it, built from the SDKs' own event types. Each is saved as its users save it:
dumped in every spelling the SDK writes, as the outputs line itself (`{**dump, "id": ...}`)
or under `response`. Each file holds the line, its plain `calls` twin and the expected
reading. `tests/inputs/test_response_fixtures.py` runs `build()` again and compares with the
committed files, and reads every stream beside what the SDK's own accumulator
(`accumulated()`: openai's `ChatCompletionStreamState` and `ResponseStreamState`,
anthropic's `accumulate_event`) makes of it. Run from the repository root:
`python tests/formats/make_response_fixtures.py`.
"""

from __future__ import annotations

import json
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from anthropic import types as anthropic_types
from anthropic.lib.streaming._messages import accumulate_event
from google.genai import types as genai
from langchain_core.messages import AIMessage, ToolCall, messages_to_dict
from openai import omit
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types import CompletionUsage, chat, responses
from openai.types.chat import chat_completion, chat_completion_chunk
from openai.types.chat.chat_completion_message_function_tool_call import Function
from openai.types.responses.response_reasoning_item import Summary
from pydantic import BaseModel

# The spellings SDK users save their objects in, and the fixture files' text, are the
# transcript fixtures' (the sibling script; this folder is on the path when either runs).
sys.path.insert(0, str(Path(__file__).parent))
from make_sdk_fixtures import GEMINI_SPELLINGS, SPELLINGS, text

HERE = Path(__file__).parent / "responses"
SCRIPT = "tests/formats/make_response_fixtures.py"

THINKING = "Two refunds, independent of each other: issue both at once."
ANSWER = "Issuing both refunds."
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("refund", {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}),
    ("refund", {"order_id": "order-31", "amount": 5, "unit": "EUR"}),
]
OTHER = [("get_order", {"order_id": "order-77"})]
"""The calls of the choice not scored, in the responses with several."""
IDS = ["call_01", "call_02"]


def _args(index: int) -> str:
    return json.dumps(CALLS[index][1])


def _twin(ids: Sequence[str | None]) -> list[dict[str, Any]]:
    """The plain `calls` the reply must read as (one turn: turn 0)."""
    calls = []
    for (name, args), call_id in zip(CALLS, ids, strict=True):
        call: dict[str, Any] = {"name": name, "args": args, "turn": 0}
        if call_id is not None:
            call["id"] = call_id
        calls.append(call)
    return calls


def _fixture(
    description: str,
    fmt: str,
    line: dict[str, Any],
    ids: Sequence[str | None],
    notes: list[str],
    response: str | None = ANSWER,
) -> dict[str, Any]:
    return {
        "description": description,
        "format": fmt,
        "generated_by": SCRIPT,
        "line": line,
        "calls": _twin(ids),
        "final_turn": 0,
        "response": response,
        "notes": notes,
    }


def _placed(dump: dict[str, Any], case_id: str, beside: bool) -> dict[str, Any]:
    """The outputs line: the dump with the case's id in its `id`, or the dump under
    `response` (its own id kept there)."""
    return {"id": case_id, "response": dump} if beside else {**dump, "id": case_id}


def chat_completion_object(choices: int = 1) -> chat.ChatCompletion:
    """The ChatCompletion: one choice, or (with n=2) a lookup first and the refunds second."""
    calls: list[chat.ChatCompletionMessageToolCallUnion] = [
        chat.ChatCompletionMessageFunctionToolCall(
            id=i, type="function", function=Function(name=name, arguments=json.dumps(args))
        )
        for i, (name, args) in zip(IDS, CALLS, strict=True)
    ]
    lookup = chat.ChatCompletionMessageFunctionToolCall(
        id="call_00",
        type="function",
        function=Function(name=OTHER[0][0], arguments=json.dumps(OTHER[0][1])),
    )
    messages = [chat.ChatCompletionMessage(role="assistant", content=ANSWER, tool_calls=calls)]
    if choices == 2:
        messages.insert(
            0, chat.ChatCompletionMessage(role="assistant", content=None, tool_calls=[lookup])
        )
    return chat.ChatCompletion(
        id="chatcmpl-01",
        object="chat.completion",
        created=1767225600,
        model="gpt-4.1",
        choices=[
            chat_completion.Choice(index=n, finish_reason="tool_calls", message=message)
            for n, message in enumerate(messages)
        ],
        usage=None,
    )


def responses_object() -> responses.Response:
    """The Responses API `Response`: a reasoning item, the text, the two function calls."""
    output: list[responses.ResponseOutputItem] = [
        responses.ResponseReasoningItem(
            id="rs_01", summary=[Summary(text=THINKING, type="summary_text")], type="reasoning"
        ),
        responses.ResponseOutputMessage(
            id="msg_01",
            content=[responses.ResponseOutputText(annotations=[], text=ANSWER, type="output_text")],
            role="assistant",
            status="completed",
            type="message",
        ),
        *[
            responses.ResponseFunctionToolCall(
                id=f"fc_0{n + 1}",
                call_id=i,
                name=name,
                arguments=json.dumps(args),
                type="function_call",
                status="completed",
            )
            for n, (i, (name, args)) in enumerate(zip(IDS, CALLS, strict=True))
        ],
    ]
    return responses.Response(
        id="resp_01",
        object="response",
        created_at=1767225600,
        model="gpt-4.1",
        output=output,
        parallel_tool_calls=True,
        tool_choice="auto",
        tools=[],
        status="completed",
    )


ANTHROPIC_IDS = ["toolu_01", "toolu_02"]


def message_object() -> anthropic_types.Message:
    """The Anthropic `Message`: thinking, text, two tool_use blocks."""
    return anthropic_types.Message(
        id="msg_01",
        type="message",
        role="assistant",
        model="claude-sonnet-4-5",
        content=[
            anthropic_types.ThinkingBlock(thinking=THINKING, signature="c2ln", type="thinking"),
            anthropic_types.TextBlock(text=ANSWER, type="text"),
            *[
                anthropic_types.ToolUseBlock(id=i, name=name, input=args, type="tool_use")
                for i, (name, args) in zip(ANTHROPIC_IDS, CALLS, strict=True)
            ],
        ],
        stop_reason="tool_use",
        stop_sequence=None,
        usage=anthropic_types.Usage(input_tokens=100, output_tokens=40),
    )


def _model_content(calls: list[tuple[str, dict[str, Any]]], text: bool) -> genai.Content:
    parts = [genai.Part(text=THINKING, thought=True), genai.Part(text=ANSWER)] if text else []
    parts += [genai.Part(function_call=genai.FunctionCall(name=n, args=a)) for n, a in calls]
    return genai.Content(role="model", parts=parts)


def gemini_object(candidates: int = 1, history: bool = False) -> genai.GenerateContentResponse:
    """The GenerateContentResponse: one candidate, or two (a lookup first); with `history`,
    the SDK's automatic function calling ran the lookup before the refunds."""
    made = [
        genai.Candidate(
            content=_model_content(CALLS, True), finish_reason=genai.FinishReason.STOP, index=0
        )
    ]
    if candidates == 2:
        lookup = genai.Candidate(
            content=_model_content(OTHER, False), finish_reason=genai.FinishReason.STOP, index=0
        )
        made = [lookup, made[0].model_copy(update={"index": 1})]
    afc = None
    if history:
        afc = [
            genai.Content(role="user", parts=[genai.Part(text="Refund order-77 and order-31.")]),
            _model_content(OTHER, False),
            genai.Content(
                role="user",
                parts=[
                    genai.Part.from_function_response(
                        name="get_order", response={"output": {"status": "delivered"}}
                    )
                ],
            ),
        ]
    return genai.GenerateContentResponse(
        candidates=made,
        model_version="gemini-2.5-flash",
        response_id="resp-01",
        usage_metadata=genai.GenerateContentResponseUsageMetadata(prompt_token_count=100),
        automatic_function_calling_history=afc,
    )


def ai_message() -> AIMessage:
    """The LangChain `AIMessage` a chat model returns."""
    calls = [
        ToolCall(name=name, args=args, id=i) for i, (name, args) in zip(IDS, CALLS, strict=True)
    ]
    return AIMessage(
        [{"type": "text", "text": ANSWER}],
        tool_calls=calls,
        id="run-01",
        response_metadata={"model_name": "gpt-4.1"},
    )


def chat_chunks() -> list[chat.ChatCompletionChunk]:
    """The ChatCompletion streamed: the role, the text in two pieces, each call's arguments
    in fragments (the two calls interleaved by index), the finish, the usage."""
    ChoiceDelta = chat_completion_chunk.ChoiceDelta  # noqa: N806 - the SDK's class
    ToolCallDelta = chat_completion_chunk.ChoiceDeltaToolCall  # noqa: N806
    FunctionDelta = chat_completion_chunk.ChoiceDeltaToolCallFunction  # noqa: N806

    def chunk(
        delta: Any = None, finish: Any = None, empty: bool = False
    ) -> chat.ChatCompletionChunk:
        choices = (
            []
            if empty
            else [
                chat_completion_chunk.Choice(
                    index=0, delta=delta or ChoiceDelta(), finish_reason=finish
                )
            ]
        )
        usage = (
            CompletionUsage(prompt_tokens=100, completion_tokens=40, total_tokens=140)
            if empty
            else None
        )
        return chat.ChatCompletionChunk(
            id="chatcmpl-01",
            object="chat.completion.chunk",
            created=1767225600,
            model="gpt-4.1",
            choices=choices,
            usage=usage,
        )

    def call(index: int, arguments: str, start: bool = False) -> chat.ChatCompletionChunk:
        # Only the fields the API sends are set, as the SDK parses a chunk: the first of a
        # call names it, the others carry fragments of its arguments.
        if start:
            function = FunctionDelta(name=CALLS[index][0], arguments=arguments)
            made = ToolCallDelta(index=index, id=IDS[index], type="function", function=function)
        else:
            made = ToolCallDelta(index=index, function=FunctionDelta(arguments=arguments))
        return chunk(ChoiceDelta(tool_calls=[made]))

    first, second = _args(0), _args(1)
    return [
        chunk(ChoiceDelta(role="assistant", content="")),
        chunk(ChoiceDelta(content="Issuing both ")),
        chunk(ChoiceDelta(content="refunds.")),
        call(0, "", start=True),
        call(0, first[:12]),
        call(1, "", start=True),
        call(1, second[:20]),
        call(0, first[12:]),
        call(1, second[20:]),
        chunk(finish="tool_calls"),
        chunk(empty=True),
    ]


Model = TypeVar("Model", bound=BaseModel)


def event(kind: type[Model], **fields: Any) -> Model:
    """An event (or block, or delta) of an SDK type, its `type` the one its class names."""
    literal = typing.get_args(kind.model_fields["type"].annotation)[0]
    return kind(type=literal, **fields)


def anthropic_events() -> list[anthropic_types.RawMessageStreamEvent]:
    """The Message streamed as the Messages API sends it: its blocks started, their text,
    thinking and input JSON in deltas, stopped, then the stop reason and the end."""
    t = anthropic_types
    start = message_object().model_copy(update={"content": [], "stop_reason": None})

    def block(index: int, begun: Any, *deltas: Any) -> list[t.RawMessageStreamEvent]:
        return [
            event(t.RawContentBlockStartEvent, index=index, content_block=begun),
            *[event(t.RawContentBlockDeltaEvent, index=index, delta=d) for d in deltas],
            event(t.RawContentBlockStopEvent, index=index),
        ]

    blocks = [
        *block(
            0,
            event(t.ThinkingBlock, thinking="", signature=""),
            event(t.ThinkingDelta, thinking=THINKING),
            event(t.SignatureDelta, signature="c2ln"),
        ),
        *block(
            1,
            event(t.TextBlock, text=""),
            event(t.TextDelta, text="Issuing both "),
            event(t.TextDelta, text="refunds."),
        ),
    ]
    for n, (i, (name, _)) in enumerate(zip(ANTHROPIC_IDS, CALLS, strict=True)):
        text = _args(n)
        pieces = [event(t.InputJSONDelta, partial_json=p) for p in ("", text[:9], text[9:])]
        blocks += block(n + 2, event(t.ToolUseBlock, id=i, name=name, input={}), *pieces)
    delta = t.raw_message_delta_event.Delta(stop_reason="tool_use", stop_sequence=None)
    return [
        event(t.RawMessageStartEvent, message=start),
        *blocks,
        event(t.RawMessageDeltaEvent, delta=delta, usage=t.MessageDeltaUsage(output_tokens=40)),
        event(t.RawMessageStopEvent),
    ]


def responses_events(with_output: bool = True) -> list[responses.ResponseStreamEvent]:
    """The Response streamed: created, each item added, the text and the arguments in
    deltas, each item done, completed (with the whole response, or, as the API may send
    it, without its output)."""
    r = responses
    final = responses_object()
    begun = final.model_copy(update={"output": [], "status": "in_progress"})
    events: list[Any] = []

    def add(kind: type[BaseModel], **fields: Any) -> None:
        events.append(event(kind, sequence_number=len(events), **fields))

    add(r.ResponseCreatedEvent, response=begun)
    add(r.ResponseInProgressEvent, response=begun)
    reasoning, message, *calls = final.output
    add(r.ResponseOutputItemAddedEvent, output_index=0, item=reasoning)
    add(r.ResponseOutputItemDoneEvent, output_index=0, item=reasoning)
    empty = message.model_copy(update={"content": [], "status": "in_progress"})
    add(r.ResponseOutputItemAddedEvent, output_index=1, item=empty)
    part = event(r.ResponseOutputText, annotations=[], text="")
    where = {"item_id": "msg_01", "output_index": 1, "content_index": 0}
    add(r.ResponseContentPartAddedEvent, **where, part=part)
    for piece in ("Issuing both ", "refunds."):
        add(r.ResponseTextDeltaEvent, **where, delta=piece, logprobs=[])
    add(r.ResponseTextDoneEvent, **where, text=ANSWER, logprobs=[])
    add(r.ResponseContentPartDoneEvent, **where, part=part.model_copy(update={"text": ANSWER}))
    add(r.ResponseOutputItemDoneEvent, output_index=1, item=message)
    for index, call in enumerate(calls, start=2):
        assert isinstance(call, r.ResponseFunctionToolCall)
        begun_call = call.model_copy(update={"arguments": "", "status": "in_progress"})
        add(r.ResponseOutputItemAddedEvent, output_index=index, item=begun_call)
        at = {"item_id": call.id or "", "output_index": index}
        for piece in (call.arguments[:10], call.arguments[10:]):
            add(r.ResponseFunctionCallArgumentsDeltaEvent, **at, delta=piece)
        add(r.ResponseFunctionCallArgumentsDoneEvent, **at, arguments=call.arguments)
        add(r.ResponseOutputItemDoneEvent, output_index=index, item=call)
    completed = final
    if not with_output:
        completed = r.Response.model_construct(**{**dict(final), "output": None})
    add(r.ResponseCompletedEvent, response=completed)
    return events


def accumulated() -> dict[str, dict[str, Any]]:
    """What each SDK's own stream accumulator makes of the streams, as outputs lines (the
    response object it builds, dumped as the line), by the name of the stream's fixture."""
    chat_state = ChatCompletionStreamState()
    for chunk in chat_chunks():
        chat_state.handle_chunk(chunk)
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in anthropic_events():
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
    built: dict[str, Any] = {
        "stream_openai_chat_chunks.json": chat_state.get_final_completion(),
        "stream_anthropic_events.json": snapshot,
    }
    for name, with_output in (
        ("stream_openai_responses_events.json", True),
        ("stream_openai_responses_events_no_output.json", False),
    ):
        state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
        for streamed in responses_events(with_output):
            state.handle_event(streamed)
        built[name] = state._completed_response
    return {name: {**m.model_dump(mode="json"), "id": "stream"} for name, m in built.items()}


def build() -> dict[str, dict[str, Any]]:
    """Every response fixture by file name."""
    fixtures: dict[str, dict[str, Any]] = {}
    objects: list[tuple[str, str, str, Any, Sequence[str | None]]] = [
        ("openai_chat", "openai-chat", "ChatCompletion", chat_completion_object(), IDS),
        ("openai_responses", "openai-responses", "Response", responses_object(), IDS),
        ("anthropic", "anthropic", "Message", message_object(), ANTHROPIC_IDS),
    ]
    for stem, fmt, shape, made, ids in objects:
        for key, (how, dump) in SPELLINGS.items():
            for beside in (False, True):
                where = "under response" if beside else "as the line"
                name = f"{stem}_{key}{'_beside' if beside else ''}.json"
                fixtures[name] = _fixture(
                    f"{shape} ({fmt} SDK) saved with {how}, {where}",
                    fmt,
                    _placed(dump(made), f"response-{stem}", beside),
                    ids,
                    [f"format detected: {fmt} ({shape})"],
                )
    no_ids: Sequence[str | None] = [None, None]
    gemini_notes = ["format detected: gemini (GenerateContentResponse)", "2 calls without ids"]
    for key, (how, dump) in GEMINI_SPELLINGS.items():
        for beside in (False, True):
            where = "under response" if beside else "as the line"
            fixtures[f"gemini_{key}{'_beside' if beside else ''}.json"] = _fixture(
                f"GenerateContentResponse (google-genai) saved with {how}, {where}",
                "gemini",
                _placed(dump(gemini_object()), "response-gemini", beside),
                no_ids,
                gemini_notes,
            )
    for key, dump_message in (
        ("dump", lambda m: m.model_dump(mode="json")),
        ("to_dict", lambda m: messages_to_dict([m])[0]),
    ):
        how = "model_dump(mode='json')" if key == "dump" else "messages_to_dict([message])[0]"
        fixtures[f"langchain_{key}.json"] = _fixture(
            f"AIMessage (langchain-core) saved with {how}, as the line",
            "langchain",
            _placed(dump_message(ai_message()), "response-langchain", False),
            IDS,
            ["format detected: langchain (AIMessage)"],
        )
    chat_two = _placed(
        SPELLINGS["exclude_none"][1](chat_completion_object(2)), "choice-chat", False
    )
    fixtures["openai_chat_two_choices.json"] = _fixture(
        "ChatCompletion with n=2 (openai SDK), the line's choice naming the second",
        "openai-chat",
        {**chat_two, "choice": 1},
        IDS,
        ["format detected: openai-chat (ChatCompletion)", "openai-chat: choice 1 of 2 read"],
    )
    gemini_two = GEMINI_SPELLINGS["camel_exclude_none"][1](gemini_object(2))
    fixtures["gemini_two_candidates.json"] = _fixture(
        "GenerateContentResponse with two candidates (google-genai), the line's choice "
        "naming the second",
        "gemini",
        {**_placed(gemini_two, "choice-gemini", False), "choice": 1},
        no_ids,
        [*gemini_notes[:1], "gemini: candidate 1 of 2 read", "2 calls without ids"],
    )
    afc = _fixture(
        "GenerateContentResponse after automatic function calling (google-genai): the lookup "
        "the SDK ran is in automatic_function_calling_history, the refunds in the candidate",
        "gemini",
        _placed(
            GEMINI_SPELLINGS["snake_exclude_none"][1](gemini_object(history=True)), "afc", False
        ),
        no_ids,
        [*gemini_notes[:1], "3 calls without ids", "gemini: results linked by position (1)"],
    )
    afc["calls"] = [
        {"name": OTHER[0][0], "args": OTHER[0][1], "turn": 1, "result": {"status": "delivered"}},
        *[{**call, "turn": 1} for call in afc["calls"]],
    ]
    afc["final_turn"] = 1
    fixtures["gemini_automatic_function_calling.json"] = afc
    streams: list[tuple[str, str, str, Sequence[Any], Sequence[str | None], str]] = [
        (
            "stream_openai_chat_chunks.json",
            "openai-chat",
            "ChatCompletionChunk stream",
            chat_chunks(),
            IDS,
            "model_dump(mode='json')",
        ),
        (
            "stream_anthropic_events.json",
            "anthropic",
            "Messages stream events",
            anthropic_events(),
            ANTHROPIC_IDS,
            "model_dump(mode='json')",
        ),
        (
            "stream_openai_responses_events.json",
            "openai-responses",
            "Responses stream events",
            responses_events(),
            IDS,
            "model_dump(mode='json', exclude_none=True)",
        ),
        (
            "stream_openai_responses_events_no_output.json",
            "openai-responses",
            "Responses stream events",
            responses_events(with_output=False),
            IDS,
            "model_dump(mode='json', exclude_none=True), response.completed without its output",
        ),
    ]
    for name, fmt, kind, events, ids, how in streams:
        dump = SPELLINGS["exclude_none" if "exclude_none" in how else "dump"][1]
        fixtures[name] = _fixture(
            f"{kind} ({fmt} SDK types), each event saved with {how}, under stream",
            fmt,
            {"id": "stream", "stream": [dump(event) for event in events]},
            ids,
            [f"format detected: {fmt} ({kind})"],
        )
    return fixtures


def main() -> None:
    """Write every fixture under tests/formats/responses/."""
    HERE.mkdir(exist_ok=True)
    for name, data in build().items():
        (HERE / name).write_text(text(data), encoding="utf-8")
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
