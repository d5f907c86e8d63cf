"""The `responses/*.json` fixtures are what the installed SDKs write today, and every stream
reads as the SDK's own accumulator puts it together.

tests/formats/make_response_fixtures.py builds one agent turn as each provider's response
object and stream; this test runs it again and compares with the committed files, so that a
new SDK version that writes another shape is noticed (then run the script, and check that
the readers still read the new files: tests/inputs/test_responses.py). It also pins the fields the
readers take as part of each response object to the SDK's own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import Message
from google.genai.types import GenerateContentResponse
from langchain_core.messages import AIMessage, AIMessageChunk
from openai.types.chat import ChatCompletion
from openai.types.responses import Response
from pydantic import BaseModel

from fixture_scripts import load_script
from toolscore.inputs.formats import responses
from toolscore.inputs.outputs import parse_output

RESPONSES_DIR = Path(__file__).parents[1] / "formats" / "responses"

GENERATOR = load_script(Path(__file__).parents[1] / "formats" / "make_response_fixtures.py")
BUILT = GENERATOR.build()


def test_every_committed_response_fixture_is_generated() -> None:
    committed = {path.name for path in RESPONSES_DIR.glob("*.json")}
    assert committed == set(BUILT)


def test_every_provider_shape_spelling_and_stream_is_covered() -> None:
    notes = {data["notes"][0] for data in BUILT.values()}
    shapes = {shape.name for shape in responses.SHAPES}
    assert {f"format detected: {s.format} ({s.name})" for s in responses.SHAPES} <= notes
    assert len(shapes) == 5
    streams = {note for note in notes if "stream" in note}
    assert len(streams) == 3
    gemini = [str(data["line"]) for data in BUILT.values() if data["format"] == "gemini"]
    assert any("'function_call'" in t and "None" in t for t in gemini)  # snake_case, nulls
    assert any("'function_call'" in t and "None" not in t for t in gemini)  # exclude_none
    assert any("'functionCall'" in t and "None" in t for t in gemini)  # camelCase, nulls
    assert any("'functionCall'" in t and "None" not in t for t in gemini)  # REST camelCase
    lines = [data["line"] for data in BUILT.values()]
    assert any("response" in line and isinstance(line["response"], dict) for line in lines)
    assert any("choices" in line for line in lines)  # the object as the line


@pytest.mark.parametrize("name", sorted(BUILT))
def test_response_fixture_matches_what_the_sdk_writes(name: str) -> None:
    committed = (RESPONSES_DIR / name).read_text(encoding="utf-8")
    assert GENERATOR.text(BUILT[name]) == committed, (
        f"{name}: the installed SDK writes another shape; run "
        "tests/formats/make_response_fixtures.py"
    )


def _calls(line: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(c.name, c.args, c.call_id) for c in parse_output(line).calls]


@pytest.mark.parametrize("name", sorted(GENERATOR.accumulated()))
def test_a_stream_reads_as_the_sdk_accumulates_it(name: str) -> None:
    """openai's ChatCompletionStreamState and ResponseStreamState, anthropic's
    accumulate_event: the response each builds from the stream reads as the stream does."""
    built = GENERATOR.accumulated()[name]
    stream = BUILT[name]["line"]
    assert _calls(built) == _calls(stream)
    assert parse_output(built).response == parse_output(stream).response
    assert parse_output(built).ignored == ()  # the accumulated object's fields are all known


@pytest.mark.parametrize(
    ("shape", "models"),
    [
        (responses.CHAT_COMPLETION, [ChatCompletion]),
        (responses.RESPONSE, [Response]),
        (responses.MESSAGE, [Message]),
        (responses.GENERATE_CONTENT_RESPONSE, [GenerateContentResponse]),
        (responses.AI_MESSAGE, [AIMessage, AIMessageChunk]),
    ],
)
def test_a_response_objects_own_fields_are_the_sdks(
    shape: responses.Shape, models: list[type[BaseModel]]
) -> None:
    """The top-level fields counted as part of the object (not as keys no reader uses) are
    the SDK model's, in each spelling it dumps (LangChain's `messages_to_dict` adds `data`)."""
    fields = set()
    for model in models:
        for name, info in model.model_fields.items():
            fields |= {name, info.alias or name}
    if shape is responses.AI_MESSAGE:
        fields.add("data")
    assert fields == shape.fields


def test_the_fixtures_are_json_as_committed() -> None:
    for path in RESPONSES_DIR.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["generated_by"] == "tests/formats/make_response_fixtures.py"
