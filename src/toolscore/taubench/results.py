"""`toolscore import tau-bench-results`: tau-bench's saved run (the JSON list its run.py
writes: one `EnvRunResult` per task and trial, `{task_id, trial, reward, info, traj}`) as
outputs lines, one per task and trial.

Each line is `{"id": str(task_id), "trial": trial, "format": "openai-chat", "messages":
traj, "reward": reward}`: the trajectory is an OpenAI Chat transcript (the tool-calling
agent's messages, results in `role: tool` messages), which `score` reads as it is; the
`reward` tau-bench gave is kept beside it (not scored). One change is made, so that what
toolscore reads as said is what tau-bench's reward reads: the text of an assistant message
that also calls a tool is dropped (tau-bench turns such a message into the tool call alone,
and its outputs check never sees that text).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolscore.errors import InputError
from toolscore.inputs.import_check import read_json_file

MAX_TRIAL = 1_000_000


@dataclass
class Counts:
    """What a conversion met, for the command's summary line."""

    lines: int = 0
    calls: int = 0
    dropped_texts: int = 0


def read_results(path: str) -> list[Any]:
    """The results file's list of entries; an input error when it is not one."""
    data = read_json_file(path)
    if not isinstance(data, list):
        raise InputError(path, "not a tau-bench results file: must be a JSON list of results")
    return data


def _field(path: str, index: int, key: str, message: str) -> InputError:
    return InputError(path, message, field=f"[{index}].{key}")


def convert_entry(entry: Any, index: int, path: str, counts: Counts) -> dict[str, Any]:
    """One result entry as an outputs line (see the module docstring)."""
    if not isinstance(entry, dict):
        raise InputError(path, "must be an object with task_id, trial and traj", field=f"[{index}]")
    task_id = entry.get("task_id")
    if type(task_id) is not int or task_id < 0:
        raise _field(path, index, "task_id", f"must be an integer >= 0, got {_shown(task_id)}")
    trial = entry.get("trial", 0)
    if type(trial) is not int or not 0 <= trial <= MAX_TRIAL:
        raise _field(path, index, "trial", f"must be an integer >= 0, got {_shown(trial)}")
    traj = entry.get("traj")
    if not isinstance(traj, list):
        raise _field(path, index, "traj", f"must be a list of messages, got {_shown(traj)}")
    messages = []
    for position, message in enumerate(traj):
        if not isinstance(message, dict):
            raise _field(path, index, f"traj[{position}]", "must be a message object")
        messages.append(_as_tau_bench_reads(message, counts))
    line: dict[str, Any] = {
        "id": str(task_id),
        "trial": trial,
        "format": "openai-chat",
        "messages": messages,
    }
    if "reward" in entry:
        line["reward"] = entry["reward"]
    counts.lines += 1
    return line


def _as_tau_bench_reads(message: dict[str, Any], counts: Counts) -> dict[str, Any]:
    """The message without the text beside its tool call, if it has both."""
    calls = message.get("tool_calls")
    if message.get("role") == "assistant" and isinstance(calls, list) and calls:
        counts.calls += len(calls)
        if isinstance(message.get("content"), str) and message["content"]:
            counts.dropped_texts += 1
            return {**message, "content": None}
    return message


def convert_results(path: str, counts: Counts | None = None) -> Iterator[dict[str, Any]]:
    """The outputs lines of a tau-bench results file, by task and then trial (tau-bench's
    `run.py` saves them trial by trial, and toolscore reads a case's trials together); an
    input error for an entry that is not a result or a (task_id, trial) given twice."""
    counts = counts if counts is not None else Counts()
    lines: dict[tuple[int, int], dict[str, Any]] = {}
    for index, entry in enumerate(read_results(path)):
        line = convert_entry(entry, index, path, counts)
        key = (int(line["id"]), line["trial"])
        if key in lines:
            raise _field(path, index, "trial", f"task {key[0]} trial {key[1]} is given twice")
        lines[key] = line
    for key in sorted(lines):
        yield lines[key]


def _shown(value: Any) -> str:
    if isinstance(value, dict | list):
        return "an object" if isinstance(value, dict) else "a list"
    text = json.dumps(value, default=repr)
    return text if len(text) <= 40 else text[:37] + "..."
