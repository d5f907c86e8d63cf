"""toolscore's `score --env` on a tau2 parity folder (written by tau2_parity.py), two
source trees side by side in one run: CPU and wall seconds of each, one process at a time
(alternating, `--repeat` rounds), and whether every case's verdict is the same under both.

Run in the bench venv (setup.sh), after tau2_parity.py has written the folder:
    bench/tau2/.venv/bin/python bench/tau2/tau2_speed.py --folder bench/tau2/out/retail \\
        --before /path/to/old/src [--after src] [--repeat 1] [--limit N]

`--before` and `--after` are `src` folders (PYTHONPATH for the `score --env` process);
each scores with the spec its own `import tau2-bench` writes (`--before-specs`, default the
folder's tools.yaml, for `--before`; `--after-specs` for `--after`, default: imported
afresh by `--after` into FOLDER/after/), on the same cases and outputs. `--limit N`
scores the first N cases only. tau2's own time for the same trajectories is in parity.json
beside the folder, if any.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def score(
    specs: Path, source: Path, cases: Path, outputs: Path, report: Path
) -> tuple[float, float]:
    """`score --env` of the spec file `specs` with `source` first on PYTHONPATH: wall and
    CPU seconds."""
    command = [
        sys.executable, "-m", "toolscore", "score", "--specs", str(specs),
        "--cases", str(cases), "--outputs", str(outputs), "--env", "--workers", "1",
        "--json", str(report),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(source), "TOOLSCORE_PURE_PYTHON": "1"}
    env.setdefault("LOGURU_LEVEL", "WARNING")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"toolscore ({source}) failed: {done.stderr.strip()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def verdicts(report: Path) -> dict[str, Any]:
    """Each case's verdict as the parity compares it, by id."""
    found = {}
    for case in json.loads(report.read_text())["cases"]:
        state = case.get("state") or {}
        found[case["id"]] = (
            case["passed"], case.get("state_passed"), state.get("outputs_passed"),
            (state.get("hashes") or {}).get("final"), state.get("missing_outputs"),
        )  # fmt: skip
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=ROOT / "src")
    parser.add_argument("--before-specs", type=Path, default=None)
    parser.add_argument("--after-specs", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    folder = args.folder.resolve()
    cases, outputs = folder / "parity_cases.jsonl", folder / "parity_outputs.jsonl"
    if args.limit is not None:
        wanted = cases.read_text().splitlines()[: args.limit]
        ids = {json.loads(line)["id"] for line in wanted}
        cases, outputs = folder / "speed_cases.jsonl", folder / "speed_outputs.jsonl"
        cases.write_text("".join(line + "\n" for line in wanted))
        lines = (folder / "parity_outputs.jsonl").read_text().splitlines()
        outputs.write_text("".join(x + "\n" for x in lines if json.loads(x)["id"] in ids))
    after_specs = args.after_specs
    if after_specs is None:
        about = json.loads((folder / "import.json").read_text())
        command = [
            sys.executable, "-m", "toolscore", "import", "tau2-bench", about["checkout"],
            "--domain", about["domain"], "--out", str(folder / "after"),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(args.after.resolve())}
        subprocess.run(command, check=True, capture_output=True, env=env)
        after_specs = folder / "after" / "tools.yaml"
    specs = {"before": args.before_specs or folder / "tools.yaml", "after": after_specs}
    times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    reports = {name: folder / f"speed_{name}.json" for name in times}
    for _ in range(args.repeat):
        for name, source in (("before", args.before), ("after", args.after)):
            run = score(specs[name], source.resolve(), cases, outputs, reports[name])
            times[name].append(run)
    old, new = verdicts(reports["before"]), verdicts(reports["after"])
    differing = sorted(case for case in old if old[case] != new.get(case))
    best = {name: min(runs, key=lambda t: t[1]) for name, runs in times.items()}
    result = {
        "cases": len(old),
        "identical_verdicts": not differing and old.keys() == new.keys(),
        "differing": differing[:20],
        "seconds": {
            name: {"wall": round(w, 1), "cpu": round(c, 1)} for name, (w, c) in best.items()
        },
        "cpu_ratio_before_over_after": round(best["before"][1] / best["after"][1], 2),
    }
    parity = folder.parent / "parity.json"
    if parity.is_file():
        for entry in json.loads(parity.read_text()):
            if entry["domain"] == folder.name:
                wall, cpu = entry["tau2_seconds"]
                result["tau2_run_and_evaluate"] = {"wall": round(wall, 1), "cpu": round(cpu, 1)}
                if args.limit is None:
                    result["cpu_ratio_after_over_tau2"] = round(best["after"][1] / cpu, 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
