"""Measure toolscore against its performance targets; print a table, append it to RESULTS.md.

Every figure measures the build this process imports (`toolscore.build_kind()`, named in the
table's footer and record): run with TOOLSCORE_PURE_PYTHON=1 for the pure-Python modules.

Usage: python bench/run.py [--quick] [--n N] [--inproc N] [--repeat R] [--record]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import generate
import toolscore
from toolscore import (
    Case,
    SpecSet,
    Trajectory,
    __version__,
    matches,
    parse_case,
    parse_output,
    parse_specs,
    score_case,
)

BENCH = Path(__file__).resolve().parent
DATA = BENCH / "data"
RESULTS = BENCH / "RESULTS.md"
BASELINE = """\
import sys, orjson
for path in sys.argv[1:]:
    with open(path, "rb") as lines:
        for line in lines:
            orjson.loads(line)
"""
"""The floor the CLI is compared with: read both files line by line, parse each line, no more."""
MEASURE = """\
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(child.pid, 0)
seconds = time.perf_counter() - start
child.returncode = os.waitstatus_to_exitcode(status)
print(f"\\n@@ {seconds} {usage.ru_maxrss} {child.returncode}", flush=True)
"""
"""Run a command and print its wall time, its peak RSS (KiB on Linux) and its exit status."""
OVERLAP_PASSING_MS = 20
OVERLAP_WRONG_MS = 10
"""Figure c's targets: the failing case is diagnosed, and must still take under 10 ms."""
FLOOR_RATIO = 6.0
"""Figure d: the CLI on one process, at most this many times the orjson floor's time..."""
FLOOR_SIZES = (300_000, 1_000_000)
"""... on a file of this many cases (the target is not judged on other sizes)."""
TWO_WORKERS = 1.8
"""Figure d: `--workers 2` at least this many times as fast as `--workers 1`."""
PEAK_MB = 250
"""Figure d: the CLI's peak memory (max RSS), at most."""


@dataclass(frozen=True)
class Figure:
    """One measured figure beside its target."""

    name: str
    measured: str
    target: str
    ok: bool | None
    note: str = ""

    def row(self) -> str:
        """The figure as a Markdown table row; a figure without a target shows `-`."""
        verdict = "-" if self.ok is None else "PASS" if self.ok else "MISS"
        return f"| {self.name} | {self.measured} | {self.target} | {verdict} | {self.note} |"


def best_of(repeat: int, work: Callable[[], object]) -> float:
    """The fastest of `repeat` timed runs of `work`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_specs() -> SpecSet:
    """The spec set every synthetic case is written against."""
    import yaml  # noqa: PLC0415 - only needed here

    specs, errors = parse_specs(yaml.safe_load(generate.SPEC), "bench")
    if specs is None:
        raise SystemExit(f"bench spec is invalid: {errors[0]}")
    return specs


def parsed(specs: SpecSet, kind: str, n: int) -> list[tuple[Case, Trajectory]]:
    """`n` synthetic cases of `kind`, parsed ahead so that only scoring is timed."""
    make = generate.KINDS[kind]
    pairs = []
    for i in range(n):
        case, output = make(generate.case_rng(i), i)
        pairs.append((parse_case(case, specs), parse_output(output)))
    return pairs


def throughput(specs: SpecSet, kind: str, n: int, repeat: int, name: str, target: int) -> Figure:
    """In-process `score_case` throughput on pre-parsed cases, in cases per second."""
    pairs = parsed(specs, kind, n)
    passed = sum(score_case(specs, c, t).passed for c, t in pairs)

    def work() -> None:
        for case, trajectory in pairs:
            score_case(specs, case, trajectory)

    rate = n / best_of(repeat, work)
    note = f"{n:,} cases, {passed / n:.0%} pass, best of {repeat}"
    return Figure(name, f"{rate:,.0f} cases/s", f">= {target:,} cases/s", rate >= target, note)


def greedy_passes(specs: SpecSet, case: Case, trajectory: Trajectory) -> bool:
    """First-fit pairing (each expected call takes the first equal produced call still free)."""
    free = list(trajectory.calls)
    for expected in case.plans[0]:
        rule = specs.rules[expected.name]
        found = next(
            (p for p in free if p.name == expected.name and matches(rule, expected.args, p.args)),
            None,
        )
        if found is None:
            return False
        free.remove(found)
    return not free


def overlap(specs: SpecSet, wrong: bool, repeat: int) -> Figure:
    """Time to score one case of 50 overlapping parallel calls built to defeat greedy pairing."""
    case_data, output = generate.overlap(generate.case_rng(0), 0, wrong=wrong)
    case, trajectory = parse_case(case_data, specs), parse_output(output)
    result = score_case(specs, case, trajectory)
    if result.passed == wrong or greedy_passes(specs, case, trajectory):
        raise SystemExit("the overlap case does not behave as designed")
    seconds = best_of(repeat, lambda: score_case(specs, case, trajectory))
    variant = "one wrong" if wrong else "passing"
    name = f"c. {generate.OVERLAP_CALLS} overlapping calls, {variant}"
    note = f"verdict {'fail' if wrong else 'pass'}, greedy fails, best of {repeat}"
    limit = OVERLAP_WRONG_MS if wrong else OVERLAP_PASSING_MS
    return Figure(name, f"{seconds * 1000:.1f} ms", f"< {limit} ms", seconds * 1000 < limit, note)


def linked(specs: SpecSet, wrong: bool, repeat: int) -> Figure:
    """Time to score one case of 10 interleaved lookup -> refund chains linked by `$ref`."""
    case_data, output = generate.chains(generate.case_rng(1), 1, wrong=wrong)
    case, trajectory = parse_case(case_data, specs), parse_output(output)
    result = score_case(specs, case, trajectory)
    if result.passed == wrong:
        raise SystemExit("the chains case does not behave as designed")
    seconds = best_of(repeat, lambda: score_case(specs, case, trajectory))
    variant = "one refund before its lookup" if wrong else "passing"
    name = f"e. {generate.CHAINS} linked chains (20 calls), {variant}"
    note = f"verdict {'fail' if wrong else 'pass'}, best of {repeat}"
    return Figure(name, f"{seconds * 1000:.1f} ms", "< 20 ms", seconds < 0.020, note)


def run_child(command: Sequence[str]) -> tuple[float, float, str]:
    """Run a command to completion: wall seconds, peak RSS in MB, and its output.

    A small wrapper process starts it, so that the peak is the command's own and not the
    memory of this process at fork time (Linux carries that into the child's ru_maxrss).
    """
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
    )
    text, _, last = done.stdout.decode(errors="replace").rpartition("\n@@ ")
    seconds, peak_kib, status = last.split()
    if done.returncode != 0 or status != "0":
        raise SystemExit(f"{' '.join(command)} exited {status}:\n{text[-2000:]}")
    return float(seconds), int(peak_kib) * 1024 / 1e6, text


def dataset(n: int) -> Path:
    """bench/data/single-N, written by generate.py unless this version of it already did."""
    out = DATA / f"single-{n}"
    stamp = out / ".complete"
    script = BENCH / "generate.py"
    version = f"{n} {hashlib.sha256(script.read_bytes()).hexdigest()}"
    if not stamp.exists() or stamp.read_text() != version:
        print(f"writing {n:,} single-call cases to {out} ...", flush=True)
        command = [sys.executable, str(script), "--kind", "single", "--n", str(n)]
        run_child([*command, "--out", str(out)])
        stamp.write_text(version)
    return out


def cli(n: int, repeat: int) -> list[Figure]:
    """`toolscore score` end to end beside the read-and-parse baseline, alternating runs."""
    data = dataset(n)
    cases, outputs = str(data / "cases.jsonl"), str(data / "outputs.jsonl")
    toolscore = str(Path(sys.executable).parent / "toolscore")
    score = [toolscore, "score", "--specs", str(data / "tools.yaml"), "--cases", cases]
    score += ["--outputs", outputs]
    floor = [sys.executable, "-c", BASELINE, cases, outputs]
    cli_times, floor_times, peaks, floor_peaks, two_times = [], [], [], [], []
    for _ in range(repeat):
        seconds, peak, _ = run_child(floor)
        floor_times.append(seconds)
        floor_peaks.append(peak)
        seconds, peak, text = run_child([*score, "--workers", "1"])
        words = " ".join(text.split())
        if f"{n} cases" not in words and f"{n:,} cases" not in words:
            print(f"warning: the CLI output does not mention {n} cases:\n{text[:500]}")
        cli_times.append(seconds)
        peaks.append(peak)
        two_times.append(run_child([*score, "--workers", "2"])[0])
    best, floor_best, two_best = min(cli_times), min(floor_times), min(two_times)
    ratio, speedup = best / floor_best, best / two_best
    cases_note = f"{n:,} cases, best of {repeat}"
    judged = FLOOR_SIZES[0] <= n <= FLOOR_SIZES[1]
    sizes = "" if judged else f"; judged at {FLOOR_SIZES[0]:,}-{FLOOR_SIZES[1]:,} cases only"
    return [
        Figure(
            "d. CLI `toolscore score --workers 1`, wall time",
            f"{best:.2f} s",
            "-",
            None,
            f"{n / best:,.0f} cases/s, {cases_note}",
        ),
        Figure(
            "d. CLI --workers 1 / read+orjson.loads baseline",
            f"{ratio:.1f}x",
            f"<= {FLOOR_RATIO:g}x",
            ratio <= FLOOR_RATIO if judged else None,
            f"baseline {floor_best:.2f} s (peak {max(floor_peaks):.0f} MB), {cases_note}{sizes}",
        ),
        Figure(
            "d. CLI --workers 2 speed-up over --workers 1",
            f"{speedup:.2f}x",
            f">= {TWO_WORKERS:g}x",
            speedup >= TWO_WORKERS if judged else None,
            f"{two_best:.2f} s, {n / two_best:,.0f} cases/s, {two_best / floor_best:.1f}x the "
            f"baseline; {cases_note}{sizes}",
        ),
        Figure(
            "d. CLI peak memory (max RSS), --workers 1",
            f"{max(peaks):.0f} MB",
            f"<= {PEAK_MB} MB",
            max(peaks) <= PEAK_MB if judged else None,
            f"same-order files, {n:,} cases{sizes}",
        ),
    ]


def machine() -> str:
    """Architecture, CPU model, core count and Python version, for the record."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    python = f"{platform.python_implementation()} {platform.python_version()}"
    return f"{platform.machine()}, {model}, {os.cpu_count()} cores, {python}"


def revision() -> str:
    """The git commit of the working tree, marked when it has uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{' + uncommitted src changes' if dirty else ''}"


def build() -> str:
    """The toolscore build this process runs ("compiled" or "pure-python")."""
    return str(getattr(toolscore, "build_kind", lambda: "pure-python")())


def record(
    command: str, started: datetime, elapsed: float, notes: Sequence[str], table: Sequence[str]
) -> None:
    """Append a dated section to RESULTS.md: the command, machine, commit, notes and table."""
    section = [
        f"\n## {started:%Y-%m-%d %H:%M} UTC: `{command}`\n",
        f"- machine: {machine()}",
        f"- toolscore {__version__} ({build()} build), commit {revision()}",
        f"- the whole run took {elapsed:.0f} s",
        *(f"- {note}" for note in notes),
        "",
        *table,
    ]
    with open(RESULTS, "a", encoding="utf-8") as results:
        results.write("\n".join(section) + "\n")
    print(f"recorded in {RESULTS}")


def main() -> None:
    """Run every measurement, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="cases for the CLI run (d)")
    parser.add_argument("--inproc", type=int, default=50_000, help="cases for (a); (b) uses 1/5")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is kept)")
    parser.add_argument("--quick", action="store_true", help="smoke run: --n 20000 --inproc 5000")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    if args.quick:
        args.n, args.inproc = min(args.n, 20_000), min(args.inproc, 5_000)
    started, clock = datetime.now(UTC), time.perf_counter()
    specs = bench_specs()
    header = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    print("\n".join(header), flush=True)
    rows: list[str] = []

    def show(figure: Figure) -> None:
        rows.append(figure.row())
        print(rows[-1], flush=True)

    inproc, repeat = args.inproc, args.repeat
    show(throughput(specs, "single", inproc, repeat, "a. single call, 4 args", 100_000))
    show(throughput(specs, "parallel", inproc // 5, repeat, "b. 8 parallel calls, 3 tools", 10_000))
    show(overlap(specs, wrong=False, repeat=max(args.repeat, 5)))
    show(overlap(specs, wrong=True, repeat=max(args.repeat, 5)))
    show(linked(specs, wrong=False, repeat=max(args.repeat, 5)))
    show(linked(specs, wrong=True, repeat=max(args.repeat, 5)))
    for figure in cli(args.n, args.repeat):
        show(figure)
    elapsed = time.perf_counter() - clock
    print(
        f"\n{machine()}; toolscore {__version__} ({build()}, {revision()}); "
        f"run took {elapsed:.0f} s"
    )
    if args.record:
        command = " ".join(["python", "bench/run.py", *sys.argv[1:]])
        record(command, started, elapsed, [], [*header, *rows])


if __name__ == "__main__":
    main()
