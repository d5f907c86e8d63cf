"""`toolscore import tau2-bench`: one domain of a tau2-bench checkout as a toolscore spec
(with its documents environment), cases, and two small generated modules that call the
checkout's own code at replay time. What tau2 scores is decided per task by its
`reward_basis`, and the import follows it: only what the basis scores becomes a toolscore
check; everything else of the task's criteria is kept on the case, not scored, and counted.

Written into the output folder:

- `tools.yaml`: a rule per tool parameter (`schema`) and the `environment`: `kind:
  documents`, `data` and `snapshot` from `tau2_data.py` (the domain's `Environment`, compared
  as its databases' `model_dump`), `restore` (a used Environment brought back to the
  initial one from the two dumps, instead of a deep copy per replay), `tools:
  tau2_tools.py`, `compare: exact` (tau2 compares a sha256 of each database's JSON),
  `numbers: typed` (that JSON writes `2` and `2.0` apart), `on_error: keep` (nothing is
  undone after a tool raises);
- `cases.jsonl`: one case per task, id the task's `id`: the assistant's actions as the one
  plan (`user` actions left out), `score_turns: "all"`; `goal_state: "plan"` when `DB` is in
  the basis; the `communicate_info` as `required_outputs` (`required_outputs_in: any`,
  `normalise: tau-bench`) when `COMMUNICATE` is; the `nl_assertions` as `response_rubrics`
  of the spec's `tau2_nl_assertion` judge when a judge endpoint is given (`Judge`), reported
  apart from the verdict, else kept unscored as `tau2_nl_assertions`; kept, not scored:
  `tau2_reward_basis`, `tau2_env_assertions`, `tau2_communicate_info` (outside the basis),
  `tau2_user_actions`, `tau2_initial_state`;
- `tau2_data.py` and `tau2_tools.py`, which import the checkout by its absolute path only
  when `score --env` loads them;
- `import.json`: where it came from, counts and notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.errors import InputError
from toolscore.files import write_files
from toolscore.inputs.import_check import check_loads, import_files
from toolscore.tau2.schema import rule
from toolscore.tau2.source import Task, Tool, domain_paths, read_tasks, read_tools

ENVIRONMENT: dict[str, Any] = {
    "kind": "documents",
    "data": "tau2_data.py:load_environment",
    "snapshot": "tau2_data.py:snapshot",
    "restore": "tau2_data.py:restore",
    "tools": "tau2_tools.py",
    "compare": "exact",
    "numbers": "typed",
    "on_error": "keep",
}
OUTPUT_OPTIONS = {"required_outputs_in": "any", "normalise": "tau-bench"}
"""How tau2's communicate check looks for a task's `communicate_info` (evaluator_communicate:
any assistant message with text, lower-cased with commas deleted, a substring test)."""


NL_RUBRIC = "tau2_nl_assertion"
"""The spec's judge rubric that each case's nl_assertions name (one entry each)."""
NL_RUBRIC_TEXT = (
    "The agent satisfies the expected outcome. (Each case gives its own expected outcome, "
    "one of the task's nl_assertions, in place of this text.)"
)


@dataclass(frozen=True)
class Judge:
    """The endpoint that judges the nl_assertions (`--judge-url`, `--judge-model`,
    `--judge-key-env`): an OpenAI-compatible API, as a `judge` rubric names one."""

    base_url: str
    model: str
    api_key_env: str | None = None

    def rubric(self) -> dict[str, Any]:
        """The spec's `tau2_nl_assertion` rubric: met (1) or not (0), as tau2's judge
        answers each assertion."""
        node: dict[str, Any] = {
            "kind": "judge",
            "text": NL_RUBRIC_TEXT,
            "base_url": self.base_url,
            "model": self.model,
        }
        if self.api_key_env is not None:
            node["api_key_env"] = self.api_key_env
        return {**node, "scale": [0, 1], "threshold": 1}


@dataclass
class Tau2Import:
    """What `import_tau2` made: the spec, the cases, the generated modules and notes."""

    spec: dict[str, Any]
    cases: list[dict[str, Any]]
    modules: dict[str, str]
    provenance: dict[str, Any]
    counts: dict[str, int]
    notes: list[str] = field(default_factory=list)


COUNTS = (
    "cases",
    "tools",
    "actions",
    "user_actions",
    "cases_with_goal_state",
    "cases_with_outputs",
    "cases_unscored_communicate_info",
    "nl_assertions",
    "nl_assertions_judged",
    "nl_assertions_unscored",
    "cases_nl_in_reward_basis",
    "env_assertions_kept",
    "cases_env_assertion_in_reward_basis",
    "cases_action_in_reward_basis",
    "cases_without_criteria",
    "cases_with_initial_state",
)
"""The keys of `counts` in import.json, in order (docs/formats.md 14)."""


def import_tau2(
    repo: str, domain: str, tasks_file: str = "tasks.json", judge: Judge | None = None
) -> Tau2Import:
    """Read `domain` of the tau2-bench checkout at `repo` (nothing of it is run); with
    `judge`, the tasks' nl_assertions become response rubrics judged there."""
    tools_path, tasks_path = domain_paths(repo, domain, tasks_file)
    tools = read_tools(tools_path)
    tasks = read_tasks(tasks_path)
    notes: list[str] = []
    counts = dict.fromkeys(COUNTS, 0)
    spec: dict[str, Any] = {"version": f"tau2-bench {domain}"}
    if judge is not None and any(task.nl_assertions for task in tasks):
        spec["rubrics"] = {NL_RUBRIC: judge.rubric()}
    spec["tools"] = {tool.name: _tool(tool) for tool in tools}
    spec["environment"] = dict(ENVIRONMENT)
    names = {tool.name for tool in tools}
    judged = judge is not None
    cases = [_case(task, domain, names, str(tasks_path), notes, counts, judged) for task in tasks]
    checkout = str(Path(repo).resolve())
    modules = {
        "tau2_data.py": _data_module(checkout, domain),
        "tau2_tools.py": _tools_module(checkout, tools),
    }
    check_loads(spec, cases, str(tasks_path), item="task")
    notes = _summary_notes(counts) + notes
    counts["cases"] = len(cases)
    counts["tools"] = len(tools)
    provenance = {
        "source": "tau2-bench",
        "checkout": checkout,
        "domain": domain,
        "tasks": str(tasks_path.relative_to(repo)),
        "replayed_by_tau2": sorted(tool.name for tool in tools if tool.mutates),
    }
    return Tau2Import(spec, cases, modules, provenance, counts, notes)


def _tool(tool: Tool) -> dict[str, Any]:
    node: dict[str, Any] = {"args": {name: rule(note, name) for name, note, _ in tool.params}}
    if tool.description:
        node = {"description": tool.description, **node}
    return node


def _case(
    task: Task,
    domain: str,
    names: set[str],
    source: str,
    notes: list[str],
    counts: dict[str, int],
    judged: bool = False,
) -> dict[str, Any]:
    where = f"task {task.id}"
    basis = set(task.reward_basis)
    calls, user_actions = [], []
    for position, action in enumerate(task.actions or ()):
        if action.requestor == "user":
            user_actions.append({"name": action.name, "arguments": action.arguments})
            continue
        if action.name not in names:
            raise InputError(
                source,
                f"{where}: action {position} names {action.name!r}, not a tool of the domain",
                field=f"[{task.index}].evaluation_criteria.actions[{position}].name",
            )
        calls.append({"name": action.name, "args": action.arguments})
    counts["actions"] += len(calls)
    case: dict[str, Any] = {
        "id": task.id,
        "prompt": task.scenario,
        "tags": [domain],
        "plans": [calls],
        "score_turns": "all",
        "tau2_reward_basis": list(task.reward_basis),
    }
    if not task.has_criteria:
        counts["cases_without_criteria"] += 1
        notes.append(f"{where}: no evaluation_criteria (tau2 gives it reward 1): nothing checked")
        case["tau2_reward_basis"] = []
        return case
    if user_actions:
        counts["user_actions"] += len(user_actions)
        case["tau2_user_actions"] = user_actions
        if "DB" in basis:
            notes.append(
                f"{where}: {len(user_actions)} user action(s) left out of the plan, and so of "
                "its goal state (tau2's gold replay makes them)"
            )
    if _has_initial_state(task.initial_state):
        counts["cases_with_initial_state"] += 1
        case["tau2_initial_state"] = task.initial_state
    if "DB" in basis:
        _db_goal(task, case, where, notes, counts)
    if task.communicate_info and "COMMUNICATE" in basis:
        counts["cases_with_outputs"] += 1
        case["required_outputs"] = list(task.communicate_info)
        case.update(OUTPUT_OPTIONS)
    elif task.communicate_info:
        counts["cases_unscored_communicate_info"] += 1
        case["tau2_communicate_info"] = list(task.communicate_info)
    if task.nl_assertions:
        _nl_assertions(task.nl_assertions, case, counts, judged)
    if "NL_ASSERTION" in basis:
        counts["cases_nl_in_reward_basis"] += 1
    if task.env_assertions:
        counts["env_assertions_kept"] += len(task.env_assertions)
        case["tau2_env_assertions"] = list(task.env_assertions)
        functions = ", ".join(str(a["func_name"]) for a in task.env_assertions)
        scored = "scored by tau2" if "ENV_ASSERTION" in basis else "not in its reward basis"
        notes.append(
            f"{where}: {len(task.env_assertions)} env assertion(s) kept, not checked ({scored}; "
            f"no pure one-value read): {functions}"
        )
    if "ENV_ASSERTION" in basis:
        counts["cases_env_assertion_in_reward_basis"] += 1
    if "ACTION" in basis:
        counts["cases_action_in_reward_basis"] += 1
        notes.append(
            f"{where}: ACTION is in tau2's reward basis (each gold action made, in any order): "
            "toolscore's call verdict is its own plan match, not that check"
        )
    return case


def _nl_assertions(
    assertions: tuple[str, ...], case: dict[str, Any], counts: dict[str, int], judged: bool
) -> None:
    """A task's nl_assertions as response rubrics of the `tau2_nl_assertion` judge, one
    entry each, or without a judge kept unscored as `tau2_nl_assertions`."""
    counts["nl_assertions"] += len(assertions)
    if judged:
        counts["nl_assertions_judged"] += len(assertions)
        case["response_rubrics"] = [{"rubric": NL_RUBRIC, "text": text} for text in assertions]
    else:
        counts["nl_assertions_unscored"] += len(assertions)
        case["tau2_nl_assertions"] = list(assertions)


def _summary_notes(counts: dict[str, int]) -> list[str]:
    """One note per kind of criterion kept on many cases, so that none is silently dropped."""
    notes = []
    if counts["nl_assertions_unscored"]:
        notes.append(
            f"{counts['nl_assertions_unscored']} nl_assertions "
            f"({counts['cases_nl_in_reward_basis']} tasks have NL_ASSERTION in tau2's reward "
            "basis, an LLM judge) are kept as "
            "tau2_nl_assertions, not scored: give --judge-url and --judge-model to judge them "
            f"as response rubrics ({NL_RUBRIC})"
        )
    if counts["nl_assertions_judged"]:
        notes.append(
            f"{counts['nl_assertions_judged']} nl_assertions are response rubrics of the judge "
            f"{NL_RUBRIC}, one judgment each on everything the agent said, reported apart from "
            "the verdict (tau2 asks its judge about all of a task's assertions at once, over "
            "the whole conversation, and multiplies NL_ASSERTION into the reward)"
        )
    if counts["cases_unscored_communicate_info"]:
        notes.append(
            f"{counts['cases_unscored_communicate_info']} tasks give communicate_info outside "
            "their reward basis (no COMMUNICATE): kept as tau2_communicate_info, not scored"
        )
    return notes


def _db_goal(
    task: Task, case: dict[str, Any], where: str, notes: list[str], counts: dict[str, int]
) -> None:
    """`goal_state: "plan"` for a task whose basis has `DB`, where toolscore's goal is
    tau2's: not when the task has an initial state (toolscore does not set it up) and not
    when it has neither actions nor env assertions (tau2 then passes the DB check whatever
    the state)."""
    if _has_initial_state(task.initial_state):
        notes.append(f"{where}: DB is scored but the task has an initial_state: no goal_state")
        return
    if task.actions is None and task.env_assertions is None:
        notes.append(
            f"{where}: DB is scored but actions and env_assertions are null: tau2 passes the "
            "DB check whatever the state, no goal_state"
        )
        return
    case["goal_state"] = "plan"
    counts["cases_with_goal_state"] += 1


def _has_initial_state(initial_state: Any) -> bool:
    """Whether a task's `initial_state` sets anything up (tau2's `InitialState` with its
    `initialization_data`, `initialization_actions` or `message_history` given)."""
    if isinstance(initial_state, dict):
        return any(value not in (None, [], {}) for value in initial_state.values())
    return initial_state is not None


def _data_module(checkout: str, domain: str) -> str:
    return (
        f'"""Generated by `toolscore import tau2-bench`: the {domain} domain\'s Environment, as\n'
        "tau2's get_environment() builds it from the checkout, and its compared form, its\n"
        "databases' model_dump (imported only by `score --env`; move the checkout and import\n"
        'again)."""\n\n'
        "from typing import Any\n\n"
        "from toolscore.tau2 import checkout\n\n"
        f"CHECKOUT = {checkout!r}\n"
        "snapshot = checkout.snapshot\n"
        "restore = checkout.restore\n\n\n"
        "def load_environment() -> Any:\n"
        f"    return checkout.load_environment(CHECKOUT, {domain!r})\n"
    )


def _tools_module(checkout: str, tools: list[Tool]) -> str:
    lines = [
        '"""Generated by `toolscore import tau2-bench`: the domain\'s tools, each calling the',
        'checkout\'s own Environment.make_tool_call (imported only by `score --env`)."""',
        "",
        "from typing import Any",
        "",
        "from toolscore.tau2 import checkout",
        "",
        f"CHECKOUT = {checkout!r}",
    ]
    for tool in tools:
        lines += [
            "",
            "",
            f"def {tool.name}(state: Any, /, **kwargs: Any) -> Any:",
            f"    return checkout.call_tool(state, {tool.name!r}, kwargs)",
        ]
    return "\n".join(lines) + "\n"


def write_import(result: Tau2Import, out_dir: str | Path) -> list[Path]:
    """Write the spec, the cases, the two modules and `import.json` into `out_dir`: nothing
    is half-written (`files.write_files`)."""
    header = (
        f"# Converted from tau2-bench ({result.provenance['domain']}) by "
        "`toolscore import tau2-bench`; see import.json.\n"
    )
    about = {**result.provenance, "counts": result.counts, "notes": result.notes}
    files = import_files(header, result.spec, result.cases, result.modules, about)
    return write_files(out_dir, files)
