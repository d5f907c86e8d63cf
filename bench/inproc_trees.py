"""bench/run.py's in-process figures (a and b), old tree against new, as ratios (issue 26).

The machine here is shared and its speed swings by half from one minute to the next, so two
runs of bench/run.py minutes apart say little about a 5% difference. This script runs the two
trees in turns, many short rounds, the order flipped every other round (ABBA), each round in
fresh processes, and reports for each figure the median over rounds of new / old, with the
rounds' spread:

    python bench/inproc_trees.py /tmp/base/src src [--rounds 10] [--n 4000] [--clock cpu]
        [--bfcl CATEGORY]

`--bfcl CATEGORY` adds figure g of bench/bfcl/speed.py: the full report (`score_case`, the
summary's tallies, each case's JSON, the summary) on BFCL's CATEGORY with its first possible
answers as outputs, in cases per second (bfcl-eval on PYTHONPATH, as bench/bfcl/setup.sh
installs it). A BFCL file has a tool per case, so the summary's per-tool work weighs there.

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


def bfcl_rate(category: str, repeat: int, clock: str) -> float:
    """Figure g (bench/bfcl/speed.py): the full report on a BFCL category, cases/s."""
    sys.path.insert(0, str(BENCH / "bfcl"))
    from bfcl_env import load_category  # noqa: PLC0415 - bench/bfcl, on the child's path
    from speed import full_report, outputs  # noqa: PLC0415

    from toolscore import parse_output  # noqa: PLC0415
    from toolscore.bfcl import convert_result  # noqa: PLC0415

    loaded = load_category(category)
    pairs = [
        (loaded.cases[entry["id"]], parse_output(json.loads(json.dumps(converted))))
        for entry, o in outputs(loaded, False)
        for converted in [convert_result({"id": entry["id"], "result": o})]
    ]
    return len(pairs) / best_of(repeat, lambda: full_report(loaded.specs, pairs), CLOCKS[clock])


def child(n: int, repeat: int, clock: str, bfcl: str | None = None) -> None:
    """Print the cases per second of figures a and b (and g with `bfcl`) for the toolscore
    on sys.path."""
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
    if bfcl is not None:
        rates["g"] = bfcl_rate(bfcl, repeat, clock)
    print(json.dumps(rates))


def best_of(repeat: int, work: Callable[[], object], clock: Callable[[], float]) -> float:
    """The fastest of `repeat` runs of `work` by `clock`, in seconds."""
    times = []
    for _ in range(repeat):
        start = clock()
        work()
        times.append(clock() - start)
    return min(times)


def measure(
    source: str, n: int, repeat: int, clock: str, bfcl: str | None = None
) -> dict[str, float | str]:
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    command = [sys.executable, __file__, "--child", str(n), "--repeat", str(repeat)]
    if bfcl is not None:
        command += ["--bfcl", bfcl]
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
    parser.add_argument("--bfcl", metavar="CATEGORY", help="add figure g on this BFCL category")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.repeat, args.clock, args.bfcl)
        return
    figures = [*FIGURES, *(["g"] if args.bfcl else [])]
    if args.old is None or args.new is None:
        parser.error("give the old and the new src folders")
    ratios: dict[str, list[float]] = {figure: [] for figure in figures}
    rates: dict[str, dict[str, list[float]]] = {
        side: {figure: [] for figure in figures} for side in ("old", "new")
    }
    builds: dict[str, str] = {}
    for round_ in range(args.rounds):
        order = ("old", "new") if round_ % 2 == 0 else ("new", "old")
        found = {
            side: measure(getattr(args, side), args.n, args.repeat, args.clock, args.bfcl)
            for side in order
        }
        for side, found_figures in found.items():
            builds[side] = str(found_figures["build"])
            for figure in figures:
                rates[side][figure].append(float(found_figures[figure]))
        for figure in figures:
            ratios[figure].append(float(found["new"][figure]) / float(found["old"][figure]))
    print(
        f"builds: old {builds['old']}, new {builds['new']}; {args.rounds} rounds (ABBA), "
        f"{args.clock} clock"
    )
    print("| figure | old, median cases/s | new, median cases/s | new / old, median | range |")
    print("|---|---|---|---|---|")
    for figure in figures:
        old, new, ratio = (
            statistics.median(rates["old"][figure]),
            statistics.median(rates["new"][figure]),
            statistics.median(ratios[figure]),
        )
        spread = f"{min(ratios[figure]):.3f} - {max(ratios[figure]):.3f}"
        print(f"| {figure} | {old:,.0f} | {new:,.0f} | {ratio:.3f} | {spread} |")


if __name__ == "__main__":
    main()
