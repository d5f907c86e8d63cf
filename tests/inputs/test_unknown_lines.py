"""Outputs lines that say nothing a reader understands, and keys no reader uses.

A line without calls, a transcript, a response object or a stream, holding keys no reader
uses, is an input error naming its keys, with a hint of what it resembles; so is a `calls`
entry that is a provider's own object. Keys beside what the agent did are allowed, counted
by line in the summary's `ignored_keys` and shown once by the terminal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from response_lines import REFUNDS, SPEC, line_of, read, refused, run, stream_of, write_run
from toolscore.errors import OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.stream import score
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import parse_specs
from toolscore.store.restore import summary_from_json


def test_the_documented_error_is_the_one_given() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    documented = next(line for line in docs.splitlines() if line.startswith("outputs.jsonl:3: no"))
    line = line_of("openai_chat_dump.json")
    line = {key: line[key] for key in ("id", "choices", "created", "model", "usage")}
    with pytest.raises(OutputError) as failure:
        parse_output(line, "outputs.jsonl", 3)
    assert str(failure.value) == documented


def test_an_sdk_dump_no_reader_recognises_is_an_input_error_naming_its_keys() -> None:
    line = line_of("openai_chat_exclude_none.json")
    del line["object"]
    error = refused(line)
    assert error.field is None
    keys = "messages, items, contents, spans, resourceSpans, mcp"
    assert f"no calls, transcript ({keys})" in error.message
    assert "only keys no reader uses: 'choices', 'created', 'model'" in error.message
    assert (
        'it looks like an OpenAI ChatCompletion, but one has "object": "chat.completion"'
        in error.message
    )
    assert 'An output without any call says "calls": []' in error.message


@pytest.mark.parametrize(
    ("line", "field", "hint"),
    [
        (
            {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}]},
            None,
            "an assistant message's tool_calls",
        ),
        ({"role": "assistant", "content": "hi"}, None, "one message (role 'assistant')"),
        ({"type": "message_start", "message": {}}, None, "one Anthropic stream event"),
        (
            {"object": "chat.completion.chunk", "choices": []},
            None,
            "one chunk or event of a stream",
        ),
        (
            {"message": {}, "finish_reason": "stop", "index": 0},
            None,
            "one choice of a ChatCompletion",
        ),
        (
            {"object": "response", "output": {}, "created_at": 1},
            None,
            'an OpenAI Responses Response, but one has "object": "response"',
        ),
        (
            {"calls": {"object": "chat.completion", "choices": []}},
            "calls",
            "must be a list of calls: it holds a ChatCompletion (openai-chat)",
        ),
        (
            {"calls": [{"object": "chat.completion", "choices": []}]},
            "calls[0]",
            "this is not a call but a ChatCompletion (openai-chat)",
        ),
        (
            {"calls": [{"role": "user", "content": "hi"}]},
            "calls[0]",
            "this is not a call but one message (role 'user')",
        ),
        (
            {
                "calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ]
            },
            "calls[0]",
            "an OpenAI tool call",
        ),
        (
            {"calls": [{"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"}]},
            "calls[0]",
            "arguments under arguments, an OpenAI Responses item",
        ),
        (
            {"calls": [{"type": "tool_use", "name": "f", "input": {}, "id": "t"}]},
            "calls[0]",
            "arguments under input, an Anthropic tool_use block",
        ),
        ({"calls": [{"name": "f", "parameters": {}}]}, "calls[0]", "a calls entry names them args"),
        (
            {"calls": [{"functionCall": {"name": "f", "args": {}}}]},
            "calls[0]",
            "a Gemini part (functionCall)",
        ),
        (
            {"response": [{"type": "tool_use", "name": "f", "input": {}}]},
            "response",
            "an array that is no response object toolscore reads",
        ),
        (
            {"response": {"role": "assistant", "content": []}},
            "response",
            "it looks like one message",
        ),
    ],
)
def test_a_provider_object_where_calls_go_is_an_input_error_with_a_hint(
    line: dict[str, Any], field: str | None, hint: str
) -> None:
    error = refused({"id": "a", **line})
    assert error.field == field
    assert hint in error.message


def test_a_line_with_only_its_id_says_nothing_and_is_refused() -> None:
    """`{"id": "a"}` once read as no call: a harness that saved nothing would score as an agent
    that abstained. No call is said with `"calls": []` (or a text response alone)."""
    for line in ({"id": "a"}, {"id": "a", "trial": 2}):
        error = refused(line)
        assert error.field == "calls"
        assert "says nothing of what the agent did" in error.message
    assert read({"id": "a", "calls": []}).calls == ()


def test_what_was_read_before_is_read_the_same() -> None:
    assert read({"id": "a", "response": "Sorry, I cannot."}).response == "Sorry, I cannot."
    assert read({"id": "a", "calls": None, "trial": 2}).trial == 2
    kept = read({"id": "a", "calls": [], "response": {"text": "structured"}})
    assert kept.response == '{"text":"structured"}'
    named = read({"id": "a", "calls": [{"name": "f"}, {"name": "g", "args": None}]})
    assert [c.args for c in named.calls] == [{}, {}]
    langchain = read(
        {"id": "a", "calls": [{"name": "f", "args": {}, "id": "c", "type": "tool_call"}]}
    )
    assert langchain.calls[0].call_id == "c"
    junk = read({"id": "a", "calls": [None, 3, {"args": {}}, {"name": 5}]})
    assert [c.name for c in junk.calls] == ["<null>", "<number>", "<null>", "<number>"]


def test_calls_and_a_response_object_on_one_line_is_an_input_error() -> None:
    error = refused(line_of("openai_chat_dump.json", calls=[]))
    assert "this one has both calls and the ChatCompletion fields" in error.message
    error = refused({"id": "a", "messages": [], "response": line_of("anthropic_dump.json")})
    assert "both messages and response" in error.message
    assert refused({"id": "a", "calls": [], "stream": []}).field == "stream"


# Keys no reader uses


def test_keys_beside_the_calls_are_counted_by_line_in_the_summary(tmp_path: Path) -> None:
    outputs: list[dict[str, Any]] = [
        {"id": "a", "calls": REFUNDS, "latency_ms": 12, "model": "m"},
        {"id": "b", "calls": REFUNDS, "latency_ms": 9},
        {"id": "c", "messages": [{"role": "user", "content": "hi"}], "usage": {}},
        line_of("anthropic_dump.json", id="d", latency_ms=3),
        {"id": "e", "calls": REFUNDS},
    ]
    args = write_run(tmp_path, outputs)
    expected = {"latency_ms": 3, "model": 1, "usage": 1}
    report = tmp_path / "report.json"
    for workers in ("1", "2"):
        result = run(*args, "--json", str(report), "--workers", workers)
        assert result.exit_code == 0, result.output
        summary = json.loads(report.read_text())["summary"]
        assert summary["ignored_keys"] == expected
    assert result.output.count("Outputs keys no reader uses") == 1
    assert "ignored (lines with each): latency_ms (3), model (1), usage (1)" in result.output
    assert summary_from_json(summary).ignored_keys == expected


def test_ignored_keys_merge_like_every_other_tally() -> None:
    lines = [{"id": f"c{n}", "calls": [], "k": n, f"only{n % 2}": 1} for n in range(6)]
    cases_specs = parse_specs(SPEC, "t")[0]
    assert cases_specs is not None
    cases = [parse_case({"id": f"c{n}", "plans": []}, cases_specs) for n in range(6)]
    whole = score(cases_specs, cases, [read(line) for line in lines]).summary()
    first, second = SummaryBuilder(cases_specs), SummaryBuilder(cases_specs)
    for builder, part in ((first, slice(0, 2)), (second, slice(2, 6))):
        run = score(cases_specs, cases[part], [read(line) for line in lines[part]])
        for _ in run:
            pass
        builder.merge(run._builder)
    first.merge(second)
    assert first.finish().to_dict()["ignored_keys"] == whole.to_dict()["ignored_keys"]
    assert whole.to_dict()["ignored_keys"] == {"k": 6, "only0": 3, "only1": 3}


def test_no_key_is_ignored_on_the_lines_every_reader_writes() -> None:
    for line in (
        {"id": "a", "calls": [], "response": "x", "trial": 1},
        {"id": "a", "messages": [], "format": "openai-chat", "response": "x", "trial": 0},
        {"id": "a", "stream": stream_of("stream_anthropic_events.json"), "choice": 0},
    ):
        assert read(line).ignored == ()


def test_a_line_with_values_json_does_not_allow_still_reads_its_response_object() -> None:
    line = line_of("anthropic_dump_beside.json")
    raw = orjson.dumps(line).replace(b'"input_tokens":100', b'"input_tokens":NaN')
    parsed = parse_line(raw, "out.jsonl", 3, OutputError, lenient=True)
    made = parse_output(parsed, "out.jsonl", 3)
    assert [c.name for c in made.calls] == ["refund", "refund"]
    assert made.notes[-1] == "/response/usage/input_tokens: NaN is not a JSON number"
