"""`toolscore import tau-bench`: one domain and split of a tau-bench checkout as a toolscore
spec (with its documents environment), cases, and two small generated modules that call the
checkout's own code at replay time.

Written into the output folder:

- `tools.yaml`: the spec (rules from the tools' schemas, `schema`) and its `environment`:
  `kind: documents`, `data` and `tools` the generated modules, and tau-bench's scoring as
  options: `compare: exact` (its reward compares a hash of the whole data), `numbers: typed`
  (the hash writes `2` and `2.0` apart), `on_error: keep` (nothing is undone after an
  error), `error_prefix: "Error:"` (its tools return errors as text), `terminal_tools:
  [transfer_to_human_agents]` (its episodes end there);
- `cases.jsonl`: one case per task, id its index in the split (tau-bench's `task_id`): the
  annotated actions as the one plan, `goal_state: "plan"`, `score_turns: "all"`, and the
  task's `outputs` as `required_outputs` looked for in any assistant message with tau-bench's
  normalisation (`required_outputs_in: any`, `normalise: tau-bench`);
- `taubench_data.py` (`load_data`) and `taubench_tools.py` (one function per tool calling
  the Tool class's `invoke(data, **kwargs)`), which import the checkout by its absolute path
  only when `score --env` loads them;
- `import.json`: where it came from, counts and notes.

With `--as-checks` (`with_checks`), a task's goal is written as `state_checks` on the paths
its annotated actions' replay changes, where that can be said; the rest keep the plan goal,
counted in import.json.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.errors import InputError
from toolscore.files import write_files
from toolscore.inputs.import_check import check_loads, import_files
from toolscore.taubench.schema import args as schema_args
from toolscore.taubench.source import Task, ToolInfo, domain_dir, read_tasks, read_tools

TERMINAL_TOOLS = ("transfer_to_human_agents",)
"""tau-bench's `terminate_tools` (both domains' env.py)."""
RESPOND = "respond"
"""tau-bench's name for an assistant message to the user, which is no tool."""

ENVIRONMENT: dict[str, Any] = {
    "kind": "documents",
    "data": "taubench_data.py:load_data",
    "tools": "taubench_tools.py",
    "compare": "exact",
    "numbers": "typed",
    "on_error": "keep",
    "error_prefix": "Error:",
    "terminal_tools": list(TERMINAL_TOOLS),
}
OUTPUT_OPTIONS = {"required_outputs_in": "any", "normalise": "tau-bench"}
"""How tau-bench looks for a task's outputs, set on each case that has some."""


@dataclass
class TauBenchImport:
    """What `import_taubench` made: the spec, the cases, the generated modules and notes."""

    spec: dict[str, Any]
    cases: list[dict[str, Any]]
    modules: dict[str, str]
    provenance: dict[str, Any]
    counts: dict[str, int]
    notes: list[str] = field(default_factory=list)


def import_taubench(repo: str, domain: str, split: str = "test") -> TauBenchImport:
    """Read `domain` and `split` of the tau-bench checkout at `repo` (nothing is run)."""
    folder = domain_dir(repo, domain)
    tools = read_tools(folder)
    tasks = read_tasks(folder, split)
    notes: list[str] = []
    spec = {
        "version": f"tau-bench {domain}",
        "tools": {tool.name: _tool(tool) for tool in tools},
        "environment": dict(ENVIRONMENT),
    }
    names = {tool.name for tool in tools}
    cases = [_case(task, domain, split, names, notes) for task in tasks]
    checkout = str(Path(repo).resolve())
    modules = {
        "taubench_data.py": _data_module(checkout, domain),
        "taubench_tools.py": _tools_module(checkout, domain, tools),
    }
    check_loads(spec, cases, str(folder / f"tasks_{split}.py"), item="task")
    counts = {
        "cases": len(cases),
        "tools": len(tools),
        "actions": sum(len(task.actions) for task in tasks),
        "cases_with_outputs": sum(1 for task in tasks if task.outputs),
        "cases_without_actions": sum(1 for task in tasks if not task.actions),
    }
    provenance = {
        "source": "tau-bench",
        "checkout": checkout,
        "domain": domain,
        "split": split,
        "tasks": f"tau_bench/envs/{domain}/tasks_{split}.py",
    }
    return TauBenchImport(spec, cases, modules, provenance, counts, notes)


def _tool(tool: ToolInfo) -> dict[str, Any]:
    function = tool.info["function"]
    node: dict[str, Any] = {"args": schema_args(function.get("parameters", {}))}
    if isinstance(function.get("description"), str):
        node = {"description": " ".join(function["description"].split()), **node}
    return node


def _case(task: Task, domain: str, split: str, names: set[str], notes: list[str]) -> dict[str, Any]:
    calls = []
    for position, action in enumerate(task.actions):
        if action.name == RESPOND:
            notes.append(f"task {task.index}: action {position} is a respond action, left out")
            continue
        if action.name not in names:
            raise InputError(
                f"tau_bench/envs/{domain}/tasks_{split}.py",
                f"task {task.index}: action {position} names {action.name!r}, not a tool",
            )
        calls.append({"name": action.name, "args": action.kwargs})
    terminal = [i for i, call in enumerate(calls) if call["name"] in TERMINAL_TOOLS]
    if terminal and terminal[0] != len(calls) - 1:
        notes.append(
            f"task {task.index}: actions follow {calls[terminal[0]]['name']}; tau-bench's "
            "goal replay skips the terminal call and goes on, toolscore's ends there"
        )
    case: dict[str, Any] = {
        "id": str(task.index),
        "prompt": task.instruction,
        "tags": [domain, split],
        "user_id": task.user_id,
        "plans": [calls],
        "goal_state": "plan",
        "score_turns": "all",
    }
    if task.outputs:
        case["required_outputs"] = list(task.outputs)
        case.update(OUTPUT_OPTIONS)
    return case


def with_checks(
    result: TauBenchImport, found: Mapping[str, tuple[Sequence[Any], Sequence[str]]]
) -> TauBenchImport:
    """`--as-checks`: each task's `goal_state: "plan"` replaced by the state checks `found`
    for it (case id -> checks and notes: `lint --suggest-checks`, the paths the annotated
    actions' replay changes). A task keeps its plan goal, counted and noted, when its plan
    changes nothing (no check says the whole data is unchanged) or when what it changes
    cannot all be said as checks (the suggestion's notes)."""
    cases: list[dict[str, Any]] = []
    notes = list(result.notes)
    checked = unchanged = kept = 0
    for case in result.cases:
        checks, why = found.get(case["id"], ((), ("no suggestion was made",)))
        if why:
            kept += 1
            notes.append(f"task {case['id']}: keeps goal_state plan: {'; '.join(why)}")
            cases.append(case)
        elif not checks:
            unchanged += 1
            cases.append(case)
        else:
            checked += 1
            written = {k: v for k, v in case.items() if k != "goal_state"}
            cases.append({**written, "state_checks": list(checks)})
    if unchanged:
        notes.append(
            f"{unchanged} tasks whose annotated actions change nothing keep goal_state plan "
            "(no state check says that the whole data is unchanged)"
        )
    counts = {
        **result.counts,
        "cases_as_checks": checked,
        "cases_kept_plan_unchanged": unchanged,
        "cases_kept_plan_not_checks": kept,
        "state_checks": sum(len(c.get("state_checks", ())) for c in cases),
    }
    provenance = {**result.provenance, "goal": "state_checks where the plan's changes allow"}
    return TauBenchImport(result.spec, cases, result.modules, provenance, counts, notes)


def _data_module(checkout: str, domain: str) -> str:
    return (
        f'"""Generated by `toolscore import tau-bench`: the {domain} domain\'s initial data, as\n'
        "its own load_data() reads it from the tau-bench checkout (imported only by\n"
        '`score --env`; move the checkout and import again)."""\n\n'
        "from typing import Any\n\n"
        "from toolscore.taubench import checkout\n\n"
        f"CHECKOUT = {checkout!r}\n\n\n"
        "def load_data() -> Any:\n"
        f"    return checkout.load_data(CHECKOUT, {domain!r})\n"
    )


def _tools_module(checkout: str, domain: str, tools: list[ToolInfo]) -> str:
    lines = [
        f'"""Generated by `toolscore import tau-bench`: the {domain} domain\'s tools, each',
        "calling its Tool class's own invoke(data, **kwargs) from the tau-bench checkout",
        '(imported only by `score --env`)."""',
        "",
        "from typing import Any",
        "",
        "from toolscore.taubench import checkout",
        "",
        f"CHECKOUT = {checkout!r}",
        f"_TOOLS = checkout.tool_classes(CHECKOUT, {domain!r})",
    ]
    for tool in tools:
        lines += [
            "",
            "",
            f"def {tool.name}(state: Any, /, **kwargs: Any) -> Any:",
            f"    return _TOOLS[{tool.name!r}].invoke(state, **kwargs)  # {tool.class_name}",
        ]
    return "\n".join(lines) + "\n"


def write_import(result: TauBenchImport, out_dir: str | Path) -> list[Path]:
    """Write the spec, the cases, the two modules and `import.json` into `out_dir`: nothing
    is half-written (`files.write_files`)."""
    header = (
        f"# Converted from tau-bench ({result.provenance['domain']}, "
        f"{result.provenance['split']}) by `toolscore import tau-bench`; see import.json.\n"
    )
    about = {**result.provenance, "counts": result.counts, "notes": result.notes}
    files = import_files(header, result.spec, result.cases, result.modules, about)
    return write_files(out_dir, files)
