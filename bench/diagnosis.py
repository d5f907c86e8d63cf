"""Diagnosis cost, old tree against new, in one run (issue 12, item 2).

For each source tree given (`src` folders; the first is usually a `git worktree` of the base
commit), a child process times `score_case` per case (best of 5 per case, mean over the
cases) on BFCL's categories, first possible answers and perturbed outputs, and on the
overlap and chains cases of bench/run.py. The trees alternate, `--rounds` times, because the
machine may be shared. Needs BFCL's venv:

    bench/bfcl/.venv/bin/python bench/diagnosis.py /tmp/base/src src [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent


def per_case(work: list[Any], score: Any) -> float:
    """Mean over the items of the best of five timings of `score(item)`, in microseconds."""
    total = 0.0
    for item in work:
        score(item)
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            score(item)
            best = min(best, time.perf_counter() - start)
        total += best
    return total / len(work) * 1e6


def child() -> None:
    """Measure the toolscore on sys.path; print one JSON object of figures."""
    sys.path[:0] = [str(BENCH / "bfcl"), str(BENCH)]
    import speed  # noqa: PLC0415
    from bfcl_env import SPEED_CATEGORIES, load_category  # noqa: PLC0415

    import generate  # noqa: PLC0415 - only the child needs these
    import run  # noqa: PLC0415
    from toolscore import parse_case, parse_output, score_case  # noqa: PLC0415
    from toolscore.bfcl import convert_result  # noqa: PLC0415

    figures: dict[str, float] = {}
    for name in SPEED_CATEGORIES:
        category = load_category(name)
        for mixed in (False, True):
            pairs = speed.outputs(category, mixed)
            work = [
                (
                    category.cases[entry["id"]],
                    parse_output(convert_result({"id": entry["id"], "result": o})),
                )
                for entry, o in pairs
            ]
            label = f"{name}, {'perturbed' if mixed else 'first answers'} (us/case)"
            figures[label] = per_case(work, lambda w, s=category.specs: score_case(s, *w))
    specs = run.bench_specs()
    for label, make in (("overlap 50", generate.overlap), ("chains 10", generate.chains)):
        for wrong in (False, True):
            case_data, output = make(generate.case_rng(0), 0, wrong=wrong)
            work = [(parse_case(case_data, specs), parse_output(output))]
            key = f"{label}, {'failing' if wrong else 'passing'} (ms)"
            figures[key] = per_case(work, lambda w: score_case(specs, *w)) / 1000
    print(json.dumps(figures))


def main() -> None:
    """Alternate the trees, keep each figure's best, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", help="src folders to compare")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    best: dict[str, dict[str, float]] = {tree: {} for tree in args.trees}
    for _ in range(args.rounds):
        for tree in args.trees:
            env = {**os.environ, "PYTHONPATH": tree}
            done = subprocess.run(
                [sys.executable, __file__, "--child"], env=env, capture_output=True, check=True
            )
            for key, value in json.loads(done.stdout).items():
                best[tree][key] = min(best[tree].get(key, value), value)
    print("| figure | " + " | ".join(args.trees) + " | new / old |")
    print("|---|" + "---|" * (len(args.trees) + 1))
    first, last = args.trees[0], args.trees[-1]
    for key in best[first]:
        values = " | ".join(f"{best[tree][key]:.1f}" for tree in args.trees)
        print(f"| {key} | {values} | {best[last][key] / best[first][key]:.2f} |")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        main()
