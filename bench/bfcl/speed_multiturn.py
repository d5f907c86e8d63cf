"""BFCL multi-turn replay speed: BFCL's multi_turn_checker against `toolscore score --env`,
and toolscore before and after a change, in one run (issue 15).

On the results parity_multiturn.py judges (each entry's ground truth and six perturbations
of it), each repetition times, in turn: BFCL's checker in this process (its modules imported
ahead), BFCL's checker behind lean_multiturn_runner.py in a subprocess (Python's start-up,
BFCL's imports and reading its files included: one process against one), `toolscore score
--env --workers 1` from this tree's sources on the
conversation layout (a case per entry), the same on the older per-turn layout (a case per
turn with calls), and, with --before SRC, the conversation layout scored by another tree's
sources (e.g. `git archive COMMIT src` unpacked). toolscore runs in a subprocess, Python's
start-up included; both trees are byte-compiled first, as an installed package is. The
figures: best and median CPU and wall of --repeat repetitions, and the ratios BFCL/toolscore,
both BFCL's in-process time over toolscore's process and process over process;
the verdicts per entry of every side are compared with BFCL's and with the per-turn layout's,
and those of the two trees case by case.

Usage: PYTHONPATH=src:bench/bfcl bench/bfcl/.venv/bin/python bench/bfcl/speed_multiturn.py
       [--category base ...] [--repeat R] [--before SRC] [--limit N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bfcl_env import bfcl_version, machine, revision
from parity_multiturn import (
    Loaded,
    bfcl_verdicts,
    children_cpu,
    load,
    prepare,
    read_verdicts,
    score,
)

Timing = tuple[float, float]
"""Wall and CPU seconds."""


def _states(work: Path) -> list[Any]:
    """Each case's entry in the report `score` wrote (its verdicts, diffs and baselines)."""
    return json.loads((work / "report.json").read_text())["cases"]  # type: ignore[no-any-return]


LEAN_RUNNER = Path(__file__).resolve().parent / "lean_multiturn_runner.py"


def lean_results(loaded: Loaded, work: Path) -> Path:
    """Write the results the lean runner checks: a line per (entry, variant), the variant
    naming the model BFCL keeps that replay's instances under."""
    path = work / "bfcl_results.jsonl"
    lines = [
        json.dumps({"id": entry, "model": f"lean_{variant}", "result": result})
        for entry, by_variant in loaded.variants.items()
        for variant, result in by_variant.items()
    ]
    path.write_text("".join(line + "\n" for line in lines))
    return path


def bfcl_process(loaded: Loaded, results: Path) -> tuple[dict[tuple[str, str], bool], Timing]:
    """BFCL's verdict per (entry, variant) from lean_multiturn_runner.py run in a
    subprocess, and that process's wall and CPU time."""
    out = results.with_name("bfcl_verdicts.jsonl")
    command = [sys.executable, str(LEAN_RUNNER), str(loaded.data), str(loaded.answers)]
    started, before = time.perf_counter(), children_cpu()
    subprocess.run(
        [*command, str(results), str(out)], check=True, stdout=subprocess.DEVNULL,
        env=dict(os.environ),
    )  # fmt: skip
    timing = (time.perf_counter() - started, children_cpu() - before)
    verdicts = {}
    for line in out.read_text().splitlines():
        found = json.loads(line)
        verdicts[found["id"], found["model"].removeprefix("lean_")] = bool(found["valid"])
    return verdicts, timing


def _figure(name: str, times: list[Timing]) -> str:
    walls, cpus = [t[0] for t in times], [t[1] for t in times]
    return (
        f"| {name} | {min(cpus):.2f} s | {statistics.median(cpus):.2f} s | {min(walls):.2f} s "
        f"| {statistics.median(walls):.2f} s |"
    )


def measure(category: str, repeat: int, before: Path | None, limit: int) -> str:
    """Time the sides on one category, alternating; the results as Markdown."""
    loaded = load(category, limit)
    folders = {"conversation": Path(tempfile.mkdtemp()), "per-turn": Path(tempfile.mkdtemp())}
    sides: dict[str, tuple[Path, Callable[[Path], Timing]]] = {
        "toolscore": (folders["conversation"], score),
        "toolscore per-turn": (folders["per-turn"], score),
    }
    if before is not None:
        sides["toolscore before"] = (folders["conversation"], lambda w: score(w, before))
    times: dict[str, list[Timing]] = {
        "BFCL": [], "BFCL, process": [], **{side: [] for side in sides}
    }  # fmt: skip
    reports: dict[str, list[Any]] = {}
    verdicts: dict[str, dict[tuple[str, str], bool]] = {}
    try:
        for layout, work in folders.items():
            prepare(loaded.data, loaded.answers, loaded.variants, work, layout == "per-turn")
        lean = lean_results(loaded, folders["conversation"])
        for repetition in range(repeat):
            verdicts["BFCL"], timing = bfcl_verdicts(
                loaded.entries, loaded.truths, loaded.variants, f"_run{repetition}"
            )
            times["BFCL"].append(timing)
            verdicts["BFCL, process"], timing = bfcl_process(loaded, lean)
            times["BFCL, process"].append(timing)
            for side, (work, run) in sides.items():
                times[side].append(run(work))
                reports[side] = _states(work)
                verdicts[side] = read_verdicts(work, loaded.variants)
    finally:
        for work in folders.values():
            shutil.rmtree(work)
    results = sum(len(by_variant) for by_variant in loaded.variants.values())
    lines = [
        f"### multi_turn_{category}",
        "",
        f"{len(loaded.entries)} entries, {results} results; toolscore cases: "
        f"{len(reports['toolscore'])} conversations, {len(reports['toolscore per-turn'])} "
        f"per-turn cases; {repeat} repetitions, sides alternating.",
        "",
        "| side | CPU, best | CPU, median | wall, best | wall, median |",
        "|---|---:|---:|---:|---:|",
        *(_figure(side, timings) for side, timings in times.items()),
        "",
    ]
    bfcl_cpu = min(t[1] for t in times["BFCL"])
    process_cpu = min(t[1] for t in times["BFCL, process"])
    total = len(verdicts["BFCL"])
    same_lean = sum(verdicts["BFCL, process"][k] == v for k, v in verdicts["BFCL"].items())
    lines.append(f"- BFCL, process: verdicts as BFCL's in-process ones {same_lean}/{total}")
    for side in sides:
        cpu = min(t[1] for t in times[side])
        agree = sum(verdicts[side][k] == v for k, v in verdicts["BFCL"].items())
        same = sum(verdicts[side][k] == v for k, v in verdicts["toolscore per-turn"].items())
        lines.append(
            f"- {side}: ratio BFCL/toolscore (best CPU) in-process BFCL {bfcl_cpu / cpu:.2f}x, "
            f"process against process {process_cpu / cpu:.2f}x; agreement with BFCL "
            f"{agree}/{total}; verdicts per entry as the per-turn layout's {same}/{total}"
        )
    if before is not None:
        same = reports["toolscore"] == reports["toolscore before"]
        gain = min(t[1] for t in times["toolscore before"]) / min(t[1] for t in times["toolscore"])
        lines.append(
            f"- before/after, conversation layout: {'identical' if same else 'DIFFERENT'} "
            f"report entries case by case (verdicts, diffs, baselines); after is {gain:.2f}x "
            "faster (best CPU)"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", nargs="+", default=["base"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another tree's src, timed beside this one")
    parser.add_argument("--limit", type=int, default=0)
    options = parser.parse_args()
    for tree in (Path("src"), options.before):
        if tree is not None:
            compileall.compile_dir(str(tree), quiet=1)
    parts = [
        measure(category, options.repeat, options.before, options.limit)
        for category in options.category
    ]
    parts.append(
        f"Machine: {machine()}; toolscore {revision()}"
        + (f", before: {options.before}" if options.before else "")
        + f"; bfcl-eval {bfcl_version()}; date {time.strftime('%Y-%m-%d', time.gmtime())}."
    )
    print("\n\n".join(parts))


if __name__ == "__main__":
    main()
