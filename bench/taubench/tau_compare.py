"""Score a parity folder with toolscore and compare its verdicts with tau-bench's rewards.

tau_parity.py writes, per domain, `parity_cases.jsonl` and `parity_outputs.jsonl` (each
outputs line keeps the `reward` tau-bench's own code gave that trajectory). This module runs
`toolscore score --env` on them (the toolscore first on PYTHONPATH: run it again with another
branch's sources to see what that branch changes) and counts agreements per perturbation:

    PYTHONPATH=src python bench/taubench/tau_compare.py bench/taubench/out/retail

toolscore's verdict for tau-bench's reward: the state check passed and no required output
is missing (call-level mismatches are a diagnosis tau-bench does not make).

`--emulate-any PATH` (until the trials branch is merged): PATH is that branch's
`src/toolscore/state/outputs.py`; its `missing_outputs(..., place="any",
normalise="tau-bench")` is applied to the text of every assistant message of each outputs
line, and the agreement is counted again with that outputs check in place of this branch's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any


def score(folder: Path) -> float:
    """Run `toolscore score --env` on the folder's parity files; its wall time in seconds."""
    return timed_score(folder)[0]


def timed_score(folder: Path) -> tuple[float, float]:
    """Run `toolscore score --env` on the folder's parity files: its wall time and its CPU
    time (user and system, of the process and its workers) in seconds."""
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
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def _said(line: dict[str, Any]) -> list[str]:
    """The text of every assistant message of an outputs line (tool-call texts are already
    dropped by the converter, as tau-bench never reads them)."""
    return [
        m["content"]
        for m in line.get("messages", [])
        if m.get("role") == "assistant" and isinstance(m.get("content"), str)
    ]


def emulated_outputs(folder: Path, outputs_module: Path) -> dict[str, bool]:
    """Per case with required outputs: whether the trials branch's check (`any`, `tau-bench`)
    finds them all."""
    spec = importlib.util.spec_from_file_location("trials_outputs", outputs_module)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {outputs_module}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    required = {}
    with open(folder / "parity_cases.jsonl") as cases:
        for text in cases:
            case = json.loads(text)
            if case.get("required_outputs"):
                required[case["id"]] = case["required_outputs"]
    found = {}
    with open(folder / "parity_outputs.jsonl") as outputs:
        for text in outputs:
            line = json.loads(text)
            if line["id"] in required:
                missing = module.missing_outputs(
                    required[line["id"]], None, said=_said(line), place="any", normalise="tau-bench"
                )
                found[line["id"]] = not missing
    return found


def compare(folder: Path, outputs_found: dict[str, bool] | None = None) -> dict[str, Any]:
    """Agreements per perturbation, and every disagreement with what toolscore saw;
    `outputs_found` replaces toolscore's outputs verdicts (see `--emulate-any`)."""
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
        outputs_passed = state.get("outputs_passed")
        if outputs_found is not None and case["id"] in outputs_found:
            outputs_passed = outputs_found[case["id"]]
        toolscore_pass = bool(case.get("state_passed")) and outputs_passed is not False
        tau_pass = rewards[case["id"]] == 1.0
        tau_passes[variant] += tau_pass
        agree[(variant, toolscore_pass == tau_pass)] += 1
        r_actions, r_outputs = halves[case["id"]]
        if r_actions is not None:
            state_agree[bool(case.get("state_passed")) == r_actions] += 1
        if r_outputs is not None:
            outputs_agree[outputs_passed == r_outputs] += 1
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--emulate-any", type=Path, help="the trials branch's state/outputs.py")
    parser.add_argument("--no-score", action="store_true", help="compare the existing reports")
    args = parser.parse_args()
    for folder in args.folders:
        if not args.no_score:
            print(f"{folder.name}: toolscore score --env: {score(folder):.2f} s")
        show(folder.name, compare(folder))
        if args.emulate_any:
            found = emulated_outputs(folder, args.emulate_any)
            show(f"{folder.name} (trials branch's outputs check, emulated)", compare(folder, found))


if __name__ == "__main__":
    main()
