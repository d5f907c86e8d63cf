"""Measure what deterministic rubrics cost `toolscore score`: one rubric on one argument of
every case, beside the same run without it (issue 14's target: at most 20% slower).

Usage: python bench/rubrics.py [--n N] [--repeat R] [--record]

On N single-call cases (bench/data/single-N, from generate.py), each produced refund gets a
free-text `note` (most name the order id, some do not). Three specs differ only there:
`note: text` (no rubric), `note` with a `mentions` rubric (the note must name the call's
`order_id`), and `note` with a `regex` rubric (searched under its time limit). Each is
scored by the CLI on one process (`--workers 1`), the three alternated in every repetition
so that they meet the same load. The ratios compare CPU time (user + system, of the child
process), which other processes on a shared machine disturb far less than wall time; the
best of each is kept, and wall times are shown beside them.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path

import orjson

from run import BENCH, DATA, Figure, dataset, machine, record, revision
from toolscore import __version__

TARGET = 1.20
"""A deterministic rubric on one argument per case slows scoring by at most 20%."""
NAMED = 0.85
"""The share of notes that name the order id (the others fail `mentions`)."""
RUBRICS = {
    "plain": "",
    "mentions": "rubrics:\n  names_order: {kind: mentions, argument: order_id}\n",
    "regex": 'rubrics:\n  refunded: {kind: regex, pattern: "^Refunded [a-z]"}\n',
}
NOTE = {
    "plain": "note: text",
    "mentions": "note: {kind: text, rubric: names_order}",
    "regex": "note: {kind: text, rubric: refunded}",
}


def _note(case_id: str, args: dict[str, object]) -> str:
    """The note of a case's refund: its order id and category, or (for some) neither."""
    if zlib.crc32(case_id.encode()) % 100 < NAMED * 100:
        return f"Refunded {args.get('order_id')} ({args.get('category')}); customer told."
    return "Refunded the order as asked; customer told."


def with_notes(source: Path, target: Path) -> None:
    """Copy an outputs file, adding a `note` to every refund call (JSON-text arguments too)."""
    with source.open("rb") as lines, target.open("wb") as out:
        for line in lines:
            data = orjson.loads(line)
            for call in data["calls"]:
                if call["name"] != "refund":
                    continue
                args = call["args"]
                text = isinstance(args, str)
                parsed = orjson.loads(args) if text else args
                parsed["note"] = _note(data["id"], parsed)
                call["args"] = orjson.dumps(parsed).decode() if text else parsed
            out.write(orjson.dumps(data) + b"\n")


def prepared(n: int) -> Path:
    """bench/data/rubrics-N: the three specs, and outputs with notes (written once)."""
    single = dataset(n)
    folder = DATA / f"rubrics-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = folder / ".complete"
    version = hashlib.sha256(
        (BENCH / "generate.py").read_bytes() + Path(__file__).read_bytes()
    ).hexdigest()
    if not stamp.exists() or stamp.read_text() != f"{n} {version}":
        print(f"adding notes to {n:,} outputs in {folder} ...", flush=True)
        with_notes(single / "outputs.jsonl", folder / "outputs.jsonl")
        stamp.write_text(f"{n} {version}")
    spec = (single / "tools.yaml").read_text()
    anchor = "      category: {kind: casefold"
    assert anchor in spec, "generate.py's refund changed: update bench/rubrics.py"
    for name, rubrics in RUBRICS.items():
        text = spec.replace("tools:\n", rubrics + "tools:\n", 1)
        text = text.replace(anchor, f"      {NOTE[name]}\n{anchor}", 1)
        (folder / f"tools-{name}.yaml").write_text(text)
    return folder


def cpu_run(command: list[str]) -> tuple[float, float, str]:
    """Run a command to completion: its CPU seconds (user + system), wall seconds, output."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert child.stdout is not None
    output = child.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{output[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall, output


def measure(folder: Path, cases: Path, n: int, repeat: int) -> list[Figure]:
    """Each spec's best CPU time over `repeat` alternated runs, and the ratios."""
    toolscore = str(Path(sys.executable).parent / "toolscore")
    times: dict[str, list[float]] = {name: [] for name in RUBRICS}
    walls: dict[str, list[float]] = {name: [] for name in RUBRICS}
    for round_ in range(repeat):
        order = list(RUBRICS) if round_ % 2 == 0 else list(reversed(RUBRICS))
        for name in order:
            command = [
                toolscore, "score", "--workers", "1",
                "--specs", str(folder / f"tools-{name}.yaml"),
                "--cases", str(cases), "--outputs", str(folder / "outputs.jsonl"),
            ]  # fmt: skip
            seconds, wall, text = cpu_run(command)
            if name != "plain" and "Rubrics (apart from the call score)" not in text:
                raise SystemExit(f"the {name} run printed no rubric results:\n{text[-2000:]}")
            times[name].append(seconds)
            walls[name].append(wall)
            print(f"  {name}: {seconds:.2f} s CPU, {wall:.2f} s wall", flush=True)
    best = {name: min(values) for name, values in times.items()}
    plain = best["plain"]
    spread = f"best of {repeat}, alternated; CPU s of all runs: " + ", ".join(
        f"{name} " + "/".join(f"{t:.1f}" for t in values) for name, values in times.items()
    )
    figures = [
        Figure(
            "r1. score --workers 1, note: text (no rubric), CPU time",
            f"{plain:.2f} s",
            "-",
            None,
            f"wall {min(walls['plain']):.2f} s; {n:,} cases; {spread}",
        )
    ]
    for number, name in ((2, "mentions"), (3, "regex")):
        ratio = best[name] / plain
        wall_ratio = min(walls[name]) / min(walls["plain"])
        figures.append(
            Figure(
                f"r{number}. the same with a {name} rubric on note / without, CPU time",
                f"{ratio:.2f}x",
                f"<= {TARGET:.2f}x",
                ratio <= TARGET,
                f"{best[name]:.2f} s CPU; best wall times {wall_ratio:.2f}x; one rubric result "
                "a case",
            )
        )
    return figures


def main() -> None:
    """Run the measurements, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="single-call cases")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is kept)")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    folder = prepared(args.n)
    figures = measure(folder, dataset(args.n) / "cases.jsonl", args.n, args.repeat)
    header = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    rows = [figure.row() for figure in figures]
    print("\n".join([*header, *rows]), flush=True)
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()}); run took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/rubrics.py", *sys.argv[1:]])
        record(command, started, elapsed, [], [*header, *rows])


if __name__ == "__main__":
    main()
