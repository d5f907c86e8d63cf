"""LangChain message shapes in outputs transcripts (`format: "langchain"`).

The fixtures tests/formats/langchain_core_*.json are written by langchain-core itself
(make_langchain_fixtures.py); tests/inputs/test_formats.py reads them, and the hand-written
tests/formats/langchain.json, against their plain `calls` twins. Here: the fixtures still
match what langchain-core writes, detection, unread parts and a scoring run end to end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fixture_scripts import load_script
from toolscore.cli.app import cli
from toolscore.errors import OutputError
from toolscore.inputs.formats import read_transcript
from toolscore.inputs.formats.detect import detect

FORMATS_DIR = Path(__file__).parents[1] / "formats"


GENERATOR = load_script(FORMATS_DIR / "make_langchain_fixtures.py")
BUILT = GENERATOR.build()


def test_every_committed_langchain_fixture_is_generated() -> None:
    assert {path.name for path in FORMATS_DIR.glob("langchain_core_*.json")} == set(BUILT)


@pytest.mark.parametrize("name", sorted(BUILT))
def test_langchain_fixture_matches_what_langchain_core_writes(name: str) -> None:
    committed = (FORMATS_DIR / name).read_text(encoding="utf-8")
    assert GENERATOR.text(BUILT[name]) == committed, (
        f"{name}: langchain-core writes another shape; run tests/formats/make_langchain_fixtures.py"
    )


def test_both_spellings_are_covered() -> None:
    first = [data["line"]["messages"][0] for data in BUILT.values()]
    assert any("data" in message for message in first)  # messages_to_dict
    assert any("content" in message and "data" not in message for message in first)  # model_dump


@pytest.mark.parametrize(
    "message",
    [
        {"type": "ai", "content": "hi"},
        {"type": "human", "content": "hi"},
        {"type": "tool", "content": "x", "tool_call_id": "c1"},
        {"type": "system", "data": {"content": "be brief"}},
        {"type": "AIMessageChunk", "content": "", "tool_calls": []},
    ],
)
def test_a_message_typed_by_langchain_without_a_role_is_langchain(message: Any) -> None:
    assert detect("messages", [message]) == "langchain"


def test_a_message_with_a_role_is_not_langchain_whatever_its_type() -> None:
    assert detect("messages", [{"role": "assistant", "type": "ai", "tool_calls": []}]) == (
        "openai-chat"
    )


def test_a_contradicted_explicit_format_is_an_input_error() -> None:
    line = {"id": "x", "format": "langchain", "messages": [{"role": "tool", "content": "r"}]}
    with pytest.raises(OutputError, match="written as openai-chat") as failure:
        read_transcript(line, "out.jsonl", 3)
    assert failure.value.field == "messages[0].role"
    line = {"id": "x", "format": "openai-chat", "messages": [{"type": "ai", "content": "r"}]}
    with pytest.raises(OutputError, match="written as langchain"):
        read_transcript(line, "out.jsonl", 3)


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        ([{"type": "ai", "content": ""}, {"type": "chat", "content": "hi"}], "messages[1].type"),
        ([{"type": "ai", "tool_calls": {"name": "f"}}], "messages[0].tool_calls"),
        ([{"type": "ai", "tool_calls": ["f"]}], "messages[0].tool_calls[0]"),
        (
            [{"type": "ai", "data": {"invalid_tool_calls": 3}}],
            "messages[0].data.invalid_tool_calls",
        ),
        ([{"type": "ai", "content": ""}, "hello"], "messages[1]"),
    ],
)
def test_a_part_not_understood_is_unread(messages: list[Any], where: str) -> None:
    read = read_transcript({"id": "x", "format": "langchain", "messages": messages})
    assert [item.split(": ")[0] for item in read.unread] == [where]


def test_a_langchain_transcript_is_scored_end_to_end(tmp_path: Path) -> None:
    specs = tmp_path / "tools.yaml"
    specs.write_text(
        "tools:\n  get_order: {args: {order_id: exact}}\n"
        "  refund: {args: {order_id: exact, amount: number, unit: exact}}\n"
    )
    plans = [[
        {"name": "refund", "args": {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}},
        {"name": "refund", "args": {"order_id": "order-31", "amount": 5, "unit": "EUR"}},
        {"name": "refund", "args": {"order_id": "order-31", "amount": 5, "unit": "EUR"}},
    ]]  # fmt: skip
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "langchain-1", "plans": plans}) + "\n")
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(json.dumps(BUILT["langchain_core_to_dict.json"]["line"]) + "\n")
    target = tmp_path / "r.json"
    done = CliRunner().invoke(
        cli, ["score", "--specs", str(specs), "--cases", str(cases), "--outputs", str(outputs),
              "--json", str(target)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    (entry,) = json.loads(target.read_text())["cases"]
    assert entry["format"] == "langchain"
    assert entry["notes"] == ["format detected: langchain"]
    assert [m["code"] for m in entry["mismatches"]] == ["arguments_unparseable"]
    assert [(e["call"], e["result"]) for e in entry["tool_errors"]] == [(1, GENERATOR.REFUSED)]


def test_the_readme_example_gives_the_verdicts_of_its_openai_twin(tmp_path: Path) -> None:
    examples = Path(__file__).parents[2] / "examples" / "transcripts"
    verdicts = []
    for name, written in (
        ("outputs-openai.jsonl", "openai-chat"),
        ("outputs-langchain.jsonl", "langchain"),
    ):
        target = tmp_path / f"{name}.json"
        done = CliRunner().invoke(
            cli, ["score", "--specs", str(examples / "tools.yaml"), "--cases",
                  str(examples / "cases.jsonl"), "--outputs", str(examples / name),
                  "--json", str(target)],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        cases = json.loads(target.read_text())["cases"]
        verdicts.append([(c["id"], c["passed"], c["mismatches"], c["baselines"]) for c in cases])
        assert {c.get("format") for c in cases} == {written}
    assert verdicts[0] == verdicts[1]
