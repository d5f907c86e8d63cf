"""Start-up and pipeline cost of `toolscore score`, optionally beside an older source tree.

Usage: python bench/startup.py [--before SRC] [--n N] [--small N] [--repeat R] [--record]

Figures, for this tree and (with `--before`) another one given as its `src` folder (made
with `git archive REV src | tar -x -C DIR`), measured alternately in the same run:
- `import toolscore.cli`, as `python -X importtime` reports it (cumulative, best of R);
- `toolscore score --json` on a small single-call file (`--small`, default 400 cases) against
  a lean runner that imports orjson, reads both files, checks each case and writes each
  verdict: the start-up budget is about twice the lean runner;
- `toolscore score --json` on N single-call cases (default 100,000) with one worker and two,
  against the floor of reading both files and parsing each line with orjson; peak memory.
Both trees' modules are compiled first (`compileall`), as an installed package's are, so that
no run pays for compiling (an environment may set PYTHONDONTWRITEBYTECODE).
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from run import BASELINE, dataset

BENCH = Path(__file__).resolve().parent
SOURCE = BENCH.parent / "src"
RESULTS = BENCH / "RESULTS.md"
LEAN = """\
import sys, orjson
cases_path, outputs_path = sys.argv[1:3]
with open(outputs_path, "rb") as lines:
    outputs = {o["id"]: o for o in map(orjson.loads, lines)}
write = sys.stdout.buffer.write
with open(cases_path, "rb") as lines:
    for case in map(orjson.loads, lines):
        output = outputs.get(case["id"]) or {}
        passed = output.get("calls") == (case["plans"] or [[]])[0]
        write(orjson.dumps({"id": case["id"], "valid": passed}) + b"\\n")
"""
"""The leanest runner of the same files: parse, compare each case whole, write a verdict."""
FLOOR = BASELINE
"""The floor of the large run: `bench/run.py`'s, read both files line by line and parse every
line."""
MEASURE = """\
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""
"""Run a command; print its wall time, peak RSS (KiB) and exit status."""


def run(command: Sequence[str], src: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of `command`, with `src` first on the path."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], env=env, capture_output=True, check=True
    )
    seconds, rss, status = done.stdout.split()
    if int(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {int(status)}")
    return float(seconds), int(rss)


def import_ms(src: Path) -> float:
    """Milliseconds `python -X importtime` gives `import toolscore.cli` (cumulative)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import toolscore.cli"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    last = done.stderr.strip().splitlines()[-1]
    match = re.search(r"\|\s*(\d+) \| toolscore\.cli$", last)
    assert match is not None, last
    return int(match.group(1)) / 1000


def score(folder: Path, workers: int, report: Path) -> list[str]:
    """The `toolscore score` command line for a generated folder."""
    return [
        sys.executable, "-c", "from toolscore.cli import main; main()", "score",
        "--specs", str(folder / "tools.yaml"), "--cases", str(folder / "cases.jsonl"),
        "--outputs", str(folder / "outputs.jsonl"), "--workers", str(workers),
        "--json", str(report),
    ]  # fmt: skip


def measure(trees: dict[str, Path], args: argparse.Namespace, tmp: Path) -> list[str]:
    """The table rows: each figure for each tree, measured alternately."""
    small, large = dataset(args.small), dataset(args.n)
    report = tmp / "report.json"
    times: dict[tuple[str, str], list[float]] = {}
    peaks: dict[tuple[str, str], int] = {}

    def timed(label: str, key: str, command: Sequence[str], src: Path | None) -> None:
        seconds, rss = run(command, src)
        times.setdefault((label, key), []).append(seconds)
        peaks[label, key] = max(peaks.get((label, key), 0), rss)

    imports = {
        label: min(import_ms(src) for _ in range(args.repeat)) for label, src in trees.items()
    }
    lean = [sys.executable, "-c", LEAN, str(small / "cases.jsonl"), str(small / "outputs.jsonl")]
    floor = [sys.executable, "-c", FLOOR, str(large / "cases.jsonl"), str(large / "outputs.jsonl")]
    for _ in range(args.repeat * 3):  # small runs: more repetitions, alternating
        timed("lean", "small", lean, None)
        for label, src in trees.items():
            timed(label, "small", score(small, 1, report), src)
    for _ in range(args.repeat):
        timed("floor", "large", floor, None)
        for label, src in trees.items():
            for workers in (1, 2):
                timed(label, f"large{workers}", score(large, workers, report), src)
    best = {key: min(values) for key, values in times.items()}
    median = {key: statistics.median(values) for key, values in times.items()}
    lean_s, floor_s = best["lean", "small"], best["floor", "large"]
    lean_median = median["lean", "small"]
    rows = [
        f"| lean runner, {args.small:,} cases | {lean_s:.3f} s (median {lean_median:.3f}) | - |",
        f"| read + orjson floor, {args.n:,} cases | {floor_s:.3f} s | - |",
    ]
    for label in trees:
        one, two = best[label, "large1"], best[label, "large2"]
        rows += [
            f"| {label}: `import toolscore.cli` (-X importtime) | {imports[label]:.0f} ms | - |",
            f"| {label}: score --json, {args.small:,} cases | {best[label, 'small']:.3f} s "
            f"(median {median[label, 'small']:.3f}) | {best[label, 'small'] / lean_s:.1f}x lean |",
            f"| {label}: score --json --workers 1, {args.n:,} cases | {one:.2f} s, peak "
            f"{peaks[label, 'large1'] / 1024:.0f} MB | {one / floor_s:.1f}x floor |",
            f"| {label}: score --json --workers 2, {args.n:,} cases | {two:.2f} s, peak "
            f"{peaks[label, 'large2'] / 1024:.0f} MB | {two / floor_s:.1f}x floor, "
            f"{one / two:.2f}x one worker |",
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older tree's src folder, measured beside")
    parser.add_argument("--n", type=int, default=100_000, help="cases of the large run")
    parser.add_argument("--small", type=int, default=400, help="cases of the start-up run")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (best kept)")
    parser.add_argument("--record", action="store_true", help="append the table to RESULTS.md")
    args = parser.parse_args()
    trees = {"this tree": SOURCE}
    if args.before is not None:
        trees = {"before": args.before.resolve(), "after": SOURCE}
    for src in trees.values():
        compileall.compile_dir(str(src), quiet=1)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(trees, args, Path(tmp))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    header = [
        f"- machine: {platform.machine()}, {cores} cores, CPython {platform.python_version()}",
        f"- best of {args.repeat} ({args.repeat * 3} for the small runs), alternating; the run "
        f"took {time.perf_counter() - started:.0f} s",
        "",
        "| figure | measured | ratio |",
        "|---|---|---|",
    ]
    text = "\n".join(header + rows)
    print(text)
    if args.record:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        command = "python bench/startup.py" + (" --before SRC" if args.before else "")
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write(f"\n## {stamp}: `{command}`\n\n{text}\n")


if __name__ == "__main__":
    main()
