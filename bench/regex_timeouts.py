"""Measure what a backtracking regex rubric costs `toolscore score` (issue 25, item 2): the
issue's reproducer, `^(a+)+$` against notes of `"a" * 40 + "!"`, on N cases, under the real
1 s time limit. Before the cap each case cost the whole limit (5, 10, 20 cases took 5.2, 10.2
and 20.3 s); with it the run stops the rubric after `max_timeouts` (3) texts, so the time no
longer grows with N beyond the scoring itself.

Usage: python bench/regex_timeouts.py [--n N ...] [--record]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

from run import machine, record, revision
from toolscore import __version__

SPEC = """\
rubrics:
  only_a: {kind: regex, pattern: "^(a+)+$"}
tools:
  refund:
    args:
      order_id: exact
      note: {kind: text, rubric: only_a}
"""
NOTE = "a" * 40 + "!"


def write(folder: Path, n: int) -> None:
    """The spec, N cases and N outputs whose notes are the reproducer."""
    (folder / "tools.yaml").write_text(SPEC)
    with (folder / "cases.jsonl").open("wb") as cases, (folder / "outputs.jsonl").open("wb") as out:
        for i in range(n):
            cases.write(orjson.dumps({"id": f"c{i}", "plans": [[
                {"name": "refund", "args": {"order_id": i}}]]}) + b"\n")  # fmt: skip
            out.write(orjson.dumps({"id": f"c{i}", "calls": [
                {"name": "refund", "args": {"order_id": i, "note": NOTE}}]}) + b"\n")  # fmt: skip


def measure(n: int) -> tuple[float, dict[str, int]]:
    """Wall seconds of one `score --workers 1` run on N cases, and its unscored reasons."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write(folder, n)
        command = [
            sys.executable, "-m", "toolscore", "score", "--workers", "1",
            "--specs", str(folder / "tools.yaml"), "--cases", str(folder / "cases.jsonl"),
            "--outputs", str(folder / "outputs.jsonl"), "--json", str(folder / "report.json"),
        ]  # fmt: skip
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        wall = time.perf_counter() - start
        report = json.loads((folder / "report.json").read_text())
    reasons: dict[str, int] = report["summary"]["rubrics"]["per_rubric"]["only_a"]["unscored"][
        "reasons"
    ]
    return wall, reasons


def main() -> None:
    """Run each size, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[5, 20, 1_000, 100_000])
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    header = ["| cases | wall s | timed out | not run (stopped) |", "|---|---|---|---|"]
    rows = []
    for n in args.n:
        wall, reasons = measure(n)
        timed = sum(c for r, c in reasons.items() if r.startswith("the regex search"))
        stopped = sum(c for r, c in reasons.items() if r.startswith("not run"))
        rows.append(f"| {n:,} | {wall:.1f} | {timed} | {stopped:,} |")
        print(rows[-1], flush=True)
    print("\n".join([*header, *rows]))
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()}); run took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/regex_timeouts.py", *sys.argv[1:]])
        notes = ["before the cap: 5, 10, 20 cases took 5.2, 10.2, 20.3 s (one limit a case)"]
        record(command, started, elapsed, notes, [*header, *rows])


if __name__ == "__main__":
    main()
