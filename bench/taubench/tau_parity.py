"""tau-bench parity: the annotated actions of every task of a domain's test split, and
perturbations of them (tau_perturb.py), scored by tau-bench's own reward code and by toolscore
(`import tau-bench`, `import tau-bench-results`, `score --env`) side by side; every
disagreement listed, and the replay time of both in one run.

Run in the bench venv (setup.sh):
    bench/taubench/.venv/bin/python bench/taubench/tau_parity.py [--domain retail] [--repeat 3]

tau-bench's side: the domain's Env (tau_bench.envs) built with the human user (nothing is
asked: the bench never calls reset() or the user), then per trajectory what a run does: the
data loaded afresh (as reset() does), each tool call stepped through `Env.step` (which ends
the episode at a terminal tool and computes the reward there), each assistant text recorded
as a `respond` action, and `Env.calculate_reward()` at the end. litellm, imported by
tau_bench.envs.user for the LLM user, is replaced by a stub: no model is ever called.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tau_compare import compare, score, show  # noqa: E402
from tau_perturb import PERTURBATIONS, messages  # noqa: E402

stub = types.ModuleType("litellm")


def _no_model(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("the parity bench never calls a model")


stub.completion = _no_model  # type: ignore[attr-defined]
sys.modules.setdefault("litellm", stub)

from tau_bench.envs import get_env  # noqa: E402
from tau_bench.types import Action  # noqa: E402

from toolscore.taubench import import_taubench, write_import  # noqa: E402
from toolscore.taubench.results import Counts, convert_entry  # noqa: E402


def tau_bench_run(env: Any, index: int, steps: list[Any], parts: bool = False) -> dict[str, Any]:
    """tau-bench's reward for one trajectory, and each call's observation ("" when the
    episode ended before it). With `parts`, also the reward's two halves (untimed runs
    only: it hashes the data once more): `r_actions` (the data hash equals the annotated
    actions') and `r_outputs` (every output found; None for a task without outputs)."""
    env.task_index = index
    env.task = env.tasks[index]
    env.data = env.data_load_func()
    env.actions = []
    observations: list[str] = []
    result = None
    agent_hash = None
    for step in steps:
        if step[0] == "say":
            env.actions.append(Action(name="respond", kwargs={"content": step[1]}))
            continue
        if result is not None:
            observations.append("")
            continue
        name, kwargs = step[-2], step[-1]
        if parts and name in env.terminate_tools:
            agent_hash = env.get_data_hash()  # terminal tools change no data in either domain
        response = env.step(Action(name=name, kwargs=kwargs))
        observations.append(response.observation)
        if response.done:
            result = response.info.reward_info
    if result is None:
        agent_hash = env.get_data_hash() if parts else None
        result = env.calculate_reward()
    run: dict[str, Any] = {"reward": result.reward, "observations": observations}
    if parts:
        run["r_actions"] = agent_hash == env.get_data_hash()  # calculate_reward left the goal
        outputs = getattr(result.info, "outputs", None)
        run["r_outputs"] = None if outputs is None else all(outputs.values())
    return run


def _replayed(observations: Any) -> Any:
    """An `observe` for perturb.messages: the observations tau-bench's run made, in order."""
    return lambda name, kwargs: next(observations)


def run_domain(domain: str, out: Path, repeat: int) -> dict[str, Any]:
    env = get_env(domain, user_strategy="human", user_model="none", task_split="test", task_index=0)
    checkout = Path(str(sys.modules["tau_bench"].__file__)).parent.parent
    imported = import_taubench(str(checkout), domain, "test")
    folder = out / domain
    write_import(imported, folder)
    cases = {case["id"]: case for case in imported.cases}
    tasks = env.tasks

    trajectories = []  # (task index, variant, steps)
    for index, task in enumerate(tasks):
        others = tasks[index + 1 :] + tasks[:index]
        for variant, perturb in PERTURBATIONS.items():
            steps = perturb(task, others)
            if steps is not None:
                trajectories.append((index, variant, steps))

    tau_times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for i, _variant, steps in trajectories:
            tau_bench_run(env, i, steps)
        tau_times.append(time.perf_counter() - started)
    runs = {(i, v): tau_bench_run(env, i, s, parts=True) for i, v, s in trajectories}
    traj_of = {
        (i, v): messages(tasks[i].instruction, s, _replayed(iter(runs[(i, v)]["observations"])))
        for i, v, s in trajectories
    }

    counts = Counts()
    with (
        open(folder / "parity_cases.jsonl", "w") as cases_file,
        open(folder / "parity_outputs.jsonl", "w") as outputs_file,
    ):
        for index, variant, _ in trajectories:
            case = {**cases[str(index)], "id": f"{index}/{variant}"}
            cases_file.write(json.dumps(case) + "\n")
            entry = {
                "task_id": index,
                "trial": 0,
                "traj": traj_of[(index, variant)],
                "reward": runs[(index, variant)]["reward"],
            }
            line = convert_entry(entry, 0, "parity", counts)
            line["id"] = case["id"]
            line.pop("trial")  # one line per case here: the variants are cases of their own
            line["r_actions"] = runs[(index, variant)]["r_actions"]  # kept, not scored
            line["r_outputs"] = runs[(index, variant)]["r_outputs"]
            outputs_file.write(json.dumps(line) + "\n")

    score_times = [score(folder) for _ in range(max(repeat, 1))]
    result = compare(folder)
    tau_median = sorted(tau_times)[len(tau_times) // 2] if tau_times else float("nan")
    score_median = sorted(score_times)[len(score_times) // 2]
    return {
        "domain": domain,
        **result,
        "tau_bench_seconds": tau_times,
        "toolscore_seconds": score_times,
        "speed_ratio_median": tau_median / score_median,
        "dropped_texts": counts.dropped_texts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domain", nargs="+", default=["retail", "airline"])
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs of each side (0: verdicts only)"
    )
    parser.add_argument("--out", default=str(HERE / "out"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = [run_domain(domain, out, args.repeat) for domain in args.domain]
    (out / "parity.json").write_text(json.dumps(results, indent=2))
    for r in results:
        show(r["domain"], r)
        tau, ts = r["tau_bench_seconds"], r["toolscore_seconds"]
        if not tau:  # --repeat 0: verdicts only
            continue
        print(
            f"  replay: tau-bench {min(tau):.2f}-{max(tau):.2f} s, toolscore score --env "
            f"{min(ts):.2f}-{max(ts):.2f} s (median ratio {r['speed_ratio_median']:.1f}x)"
        )


if __name__ == "__main__":
    main()
