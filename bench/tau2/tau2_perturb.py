"""Trajectories for the tau2-bench parity bench: each task's actions, and perturbations of
them. A trajectory is a list of steps: `("call", name, arguments)` (an assistant tool call)
or `("say", text)` (an assistant message to the user). Each perturbation returns the steps,
or None where it does not apply to the task. Which tools write is tau2's own `@is_tool`
type (the importer's `replayed_by_tau2`), passed in as `writes`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

Step = tuple[Any, ...]
Perturbation = Callable[[Any, list[Any], frozenset[str]], "list[Step] | None"]


def _calls(task: Any) -> list[Step]:
    actions = task.evaluation_criteria.actions or []
    return [("call", a.name, copy.deepcopy(a.arguments)) for a in actions if a.requestor != "user"]


def _said(task: Any) -> str:
    info = task.evaluation_criteria.communicate_info or []
    return "Done. " + " and ".join(info) if info else "Done."


def _writes(steps: list[Step], writes: frozenset[str]) -> list[int]:
    return [i for i, s in enumerate(steps) if s[0] == "call" and s[1] in writes]


def gold(task: Any, others: list[Any], writes: frozenset[str]) -> list[Step] | None:
    """The task's own actions, then the communicate_info said."""
    return [*_calls(task), ("say", _said(task))]


def drop_write(task: Any, others: list[Any], writes: frozenset[str]) -> list[Step] | None:
    """The last write left out."""
    steps = _calls(task)
    found = _writes(steps, writes)
    if not found:
        return None
    del steps[found[-1]]
    return [*steps, ("say", _said(task))]


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value[:-1] + ("0" if not value.endswith("0") else "1") if value else "x"
    if isinstance(value, list) and value:
        return [_changed(value[0]), *value[1:]]
    return None


def wrong_argument(task: Any, others: list[Any], writes: frozenset[str]) -> list[Step] | None:
    """The last write with its last argument changed (a string's last character, a number
    plus one, a list's first item)."""
    steps = _calls(task)
    found = _writes(steps, writes)
    if not found or not steps[found[-1]][2]:
        return None
    name, arguments = steps[found[-1]][1], dict(steps[found[-1]][2])
    key = list(arguments)[-1]
    arguments[key] = _changed(arguments[key])
    steps[found[-1]] = ("call", name, arguments)
    return [*steps, ("say", _said(task))]


def duplicate_write(task: Any, others: list[Any], writes: frozenset[str]) -> list[Step] | None:
    """The first write made twice in a row (often refused the second time, changing nothing)."""
    steps = _calls(task)
    found = _writes(steps, writes)
    if not found:
        return None
    steps.insert(found[0] + 1, copy.deepcopy(steps[found[0]]))
    return [*steps, ("say", _said(task))]


def extra_write(task: Any, others: list[Any], writes: frozenset[str]) -> list[Step] | None:
    """The actions, then the first write of the next task that has one (another user's)."""
    for other in others:
        found = _writes(_calls(other), writes)
        if found:
            return [*_calls(task), _calls(other)[found[0]], ("say", _said(task))]
    return None


def silent(task: Any, others: list[Any], writes: frozenset[str]) -> list[Step] | None:
    """The actions, nothing said (applies to tasks with communicate_info)."""
    if not task.evaluation_criteria.communicate_info:
        return None
    return _calls(task)


PERTURBATIONS: dict[str, Perturbation] = {
    "gold": gold,
    "drop_write": drop_write,
    "wrong_argument": wrong_argument,
    "duplicate_write": duplicate_write,
    "extra_write": extra_write,
    "silent": silent,
}
