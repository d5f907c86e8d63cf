"""tau-bench parity: the annotated actions of every task of a domain's test split, and
perturbations of them (tau_perturb.py), scored by tau-bench's own reward code and by toolscore
(`import tau-bench`, `import tau-bench-results`, `score --env`) side by side; every
disagreement listed, and the replay time of both in one run.

Run in the bench venv (setup.sh):
    bench/taubench/.venv/bin/python bench/taubench/tau_parity.py [--domain retail] [--repeat 3]
and, once the parity files are written, to time both sides again in turns:
    bench/taubench/.venv/bin/python bench/taubench/tau_parity.py --speed-only --repeat 2
and with the goals written as state checks (`import tau-bench --as-checks`) instead:
    bench/taubench/.venv/bin/python bench/taubench/tau_parity.py --as-checks --repeat 0 --out OUT

Both sides are timed in wall and CPU seconds (the machine is shared: CPU time is the steadier
figure): tau-bench's the loop below in this process, toolscore's the whole `score --env`
process and its workers (start-up, call scoring and replay).

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

from tau_compare import compare, show, timed_score  # noqa: E402
from tau_perturb import PERTURBATIONS, messages  # noqa: E402

stub = types.ModuleType("litellm")


def _no_model(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("the parity bench never calls a model")


stub.completion = _no_model  # type: ignore[attr-defined]
sys.modules.setdefault("litellm", stub)

from tau_bench.envs import get_env  # noqa: E402
from tau_bench.types import Action  # noqa: E402

from toolscore.lint.suggest import suggest_file  # noqa: E402
from toolscore.run import SPEC_ENVIRONMENT, environment  # noqa: E402
from toolscore.taubench import import_taubench, write_import  # noqa: E402
from toolscore.taubench.importer import with_checks  # noqa: E402
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


def _suggested(folder: Path) -> dict[str, Any]:
    """`lint --suggest-checks` on the folder's import: each case's checks and notes."""
    specs_path = str(folder / "tools.yaml")
    return {
        s.case_id: (s.checks, s.notes)
        for s in suggest_file(
            specs_path,
            folder / "cases.jsonl",
            lambda specs: environment(specs, specs_path, SPEC_ENVIRONMENT),
        )
    }


def run_domain(
    domain: str, out: Path, repeat: int, speed_only: bool = False, as_checks: bool = False
) -> dict[str, Any]:
    env = get_env(domain, user_strategy="human", user_model="none", task_split="test", task_index=0)
    checkout = Path(str(sys.modules["tau_bench"].__file__)).parent.parent
    imported = import_taubench(str(checkout), domain, "test")
    folder = out / domain
    if not speed_only:
        write_import(imported, folder)
        if as_checks:  # as `import tau-bench --as-checks` writes the goals
            imported = with_checks(imported, _suggested(folder))
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

    if speed_only:  # the parity files of an earlier run: both sides timed, in turns
        tau, ours = [], []
        for _ in range(max(repeat, 1)):
            tau.append(_timed_tau_bench(env, trajectories))
            ours.append(timed_score(folder))
        return _figures(domain, compare(folder), tau, ours, None)

    tau = [_timed_tau_bench(env, trajectories) for _ in range(repeat)]
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

    ours = [timed_score(folder) for _ in range(max(repeat, 1))]
    return _figures(domain, compare(folder), tau, ours, counts.dropped_texts)


def _timed_tau_bench(env: Any, trajectories: list[Any]) -> tuple[float, float]:
    """tau-bench's side, every trajectory once: its wall time and the CPU time it took (this
    process's), in seconds."""
    started, cpu = time.perf_counter(), time.process_time()
    for i, _variant, steps in trajectories:
        tau_bench_run(env, i, steps)
    return time.perf_counter() - started, time.process_time() - cpu


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2] if values else float("nan")


def _figures(
    domain: str,
    result: dict[str, Any],
    tau: list[tuple[float, float]],
    ours: list[tuple[float, float]],
    dropped_texts: int | None,
) -> dict[str, Any]:
    """A domain's verdicts and times: wall and CPU seconds of each timed run of each side,
    and the ratios of their medians."""
    figures = {
        "tau_bench_seconds": [wall for wall, _ in tau],
        "tau_bench_cpu_seconds": [cpu for _, cpu in tau],
        "toolscore_seconds": [wall for wall, _ in ours],
        "toolscore_cpu_seconds": [cpu for _, cpu in ours],
    }
    return {
        "domain": domain,
        **result,
        **figures,
        "speed_ratio_median": _median(figures["tau_bench_seconds"])
        / _median(figures["toolscore_seconds"]),
        "cpu_ratio_median": _median(figures["tau_bench_cpu_seconds"])
        / _median(figures["toolscore_cpu_seconds"]),
        "dropped_texts": dropped_texts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domain", nargs="+", default=["retail", "airline"])
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs of each side (0: verdicts only)"
    )
    parser.add_argument("--out", default=str(HERE / "out"))
    parser.add_argument(
        "--speed-only",
        action="store_true",
        help="on the parity files an earlier run wrote in OUT: time both sides in turns "
        "(tau-bench's rewards are not computed again) and compare the verdicts",
    )
    parser.add_argument(
        "--as-checks",
        action="store_true",
        help="import the tasks' goals as state checks (`import tau-bench --as-checks`)",
    )
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = [
        run_domain(domain, out, args.repeat, args.speed_only, args.as_checks)
        for domain in args.domain
    ]
    (out / "parity.json").write_text(json.dumps(results, indent=2))
    for r in results:
        show(r["domain"], r)
        tau, ts = r["tau_bench_seconds"], r["toolscore_seconds"]
        if not tau:  # --repeat 0: verdicts only
            continue
        tau_cpu, ts_cpu = r["tau_bench_cpu_seconds"], r["toolscore_cpu_seconds"]
        print(
            f"  replay, wall: tau-bench {min(tau):.2f}-{max(tau):.2f} s, toolscore score --env "
            f"{min(ts):.2f}-{max(ts):.2f} s (median ratio {r['speed_ratio_median']:.1f}x)"
        )
        print(
            f"  replay, CPU: tau-bench {min(tau_cpu):.2f}-{max(tau_cpu):.2f} s, toolscore "
            f"{min(ts_cpu):.2f}-{max(ts_cpu):.2f} s (median ratio {r['cpu_ratio_median']:.1f}x)"
        )


if __name__ == "__main__":
    main()
