"""Diagnosing one case of n overlapping calls of one tool, old tree against new (issue 25).

The case is bench/generate.py's overlap case at n calls: plan call k accepts order k or k+1,
the calls come in reverse order, and one has a wrong amount, so the case fails and its
diagnosis pairs n plan calls with n produced calls at least cost. Each (tree, n) runs in a
fresh process, trees alternating, which reports the seconds of `score_case` and its own peak
resident memory (`ru_maxrss`, imports included):

    python bench/overlap_scale.py /tmp/base/src src [--sizes 1000,2000,3000]

Both trees run pure Python (TOOLSCORE_PURE_PYTHON=1), so that a stale compiled module in
either does not decide the comparison.
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

BENCH = Path(__file__).resolve().parent


def child(n: int) -> None:
    """Score the case of `n` overlapping calls once; print seconds and peak RSS as JSON."""
    sys.path.insert(0, str(BENCH))
    import yaml  # noqa: PLC0415

    import generate  # noqa: PLC0415 - the child's own tree is on its path
    from toolscore import parse_case, parse_output, parse_specs, score_case  # noqa: PLC0415

    generate.OVERLAP_CALLS = n
    specs, errors = parse_specs(yaml.safe_load(generate.SPEC), "bench")
    if specs is None:
        raise SystemExit(f"the bench spec does not load: {errors}")
    case_data, output = generate.overlap(generate.case_rng(0), 0, wrong=True)
    case, trajectory = parse_case(case_data, specs), parse_output(output)
    started = time.perf_counter()
    result = score_case(specs, case, trajectory)
    seconds = time.perf_counter() - started
    if result.passed:
        raise SystemExit("the overlap case passed: it is built to fail")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mib": peak, "mismatches": len(result.mismatches)}))


def measure(source: str, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": source, "TOOLSCORE_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(n)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", help="src folders to compare, old first")
    parser.add_argument("--sizes", default="1000,2000,3000", help="numbers of calls")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    sources = args.sources or ["src"]
    print("| calls | " + " | ".join(f"{s}: s | {s}: peak MiB" for s in sources) + " |")
    print("|---" * (1 + 2 * len(sources)) + "|")
    for n in (int(size) for size in args.sizes.split(",")):
        cells = []
        for source in sources:
            figures = measure(source, n)
            cells += [f"{figures['seconds']:.2f}", f"{figures['peak_mib']:.0f}"]
        print(f"| {n:,} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
