"""Read a tau-bench checkout without running it: the domain's tool schemas (what each Tool
class's `get_info()` returns) and its tasks (the `Task(...)` list of a split), both read
from the Python source with `ast`, as literals only. Nothing of the checkout is imported.

The layout read (tau-bench's own): `tau_bench/envs/DOMAIN/tools/__init__.py` imports each
Tool class (`from .cancel_pending_order import CancelPendingOrder`) and lists them in
`ALL_TOOLS`; `tau_bench/envs/DOMAIN/tasks_SPLIT.py` assigns a list of
`Task(user_id=..., actions=[Action(name=..., kwargs={...}), ...], instruction=..., outputs=[...])`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.errors import InputError

DOMAINS = ("retail", "airline")
SPLITS = ("test", "dev", "train")


@dataclass(frozen=True)
class Action:
    """One annotated action of a task: a tool name and its keyword arguments."""

    name: str
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class Task:
    """One task of a split, at its position `index` (tau-bench's `task_id`)."""

    index: int
    user_id: str
    instruction: str
    actions: tuple[Action, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class ToolInfo:
    """One Tool class: its class name, its file, and what its `get_info()` returns."""

    class_name: str
    path: Path
    info: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.info["function"]["name"])


def domain_dir(repo: str, domain: str) -> Path:
    """The domain's folder in the checkout; an input error for an unknown domain or a folder
    that is not a tau-bench checkout."""
    if domain not in DOMAINS:
        raise InputError(repo, f"unknown domain {domain!r} (tau-bench's are: {', '.join(DOMAINS)})")
    folder = Path(repo) / "tau_bench" / "envs" / domain
    for part in ("tools/__init__.py", "data/__init__.py"):
        if not (folder / part).is_file():
            raise InputError(
                repo, f"not a tau-bench checkout: no tau_bench/envs/{domain}/{part} in it"
            )
    return folder


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(str(path), f"cannot read: {error}") from None
    except SyntaxError as error:
        raise InputError(str(path), f"not Python: {error.msg}", line=error.lineno) from None


def _literal(node: ast.AST, path: Path, what: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        line = getattr(node, "lineno", None)
        raise InputError(str(path), f"{what} is not a literal", line=line) from None


def read_tools(folder: Path) -> list[ToolInfo]:
    """The domain's tools in `ALL_TOOLS` order, each with its `get_info()` literal."""
    init = folder / "tools" / "__init__.py"
    tree = _parse(init)
    modules: dict[str, str] = {}
    listed: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                modules[alias.asname or alias.name] = node.module
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "ALL_TOOLS" for t in node.targets
        ):
            if not isinstance(node.value, ast.List):
                raise InputError(str(init), "ALL_TOOLS is not a list", line=node.lineno)
            listed = [e.id for e in node.value.elts if isinstance(e, ast.Name)]
    if not listed:
        raise InputError(str(init), "not a tau-bench checkout: no ALL_TOOLS list of Tool classes")
    tools = []
    for class_name in listed:
        if class_name not in modules:
            raise InputError(str(init), f"ALL_TOOLS names {class_name}, which is not imported")
        path = folder / "tools" / (modules[class_name].replace(".", "/") + ".py")
        tools.append(ToolInfo(class_name, path, _tool_info(path, class_name)))
    return tools


def _tool_info(path: Path, class_name: str) -> dict[str, Any]:
    """The dictionary that `class_name.get_info()` returns, read from its `return` literal."""
    for node in _parse(path).body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "get_info":
                    returns = [n for n in ast.walk(item) if isinstance(n, ast.Return)]
                    if len(returns) == 1 and returns[0].value is not None:
                        info = _literal(returns[0].value, path, f"{class_name}.get_info()")
                        _check_info(info, path, class_name)
                        return info  # type: ignore[no-any-return]
            raise InputError(str(path), f"{class_name} has no get_info() returning one literal")
    raise InputError(str(path), f"no class {class_name}")


def _check_info(info: Any, path: Path, class_name: str) -> None:
    function = info.get("function") if isinstance(info, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise InputError(str(path), f"{class_name}.get_info() has no function name")
    parameters = function.get("parameters", {})
    if not isinstance(parameters, dict) or not isinstance(parameters.get("properties", {}), dict):
        raise InputError(str(path), f"{class_name}.get_info() parameters are not a JSON Schema")


def read_tasks(folder: Path, split: str) -> list[Task]:
    """The split's tasks, in order (their index is tau-bench's `task_id`)."""
    if split not in SPLITS:
        raise InputError(
            str(folder), f"unknown split {split!r} (tau-bench's are: {', '.join(SPLITS)})"
        )
    path = folder / f"tasks_{split}.py"
    if not path.is_file():
        raise InputError(
            str(folder), f"the {folder.name} domain has no {split} split (no {path.name})"
        )
    for node in _parse(path).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            elements = node.value.elts
            if elements and all(_called(e, "Task") for e in elements):
                return [_task(e, i, path) for i, e in enumerate(elements)]
    raise InputError(str(path), "no list of Task(...) found")


def _called(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == name
        and not node.args
    )


def _keywords(node: ast.Call, path: Path, what: str) -> dict[str, ast.expr]:
    keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
    if len(keywords) != len(node.keywords):
        raise InputError(str(path), f"{what} uses ** arguments", line=node.lineno)
    return keywords


def _task(node: ast.expr, index: int, path: Path) -> Task:
    assert isinstance(node, ast.Call)
    what = f"task {index}"
    keywords = _keywords(node, path, what)
    for key in ("user_id", "actions", "instruction", "outputs"):
        if key not in keywords:
            raise InputError(str(path), f"{what} has no {key}", line=node.lineno)
    actions_node = keywords["actions"]
    if not isinstance(actions_node, ast.List) or not all(
        _called(a, "Action") for a in actions_node.elts
    ):
        raise InputError(
            str(path), f"{what}: actions is not a list of Action(...)", line=node.lineno
        )
    actions = []
    for action in actions_node.elts:
        assert isinstance(action, ast.Call)
        fields = _keywords(action, path, what)
        name = _literal(fields.get("name", ast.Constant(None)), path, f"{what}: an action's name")
        kwargs = _literal(
            fields.get("kwargs", ast.Dict([], [])), path, f"{what}: an action's kwargs"
        )
        if not isinstance(name, str) or not isinstance(kwargs, dict):
            raise InputError(
                str(path), f"{what}: an action without a name or kwargs", line=action.lineno
            )
        actions.append(Action(name, kwargs))
    user_id = _literal(keywords["user_id"], path, f"{what}: user_id")
    instruction = _literal(keywords["instruction"], path, f"{what}: instruction")
    outputs = _literal(keywords["outputs"], path, f"{what}: outputs")
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        raise InputError(str(path), f"{what}: outputs is not a list of strings", line=node.lineno)
    return Task(index, str(user_id), str(instruction), tuple(actions), tuple(outputs))
