"""`toolscore import tau2-bench-results`: tau2-bench's saved run (the results JSON its runner
writes: `{info, tasks, simulations: [{id, task_id, trial, messages, reward_info,
termination_reason, ...}]}`) as outputs lines, one per simulation.

Each line is `{"id": task_id, "trial": trial, "format": "openai-chat", "messages": [...],
"reward": reward_info.reward, "termination_reason": ...}`: tau2's messages in OpenAI Chat
shape (an assistant's `tool_calls` as `{id, type: function, function: {name, arguments:
JSON text}}`, a tool message as `{role: tool, tool_call_id, content}`, a `multi_tool`
message as its tool messages). The text beside an assistant's tool call is kept (tau2's
communicate check reads it). What is not the agent's is left out and counted: the user
simulator's own tool calls (telecom's device tools: `requestor: user`) and their results.
`reward` and `termination_reason` are kept beside the messages, never scored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolscore.errors import InputError
from toolscore.inputs.import_check import read_json_file

MAX_TRIAL = 1_000_000
STOPPED = ("agent_stop", "user_stop")
"""The termination reasons tau2 evaluates; any other gives reward 0 whatever was done."""
ROLES = ("system", "user", "assistant", "tool", "multi_tool")


@dataclass
class Counts:
    """What a conversion met, for the command's summary line."""

    lines: int = 0
    calls: int = 0
    user_calls: int = 0
    premature: int = 0


def read_results(path: str) -> list[Any]:
    """The results file's list of simulations; an input error when it is not one."""
    data = read_json_file(path)
    simulations = data.get("simulations") if isinstance(data, dict) else None
    if not isinstance(simulations, list):
        raise InputError(
            path, "not a tau2-bench results file: must be an object with a simulations list"
        )
    return simulations


class _Entry:
    """Where the entry being converted is, for its errors."""

    def __init__(self, path: str, index: int) -> None:
        self.path = path
        self.index = index

    def error(self, key: str, message: str) -> InputError:
        return InputError(self.path, message, field=f"simulations[{self.index}].{key}")


def convert_entry(entry: Any, index: int, path: str, counts: Counts) -> dict[str, Any]:
    """One simulation as an outputs line (see the module docstring)."""
    where = _Entry(path, index)
    if not isinstance(entry, dict):
        raise InputError(path, "must be an object", field=f"simulations[{index}]")
    task_id = entry.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise where.error("task_id", f"must be a non-empty string, got {_shown(task_id)}")
    trial = entry.get("trial")
    trial = 0 if trial is None else trial
    if type(trial) is not int or not 0 <= trial <= MAX_TRIAL:
        raise where.error("trial", f"must be an integer >= 0, got {_shown(trial)}")
    raw = entry.get("messages")
    if not isinstance(raw, list):
        raise where.error("messages", f"must be a list of messages, got {_shown(raw)}")
    messages: list[dict[str, Any]] = []
    for position, message in enumerate(raw):
        messages += _convert(message, where, f"messages[{position}]", counts)
    line: dict[str, Any] = {
        "id": task_id,
        "trial": trial,
        "format": "openai-chat",
        "messages": messages,
    }
    reward_info = entry.get("reward_info")
    if isinstance(reward_info, dict) and "reward" in reward_info:
        line["reward"] = reward_info["reward"]
    reason = entry.get("termination_reason")
    if reason is not None:
        if not isinstance(reason, str):
            raise where.error("termination_reason", f"must be a string, got {_shown(reason)}")
        line["termination_reason"] = reason
        counts.premature += reason not in STOPPED
    counts.lines += 1
    return line


def _convert(message: Any, where: _Entry, key: str, counts: Counts) -> list[dict[str, Any]]:
    if not isinstance(message, dict):
        raise where.error(key, "must be a message object")
    role = message.get("role")
    if role not in ROLES:
        raise where.error(f"{key}.role", f"must be one of {', '.join(ROLES)}, got {_shown(role)}")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise where.error(f"{key}.content", f"must be a string or null, got {_shown(content)}")
    if message.get("is_audio") is True:
        content = None  # base64 audio, not text (tau2's text checks skip it too)
    if role == "multi_tool":
        inner = message.get("tool_messages")
        if not isinstance(inner, list):
            raise where.error(f"{key}.tool_messages", "must be a list of tool messages")
        flattened: list[dict[str, Any]] = []
        for k, tool_message in enumerate(inner):
            flattened += _convert(tool_message, where, f"{key}.tool_messages[{k}]", counts)
        return flattened
    if role == "tool":
        if message.get("requestor", "assistant") == "user":
            return []
        tool_id = message.get("id")
        if not isinstance(tool_id, str):
            raise where.error(f"{key}.id", f"must be the tool call's id, got {_shown(tool_id)}")
        return [{"role": "tool", "tool_call_id": tool_id, "content": content or ""}]
    converted: dict[str, Any] = {"role": role, "content": content}
    calls = message.get("tool_calls")
    if calls is not None and role in ("assistant", "user"):
        if not isinstance(calls, list):
            raise where.error(f"{key}.tool_calls", "must be a list of tool calls or null")
        kept = []
        for k, call in enumerate(calls):
            field = f"{key}.tool_calls[{k}]"
            if not isinstance(call, dict):
                raise where.error(field, "must be an object")
            if not isinstance(call.get("name"), str):
                raise where.error(
                    f"{field}.name", f"must be a string, got {_shown(call.get('name'))}"
                )
            arguments = call.get("arguments", {})
            if not isinstance(arguments, dict):
                raise where.error(
                    f"{field}.arguments", f"must be an object, got {_shown(arguments)}"
                )
            if role == "user" or call.get("requestor") == "user":
                counts.user_calls += 1
                continue
            counts.calls += 1
            kept.append(
                {
                    "id": str(call.get("id", "")),
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(arguments)},
                }
            )
        if kept:
            converted["tool_calls"] = kept
    return [converted]


def convert_results(path: str, counts: Counts | None = None) -> Iterator[dict[str, Any]]:
    """The outputs lines of a tau2-bench results file, by task and then trial (toolscore
    reads a case's trials together); an input error for an entry that is not a simulation
    or a (task_id, trial) given twice."""
    counts = counts if counts is not None else Counts()
    lines: dict[tuple[str, int], dict[str, Any]] = {}
    for index, entry in enumerate(read_results(path)):
        line = convert_entry(entry, index, path, counts)
        key = (line["id"], line["trial"])
        if key in lines:
            raise InputError(
                path,
                f"task {key[0]} trial {key[1]} is given twice",
                field=f"simulations[{index}].trial",
            )
        lines[key] = line
    for key in sorted(lines):
        yield lines[key]


def _shown(value: Any) -> str:
    if isinstance(value, dict | list):
        return "an object" if isinstance(value, dict) else "a list"
    text = json.dumps(value, default=repr)
    return text if len(text) <= 40 else text[:37] + "..."
