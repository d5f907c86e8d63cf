"""Read a tau2-bench checkout without running it: a domain's tool signatures (the `@is_tool`
methods of its toolkit class in `src/tau2/domains/DOMAIN/tools.py`, read with `ast`) and its
tasks (`data/tau2/domains/DOMAIN/tasks.json`, read as JSON). Nothing of the checkout is
imported; a malformed file is an input error naming the file and the field."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.errors import InputError

DOMAINS = ("airline", "retail", "telecom")
REWARD_TYPES = ("DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE")
"""tau2's `RewardType` members (src/tau2/data_model/tasks.py)."""
DEFAULT_BASIS = ["DB", "COMMUNICATE"]
"""`EvaluationCriteria.reward_basis` when a task gives none."""
REQUESTORS = ("assistant", "user")


@dataclass(frozen=True)
class Tool:
    """One `@is_tool` method: its name, description, parameters (name, annotation node or
    None, whether it has a default) and whether tau2 replays it (`mutates_state`)."""

    name: str
    description: str
    params: tuple[tuple[str, ast.expr | None, bool], ...]
    mutates: bool


@dataclass(frozen=True)
class Action:
    """One action of a task's `evaluation_criteria.actions`."""

    name: str
    arguments: dict[str, Any]
    requestor: str
    compare_args: tuple[str, ...] | None


@dataclass(frozen=True)
class Task:
    """One task of `tasks.json`, at its position `index`, with the parts the import reads."""

    index: int
    id: str
    scenario: Any
    actions: tuple[Action, ...] | None
    communicate_info: tuple[str, ...]
    nl_assertions: tuple[str, ...]
    env_assertions: tuple[dict[str, Any], ...] | None
    reward_basis: tuple[str, ...]
    initial_state: Any
    has_criteria: bool


def domain_paths(repo: str, domain: str, tasks_file: str = "tasks.json") -> tuple[Path, Path]:
    """The domain's tools module and tasks file in the checkout; an input error for an
    unknown domain or a folder that is not a tau2-bench checkout."""
    if domain not in DOMAINS:
        raise InputError(
            repo, f"unknown domain {domain!r} (tau2-bench's are: {', '.join(DOMAINS)})"
        )
    if "/" in tasks_file or "\\" in tasks_file or not tasks_file.endswith(".json"):
        raise InputError(
            repo, f"--tasks must name a .json file of the domain's folder, got {tasks_file!r}"
        )
    tools = Path(repo) / "src" / "tau2" / "domains" / domain / "tools.py"
    tasks = Path(repo) / "data" / "tau2" / "domains" / domain / tasks_file
    if not tools.is_file():
        raise InputError(repo, f"not a tau2-bench checkout: no {tools.relative_to(repo)} in it")
    if not tasks.is_file():
        raise InputError(repo, f"no task file {tasks.relative_to(repo)} in the checkout")
    return tools, tasks


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(str(path), f"cannot read: {error}") from None
    except SyntaxError as error:
        raise InputError(str(path), f"not Python: {error.msg}", line=error.lineno) from None


def _decorator(node: ast.FunctionDef) -> ast.Call | None:
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call):
            func = decorator.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "is_tool":
                return decorator
    return None


def _mutates(decorator: ast.Call) -> bool:
    """tau2's `is_tool(tool_type, mutates_state=None)`: replayed when `mutates_state` is
    true, or when it is not given and the type is `ToolType.WRITE`."""
    for keyword in decorator.keywords:
        if keyword.arg == "mutates_state" and isinstance(keyword.value, ast.Constant):
            return bool(keyword.value.value)
    kind = decorator.args[0] if decorator.args else None
    for keyword in decorator.keywords:
        if keyword.arg == "tool_type":
            kind = keyword.value
    return isinstance(kind, ast.Attribute) and kind.attr == "WRITE"


def _description(node: ast.FunctionDef) -> str:
    """The docstring's text before its `Args:` (or `Returns:`) section, on one line."""
    doc = ast.get_docstring(node) or ""
    kept = []
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Returns:", "Raises:"):
            break
        kept.append(line)
    return " ".join(" ".join(kept).split())


def read_tools(path: Path) -> list[Tool]:
    """The `@is_tool` methods of the module's toolkit classes, in source order."""
    tools = []
    for node in _parse(path).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not isinstance(item, ast.FunctionDef):
                continue
            decorator = _decorator(item)
            if decorator is None:
                continue
            arguments = item.args
            if arguments.vararg or arguments.kwarg or arguments.posonlyargs:
                raise InputError(
                    str(path), f"tool {item.name} takes * or ** arguments", line=item.lineno
                )
            positional = arguments.args[1:]  # self
            defaults = len(arguments.defaults)
            params = [
                (a.arg, a.annotation, i >= len(positional) - defaults)
                for i, a in enumerate(positional)
            ]
            params += [
                (a.arg, a.annotation, d is not None)
                for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
            ]
            tools.append(Tool(item.name, _description(item), tuple(params), _mutates(decorator)))
    if not tools:
        raise InputError(str(path), "not a tau2-bench tools module: no @is_tool method in it")
    return tools


def read_tasks(path: Path) -> list[Task]:
    """The tasks of the file, in order; an input error naming the task and its field for
    anything of a task the import reads that is not of tau2's shape."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(str(path), f"cannot read: {error}") from None
    except json.JSONDecodeError as error:
        raise InputError(str(path), f"not JSON: {error.msg}", line=error.lineno) from None
    except (ValueError, RecursionError) as error:
        raise InputError(str(path), f"not readable: {error}") from None
    if not isinstance(data, list):
        raise InputError(str(path), "not a tau2-bench tasks file: must be a JSON list of tasks")
    tasks = [_task(entry, index, str(path)) for index, entry in enumerate(data)]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise InputError(
                str(path), f"task id {task.id!r} is given twice", field=f"[{task.index}].id"
            )
        seen.add(task.id)
    return tasks


def _strings(value: Any, path: str, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(path, "must be a list of strings", field=field)
    return tuple(value)


def _task(entry: Any, index: int, path: str) -> Task:
    if not isinstance(entry, dict):
        raise InputError(path, "a task must be an object", field=f"[{index}]")
    task_id = entry.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise InputError(path, "must be a non-empty string", field=f"[{index}].id")
    criteria = entry.get("evaluation_criteria")
    where = f"[{index}].evaluation_criteria"
    if criteria is None:
        return Task(
            index,
            task_id,
            _scenario(entry),
            None,
            (),
            (),
            None,
            (),
            entry.get("initial_state"),
            False,
        )
    if not isinstance(criteria, dict):
        raise InputError(path, "must be an object or null", field=where)
    actions_data = criteria.get("actions")
    if actions_data is not None and not isinstance(actions_data, list):
        raise InputError(path, "must be a list of actions or null", field=f"{where}.actions")
    actions = None
    if actions_data is not None:
        actions = tuple(
            _action(action, path, f"{where}.actions[{k}]") for k, action in enumerate(actions_data)
        )
    if criteria.get("reward_basis", ()) is None:
        raise InputError(path, "must be a list of reward types", field=f"{where}.reward_basis")
    basis = _strings(criteria.get("reward_basis", DEFAULT_BASIS), path, f"{where}.reward_basis")
    for k, member in enumerate(basis):
        if member not in REWARD_TYPES:
            raise InputError(
                path, f"unknown reward type {member!r} (tau2's: {', '.join(REWARD_TYPES)})",
                field=f"{where}.reward_basis[{k}]",
            )  # fmt: skip
    assertions = criteria.get("env_assertions")
    if assertions is not None and (
        not isinstance(assertions, list)
        or not all(isinstance(a, dict) and isinstance(a.get("func_name"), str) for a in assertions)
    ):
        raise InputError(
            path, "must be a list of objects with a func_name", field=f"{where}.env_assertions"
        )
    return Task(
        index=index,
        id=task_id,
        scenario=_scenario(entry),
        actions=actions,
        communicate_info=_strings(
            criteria.get("communicate_info"), path, f"{where}.communicate_info"
        ),
        nl_assertions=_strings(criteria.get("nl_assertions"), path, f"{where}.nl_assertions"),
        env_assertions=None if assertions is None else tuple(assertions),
        reward_basis=basis,
        initial_state=entry.get("initial_state"),
        has_criteria=True,
    )


def _scenario(entry: dict[str, Any]) -> Any:
    scenario = entry.get("user_scenario")
    if isinstance(scenario, dict) and "instructions" in scenario:
        return scenario["instructions"]
    return scenario


def _action(action: Any, path: str, field: str) -> Action:
    if not isinstance(action, dict):
        raise InputError(path, "an action must be an object", field=field)
    name = action.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(path, "must be a non-empty string", field=f"{field}.name")
    arguments = action.get("arguments", {})
    if not isinstance(arguments, dict):
        raise InputError(path, "must be an object", field=f"{field}.arguments")
    requestor = action.get("requestor") or "assistant"
    if requestor not in REQUESTORS:
        raise InputError(
            path, f"must be assistant or user, got {requestor!r}", field=f"{field}.requestor"
        )
    compare = action.get("compare_args")
    compare_args = None if compare is None else _strings(compare, path, f"{field}.compare_args")
    return Action(name, arguments, requestor, compare_args)
