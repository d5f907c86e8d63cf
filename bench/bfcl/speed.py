"""toolscore and BFCL's checker side by side on the same BFCL cases and outputs (issue 12).

For simple_python, multiple, parallel and parallel_multiple, two output sets: every case's
first possible answer (all pass), and a mix of perturbations of it (mostly failing). Two
figures, each a ratio measured in one run with the two sides alternating, the minimum and the
median of --repeat runs of each side:

- g. in process, full report: toolscore's `score_case` with the report's per-case JSON and its
  summary (the library calls `toolscore score --json` makes for each case), on cases and outputs
  parsed ahead, against BFCL's `ast_checker` on the same decoded outputs; both warm, in one
  subprocess per build, a timed sample repeating the whole file for about SAMPLE seconds.
- i. end to end: `toolscore score --json OUT` (the venv's console script) on the converted
  files, against BFCL's checker behind `lean_runner.py` on BFCL's own prompt, possible-answer
  and result files, Python's start-up included on both sides; at the category's real size and
  replicated --replicate times (every file replicated, ids made unique, so that both sides
  read the same cases).

toolscore runs in subprocesses, once with TOOLSCORE_PURE_PYTHON=1 and once without; each row
names the build the subprocess reported (`toolscore.build_kind()`). When both report the same
build it is measured once. A ratio is BFCL's time over toolscore's: above 1, toolscore is faster.

Usage: bench/bfcl/.venv/bin/python bench/bfcl/speed.py [--repeat R] [--replicate K]
       [--categories C ...] [--quick] [--note TEXT] [--record]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from bfcl_checker import MODEL, load_checker
from bfcl_env import (
    SPEED_CATEGORIES,
    Category,
    bfcl_version,
    files,
    load_category,
    machine,
    read_lines,
    revision,
)
from perturb import answer, extra_call, ints_as_floats, missing_call, reversed_calls, upper_case

import toolscore
from toolscore import Case, SpecSet, Trajectory, __version__, parse_output, score_case
from toolscore.bfcl import convert_result, convert_results, import_bfcl, write_import
from toolscore.bfcl.results import dumps
from toolscore.report.json_report import case_to_json, plain, report_header
from toolscore.scoring.summary import SummaryBuilder

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "RESULTS.md"
LEAN_RUNNER = HERE / "lean_runner.py"
MIXES = (upper_case, ints_as_floats, extra_call, missing_call, reversed_calls)
SAMPLE = 0.1
"""Seconds of work in one timed in-process sample (several runs over the same file)."""
IN_PROCESS_TARGETS = {False: 1.5, True: 1.0}
"""In process, by output set (perturbed or not): toolscore's speed over BFCL's, at least."""
END_TO_END_CATEGORIES = ("simple_python", "multiple", "parallel")
"""The categories the end-to-end targets name (parallel_multiple is measured, not targeted)."""
END_TO_END_TARGETS = {False: 1.0, True: 2.0}
"""End to end, by size (replicated or not): toolscore's speed over BFCL's, at least."""
BUILD_PROBE = (
    "import toolscore; "
    "print(getattr(toolscore, 'build_kind', lambda: 'pure-python')(), toolscore.__file__)"
)


@dataclass(frozen=True)
class Build:
    """A way to run toolscore: the environment of its subprocesses and the build it reports."""

    kind: str
    env: dict[str, str]
    source: str
    """Where the subprocess imported toolscore from (a worktree's src, or the installed copy)."""


@dataclass(frozen=True)
class Timing:
    """Both sides' run times (seconds) and pass counts for one row."""

    ours: list[float]
    theirs: list[float]
    passed: int
    bfcl_passed: int
    cases: int

    def ratio(self, pick: Callable[[list[float]], float]) -> float:
        """BFCL's time over toolscore's, each side summarised by `pick` (min or median)."""
        return pick(self.theirs) / pick(self.ours)


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


def builds() -> list[Build]:
    """The builds to measure: forced pure-Python, then the default (when it is another)."""
    found: list[Build] = []
    base = {k: v for k, v in os.environ.items() if k != "TOOLSCORE_PURE_PYTHON"}
    for env in ({**base, "TOOLSCORE_PURE_PYTHON": "1"}, base):
        probe = subprocess.run(
            [sys.executable, "-c", BUILD_PROBE], env=env, capture_output=True, text=True, check=True
        )
        kind, source = probe.stdout.split(maxsplit=1)
        if all(b.kind != kind for b in found):
            found.append(Build(kind, env, str(Path(source.strip()).parent.parent)))
    return found


# g. in process ----------------------------------------------------------------------------


def full_report(specs: SpecSet, parsed: Sequence[tuple[Case, Trajectory]]) -> tuple[int, bytes]:
    """Score every case and build the report as `toolscore score --json` does (per case:
    `score_case`, the summary's tallies, the case's JSON; then the header and summary);
    return the cases passed and the report's bytes."""
    summary = SummaryBuilder(specs)
    lines = []
    for case, trajectory in parsed:
        result = score_case(specs, case, trajectory)
        summary.add(case, result)
        lines.append(orjson.dumps(case_to_json(result), default=plain))
    done = summary.finish()
    head = dict(report_header(specs, __version__), summary=done.to_dict())
    opening = orjson.dumps(head, default=plain)[:-1] + b',"cases":[\n'
    return done.passed, opening + b",\n".join(lines) + b"\n]}\n"


def in_process(category: Category, mixed: bool, repeat: int) -> Timing:
    """Both scorers on one output set, warm, alternating; every run's time kept."""
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
        return full_report(specs, parsed)[0]

    def bfcl_run() -> int:
        return sum(
            bool(checker.ast_checker(f, o, t, python, name, MODEL)["valid"]) for f, o, t in checks
        )

    passed, bfcl_passed = toolscore_run(), bfcl_run()  # warm-up, and the pass counts
    ours_loops, theirs_loops = _loops(toolscore_run), _loops(bfcl_run)
    ours, theirs = [], []
    for _ in range(repeat):  # alternate, so that a busy moment hits both
        ours.append(_timed(toolscore_run, ours_loops))
        theirs.append(_timed(bfcl_run, theirs_loops))
    return Timing(ours, theirs, passed, bfcl_passed, len(pairs))


def _loops(work: Callable[[], object]) -> int:
    """How many runs of `work` make one timed sample of about SAMPLE seconds (a whole file
    takes a few milliseconds: one run alone would be timed mostly by the scheduler)."""
    return max(1, math.ceil(SAMPLE / max(_timed(work, 1), 1e-6)))


def _timed(work: Callable[[], object], loops: int) -> float:
    """Seconds per run of `work`, over `loops` runs in a row."""
    start = time.perf_counter()
    for _ in range(loops):
        work()
    return (time.perf_counter() - start) / loops


def in_process_child(categories: Sequence[str], repeat: int) -> None:
    """The g measurements in this process (started per build): one JSON line per row."""
    kind = getattr(toolscore, "build_kind", lambda: "pure-python")()
    for name in categories:
        category = load_category(name)
        for mixed in (False, True):
            timing = in_process(category, mixed, repeat)
            row = {"category": name, "mixed": mixed, "build": kind, **timing.__dict__}
            print(json.dumps(row), flush=True)


def in_process_rows(build: Build, categories: Sequence[str], repeat: int) -> list[str]:
    """Run the g measurements in a subprocess of `build`; its rows as table lines."""
    command = [sys.executable, __file__, "--in-process-child", "--repeat", str(repeat)]
    child = subprocess.Popen(
        [*command, "--categories", *categories], env=build.env, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    rows = []
    for line in child.stdout:
        data = json.loads(line)
        timing = Timing(
            data["ours"], data["theirs"], data["passed"], data["bfcl_passed"], data["cases"]
        )
        target = IN_PROCESS_TARGETS[data["mixed"]]
        label = f"g. in process, full report, {data['category']}, {_what(data['mixed'])}"
        rows.append(_row(f"{label}, {data['build']}", timing, target, "cases/s"))
        print(rows[-1], flush=True)
    if child.wait() != 0:
        raise SystemExit(f"the in-process measurement failed for the {build.kind} build")
    return rows


# i. end to end ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Files:
    """One category's files for both sides, on disk."""

    category: str
    bfcl: tuple[Path, Path, Path]
    """BFCL's prompt entries, possible answers and result lines."""
    toolscore: tuple[Path, Path, Path]
    """toolscore's spec, cases and outputs, converted from BFCL's files."""
    cases: int


def _write_replicated(path: Path, lines: Sequence[dict[str, Any]], copies: int) -> None:
    """A JSON Lines file of `lines` written `copies` times, ids made unique (`<id>-<k>`, still
    a BFCL id) when there is more than one copy."""
    with open(path, "w", encoding="utf-8") as out:
        for k in range(copies):
            for line in lines:
                copy = line if copies == 1 else {**line, "id": f"{line['id']}-{k}"}
                out.write(json.dumps(copy) + "\n")


def write_cases(category: Category, copies: int, folder: Path) -> tuple[Path, ...]:
    """BFCL's prompt and possible-answer files, replicated, and toolscore's spec and cases
    converted from them as `toolscore import bfcl` does."""
    data, answers = files(category.name)
    assert answers is not None
    prompts, truths = folder / "prompts.json", folder / "answers.json"
    _write_replicated(prompts, read_lines(data), copies)
    _write_replicated(truths, read_lines(answers), copies)
    converted = folder / "toolscore"
    write_import(import_bfcl(str(prompts), str(truths)), converted)
    return prompts, truths, converted / "tools.yaml", converted / "cases.jsonl"


def write_outputs(category: Category, mixed: bool, copies: int, folder: Path) -> tuple[Path, ...]:
    """BFCL's result file of one output set, replicated, and toolscore's outputs converted
    from it as `toolscore import bfcl-outputs` does."""
    results, converted = folder / "results.json", folder / "outputs.jsonl"
    lines = [{"id": entry["id"], "result": o} for entry, o in outputs(category, mixed)]
    _write_replicated(results, lines, copies)
    with open(converted, "w", encoding="utf-8") as out:
        out.writelines(dumps(line) + "\n" for line in convert_results(str(results)))
    return results, converted


def toolscore_command() -> list[str]:
    """`toolscore` as a user of this venv runs it: its console script."""
    script = Path(sys.executable).parent / "toolscore"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from toolscore.cli import main; main()"]


def end_to_end(data: Files, builds_: Sequence[Build], repeat: int, folder: Path) -> list[Timing]:
    """Wall times of `toolscore score --json` (per build) and of the lean runner, alternating
    after one untimed run of each; pass counts from toolscore's report summary and from the
    runner's verdicts."""
    specs, cases, outputs_ = (str(p) for p in data.toolscore)
    report = folder / "report.json"
    ours_command = [*toolscore_command(), "score", "--specs", specs, "--cases", cases]
    ours_command += ["--outputs", outputs_, "--json", str(report)]
    verdicts = folder / "verdicts.jsonl"
    theirs_command = [sys.executable, str(LEAN_RUNNER), data.category]
    theirs_command += [*(str(p) for p in data.bfcl), str(verdicts)]
    passed = []
    _run(theirs_command, builds_[0].env)  # warm-up (the disk cache), and the verdicts
    with open(verdicts, encoding="utf-8") as lines:
        checked = [json.loads(line)["valid"] for line in lines]
    if len(checked) != data.cases:
        raise SystemExit(f"{data.category}: the lean runner checked {len(checked)} results")
    for build in builds_:
        _run(ours_command, build.env)
        summary = orjson.loads(report.read_bytes())["summary"]
        if summary["cases"] != data.cases:
            raise SystemExit(f"{data.category}: the report has {summary['cases']} cases")
        passed.append(summary["passed"])
    theirs: list[float] = []
    ours: list[list[float]] = [[] for _ in builds_]
    for _ in range(repeat):
        theirs.append(_run(theirs_command, builds_[0].env))
        for times, build in zip(ours, builds_, strict=True):
            times.append(_run(ours_command, build.env))
    return [
        Timing(t, theirs, p, sum(checked), data.cases) for t, p in zip(ours, passed, strict=True)
    ]


def _run(command: list[str], env: dict[str, str]) -> float:
    """Wall time of a command run to completion (it must succeed)."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr.decode()}")
    return seconds


def end_to_end_rows(
    categories: Sequence[str], builds_: Sequence[Build], repeat: int, replicate: int
) -> list[str]:
    """The i rows: every category, output set and size, every build."""
    rows = []
    for name in categories:
        category = load_category(name)
        for copies in dict.fromkeys((1, replicate)):
            with tempfile.TemporaryDirectory() as tmp:
                prompts, answers, specs, cases = write_cases(category, copies, Path(tmp))
                for mixed in (False, True):
                    results, outputs_ = write_outputs(category, mixed, copies, Path(tmp))
                    data = Files(
                        name,
                        (prompts, answers, results),
                        (specs, cases, outputs_),
                        copies * len(category.entries),
                    )
                    timings = end_to_end(data, builds_, repeat, Path(tmp))
                    size = "real size" if copies == 1 else f"x{copies}"
                    targeted = name in END_TO_END_CATEGORIES
                    target = END_TO_END_TARGETS[copies > 1] if targeted else None
                    for build, timing in zip(builds_, timings, strict=True):
                        label = f"i. end to end, {name} {size}, {_what(mixed)}, {build.kind}"
                        rows.append(_row(label, timing, target, "s"))
                        print(rows[-1], flush=True)
    return rows


# the table -------------------------------------------------------------------------------


def _what(mixed: bool) -> str:
    return "perturbed outputs" if mixed else "first possible answers"


def _row(label: str, timing: Timing, target: float | None, unit: str) -> str:
    """One Markdown table row: the ratio (min, median), the target, and both sides' figures."""
    low, mid = timing.ratio(min), timing.ratio(statistics.median)
    verdict = "-" if target is None else "PASS" if low >= target else "MISS"
    n = timing.cases
    sides = f"toolscore {_side(timing.ours, n, unit)}, BFCL {_side(timing.theirs, n, unit)}"
    return (
        f"| {label} | {low:.2f}x (median {mid:.2f}x) | "
        f"{'-' if target is None else f'>= {target:g}x BFCL'} | {verdict} | {sides}; "
        f"{n:,} cases; pass: toolscore {timing.passed:,}, BFCL {timing.bfcl_passed:,}; "
        f"{len(timing.ours)} runs each |"
    )


def _side(times: list[float], n: int, unit: str) -> str:
    """One side's best and median, as a rate or as seconds."""
    if unit == "cases/s":
        return f"{n / min(times):,.0f} cases/s (median {n / statistics.median(times):,.0f})"
    return f"{min(times):.3f} s (median {statistics.median(times):.3f})"


def _without_notes(argv: list[str]) -> list[str]:
    """The command line without its --note options (the notes are listed on their own)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip or arg == "--note":
            skip = not skip
        elif not arg.startswith("--note="):
            kept.append(arg)
    return kept


def main() -> None:
    """Measure every category, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each side")
    parser.add_argument("--replicate", type=int, default=100, help="copies for the large files")
    parser.add_argument("--categories", nargs="+", default=list(SPEED_CATEGORIES))
    parser.add_argument("--quick", action="store_true", help="smoke run: --repeat 2 --replicate 5")
    parser.add_argument("--note", action="append", default=[], help="a note for the record")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    parser.add_argument("--in-process-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_process_child:
        in_process_child(args.categories, args.repeat)
        return
    if args.quick:
        args.repeat, args.replicate = min(args.repeat, 2), min(args.replicate, 5)
    started, clock, load = datetime.now(UTC), time.perf_counter(), os.getloadavg()
    found = builds()
    for build in found:
        print(f"build {build.kind}: toolscore from {build.source}", flush=True)
    header = ["| figure | speed vs BFCL | target | result | notes |", "|---|---|---|---|---|"]
    print("\n".join(header), flush=True)
    rows = [row for build in found for row in in_process_rows(build, args.categories, args.repeat)]
    rows += end_to_end_rows(args.categories, found, args.repeat, args.replicate)
    elapsed = time.perf_counter() - clock
    loads = f"load average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    sources = "; ".join(f"{b.kind} from {b.source} ({revision(Path(b.source))})" for b in found)
    print(f"\n{machine()}; toolscore {__version__}, {sources}; {elapsed:.0f} s; {loads}")
    if args.record:
        options = _without_notes(sys.argv[1:])
        command = " ".join(["bench/bfcl/.venv/bin/python", "bench/bfcl/speed.py", *options])
        section = [
            f"\n## {started:%Y-%m-%d %H:%M} UTC: `{command}`\n",
            f"- machine: {machine()}",
            f"- toolscore {__version__}; bfcl-eval {bfcl_version()}; bench scripts at commit "
            f"{revision(HERE)}",
            f"- builds measured (toolscore's source, its commit): {sources}",
            f"- the whole run took {elapsed:.0f} s; {loads}",
            *(f"- note: {note}" for note in args.note),
            "- speed vs BFCL = BFCL's time / toolscore's, from the minimum of each side's runs "
            "(the result column) and from their medians; the two sides alternate\n",
            *header,
            *rows,
        ]
        with open(RESULTS, "a", encoding="utf-8") as results:
            results.write("\n".join(section) + "\n")
        print(f"recorded in {RESULTS}")


if __name__ == "__main__":
    main()
