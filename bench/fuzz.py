"""Fuzz the outputs reader and the scorer with mutated outputs lines, and count what happens.

Usage: python bench/fuzz.py [--lines N] [--seed S] [--first I] [--record]

Each line is a real seed (every provider transcript fixture, SDK-written ones included, the
malformed and unread lines, plain `calls` lines; tests/fuzz_seeds.py), one kind after the other
(each format, `calls`, lines that are input errors) so that every format gets its share, then
mutated by tests/mutate.py with a seeded random source: types changed, keys deleted,
duplicated or renamed, junk inserted, lines truncated. The line goes through the reader
(`parse_line`, `parse_output`) and, when it reads, the scorer (`score_case`, the summary and the
report JSON). Outcomes: passed, scored failure (with or without unread transcript parts), input
error (one line naming the file), or crash (anything else, a multi-line input error too).
Crashes are listed by where they were raised, with the index of the first line that raised
each, so that `--first I --lines 1` reproduces it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import mutate
from fuzz_seeds import fuzz_case, output_groups
from run import machine, record, revision
from toolscore import __version__
from toolscore.errors import InputError, OutputError
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case
from toolscore.scoring.summary import SummaryBuilder

SOURCE = "outputs.jsonl"


class Tally:
    """Counts of outcomes, by format, and the crashes by the place that raised them."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.formats: Counter[str] = Counter()
        self.crashes: Counter[str] = Counter()
        self.first_crash: dict[str, int] = {}
        self.slowest = (0.0, -1)

    def crash(self, index: int, stage: str, error: BaseException) -> None:
        """Count a crash under `stage: Type at file:line` (its innermost frame)."""
        frame = traceback.extract_tb(error.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        key = f"{stage}: {type(error).__name__} at {where}: {str(error)[:80]}"
        self.crashes[key] += 1
        self.first_crash.setdefault(key, index)
        self.outcomes["crash"] += 1


def run(lines: int, seed: int, first: int) -> Tally:
    """Fuzz `lines` mutated lines, from line index `first` of the seeded sequence."""
    groups = list(output_groups().values())
    specs, case = fuzz_case()
    builder = SummaryBuilder(specs)
    score_case(specs, case, parse_output(groups[0][0]))  # warm up: lazy imports, caches
    tally = Tally()
    for index in range(first, first + lines):
        if index > first and (index - first) % 100_000 == 0:
            print(f"{index - first:,} lines, {tally.outcomes['crash']} crashes", file=sys.stderr)
        rng = random.Random(seed * 1_000_003 + index)  # each line reproducible on its own
        group = groups[index % len(groups)]  # every kind of line in turn
        raw = mutate.line(group[rng.randrange(len(group))], rng.randrange)
        started = time.process_time()  # CPU time: the machine may be shared
        try:
            trajectory = parse_output(parse_line(raw, SOURCE, 1, OutputError), SOURCE, 1)
        except InputError as error:
            text = str(error)
            if isinstance(error, OutputError) and text.startswith(SOURCE) and "\n" not in text:
                tally.outcomes["input error"] += 1
            else:
                tally.crash(index, "read", error)
            continue
        except Exception as error:
            tally.crash(index, "read", error)
            continue
        try:
            result = score_case(specs, case, trajectory)
            builder.add(case, result)
            orjson.dumps(case_to_json(result))
        except Exception as error:
            tally.crash(index, "score", error)
            continue
        seconds = time.process_time() - started
        if seconds > tally.slowest[0]:
            tally.slowest = (seconds, index)
        tally.formats[trajectory.format or "calls"] += 1
        if result.passed:
            tally.outcomes["passed"] += 1
        elif result.unread:
            tally.outcomes["scored failure, transcript not fully read"] += 1
        else:
            tally.outcomes["scored failure"] += 1
    orjson.dumps(builder.finish().to_dict())
    return tally


def main() -> None:
    """Run the fuzzer, print the counts, and append them to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="mutated lines to try")
    parser.add_argument("--seed", type=int, default=11, help="seed of the random mutations")
    parser.add_argument("--first", type=int, default=0, help="index of the first line")
    parser.add_argument("--record", action="store_true", help="append the result to RESULTS.md")
    options = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    tally = run(options.lines, options.seed, options.first)
    elapsed = time.perf_counter() - clock
    table = ["| outcome | lines |", "|---|---|"]
    tally.outcomes["crash"] += 0  # listed even when there is none
    table += [f"| {name} | {n:,} |" for name, n in sorted(tally.outcomes.items())]
    table += ["", "| read as | lines |", "|---|---|"]
    table += [f"| {name} | {n:,} |" for name, n in sorted(tally.formats.items())]
    if tally.crashes:
        table += ["", "| crash | count | first line index |", "|---|---|---|"]
        table += [
            f"| {key.replace('|', '/')} | {n:,} | {tally.first_crash[key]} |"
            for key, n in tally.crashes.most_common()
        ]
    print("\n".join(table))
    rate = options.lines / elapsed if elapsed else 0.0
    slowest, at = tally.slowest
    notes = [
        f"{options.lines:,} mutated lines from {options.first}, seed {options.seed}; "
        f"{rate:,.0f} lines/s; slowest line {slowest * 1000:.1f} ms of CPU (index {at})",
    ]
    print(f"\n{notes[0]}\n{machine()}; toolscore {__version__} ({revision()})")
    if options.record:
        command = "python bench/fuzz.py " + " ".join(sys.argv[1:])
        record(command.strip(), started, elapsed, notes, table)


if __name__ == "__main__":
    main()
