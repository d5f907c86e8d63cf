"""Google Gemini `contents`: `functionCall` parts from the model, `functionResponse` parts back.

Gemini often gives no call ids; a response is then linked to the call of the same name at the
same position in the preceding model turn (and a note says so). Following the API reference, a
response object `{"output": ...}` is the function's output and `{"error": ...}` a failure;
any other object is the output as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.formats.transcript import Transcript

ROLES = ("user", "model", "function")


def read(node: Any, key: str, t: Transcript) -> None:
    """Read a list of Gemini contents into `t`."""
    for i, content in enumerate(t.list_of(node, key)):
        where = f"{key}[{i}]"
        role = t.role(content, where, ROLES)
        parts = t.list_of(content.get("parts"), f"{where}.parts")
        for j, part in enumerate(parts):
            t.mapping(part, f"{where}.parts[{j}]")
        if role == "model":
            _model(parts, f"{where}.parts", t)
        else:
            _user(parts, f"{where}.parts", t)
            if role == "user" and (not parts or any("functionResponse" not in p for p in parts)):
                t.user_turn()


def _model(parts: list[Any], where: str, t: Transcript) -> None:
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
    t.assistant_message("\n".join(texts) or None)
    for j, part in enumerate(parts):
        if "functionCall" in part:
            call = t.mapping(part["functionCall"], f"{where}[{j}].functionCall")
            t.call(call.get("name"), call.get("args"), call.get("id"))
        elif "functionResponse" in part:
            raise t.error(f"{where}[{j}].functionResponse", "a model turn cannot hold a response")


def _user(parts: list[Any], where: str, t: Transcript) -> None:
    for j, part in enumerate(parts):
        if "functionResponse" in part:
            answer = t.mapping(part["functionResponse"], f"{where}[{j}].functionResponse")
            value, error = _outcome(answer.get("response"))
            t.result(answer.get("id"), value, name=answer.get("name"), error=error)
        elif "functionCall" in part:
            raise t.error(f"{where}[{j}].functionCall", "only a model turn can call a function")


def _outcome(response: Any) -> tuple[Any, bool]:
    if isinstance(response, Mapping):
        if "output" in response:
            return response["output"], False
        if response.get("error") is not None:
            return response["error"], True
    return response, False
