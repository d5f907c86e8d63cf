"""Convert BFCL's multi-turn categories (base, miss_func, miss_param, long_context).

BFCL replays a model's calls, turn by turn, on instances of its state classes (a file
system, a trading bot, ...) built from the entry's `initial_config`, and after every turn
whose ground truth has calls it checks (`multi_turn_checker`): the model's instances have
the ground truth's public attributes (the state check), and every execution result of that
turn's ground truth is among the results of all the model's calls so far (the response
check, a multiset, any order). A turn whose ground truth has calls and where the model made
none fails. So an entry becomes one conversation case (`turns`, one per BFCL turn): a turn
with ground-truth calls has them as its plan, its goal the state the plans of turns 0..t
reach (`goal_state: "plan"`) and `results_from_plan: 0` (its calls' results must be among
the agent's); a turn without has no goal and accepts no call or the marker of a turn
without calls. The case's `setup` is one `bfcl_setup` call building the instances from the
entry's `initial_config`. With `per_turn`, the older layout: one case per turn with calls
(`<id>/turn-<t>`), whose plan is the ground truth of turns 0..t. The environment is a
documents environment over `bfcl_env.py`, written beside the cases, which hands each call
to `toolscore.bfcl.runtime` (imported only under `--env`).
"""

from __future__ import annotations

import ast
import json
import keyword
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from toolscore.bfcl.importer import BfclImport, read_records
from toolscore.bfcl.pycall import NotLiteralError, literal
from toolscore.bfcl.runtime import BFCL_EVAL, POSITIONAL
from toolscore.bfcl.schema import SchemaError, ToolDraft, tool_args
from toolscore.errors import InputError
from toolscore.inputs.import_check import check_loads

DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
"""Where BFCL keeps each class's function docs (`data/multi_turn_func_doc/`); another class
is looked up as its own name in snake case (`TinyStore` -> `tiny_store.json`)."""

SETUP_TOOL = "bfcl_setup"
EMPTY_TURN_TOOL = "bfcl_turn_without_calls"
ENV_MODULE = "bfcl_env.py"


def is_multi_turn(data_path: str) -> bool:
    """Whether a BFCL file holds multi-turn entries (questions as lists of turns, with an
    `initial_config`)."""
    for record in read_records(data_path):
        return "initial_config" in record.data and "involved_classes" in record.data
    return False


def parse_call(text: str) -> tuple[str, dict[str, Any]]:
    """One BFCL call text `name(a=1, 'x')` as a name and arguments (positional ones, in order,
    under `*`); ValueError when it is not one call of literals."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as error:
        raise ValueError(f"not a Python call: {error.msg}") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError("not a call of a function name")
    args: dict[str, Any] = {}
    try:
        if node.args:
            args[POSITIONAL] = [literal(item) for item in node.args]
        for item in node.keywords:
            if item.arg is None:
                raise ValueError("**arguments are not literal keyword arguments")
            args[item.arg] = literal(item.value)
    except NotLiteralError as error:
        raise ValueError(str(error)) from None
    return node.func.id, args


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def _docs(
    classes: set[str], docs_dir: Path, source: str
) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """Each class's function docs, read from `docs_dir`."""
    found: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(classes):
        path = docs_dir / DOC_FILES.get(name, f"{_snake(name)}.json")
        docs = [record.data for record in read_records(str(path))]
        if not all(isinstance(doc.get("name"), str) for doc in docs):
            raise InputError(str(path), "every function doc needs a string name")
        found[name] = docs
    return found


def import_multi_turn(
    data_path: str,
    answers_path: str | None,
    *,
    classes_module: str = BFCL_EVAL,
    docs_dir: str | None = None,
    out_dir: str | Path = ".",
    per_turn: bool = False,
) -> tuple[BfclImport, str]:
    """The spec (with its documents environment), the cases, and the text of `bfcl_env.py`.

    `docs_dir` holds the classes' function docs (default: `multi_turn_func_doc/` beside the
    data file, as bfcl-eval ships them); `classes_module` is where the state classes come
    from at replay time (a module name, a `.py` path, or bfcl-eval's own); `per_turn` writes
    the older layout, a case per turn with calls, instead of a conversation per entry.
    """
    if answers_path is None:
        raise InputError(data_path, "multi-turn categories need their possible-answer file")
    records = list(read_records(data_path))
    answers = {r.data.get("id"): r for r in read_records(answers_path)}
    classes = {name for r in records for name in r.data.get("involved_classes", [])}
    folder = Path(docs_dir) if docs_dir else Path(data_path).parent / "multi_turn_func_doc"
    docs = _docs(classes, folder, data_path)
    notes: list[str] = []
    drafts: dict[str, ToolDraft] = {}
    properties: dict[tuple[str, str], list[str]] = {}
    for name, functions in docs.items():
        for function in functions:
            tool = function["name"]
            try:
                args = tool_args(function, tool, notes)
            except SchemaError as error:
                raise InputError(data_path, str(error), field=f"{name}.{tool}") from None
            if tool not in drafts:
                drafts[tool] = ToolDraft(tool, function.get("description"), {})
            drafts[tool].add(args, json.dumps(function.get("parameters"), sort_keys=True))
            properties[name, tool] = list(args)
    for tool in drafts:
        if not tool.isidentifier() or keyword.iskeyword(tool) or tool.startswith("bfcl_"):
            raise InputError(data_path, f"function name {tool!r} cannot be a tool of bfcl_env.py")
    cases: list[dict[str, Any]] = []
    for record in records:
        entry = _read_entry(record, answers, properties, data_path, answers_path)
        cases.extend(_per_turn_cases(entry) if per_turn else [_conversation_case(entry)])
    env = {
        "kind": "documents",
        "data": f"{ENV_MODULE}:bfcl_data",
        "tools": ENV_MODULE,
        "snapshot": f"{ENV_MODULE}:bfcl_snapshot",
        "on_error": "keep",
    }
    tools = {name: draft.to_spec() for name, draft in sorted(drafts.items())}
    if not per_turn:
        tools[EMPTY_TURN_TOOL] = EMPTY_TURN_SPEC
    spec = {"version": f"bfcl:{Path(data_path).name}", "environment": env, "tools": tools}
    check_loads({k: v for k, v in spec.items() if k != "environment"}, cases, data_path)
    classes_ref = classes_module
    if classes_module.endswith(".py"):
        classes_ref = os.path.relpath(Path(classes_module).resolve(), Path(out_dir).resolve())
    options = {"classes_module": classes_ref, "multi_turn": True, "bfcl_strings": False}
    provenance = {
        "data": {"path": data_path},
        "possible_answer": {"path": answers_path},
        "options": {**options, "per_turn": per_turn},
    }
    counts = {
        "entries": len(records),
        "cases": len(cases),
        "tool_cases": len(cases),
        "abstention_cases": 0,
        "tools": len(drafts),
        "merged_tools": 0,
        "several_plans": 0,
        "unused_answers": len(set(answers) - {r.data.get("id") for r in records}),
    }
    notes.append(
        "one case per turn whose ground truth has calls; an entry passes when all its cases pass"
        if per_turn
        else "one conversation case per entry, a turn per BFCL turn; the entry passes when the "
        "case passes on state"
    )
    result = BfclImport(spec, cases, notes, provenance, counts)
    return result, env_module(sorted(drafts), classes_ref)


EMPTY_TURN_SPEC: dict[str, Any] = {
    "version": 1,
    "description": "Not a BFCL function: the mark `import bfcl-outputs` writes in a turn "
    "where the model made no call.",
    "args": {"turn": "integer"},
}
"""The spec of the marker of a turn without calls (conversation layout): a turn whose ground
truth has no call accepts it as its second plan."""


class Entry(NamedTuple):
    """One BFCL multi-turn entry read: its id, tags, setup call, and per turn the prompt (or
    None) and the ground-truth calls (positional arguments named)."""

    id: str
    tags: list[str]
    setup: dict[str, Any]
    turns: list[tuple[Any, list[dict[str, Any]]]]


def _read_entry(
    record: Any, answers: Mapping[Any, Any], properties: Mapping[tuple[str, str], list[str]],
    source: str, answers_path: str,
) -> Entry:  # fmt: skip
    """One entry and its ground truth, every call parsed and fitted to its function doc."""
    data = record.data
    entry = data.get("id")
    if not isinstance(entry, str) or entry not in answers:
        raise InputError(source, "no possible answer for this entry", line=record.line, field="id")
    truth = answers[entry].data.get("ground_truth")
    questions = data.get("question")
    if not isinstance(truth, list) or not isinstance(questions, list):
        raise InputError(source, "needs question and ground_truth lists", line=record.line)
    classes = list(data["involved_classes"])
    owners: dict[str, str] = {}
    for name in classes:  # the last class listed wins, as in BFCL's name mapping
        owners.update({tool: name for (owner, tool) in properties if owner == name})
    setup = {
        "name": SETUP_TOOL,
        "args": {
            "classes": classes,
            "config": data.get("initial_config", {}),
            "long_context": "long_context" in entry,
        },
    }
    turns: list[tuple[Any, list[dict[str, Any]]]] = []
    for turn, calls in enumerate(truth):
        parsed = []
        for position, text in enumerate(calls):
            try:
                name, args = parse_call(text)
            except ValueError as error:
                raise InputError(
                    answers_path, f"{entry} turn {turn} call {position}: {error}",
                    line=answers[entry].line, field="ground_truth",
                ) from None  # fmt: skip
            if name not in owners:
                raise InputError(
                    answers_path, f"{entry} turn {turn}: no involved class has {name!r}",
                    line=answers[entry].line, field="ground_truth",
                )  # fmt: skip
            named = properties[owners[name], name]
            positional = args.pop(POSITIONAL, [])
            if len(positional) > len(named) or set(named[: len(positional)]) & set(args):
                raise InputError(
                    answers_path, f"{entry} turn {turn}: {text!r} does not fit the doc of {name}",
                    line=answers[entry].line, field="ground_truth",
                )  # fmt: skip
            args.update(zip(named, positional, strict=False))
            parsed.append({"name": name, "args": args})
        turns.append((questions[turn] if turn < len(questions) else None, parsed))
    return Entry(entry, [entry.rsplit("_", 1)[0]], setup, turns)


def _conversation_case(entry: Entry) -> dict[str, Any]:
    """The conversation case of one entry: a turn per BFCL turn; one with ground-truth calls
    is checked on state and results after it, one without accepts no call or the marker."""
    turns: list[dict[str, Any]] = []
    for t, (prompt, calls) in enumerate(entry.turns):
        turn: dict[str, Any] = {} if prompt is None else {"prompt": prompt}
        if calls:
            turn.update({"plans": [calls], "goal_state": "plan", "results_from_plan": 0})
        else:
            turn["plans"] = [[], [{"name": EMPTY_TURN_TOOL, "args": {"turn": t}}]]
        turns.append(turn)
    return {"id": entry.id, "tags": entry.tags, "turns": turns, "setup": [entry.setup]}


def _per_turn_cases(entry: Entry) -> list[dict[str, Any]]:
    """The older layout: one case per turn whose ground truth has calls, its plan the ground
    truth of turns 0..t and `results_from_plan` where turn t's calls start."""
    cases: list[dict[str, Any]] = []
    plan: list[dict[str, Any]] = []
    for turn, (prompt, calls) in enumerate(entry.turns):
        start = len(plan)
        plan.extend(calls)
        if not calls:
            continue
        cases.append(
            {
                "id": f"{entry.id}/turn-{turn}",
                "prompt": prompt,
                "tags": entry.tags,
                "plans": [list(plan)],
                "goal_state": "plan",
                "results_from_plan": start,
                "setup": [entry.setup],
            }
        )
    return cases


def env_module(tools: list[str], classes: str) -> str:
    """The text of `bfcl_env.py`: a function per BFCL method, each handing its call to the
    runtime."""
    lines = [
        '"""BFCL multi-turn state classes as a toolscore documents environment (generated by',
        "`toolscore import bfcl`; see toolscore.bfcl.runtime). The classes come from",
        f"{classes}.",
        '"""',
        "",
        "from pathlib import Path",
        "",
        "from toolscore.bfcl.runtime import WITHOUT_CALLS, Runtime",
        "",
        f"_runtime = Runtime({classes!r}, str(Path(__file__).parent))",
        "",
        "",
        "def bfcl_data():",
        "    return {}",
        "",
        "",
        "def bfcl_snapshot(state):",
        "    return _runtime.snapshot(state)",
        "",
        "",
        "# New JSON, sharing nothing with the state: replays may be resumed",
        "# (toolscore.state.resume).",
        "bfcl_snapshot.shares_nothing = True",
        "",
        "",
        "def bfcl_setup(state, classes, config, long_context=False):",
        "    _runtime.setup(state, classes, config, long_context)",
        "",
        "",
        "def bfcl_turn_without_calls(state, turn):",
        "    state[WITHOUT_CALLS] = turn",
        "",
    ]
    for tool in tools:
        lines += [
            "",
            f"def {tool}(state, **args):",
            f"    return _runtime.call(state, {tool!r}, args)",
            "",
        ]
    return "\n".join(lines)


def write_multi_turn(result: BfclImport, module_text: str, out_dir: str | Path) -> list[Path]:
    """Write the converted files and `bfcl_env.py` into `out_dir`."""
    from toolscore.bfcl.importer import write_import  # noqa: PLC0415 - one writer for both

    return write_import(result, out_dir, {ENV_MODULE: module_text})
