"""Score a parity folder with toolscore and compare its verdicts with tau-bench's rewards.

tau_parity.py writes, per domain, `parity_cases.jsonl` and `parity_outputs.jsonl` (each
outputs line keeps the `reward` tau-bench's own code gave that trajectory). This module runs
`toolscore score --env` on them (the toolscore first on PYTHONPATH: run it again with another
branch's sources to see what that branch changes) and counts agreements per perturbation:

    PYTHONPATH=src python bench/taubench/tau_compare.py bench/taubench/out/retail

toolscore's verdict for tau-bench's reward: the state check passed and no required output
is missing (call-level mismatches are a diagnosis tau-bench does not make).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any


def score(folder: Path) -> float:
    """Run `toolscore score --env` on the folder's parity files; its wall time in seconds."""
    command = [
        sys.executable, "-m", "toolscore", "score", "--specs", str(folder / "tools.yaml"),
        "--cases", str(folder / "parity_cases.jsonl"),
        "--outputs", str(folder / "parity_outputs.jsonl"),
        "--env", "--json", str(folder / "report.json"),
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"toolscore failed: {done.stderr.strip()}")
    return seconds


def compare(folder: Path) -> dict[str, Any]:
    """Agreements per perturbation, and every disagreement with what toolscore saw."""
    rewards, halves = {}, {}
    with open(folder / "parity_outputs.jsonl") as outputs:
        for line in outputs:
            entry = json.loads(line)
            rewards[entry["id"]] = entry["reward"]
            halves[entry["id"]] = (entry.get("r_actions"), entry.get("r_outputs"))
    report = json.loads((folder / "report.json").read_text())
    agree: Counter[tuple[str, bool]] = Counter()
    state_agree: Counter[bool] = Counter()
    outputs_agree: Counter[bool] = Counter()
    tau_passes: Counter[str] = Counter()
    disagreements = []
    for case in report["cases"]:
        variant = case["id"].split("/")[1]
        state = case.get("state") or {}
        toolscore_pass = bool(case.get("state_passed")) and state.get("outputs_passed") is not False
        tau_pass = rewards[case["id"]] == 1.0
        tau_passes[variant] += tau_pass
        agree[(variant, toolscore_pass == tau_pass)] += 1
        r_actions, r_outputs = halves[case["id"]]
        if r_actions is not None:
            state_agree[bool(case.get("state_passed")) == r_actions] += 1
        if r_outputs is not None:
            outputs_agree[state.get("outputs_passed") == r_outputs] += 1
        if toolscore_pass != tau_pass:
            disagreements.append(
                {
                    "case": case["id"],
                    "tau_bench": tau_pass,
                    "tau_bench_r_actions": halves[case["id"]][0],
                    "tau_bench_r_outputs": halves[case["id"]][1],
                    "toolscore_state": case.get("state_passed"),
                    "missing_outputs": state.get("missing_outputs"),
                    "diff": (state.get("diff") or {}).get("changes", [])[:3],
                    "terminal": state.get("terminal"),
                }
            )
    variants = sorted({variant for variant, _ in agree})
    per_variant = {
        v: {"n": agree[(v, True)] + agree[(v, False)], "agree": agree[(v, True)],
            "tau_bench_pass": tau_passes[v]}
        for v in variants
    }  # fmt: skip
    return {
        "trajectories": len(report["cases"]),
        "agree": sum(v["agree"] for v in per_variant.values()),
        "per_variant": per_variant,
        "state_agree": [state_agree[True], state_agree[True] + state_agree[False]],
        "outputs_agree": [outputs_agree[True], outputs_agree[True] + outputs_agree[False]],
        "disagreements": disagreements,
    }


def show(name: str, result: dict[str, Any]) -> None:
    print(f"{name}: {result['agree']}/{result['trajectories']} agree")
    (state, n_state), (outputs, n_outputs) = result["state_agree"], result["outputs_agree"]
    print(f"  state check vs the data hash: {state}/{n_state} agree")
    print(f"  outputs check vs tau-bench's: {outputs}/{n_outputs} agree")
    for variant, v in result["per_variant"].items():
        counts = f"{v['agree']:4}/{v['n']:<4}"
        print(f"  {variant:22} {counts} agree  (tau-bench passes {v['tau_bench_pass']})")
    for d in result["disagreements"][:10]:
        print("  DISAGREE", json.dumps(d)[:300])


def main() -> None:
    for folder in map(Path, sys.argv[1:]):
        seconds = score(folder)
        result = compare(folder)
        show(folder.name, result)
        print(f"  toolscore score --env: {seconds:.2f} s")


if __name__ == "__main__":
    main()
