"""tau-bench parity: the annotated actions of every task of a domain's test split, and
perturbations of them (perturb.py), scored by tau-bench's own reward code and by toolscore
(`import tau-bench`, `import tau-bench-results`, `score --env`) side by side; every
disagreement listed, and the replay time of both in one run.

Run in the bench venv (setup.sh):
    bench/taubench/.venv/bin/python bench/taubench/parity.py [--domain retail airline] [--repeat 3]

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
import subprocess
import sys
import time
import types
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from perturb import PERTURBATIONS, messages  # noqa: E402

stub = types.ModuleType("litellm")


def _no_model(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("the parity bench never calls a model")


stub.completion = _no_model  # type: ignore[attr-defined]
sys.modules.setdefault("litellm", stub)

from tau_bench.envs import get_env  # noqa: E402
from tau_bench.types import Action  # noqa: E402

from toolscore.taubench import import_taubench, write_import  # noqa: E402
from toolscore.taubench.results import Counts, convert_entry  # noqa: E402


def tau_bench_run(env: Any, index: int, steps: list[Any]) -> tuple[float, list[str]]:
    """tau-bench's reward for one trajectory, and each call's observation ("" when the
    episode ended before it)."""
    env.task_index = index
    env.task = env.tasks[index]
    env.data = env.data_load_func()
    env.actions = []
    observations: list[str] = []
    reward = None
    for step in steps:
        if step[0] == "say":
            env.actions.append(Action(name="respond", kwargs={"content": step[1]}))
            continue
        if reward is not None:
            observations.append("")
            continue
        name, kwargs = step[-2], step[-1]
        response = env.step(Action(name=name, kwargs=kwargs))
        observations.append(response.observation)
        if response.done:
            reward = response.reward
    if reward is None:
        reward = env.calculate_reward().reward
    return reward, observations


def run_domain(domain: str, out: Path, repeat: int) -> dict[str, Any]:
    env = get_env(domain, user_strategy="human", user_model="none", task_split="test", task_index=0)
    checkout = Path(sys.modules["tau_bench"].__file__).parent.parent
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
    rewards: dict[tuple[int, str], float] = {}
    traj_of: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for _ in range(repeat):
        started = time.perf_counter()
        runs = [(i, v, s, tau_bench_run(env, i, s)) for i, v, s in trajectories]
        tau_times.append(time.perf_counter() - started)
    for index, variant, steps, (reward, observations) in runs:
        rewards[(index, variant)] = reward
        seen = iter(observations)
        traj_of[(index, variant)] = messages(
            tasks[index].instruction, steps, lambda name, kwargs: next(seen)
        )

    counts = Counts()
    with open(folder / "parity_cases.jsonl", "w") as cases_file, open(
        folder / "parity_outputs.jsonl", "w"
    ) as outputs_file:
        for index, variant, _ in trajectories:
            case = {**cases[str(index)], "id": f"{index}/{variant}"}
            cases_file.write(json.dumps(case) + "\n")
            entry = {"task_id": index, "trial": 0, "traj": traj_of[(index, variant)],
                     "reward": rewards[(index, variant)]}
            line = convert_entry(entry, 0, "parity", counts)
            line["id"] = case["id"]
            line.pop("trial")  # one line per case here: the variants are cases of their own
            outputs_file.write(json.dumps(line) + "\n")

    score_times = []
    command = [
        sys.executable, "-m", "toolscore", "score", "--specs", str(folder / "tools.yaml"),
        "--cases", str(folder / "parity_cases.jsonl"), "--outputs",
        str(folder / "parity_outputs.jsonl"), "--env", "--json", str(folder / "report.json"),
    ]
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        score_times.append(time.perf_counter() - started)
        if done.returncode not in (0, 1):
            raise SystemExit(f"toolscore failed: {done.stderr.strip()}")
    report = json.loads((folder / "report.json").read_text())

    agree = Counter()
    disagreements = []
    for case in report["cases"]:
        index_text, variant = case["id"].split("/")
        state = case.get("state") or {}
        toolscore_pass = bool(case.get("state_passed")) and state.get("outputs_passed") is not False
        tau_pass = rewards[(int(index_text), variant)] == 1.0
        agree[(variant, toolscore_pass == tau_pass)] += 1
        if toolscore_pass != tau_pass:
            disagreements.append({
                "case": case["id"], "tau_bench": tau_pass, "toolscore": toolscore_pass,
                "state_passed": case.get("state_passed"), "missing_outputs": state.get("missing_outputs"),
                "diff": (state.get("diff") or {}).get("changes", [])[:3],
                "plan_errors": state.get("plan_errors"), "terminal": state.get("terminal"),
            })
    per_variant = {
        variant: {
            "n": agree[(variant, True)] + agree[(variant, False)],
            "agree": agree[(variant, True)],
            "tau_bench_pass": sum(1 for (i, v), r in rewards.items() if v == variant and r == 1.0),
        }
        for variant in PERTURBATIONS
        if agree[(variant, True)] + agree[(variant, False)]
    }
    return {
        "domain": domain,
        "trajectories": len(trajectories),
        "agree": sum(v["agree"] for v in per_variant.values()),
        "per_variant": per_variant,
        "disagreements": disagreements,
        "tau_bench_seconds": tau_times,
        "toolscore_seconds": score_times,
        "speed_ratio_median": sorted(tau_times)[len(tau_times) // 2] / sorted(score_times)[len(score_times) // 2],
        "dropped_texts": counts.dropped_texts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domain", nargs="+", default=["retail", "airline"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "out"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = [run_domain(domain, out, args.repeat) for domain in args.domain]
    (out / "parity.json").write_text(json.dumps(results, indent=2))
    for r in results:
        print(f"{r['domain']}: {r['agree']}/{r['trajectories']} agree; tau-bench "
              f"{min(r['tau_bench_seconds']):.2f}-{max(r['tau_bench_seconds']):.2f} s, toolscore "
              f"{min(r['toolscore_seconds']):.2f}-{max(r['toolscore_seconds']):.2f} s "
              f"(median ratio {r['speed_ratio_median']:.1f}x)")
        for variant, v in r["per_variant"].items():
            print(f"  {variant:22} {v['agree']:4}/{v['n']:<4} agree  (tau-bench passes {v['tau_bench_pass']})")
        for d in r["disagreements"][:20]:
            print("  DISAGREE", json.dumps(d)[:400])


if __name__ == "__main__":
    main()
