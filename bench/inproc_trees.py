"""bench/run.py's in-process figures (a and b), old tree against new, as ratios (issue 26).

The machine here is shared and its speed swings by half from one minute to the next, so two
runs of bench/run.py minutes apart say little about a 5% difference. This script runs the two
trees in turns, many short rounds, the order flipped every other round (ABBA), each round in
fresh processes, and reports for each figure the median over rounds of new / old, with the
rounds' spread:

    python bench/inproc_trees.py /tmp/base/src src [--rounds 10] [--n 4000] [--clock cpu]

`--clock cpu` times each run by the process's CPU time (`time.process_time`) instead of the
wall clock: scoring is one thread, so its CPU time is its cost, and it leaves out the time
the process waits for a core while other work runs on the machine.

Each tree runs the build it holds (its compiled modules if built, else pure Python; set
TOOLSCORE_PURE_PYTHON=1 to compare pure Python).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
FIGURES = {"a": ("single", 1), "b": ("parallel", 5)}
"""Figure -> (bench/generate.py kind, divisor of --n): as bench/run.py's a and b."""


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def child(n: int, repeat: int, clock: str) -> None:
    """Print the cases per second of figures a and b for the toolscore on sys.path."""
    sys.path.insert(0, str(BENCH))
    import run  # noqa: PLC0415 - the child's toolscore is on its path
    from toolscore import build_kind, score_case  # noqa: PLC0415

    specs = run.bench_specs()
    rates: dict[str, float | str] = {"build": build_kind()}
    for figure, (kind, divisor) in FIGURES.items():
        pairs = run.parsed(specs, kind, n // divisor)

        def work(pairs: list[tuple[object, object]] = pairs) -> None:  # type: ignore[assignment]
            for case, trajectory in pairs:
                score_case(specs, case, trajectory)  # type: ignore[arg-type]

        rates[figure] = len(pairs) / best_of(repeat, work, CLOCKS[clock])
    print(json.dumps(rates))


def best_of(repeat: int, work: Callable[[], object], clock: Callable[[], float]) -> float:
    """The fastest of `repeat` runs of `work` by `clock`, in seconds."""
    times = []
    for _ in range(repeat):
        start = clock()
        work()
        times.append(clock() - start)
    return min(times)


def measure(source: str, n: int, repeat: int, clock: str) -> dict[str, float | str]:
    env = {**os.environ, "PYTHONPATH": source}
    command = [sys.executable, __file__, "--child", str(n), "--repeat", str(repeat)]
    done = subprocess.run(
        [*command, "--clock", clock],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float | str] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", nargs="?", help="the src folder before the change")
    parser.add_argument("new", nargs="?", help="the src folder after it")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--n", type=int, default=4000, help="cases for (a); (b) uses 1/5")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (best kept)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.repeat, args.clock)
        return
    if args.old is None or args.new is None:
        parser.error("give the old and the new src folders")
    ratios: dict[str, list[float]] = {figure: [] for figure in FIGURES}
    rates: dict[str, dict[str, list[float]]] = {
        side: {figure: [] for figure in FIGURES} for side in ("old", "new")
    }
    builds: dict[str, str] = {}
    for round_ in range(args.rounds):
        order = ("old", "new") if round_ % 2 == 0 else ("new", "old")
        found = {
            side: measure(getattr(args, side), args.n, args.repeat, args.clock) for side in order
        }
        for side, figures in found.items():
            builds[side] = str(figures["build"])
            for figure in FIGURES:
                rates[side][figure].append(float(figures[figure]))
        for figure in FIGURES:
            ratios[figure].append(float(found["new"][figure]) / float(found["old"][figure]))
    print(
        f"builds: old {builds['old']}, new {builds['new']}; {args.rounds} rounds (ABBA), "
        f"{args.clock} clock"
    )
    print("| figure | old, median cases/s | new, median cases/s | new / old, median | range |")
    print("|---|---|---|---|---|")
    for figure in FIGURES:
        old, new, ratio = (
            statistics.median(rates["old"][figure]),
            statistics.median(rates["new"][figure]),
            statistics.median(ratios[figure]),
        )
        spread = f"{min(ratios[figure]):.3f} - {max(ratios[figure]):.3f}"
        print(f"| {figure} | {old:,.0f} | {new:,.0f} | {ratio:.3f} | {spread} |")


if __name__ == "__main__":
    main()
