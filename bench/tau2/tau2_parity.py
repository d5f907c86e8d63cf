"""tau2-bench parity: every task's actions (and perturbations of them, tau2_perturb.py) run
through tau2's own Environment, scored by tau2's own evaluators and by toolscore (`import
tau2-bench`, `import tau2-bench-results`, `score --env`) side by side; every disagreement
listed.

Run in the bench venv (setup.sh):
    bench/tau2/.venv/bin/python bench/tau2/tau2_parity.py [--domain retail airline] [--tasks N]

tau2's side, per trajectory, what its orchestrator and `evaluate_simulation` do, without a
model: a fresh `get_environment()`; each assistant tool call answered by
`Environment.get_response` (the tool message it records); each text an `AssistantMessage`;
then `EnvironmentEvaluator.calculate_reward` (the replay of the trajectory against the gold
actions' replay: DB hash and env assertions, as the task's reward basis says),
`CommunicateEvaluator` and `ActionEvaluator`, multiplied as `evaluate_simulation` does for
the components in the basis. NL_ASSERTION (an LLM judge) is left out of the product on both
sides: toolscore keeps the assertions, unscored. tau2 is imported under an empty `tau2`
package (its `__init__` imports the agents and litellm, which the bench never needs).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import types
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# tau2 logs every tool response at DEBUG through loguru (to stderr): only warnings, here and
# in the `score --env` process (loguru reads LOGURU_LEVEL when it is first imported)
os.environ.setdefault("LOGURU_LEVEL", "WARNING")
sys.path.insert(0, str(HERE))

from tau2_perturb import PERTURBATIONS  # noqa: E402

from toolscore.tau2 import import_tau2, write_import  # noqa: E402
from toolscore.tau2.results import Counts, convert_entry  # noqa: E402


def tau2_package(checkout: Path) -> None:
    """Register `tau2` as an empty package of the checkout's modules (skipping its __init__)."""
    package = types.ModuleType("tau2")
    package.__path__ = [str(checkout / "src" / "tau2")]
    sys.modules.setdefault("tau2", package)


def tau2_run(domain_env: Any, task: Any, steps: list[Any]) -> dict[str, Any]:
    """One trajectory through tau2: its messages (as tau2 records them) and its rewards."""
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage  # noqa: PLC0415
    from tau2.evaluator.evaluator_action import ActionEvaluator  # noqa: PLC0415
    from tau2.evaluator.evaluator_communicate import CommunicateEvaluator  # noqa: PLC0415
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator  # noqa: PLC0415

    env = domain_env.get_environment()
    messages: list[Any] = [UserMessage(role="user", content="Hello, I need help.")]
    for k, step in enumerate(steps):
        if step[0] == "say":
            messages.append(AssistantMessage(role="assistant", content=step[1]))
            continue
        call = ToolCall(id=f"call_{k}", name=step[1], arguments=step[2], requestor="assistant")
        messages.append(AssistantMessage(role="assistant", content=None, tool_calls=[call]))
        messages.append(env.get_response(call))
    env_info = EnvironmentEvaluator.calculate_reward(
        environment_constructor=domain_env.get_environment,
        task=task,
        full_trajectory=messages,
        solo_mode=False,
    )
    communicate = CommunicateEvaluator.calculate_reward(task=task, full_trajectory=messages)
    action = ActionEvaluator.calculate_reward(task=task, full_trajectory=messages)
    basis = {b.value for b in task.evaluation_criteria.reward_basis}
    reward = 1.0
    if basis & {"DB", "ENV_ASSERTION"}:
        reward *= env_info.reward
    if "COMMUNICATE" in basis:
        reward *= communicate.reward
    if "ACTION" in basis:
        reward *= action.reward
    checks = communicate.communicate_checks
    return {
        "messages": [m.model_dump(mode="json") for m in messages],
        "reward": reward,
        "r_db": env_info.db_check.db_match if env_info.db_check is not None else None,
        "r_communicate": None if not checks else all(c.met for c in checks),
    }


def run_domain(domain: str, checkout: Path, out: Path, limit: int | None = None) -> dict[str, Any]:
    import importlib  # noqa: PLC0415

    from tau2.data_model.tasks import Task  # noqa: PLC0415

    domain_env = importlib.import_module(f"tau2.domains.{domain}.environment")
    imported = import_tau2(str(checkout), domain)
    folder = out / domain
    write_import(imported, folder)
    writes = frozenset(imported.provenance["replayed_by_tau2"])
    cases = {case["id"]: case for case in imported.cases}
    raw = json.loads((checkout / imported.provenance["tasks"]).read_text())
    tasks = [Task.model_validate(task) for task in raw]

    started, cpu = time.perf_counter(), time.process_time()
    runs = {}
    for index, task in enumerate(tasks[:limit]):
        others = tasks[index + 1 :] + tasks[:index]
        for variant, perturb in PERTURBATIONS.items():
            steps = perturb(task, others, writes)
            if steps is not None:
                runs[(task.id, variant)] = tau2_run(domain_env, task, steps)
    tau2_seconds = (time.perf_counter() - started, time.process_time() - cpu)

    simulations = [
        {"id": f"{t}/{v}", "task_id": t, "trial": 0, "termination_reason": "agent_stop",
         "reward_info": {"reward": run["reward"]}, "messages": run["messages"]}
        for (t, v), run in runs.items()
    ]  # fmt: skip
    (folder / "tau2_results.json").write_text(json.dumps({"simulations": simulations}))
    counts = Counts()
    with (
        open(folder / "parity_cases.jsonl", "w") as cases_file,
        open(folder / "parity_outputs.jsonl", "w") as outputs_file,
    ):
        for index, ((task_id, variant), run) in enumerate(runs.items()):
            case_id = f"{task_id}/{variant}"
            cases_file.write(json.dumps({**cases[task_id], "id": case_id}) + "\n")
            line = convert_entry(simulations[index], index, "parity", counts)
            line["id"] = case_id
            line.pop("trial")  # one line per case: the variants are cases of their own
            line["r_db"], line["r_communicate"] = run["r_db"], run["r_communicate"]
            outputs_file.write(json.dumps(line) + "\n")
    ours = timed_score(folder)
    return {
        "domain": domain,
        **compare(folder),
        "tau2_seconds": tau2_seconds,
        "toolscore_seconds": ours,
    }


def timed_score(folder: Path) -> tuple[float, float]:
    """`toolscore score --env` on the folder's parity files: wall and CPU seconds."""
    import resource  # noqa: PLC0415

    command = [
        sys.executable, "-m", "toolscore", "score", "--specs", str(folder / "tools.yaml"),
        "--cases", str(folder / "parity_cases.jsonl"),
        "--outputs", str(folder / "parity_outputs.jsonl"),
        "--env", "--json", str(folder / "report.json"),
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"toolscore failed: {done.stderr.strip()}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(folder: Path) -> dict[str, Any]:
    """Agreements per perturbation and per component, and every disagreement."""
    lines = {}
    with open(folder / "parity_outputs.jsonl") as outputs:
        for text in outputs:
            line = json.loads(text)
            lines[line["id"]] = line
    report = json.loads((folder / "report.json").read_text())
    agree: Counter[tuple[str, bool]] = Counter()
    passes: Counter[str] = Counter()
    db_agree: Counter[bool] = Counter()
    communicate_agree: Counter[bool] = Counter()
    disagreements = []
    for case in report["cases"]:
        variant = case["id"].split("/")[1]
        line = lines[case["id"]]
        state = case.get("state") or {}
        ours = case.get("state_passed") is not False and state.get("outputs_passed") is not False
        theirs = line["reward"] == 1.0
        passes[variant] += theirs
        agree[(variant, ours == theirs)] += 1
        if case.get("state_passed") is not None and line["r_db"] is not None:
            db_agree[case["state_passed"] == line["r_db"]] += 1
        if state.get("outputs_passed") is not None and line["r_communicate"] is not None:
            communicate_agree[state["outputs_passed"] == line["r_communicate"]] += 1
        if ours != theirs:
            disagreements.append(
                {
                    "case": case["id"], "tau2": theirs, "tau2_db": line["r_db"],
                    "tau2_communicate": line["r_communicate"],
                    "toolscore_state": case.get("state_passed"),
                    "missing_outputs": state.get("missing_outputs"),
                    "diff": (state.get("diff") or {}).get("changes", [])[:3],
                }
            )  # fmt: skip
    variants = sorted({variant for variant, _ in agree})
    return {
        "trajectories": len(report["cases"]),
        "agree": sum(agree[(v, True)] for v in variants),
        "per_variant": {
            v: {
                "n": agree[(v, True)] + agree[(v, False)],
                "agree": agree[(v, True)],
                "tau2_pass": passes[v],
            }
            for v in variants
        },
        "db_agree": [db_agree[True], db_agree[True] + db_agree[False]],
        "communicate_agree": [
            communicate_agree[True],
            communicate_agree[True] + communicate_agree[False],
        ],
        "disagreements": disagreements,
    }


def show(result: dict[str, Any]) -> None:
    print(f"{result['domain']}: {result['agree']}/{result['trajectories']} agree")
    (db, n_db), (comm, n_comm) = result["db_agree"], result["communicate_agree"]
    print(f"  state check vs tau2's DB check: {db}/{n_db} agree")
    print(f"  required outputs vs tau2's communicate check: {comm}/{n_comm} agree")
    for variant, v in result["per_variant"].items():
        print(f"  {variant:16} {v['agree']:4}/{v['n']:<4} agree  (tau2 passes {v['tau2_pass']})")
    for d in result["disagreements"][:20]:
        print("  DISAGREE", json.dumps(d)[:400])
    (tw, tc), (sw, sc) = result["tau2_seconds"], result["toolscore_seconds"]
    print(
        f"  tau2 run+evaluate {tw:.1f} s wall ({tc:.1f} s CPU); "
        f"score --env {sw:.1f} s wall ({sc:.1f} s CPU)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domain", nargs="+", default=["retail"])
    parser.add_argument("--checkout", type=Path, help="default: the one setup.sh installed")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument(
        "--tasks", type=int, default=None, help="only the first N tasks of each domain"
    )
    args = parser.parse_args()
    recorded = Path(sys.prefix) / "tau2-checkout"
    checkout = args.checkout or Path(recorded.read_text().strip())
    tau2_package(checkout.resolve())
    args.out.mkdir(parents=True, exist_ok=True)
    results = [
        run_domain(domain, checkout.resolve(), args.out, args.tasks) for domain in args.domain
    ]
    (args.out / "parity.json").write_text(json.dumps(results, indent=2))
    for result in results:
        show(result)


if __name__ == "__main__":
    main()
