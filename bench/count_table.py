"""Where the diagnosis's table of mismatch counts pays for NumPy (issue 30).

A failed case's diagnosis counts the mismatches of every plan call with every produced call
of its tool. From `diagnosis.COUNT_TABLE_FROM` candidate pairs it counts them as a NumPy
table (`counts.mismatch_counts`), below that pair by pair. This script times both ways on
n x n calls of one four-argument tool, in one process, NumPy already imported (which favours
the table), and NumPy's import in a fresh process: the import is paid once per process, so
the table is worth it only from a size where the time it saves on a run's large cases
repays that import.

    python bench/count_table.py [--sizes 5 8 12 20 40 64 80 120] [--rounds 7]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time

from toolscore import parse_specs
from toolscore.core import diagnosis
from toolscore.core.model import Call

SPEC = {
    "version": 1,
    "tools": {
        "t": {
            "args": {"a": "exact", "b": {"kind": "number", "tol": 0.01}, "c": "text", "d": "exact"}
        }
    },
}


def calls(n: int, seed: int) -> tuple[list[Call], list[Call]]:
    """n plan calls and n produced calls: one id each, a third of the amounts off."""
    rng = random.Random(seed)
    plan = [
        Call("t", {"a": f"id{i}", "b": float(i), "c": "x", "d": rng.choice("xyz")})
        for i in range(n)
    ]
    produced = [
        Call("t", {"a": f"id{i}", "b": i + (0.5 if i % 3 == 0 else 0.0), "c": "y",
                   "d": rng.choice("xyz")})
        for i in range(n)
    ]  # fmt: skip
    return plan, produced


def best_ms(work: object, rounds: int) -> float:
    """The best of `rounds` timings of `work()`, in milliseconds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def numpy_import_ms(rounds: int) -> float:
    """NumPy's import in a fresh process (the best of `rounds`)."""
    code = "import time; t = time.perf_counter(); import numpy; print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout)
        for _ in range(rounds)
    ]  # fmt: skip
    return min(runs) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 8, 12, 20, 40, 64, 80, 120])
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    specs, problems = parse_specs(SPEC, "bench")
    assert not problems, problems
    assert specs is not None
    tools = {"t": specs.rules["t"]}
    import numpy  # noqa: F401, PLC0415 - imported before timing: the table's best case

    saved = diagnosis.COUNT_TABLE_FROM
    imported = numpy_import_ms(options.rounds)
    print(f"NumPy import, fresh process: {imported:.1f} ms")
    print("| calls | pairs | table (ms) | pair by pair (ms) | cases to repay the import |")
    print("|---:|---:|---:|---:|---:|")
    try:
        for n in options.sizes:
            plan, produced = calls(n, n)
            pairs = [(i, j) for i in range(n) for j in range(n)]

            def counted(
                plan: list[Call] = plan,
                produced: list[Call] = produced,
                pairs: list[tuple[int, int]] = pairs,
            ) -> object:
                return diagnosis._pair_counts(tools, plan, produced, pairs, frozenset(), {})

            diagnosis.COUNT_TABLE_FROM = 0
            table = best_ms(counted, options.rounds)
            diagnosis.COUNT_TABLE_FROM = 10**12
            walked = best_ms(counted, options.rounds)
            gain = walked - table
            repay = f"{imported / gain:,.0f}" if gain > 0 else "never"
            print(f"| {n} | {n * n:,} | {table:.3f} | {walked:.3f} | {repay} |")
    finally:
        diagnosis.COUNT_TABLE_FROM = saved


if __name__ == "__main__":
    main()
