"""Trajectories for the tau-bench parity bench: each task's annotated actions, and
perturbations of them, as the messages tau-bench's tool-calling agent saves (OpenAI Chat).

A trajectory here is a list of steps: `("call", name, kwargs)`, `("say", text)` (an assistant
message to the user) or `("say+call", text, name, kwargs)` (text beside a tool call). Each
perturbation returns the steps or None where it does not apply to the task.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

READ_PREFIXES = ("get_", "find_", "list_", "search_", "calculate", "think", "transfer_")
TERMINAL = "transfer_to_human_agents"
ID_KEYS = ("order_id", "reservation_id", "user_id")

Step = tuple[Any, ...]


def is_write(name: str) -> bool:
    """Whether a tool may change the data (tau-bench's read-only tools all start so)."""
    return not name.startswith(READ_PREFIXES)


def _calls(task: Any) -> list[Step]:
    return [("call", a.name, copy.deepcopy(a.kwargs)) for a in task.actions]


def _said(task: Any) -> str:
    return "Done. " + " and ".join(task.outputs) if task.outputs else "Done."


def _writes(steps: list[Step]) -> list[int]:
    return [i for i, s in enumerate(steps) if s[0] == "call" and is_write(s[1])]


def gold(task: Any, others: list[Any]) -> list[Step] | None:
    return [*_calls(task), ("say", _said(task))]


def drop_write(task: Any, others: list[Any]) -> list[Step] | None:
    steps = _calls(task)
    writes = _writes(steps)
    if not writes:
        return None
    del steps[writes[-1]]
    return [*steps, ("say", _said(task))]


def duplicate_write(task: Any, others: list[Any]) -> list[Step] | None:
    steps = _calls(task)
    writes = _writes(steps)
    if not writes:
        return None
    steps.insert(writes[0] + 1, copy.deepcopy(steps[writes[0]]))
    return [*steps, ("say", _said(task))]


def reorder_writes(task: Any, others: list[Any]) -> list[Step] | None:
    steps = _calls(task)
    writes = _writes(steps)
    if len(writes) < 2:
        return None
    a, b = writes[0], writes[1]
    steps[a], steps[b] = steps[b], steps[a]
    return [*steps, ("say", _said(task))]


def alter_write(task: Any, others: list[Any]) -> list[Step] | None:
    """The first write with one argument changed: a list loses its last item, else a string
    gains a character, else a number grows by one."""
    steps = _calls(task)
    writes = _writes(steps)
    for i in writes:
        kwargs = steps[i][2]
        for key, value in kwargs.items():
            if isinstance(value, list) and len(value) > 1:
                kwargs[key] = value[:-1]
                return [*steps, ("say", _said(task))]
        for key, value in kwargs.items():
            if isinstance(value, str) and key not in ID_KEYS:
                kwargs[key] = value + "x"
                return [*steps, ("say", _said(task))]
            if isinstance(value, int | float) and not isinstance(value, bool):
                kwargs[key] = value + 1
                return [*steps, ("say", _said(task))]
    return None


def other_case_ids(task: Any, others: list[Any]) -> list[Step] | None:
    """The first write's id argument taken from another task's write of the same tool."""
    steps = _calls(task)
    for i in _writes(steps):
        name, kwargs = steps[i][1], steps[i][2]
        for key in ID_KEYS:
            if key not in kwargs:
                continue
            for other in others:
                for action in other.actions:
                    value = action.kwargs.get(key)
                    if action.name == name and isinstance(value, str) and value != kwargs[key]:
                        kwargs[key] = value
                        return [*steps, ("say", _said(task))]
    return None


def _floated(value: Any) -> tuple[Any, bool]:
    """`value` with its first integer (depth first) sent as a float."""
    if isinstance(value, bool):
        return value, False
    if isinstance(value, int):
        return float(value), True
    if isinstance(value, dict):
        for key, item in value.items():
            new, done = _floated(item)
            if done:
                return {**value, key: new}, True
    if isinstance(value, list):
        for k, item in enumerate(value):
            new, done = _floated(item)
            if done:
                return [*value[:k], new, *value[k + 1 :]], True
    return value, False


def int_as_float(task: Any, others: list[Any]) -> list[Step] | None:
    steps = _calls(task)
    for i in _writes(steps):
        new, done = _floated(steps[i][2])
        if done:
            steps[i] = ("call", steps[i][1], new)
            return [*steps, ("say", _said(task))]
    return None


def transfer_midway(task: Any, others: list[Any]) -> list[Step] | None:
    """A transfer to a human before the last write: the episode ends there."""
    steps = _calls(task)
    writes = _writes(steps)
    if not writes:
        return None
    steps.insert(writes[-1], ("call", TERMINAL, {"summary": "the user wants a human"}))
    return [*steps, ("say", _said(task))]


def failed_then_fixed(task: Any, others: list[Any]) -> list[Step] | None:
    """The first write sent with an unknown id first (an error value), then as annotated."""
    steps = _calls(task)
    for i in _writes(steps):
        kwargs = steps[i][2]
        for key in ID_KEYS:
            if isinstance(kwargs.get(key), str):
                steps.insert(i, ("call", steps[i][1], {**kwargs, key: kwargs[key] + "9"}))
                return [*steps, ("say", _said(task))]
    return None


def outputs_missing(task: Any, others: list[Any]) -> list[Step] | None:
    return [*_calls(task), ("say", "Done.")] if task.outputs else None


def outputs_upper(task: Any, others: list[Any]) -> list[Step] | None:
    return [*_calls(task), ("say", _said(task).upper())] if task.outputs else None


def outputs_earlier(task: Any, others: list[Any]) -> list[Step] | None:
    if not task.outputs:
        return None
    return [("say", "To confirm: " + _said(task)), *_calls(task), ("say", "Anything else?")]


def outputs_thousands(task: Any, others: list[Any]) -> list[Step] | None:
    """Numbers of four digits or more said with a thousands comma (1,093.34)."""
    if not task.outputs:
        return None
    said = []
    for output in task.outputs:
        whole, dot, cents = output.partition(".")
        grouped = f"{int(whole):,}{dot}{cents}" if whole.isdigit() and len(whole) > 3 else output
        said.append(grouped)
    return [*_calls(task), ("say", "Done. " + " and ".join(said))]


def outputs_beside_call(task: Any, others: list[Any]) -> list[Step] | None:
    """The outputs said only in the text of a message that also calls a tool."""
    steps = _calls(task)
    if not task.outputs or not steps:
        return None
    name, kwargs = steps[-1][1], steps[-1][2]
    steps[-1] = ("say+call", _said(task), name, kwargs)
    return [*steps, ("say", "Done.")]


def outputs_partial(task: Any, others: list[Any]) -> list[Step] | None:
    if len(task.outputs) < 2:
        return None
    return [*_calls(task), ("say", "Done. " + task.outputs[0])]


PERTURBATIONS: dict[str, Callable[[Any, list[Any]], list[Step] | None]] = {
    f.__name__: f
    for f in (
        gold,
        drop_write,
        duplicate_write,
        reorder_writes,
        alter_write,
        other_case_ids,
        int_as_float,
        transfer_midway,
        failed_then_fixed,
        outputs_missing,
        outputs_upper,
        outputs_earlier,
        outputs_thousands,
        outputs_beside_call,
        outputs_partial,
    )
}


def messages(
    instruction: str, steps: list[Step], observe: Callable[[str, dict[str, Any]], str]
) -> list[dict[str, Any]]:
    """The trajectory as tau-bench's tool-calling agent saves it: a system and a user
    message, then per step an assistant message (a tool call followed by its `role: tool`
    result, or text followed by the user's reply). `observe(name, kwargs)` runs the call."""
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "(the domain's wiki)"},
        {"role": "user", "content": instruction},
    ]
    for n, step in enumerate(steps):
        if step[0] == "say":
            out.append({"role": "assistant", "content": step[1]})
            out.append({"role": "user", "content": "ok"})
            continue
        text, name, kwargs = (None, *step[1:]) if step[0] == "call" else step[1:]
        call_id = f"call_{n}"
        out.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(kwargs)},
                    }
                ],
            }
        )
        out.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "name": name,
                "content": observe(name, kwargs),
            }
        )
    return out
