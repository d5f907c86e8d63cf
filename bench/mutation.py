"""Mutation testing of the core: run mutmut, then count its verdicts per module.

Usage: python bench/mutation.py [--run] [--keep] [--survivors] [--record]

`--run` runs `mutmut run` (configured in pyproject.toml: the core modules, a fast test
selection) under `nice`, from scratch unless `--keep` reuses the previous run's `mutants/`;
without it, the last run's results are counted. `--survivors` lists every surviving mutant;
`--record` appends the table to bench/RESULTS.md with the date, machine, commit and duration.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
RESULTS = ROOT / "bench" / "RESULTS.md"
CORE = (
    "core/values.py",
    "core/rules/base.py",
    "core/rules/text.py",
    "core/rules/numbers.py",
    "core/rules/enums.py",
    "core/rules/times.py",
    "core/rules/structures.py",
    "core/rules/compile.py",
    "core/arguments.py",
    "core/plans.py",
    "core/diagnosis.py",
    "scoring/case.py",
    "scoring/tallies.py",
    "scoring/summary.py",
    "scoring/stream.py",
    "core/dataflow.py",
    "specs/loading.py",
    "inputs/cases.py",
    "state/diff.py",
)
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 36: "timeout"}
"""mutmut's exit codes (mutmut/stats.py); signals of a CPU limit are timeouts too."""
TIMEOUTS = {24, -24, 152, 255}
COLUMNS = ("killed", "survived", "timeout", "no tests", "other")


def status(code: int | None) -> str:
    """The verdict mutmut's exit code stands for, folded into this script's columns."""
    if code in TIMEOUTS:
        return "timeout"
    return STATUS.get(code, "other") if code is not None else "other"


def count() -> tuple[dict[str, Counter[str]], list[str]]:
    """Per core module, how many mutants had each verdict; and the surviving mutants' names."""
    table: dict[str, Counter[str]] = {}
    survivors: list[str] = []
    for module in CORE:
        meta = MUTANTS / "src" / "toolscore" / f"{module}.meta"
        if not meta.exists():
            continue
        codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
        table[module] = Counter(status(code) for code in codes.values())
        survivors += sorted(name for name, code in codes.items() if status(code) == "survived")
    return table, survivors


def render(table: dict[str, Counter[str]]) -> list[str]:
    """The counts as a Markdown table, one row a module and a total."""
    lines = [
        "| module | mutants | killed | survived | timeout | no tests | other | killed % |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total: Counter[str] = Counter()
    for module, counts in [*table.items(), ("**core**", total)]:
        if counts is not total:
            total.update(counts)
        n = sum(counts.values())
        share = f"{100 * counts['killed'] / n:.1f}" if n else "-"
        cells = " | ".join(str(counts[c]) for c in COLUMNS)
        lines.append(f"| {module} | {n} | {cells} | {share} |")
    return lines


def run(keep: bool) -> float:
    """Run mutmut under nice; the wall time in seconds."""
    if not keep:
        shutil.rmtree(MUTANTS, ignore_errors=True)
    mutmut = Path(sys.executable).with_name("mutmut")
    started = time.perf_counter()
    subprocess.run(
        ["nice", "-n", "10", str(mutmut), "run", "--max-children", str(os.cpu_count() or 1)],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
        # the mutants are .py files: a compiled module copied beside one must not run instead
        env={**os.environ, "TOOLSCORE_PURE_PYTHON": "1"},
    )
    return time.perf_counter() - started


def record(lines: list[str], seconds: float | None) -> None:
    """Append a dated section with the table to RESULTS.md."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    took = f"{seconds / 60:.0f} min" if seconds is not None else "not timed"
    section = [
        "",
        f"## {when}: `python bench/mutation.py --run --record` (mutation testing)",
        "",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"CPython {platform.python_version()}; mutmut under nice, {took}",
        f"- commit {commit}",
        "",
        *lines,
    ]
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write("\n".join(section) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="run mutmut first")
    parser.add_argument("--keep", action="store_true", help="reuse the previous mutants/")
    parser.add_argument("--survivors", action="store_true", help="list surviving mutants")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    options = parser.parse_args()
    seconds = run(options.keep) if options.run else None
    table, survivors = count()
    if not table:
        sys.exit("no mutation results: run `make mutation` (or this script with --run)")
    lines = render(table)
    print("\n".join(lines))
    if seconds is not None:
        print(f"\nmutmut took {seconds / 60:.1f} min")
    if options.survivors:
        print("\n".join(["", "survivors:", *survivors]))
    if options.record:
        record(lines, seconds)


if __name__ == "__main__":
    main()
