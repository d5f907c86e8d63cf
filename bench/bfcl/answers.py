"""How long `toolscore import bfcl-outputs` takes on one huge answer: linear in its size.

Each answer is one BFCL result line in a file, converted as the command converts it
(`convert_results` reading the file, then `dumps` for each line), timed at a base size and,
with `--growth`, at four times that size: linear time shows as a ratio near 4, quadratic time
as a ratio near 16. The answers:

- `calls`: 4,000 `get_weather(city=..., n=...)` calls in one prompting-form answer;
- `string`: one call with a 2 MB string argument (ASCII), and `unicode` the same in `é`;
- `broken`: 4,000 calls whose argument is a name (each one a malformed call with its text);
- `tags`: 20,000 `<TOOLCALL>` tags that are never closed, before one call;
- `fc`: a function-calling result with 4,000 calls (arguments as objects).

With `--cli`, the `calls` and `string` answers are also converted by the command itself, in
a subprocess, beside a one-call file for the start-up time: the command's own memory use can
make a quadratic step much slower than in-process (the old `ast.get_source_segment` built
its lines a character at a time).

It needs no BFCL install: run it with the project's sources on the path. To time another
checkout (the code before a change, say), put that checkout's `src` first on PYTHONPATH.

Usage: PYTHONPATH=src python bench/bfcl/answers.py [--only NAME ...] [--growth] [--cli]
       [--repeat R] [--record] [--label TEXT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bfcl_env import machine, revision

from toolscore import __version__
from toolscore.bfcl import convert_results
from toolscore.bfcl.results import dumps

RESULTS = Path(__file__).resolve().parents[1] / "RESULTS.md"
BASE_SECONDS = 1.0
"""Target: one answer at the base size converts in under a second."""
MAX_RATIO = 6.0
"""Target: four times the answer takes at most this many times as long (linear: about 4)."""


def calls(n: int) -> str:
    """A prompting-form answer of `n` literal calls."""
    return "[" + ", ".join(f"get_weather(city='city {i}', n={i})" for i in range(n)) + "]"


def string(n: int) -> str:
    """One call whose string argument is `n` ASCII characters."""
    return "[f(s='" + "x" * n + "')]"


def unicode(n: int) -> str:
    """One call whose string argument is `n` bytes of `é` (two bytes each in UTF-8)."""
    return "[f(s='" + "é" * (n // 2) + "')]"


def broken(n: int) -> str:
    """`n` calls whose argument is a name, not a literal: each is a malformed call."""
    return "[" + ", ".join(f"get_weather(city=city{i})" for i in range(n)) + "]"


def tags(n: int) -> str:
    """`n` opening `<TOOLCALL>` tags with no closing one, then one call."""
    return "<TOOLCALL>" * n + "[f(a=1)]"


def fc(n: int) -> list[dict[str, Any]]:
    """A function-calling result of `n` calls."""
    return [{"get_weather": {"city": f"city {i}", "n": i}} for i in range(n)]


ANSWERS: dict[str, tuple[Callable[[int], Any], int, str]] = {
    "calls": (calls, 4_000, "calls"),
    "string": (string, 2_000_000, "bytes"),
    "unicode": (unicode, 2_000_000, "bytes"),
    "broken": (broken, 4_000, "malformed calls"),
    "tags": (tags, 20_000, "tags"),
    "fc": (fc, 4_000, "calls"),
}


def convert(path: str) -> list[str]:
    """Convert a result file as the CLI does: the outputs lines it would write."""
    return [dumps(line) for line in convert_results(path)]


def timed(result: Any, repeat: int) -> tuple[float, tuple[int, int]]:
    """The best of `repeat` conversions of a file holding one result line, in seconds, and
    the number of calls and of malformed calls written."""
    best = float("inf")
    written: list[str] = []
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "result.json"
        path.write_text(json.dumps({"id": "answer", "result": result}) + "\n", encoding="utf-8")
        for _ in range(repeat):
            start = time.perf_counter()
            written = convert(str(path))
            best = min(best, time.perf_counter() - start)
    calls = json.loads(written[0])["calls"]
    return best, (len(calls), sum(1 for call in calls if "error" in call))


CLI = "import sys; from toolscore.cli import main; sys.exit(main())"


def cli_seconds(result: Any, repeat: int) -> float:
    """Wall time of `toolscore import bfcl-outputs` on a file of one result line (best of R)."""
    best = float("inf")
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "result.json"
        path.write_text(json.dumps({"id": "answer", "result": result}) + "\n", encoding="utf-8")
        command = [sys.executable, "-c", CLI, "import", "bfcl-outputs", str(path), "--out"]
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run(
                [*command, str(Path(directory) / "outputs.jsonl")],
                check=True,
                capture_output=True,
                env=os.environ,
            )
            best = min(best, time.perf_counter() - start)
    return best


def cli_rows(repeat: int) -> list[str]:
    """The command on the `calls` and `string` answers, beside its start-up time."""
    startup = cli_seconds("[f(a=1)]", repeat)
    rows = [f"| CLI, one call (start-up) | {startup:.2f} s | - | - | wall time, subprocess |"]
    for name in ("calls", "string"):
        make, size, unit = ANSWERS[name]
        seconds = cli_seconds(make(size), repeat)
        verdict = "PASS" if seconds - startup < BASE_SECONDS else "MISS"
        rows.append(
            f"| CLI, {name}, {size:,} {unit} | {seconds:.2f} s | < start-up + "
            f"{BASE_SECONDS:.0f} s | {verdict} | wall time, subprocess |"
        )
    return rows


def row(name: str, size: int, unit: str, seconds: float, found: tuple[int, int]) -> str:
    """One Markdown row: the answer, its size, the time, what it converted to."""
    verdict = "PASS" if seconds < BASE_SECONDS else "MISS"
    return (
        f"| {name}, {size:,} {unit} | {seconds:.3f} s | < {BASE_SECONDS:.0f} s | {verdict} "
        f"| {found[0]:,} calls written, {found[1]:,} malformed |"
    )


def growth(name: str, unit: str, base: float, large: float, size: int) -> str:
    """One Markdown row for the ratio of the 4x answer's time to the base answer's."""
    ratio = large / base if base > 0 else float("inf")
    verdict = "PASS" if ratio <= MAX_RATIO else "MISS"
    return (
        f"| {name}, {size:,} {unit} (4x) | {large:.3f} s, {ratio:.1f}x the base | "
        f"<= {MAX_RATIO:.0f}x | {verdict} | linear is about 4x, quadratic 16x |"
    )


def main() -> None:
    """Time every selected answer, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(ANSWERS), help="answers to time")
    parser.add_argument("--growth", action="store_true", help="also time 4x each answer")
    parser.add_argument("--cli", action="store_true", help="also time the command itself")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best is kept")
    parser.add_argument("--record", action="store_true", help="append the table to RESULTS.md")
    parser.add_argument("--label", default="", help="a note for the record (which code ran)")
    options = parser.parse_args()
    started = datetime.now(UTC)
    clock = time.perf_counter()
    table = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    for name in options.only or ANSWERS:
        make, size, unit = ANSWERS[name]
        seconds, found = timed(make(size), options.repeat)
        table.append(row(name, size, unit, seconds, found))
        print(table[-1], flush=True)
        if options.growth:
            large, _ = timed(make(4 * size), options.repeat)
            table.append(growth(name, unit, seconds, large, 4 * size))
            print(table[-1], flush=True)
    if options.cli:
        for line in cli_rows(options.repeat):
            table.append(line)
            print(line, flush=True)
    elapsed = time.perf_counter() - clock
    if options.record:
        command = "PYTHONPATH=src python bench/bfcl/answers.py"
        command += "".join(
            [
                f" --only {' '.join(options.only)}" if options.only else "",
                " --growth" if options.growth else "",
                " --cli" if options.cli else "",
                f" --repeat {options.repeat}",
                " --record",
            ]
        )
        section = [
            f"\n## {started:%Y-%m-%d %H:%M} UTC: `{command}`\n",
            f"- machine: {machine()}",
            f"- toolscore {__version__}, commit {revision()}",
            f"- the whole run took {elapsed:.0f} s",
            *([f"- {options.label}"] if options.label else []),
            "- a file of one BFCL result line converted as `import bfcl-outputs` converts it "
            "(`convert_results`, then `dumps`); best of R",
            "",
            *table,
        ]
        with open(RESULTS, "a", encoding="utf-8") as results:
            results.write("\n".join(section) + "\n")
        print(f"recorded in {RESULTS}")


if __name__ == "__main__":
    main()
