"""Measure the one-file HTML report of a large run: its size and how long it takes to write.

Usage: python bench/html_report.py [--n N] [--repeat R] [--record]

On N single-call cases (bench/data/single-N, written by generate.py when missing): the run
is scored once with `--json` (and saved into a new store); then, each in a process of its
own, `toolscore report report.json --html` (the issue's target: under 20 MB and under 30 s
for 1,000,000 cases), `toolscore report RUN --html` from the store (the embedded cases are
scored again from the stored files for their plans and calls), and `score --json --html`
beside `score --json` alone, alternated, for what `--html` adds to a scoring run.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from run import DATA, Figure, dataset, machine, record, revision, run_child
from toolscore import __version__

TARGET_MB = 20
TARGET_SECONDS = 30
TOOLSCORE = [sys.executable, "-m", "toolscore"]


def score(folder: Path, *extra: str) -> float:
    """Seconds `toolscore score` takes on the folder's files with `extra` options."""
    command = [
        *TOOLSCORE, "score", "--specs", str(folder / "tools.yaml"),
        "--cases", str(folder / "cases.jsonl"), "--outputs", str(folder / "outputs.jsonl"),
        *extra,
    ]  # fmt: skip
    seconds, _, _ = run_child(command)
    return seconds


def page(command: list[str], out: Path, repeat: int) -> tuple[float, float, float, str]:
    """Best wall seconds, peak MB, the page's size in MB and what it says it embeds, of a
    command writing `out`."""
    best, peak = float("inf"), 0.0
    for _ in range(repeat):
        out.unlink(missing_ok=True)
        seconds, memory, _ = run_child(command)
        best, peak = min(best, seconds), max(peak, memory)
    text = out.read_text(encoding="utf-8")
    found = re.search(r'data-embedded="(\d+)"', text)
    embedded = f"{int(found.group(1)):,} cases embedded" if found else "?"
    return best, peak, out.stat().st_size / 1e6, embedded


def figures(n: int, repeat: int) -> list[Figure]:
    folder = dataset(n)
    report, db = DATA / f"report-{n}.json", DATA / f"html-store-{n}.db"
    html = DATA / f"report-{n}.html"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    print(f"scoring {n:,} cases with --json and --db ...", flush=True)
    score(folder, "--json", str(report), "--db", str(db))
    found: list[Figure] = []
    command = [*TOOLSCORE, "report", str(report), "--html", str(html)]
    seconds, peak, size, embedded = page(command, html, repeat)
    note = f"{n:,} cases, best of {repeat}, process start included, peak {peak:.0f} MB"
    found += [
        Figure("h1. `report report.json --html`, wall time", f"{seconds:.2f} s",
               f"< {TARGET_SECONDS} s", seconds < TARGET_SECONDS, note),
        Figure("h2. its page", f"{size:.1f} MB", f"< {TARGET_MB} MB", size < TARGET_MB,
               f"{embedded}, failing first; no plans (a report JSON has none)"),
    ]  # fmt: skip
    command = [*TOOLSCORE, "report", "1", "--db", str(db), "--html", str(html)]
    seconds, peak, size, embedded = page(command, html, repeat)
    found += [
        Figure("h3. `report RUN --html` from the store", f"{seconds:.2f} s",
               f"< {TARGET_SECONDS} s", seconds < TARGET_SECONDS,
               f"{n:,} cases, the embedded ones scored again for their plans, peak {peak:.0f} MB"),
        Figure("h4. its page", f"{size:.1f} MB", f"< {TARGET_MB} MB", size < TARGET_MB,
               f"{embedded}, each with its plan beside its calls"),
    ]  # fmt: skip
    plain, with_html = [], []
    for _ in range(repeat):
        plain.append(score(folder, "--json", str(report)))
        with_html.append(score(folder, "--json", str(report), "--html", str(html)))
    added = min(with_html) - min(plain)
    found.append(
        Figure("h5. what `score --html` adds to `score --json`", f"{added:.2f} s", "-", None,
               f"{min(plain):.2f} s without, {min(with_html):.2f} s with; alternated, best of "
               f"{repeat}")
    )  # fmt: skip
    for path in (report, html, *(Path(f"{db}{s}") for s in ("", "-wal", "-shm"))):
        path.unlink(missing_ok=True)
    return found


def main() -> None:
    """Run the measurements, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="single-call cases")
    parser.add_argument("--repeat", type=int, default=2, help="timed repetitions (best is kept)")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    header = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    rows = [figure.row() for figure in figures(args.n, args.repeat)]
    print("\n".join([*header, *rows]))
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()}); run took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/html_report.py", *sys.argv[1:]])
        record(command, started, elapsed, [], [*header, *rows])


if __name__ == "__main__":
    main()
