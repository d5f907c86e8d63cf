"""toolscore and BFCL's checker side by side on the same BFCL cases: cases per second.

For simple_python, multiple, parallel and parallel_multiple, the same outputs are scored
in-process, single-process, both warm: by toolscore's `score_case` on cases and outputs parsed
ahead (cases converted by `toolscore.bfcl`, optimal matching, both baselines computed), and by
BFCL's `ast_checker` on the decoded outputs. Two output sets: every case's first possible
answer (all pass), and a mix of perturbations (mostly failing). The two scorers alternate,
and the best of R runs is kept, because the machine may be shared: the ratio is the figure.
It also times `toolscore score --workers 1` against `--workers 2` on the biggest converted
category, as is and replicated to a larger file.

Usage: bench/bfcl/.venv/bin/python bench/bfcl/speed.py [--repeat R] [--replicate K] [--record]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bfcl_env import (
    MODEL,
    SPEED_CATEGORIES,
    Category,
    bfcl_version,
    files,
    load_category,
    load_checker,
    machine,
    revision,
)
from perturb import answer, extra_call, ints_as_floats, missing_call, reversed_calls, upper_case

from toolscore import Case, Trajectory, __version__, parse_output, score_case
from toolscore.bfcl import convert_result, import_bfcl, write_import

RESULTS = Path(__file__).resolve().parents[1] / "RESULTS.md"
TARGET = 5.0
CLI_CATEGORY = "live_multiple"
MIXES = (upper_case, ints_as_floats, extra_call, missing_call, reversed_calls)


def outputs(category: Category, mixed: bool) -> list[tuple[dict[str, Any], list[Any]]]:
    """(entry, decoded output) for every case: the first answer, or a perturbation of it."""
    pairs = []
    for index, entry in enumerate(category.entries):
        first = answer(entry, category.truths[entry["id"]])
        output = first
        if mixed:
            changed = MIXES[index % len(MIXES)](first)
            output = changed[0] if changed is not None else first
        pairs.append((entry, output))
    return pairs


def best_of(repeat: int, work: Callable[[], object]) -> float:
    """The fastest of `repeat` timed runs, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def side_by_side(category: Category, mixed: bool, repeat: int) -> tuple[float, float, int, int]:
    """Cases per second for toolscore and BFCL on one output set, and how many each passed."""
    checker, _, python = load_checker()
    pairs = outputs(category, mixed)
    parsed: list[tuple[Case, Trajectory]] = [
        (
            category.cases[entry["id"]],
            parse_output(json.loads(json.dumps(convert_result({"id": entry["id"], "result": o})))),
        )
        for entry, o in pairs
    ]
    checks = [(entry["function"], o, category.truths[entry["id"]]) for entry, o in pairs]
    specs, name = category.specs, category.name

    def toolscore_run() -> int:
        return sum(score_case(specs, case, trajectory).passed for case, trajectory in parsed)

    def bfcl_run() -> int:
        return sum(
            bool(checker.ast_checker(f, o, t, python, name, MODEL)["valid"]) for f, o, t in checks
        )

    ours, theirs = toolscore_run(), bfcl_run()  # warm-up, and the pass counts
    ours_time = theirs_time = float("inf")
    for _ in range(repeat):  # alternate, so that a busy moment hits both
        ours_time = min(ours_time, best_of(1, toolscore_run))
        theirs_time = min(theirs_time, best_of(1, bfcl_run))
    n = len(pairs)
    return n / ours_time, n / theirs_time, ours, theirs


def cli_workers(repeat: int, replicate: int) -> list[tuple[str, float, float, int]]:
    """Wall time of `toolscore score` on 1 and 2 workers: (label, t1, t2, cases)."""
    data, answers = files(CLI_CATEGORY)
    converted = import_bfcl(str(data), str(answers) if answers else None)
    category = load_category(CLI_CATEGORY)
    mixed = outputs(category, mixed=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for copies in (1, replicate):
            folder = Path(tmp) / f"x{copies}"
            cases = [
                {**case, "id": f"{case['id']}#{k}"}
                for k in range(copies)
                for case in converted.cases
            ]
            write_import(type(converted)(converted.spec, cases, [], converted.provenance), folder)
            with open(folder / "outputs.jsonl", "w", encoding="utf-8") as out:
                for k in range(copies):
                    for entry, o in mixed:
                        line = convert_result({"id": f"{entry['id']}#{k}", "result": o})
                        out.write(json.dumps(line) + "\n")
            times: dict[int, float] = {}
            for workers in (1, 2, 1, 2):  # alternating
                command = [
                    sys.executable, "-c", "from toolscore.cli import main; main()", "score",
                    "--specs", str(folder / "tools.yaml"), "--cases", str(folder / "cases.jsonl"),
                    "--outputs", str(folder / "outputs.jsonl"), "--workers", str(workers),
                ]  # fmt: skip
                best = min(_timed(command) for _ in range(max(1, repeat // 2)))
                times[workers] = min(times.get(workers, best), best)
            label = CLI_CATEGORY if copies == 1 else f"{CLI_CATEGORY} x{copies}"
            rows.append((label, times[1], times[2], len(cases)))
    return rows


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    """Measure every category, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each (best kept)")
    parser.add_argument("--replicate", type=int, default=100, help="copies for the CLI run")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    header = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    print("\n".join(header), flush=True)
    rows: list[str] = []
    for name in SPEED_CATEGORIES:
        category = load_category(name)
        plans = sum(len(c.plans) for c in category.cases.values()) / len(category.cases)
        for mixed in (False, True):
            ours, theirs, passed, bfcl_passed = side_by_side(category, mixed, args.repeat)
            ratio = ours / theirs
            what = "perturbed outputs" if mixed else "first possible answers"
            rows.append(
                f"| g. BFCL {name}, {what} | {ours:,.0f} cases/s (BFCL {theirs:,.0f}) | "
                f">= {TARGET:g}x BFCL | {'PASS' if ratio >= TARGET else 'MISS'} | "
                f"{ratio:.2g}x; {len(category.cases):,} cases, {plans:.2f} plans a case; "
                f"pass: toolscore {passed}, BFCL {bfcl_passed}; best of {args.repeat} |"
            )
            print(rows[-1], flush=True)
    for label, one, two, n in cli_workers(args.repeat, args.replicate):
        rows.append(
            f"| h. CLI `score --workers 2` vs `--workers 1`, {label} | {one / two:.2f}x | - | - | "
            f"{one:.2f} s vs {two:.2f} s wall, {n:,} cases (perturbed outputs) |"
        )
        print(rows[-1], flush=True)
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()}); run took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["bench/bfcl/.venv/bin/python", "bench/bfcl/speed.py", *sys.argv[1:]])
        section = [
            f"\n## {started:%Y-%m-%d %H:%M} UTC: `{command}`\n",
            f"- machine: {machine()}",
            f"- toolscore {__version__}, commit {revision()}; bfcl-eval {bfcl_version()}",
            f"- the whole run took {elapsed:.0f} s",
            "- g: in-process, single process, both warm, the same outputs; BFCL's `ast_checker` "
            "with the model-config stub (bench/bfcl/PARITY.md); toolscore's `score_case` "
            "(optimal matching, both baselines) on cases converted by `toolscore import bfcl`\n",
            *header,
            *rows,
        ]
        with open(RESULTS, "a", encoding="utf-8") as results:
            results.write("\n".join(section) + "\n")
        print(f"recorded in {RESULTS}")


if __name__ == "__main__":
    main()
