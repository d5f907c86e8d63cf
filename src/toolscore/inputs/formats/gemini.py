"""Google Gemini `contents`: `functionCall` parts from the model, `functionResponse` parts back.

Both spellings are read: the REST API's camelCase (`functionCall`) and the snake_case of the
google-genai SDK's `Content.model_dump()` (`function_call`), with null fields present or not.
Gemini often gives no call ids; a response is then linked to the call of the same name at the
same position in the preceding model turn (and a note says so). Following the API reference, a
response object `{"output": ...}` is the function's output and `{"error": ...}` a failure;
any other object is the output as a whole. Parts of tools Gemini runs itself (code execution,
server-side tool calls) are skipped and noted; a part with a field Gemini does not write, or a
call whose arguments were only streamed (`partialArgs`), is unread (the case cannot pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.core.values import show
from toolscore.inputs.formats.transcript import Transcript, UnreadableError, field_of

ROLES = ("user", "model", "function")
CALL = ("functionCall", "function_call")
RESPONSE = ("functionResponse", "function_response")
SERVER = {
    "executableCode": "executable_code",
    "executable_code": "executable_code",
    "codeExecutionResult": "code_execution_result",
    "code_execution_result": "code_execution_result",
    "toolCall": "tool_call",
    "tool_call": "tool_call",
    "toolResponse": "tool_response",
    "tool_response": "tool_response",
}
"""Parts of tools Gemini runs itself, by spelling, with the name the note uses."""
QUIET = (
    "text",
    "thought",
    "thought_signature",
    "inline_data",
    "file_data",
    "video_metadata",
    "media_resolution",
    "part_metadata",
    "audio_transcription",
    "media_processing",
    "speech_metadata",
    "document_metadata",
    "spreadsheet_metadata",
    "audio_metadata",
)
"""Part fields that never hold a call or a result (snake_case; the camelCase is derived)."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


PART_FIELDS = frozenset({*CALL, *RESPONSE, *SERVER, *QUIET, *map(_camel, QUIET)})
"""Every field of a Gemini `Part`, in both spellings."""

Part = tuple[str, Mapping[str, Any]]
"""(field path, part)"""


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Gemini contents into `t`."""

    def read_one(content: Mapping[str, Any], where: str, role: str) -> None:
        parts = _parts(content.get("parts"), f"{where}.parts", t)
        if role == "model":
            _model(parts, t)
        else:
            _user(parts, t)
            answers = [_spelling(part, RESPONSE) is not None for _, part in parts]
            if role == "user" and not (answers and all(answers)):
                t.user_turn()

    t.messages(node, key, ROLES, read_one)


def reply(content: Any, where: str, t: Transcript) -> None:
    """Read one model content found at `where` (a response candidate's `content`)."""
    with t.part():
        t.role(content, where, ("model",))
        _model(_parts(content.get("parts"), f"{where}.parts", t), t)


def _spelling(part: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    """Which of a field's spellings the part holds (with a value other than null), if any."""
    return next((name for name in names if part.get(name) is not None), None)


def _parts(node: Any, where: str, t: Transcript) -> list[Part]:
    """The parts of a content that can be read (the others are counted as unread)."""
    parts = []
    for j, part in enumerate(t.list_of([] if node is None else node, where)):
        at = f"{where}[{j}]"
        with t.part():
            fields = t.mapping(part, at)
            for name, value in fields.items():
                if value is not None and name not in PART_FIELDS:
                    raise UnreadableError(at, f"a field Gemini does not write: {show(name)}")
            parts.append((at, fields))
    return parts


def _model(parts: list[Part], t: Transcript) -> None:
    texts = [
        part["text"]
        for _, part in parts
        if isinstance(part.get("text"), str) and not part.get("thought")
    ]
    t.assistant_message("\n".join(texts) or None)
    for where, part in parts:
        call, answer = _spelling(part, CALL), _spelling(part, RESPONSE)
        if call is not None:
            with t.part():
                _call(part[call], f"{where}.{call}", t)
        elif answer is not None:
            t.unread(f"{where}.{answer}", "a model turn cannot hold a function response")
        else:
            _server(part, t)


def _call(node: Any, where: str, t: Transcript) -> None:
    call = t.mapping(node, where)
    args = call.get("args")
    if args is None and field_of(call, "partialArgs", "partial_args") is not None:
        message = "streamed arguments only: save the whole call"
        raise UnreadableError(f"{where}.partialArgs", message)
    t.call(call.get("name"), args, call.get("id"))


def _user(parts: list[Part], t: Transcript) -> None:
    for where, part in parts:
        call, answer = _spelling(part, CALL), _spelling(part, RESPONSE)
        if answer is not None:
            with t.part():
                response = t.mapping(part[answer], f"{where}.{answer}")
                value, error = _outcome(response.get("response"))
                t.result(response.get("id"), value, name=response.get("name"), error=error)
        elif call is not None:
            t.unread(f"{where}.{call}", "only a model turn can call a function")
        else:
            _server(part, t)


def _server(part: Mapping[str, Any], t: Transcript) -> None:
    for key, name in SERVER.items():
        if part.get(key) is not None:
            t.skip(f"{name} parts")


def _outcome(response: Any) -> tuple[Any, bool]:
    if isinstance(response, Mapping):
        if "output" in response:
            return response["output"], False
        if response.get("error") is not None:
            return response["error"], True
    return response, False
