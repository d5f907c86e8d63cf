"""Measure `score --engine ray` in Ray's local mode against `score --workers 2`, and the
driver's share of a Ray run, for a projection onto N machines.

Usage: PYTHONPATH=src python bench/ray_engine.py [--n 1000000] [--repeat 2] [--data DIR]

Part 1 runs the command line on N generated cases (bench/generate.py, kind single), every
run writing the report (`--json`): `--workers 2`, then `join` and `--engine ray --joined`
(Ray started by the run, two cores), alternated `--repeat` times; the reports must be the
same bytes but for the header's `"engine":"ray"`. Part 2 measures, in this process, what
the driver does per batch that no worker can do for it: take the batch's outcome off the
wire (pickle, which Ray uses), merge its summary and append its report lines; it times
these for batches of several sizes, giving a fixed cost per batch and a cost per case.
Part 3 runs Ray in this process on `--driver-n` cases for several batch sizes and reads
the CPU time the driver process spent: what the driver costs in a real run.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

from run import machine, revision
from toolscore.engines.batch import BatchScorer
from toolscore.engines.partitions import joined_records
from toolscore.specs.loading import load_specs

ROOT = Path(__file__).resolve().parent.parent
TOOLSCORE = [sys.executable, "-m", "toolscore"]


def timed(command: list[str]) -> float:
    """Wall seconds of a command, which must succeed."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def data(directory: Path, n: int) -> Path:
    """N generated cases in `directory` (made once)."""
    if not (directory / "outputs.jsonl").exists():
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "generate.py"), "--kind", "single",
             "--n", str(n), "--out", str(directory)],
            check=True,
        )  # fmt: skip
    return directory


def command_line(folder: Path, repeat: int) -> None:
    """Part 1: the two runs side by side, alternated."""
    spec, cases, outputs = (str(folder / name) for name in ("tools.yaml", "cases.jsonl",
                                                            "outputs.jsonl"))  # fmt: skip
    score = [*TOOLSCORE, "score", "--specs", spec]
    for round_ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="toolscore-bench-ray-") as temporary:
            out = Path(temporary)
            local = timed([*score, "--cases", cases, "--outputs", outputs, "--workers", "2",
                           "--json", str(out / "local.json")])  # fmt: skip
            join = timed([*TOOLSCORE, "join", "--cases", cases, "--outputs", outputs,
                          "--out", str(out / "joined")])  # fmt: skip
            ray = timed([*score, "--engine", "ray", "--joined", str(out / "joined"),
                         "--json", str(out / "ray.json")])  # fmt: skip
            same = (out / "ray.json").read_bytes().replace(b',"engine":"ray"', b"", 1) == (
                out / "local.json"
            ).read_bytes()
            print(
                f"round {round_ + 1}: --workers 2 {local:.1f} s; join {join:.1f} s; "
                f"--engine ray --joined {ray:.1f} s (ratio {ray / local:.2f}x; with the join "
                f"{(ray + join) / local:.2f}x); reports identical: {same}",
                flush=True,
            )
            if not same:
                raise SystemExit("the two reports differ")


def driver_costs(folder: Path, sample: int) -> None:
    """Part 2: the driver's cost per batch and per case, and the workers' rate per core."""
    specs = load_specs(folder / "tools.yaml")
    sources = (str(folder / "cases.jsonl"), str(folder / "outputs.jsonl"))
    scorer = BatchScorer(specs, sources, want_report=True)
    records = list(islice(joined_records(*sources), sample))
    start = time.perf_counter()
    outcome = scorer.score_records(records)
    rate = len(records) / (time.perf_counter() - start)
    print(f"worker: {rate:,.0f} cases/s on one core (scoring {len(records):,} records)")
    for size in (500, 2000, 10000, 50000):
        batches = [scorer.score_records(records[i : i + size]) for i in range(0, sample, size)]
        wired = [pickle.dumps(batch) for batch in batches]
        summary = scorer.new_summary()
        with tempfile.TemporaryFile() as spool:
            start = time.perf_counter()
            for blob in wired:
                batch = pickle.loads(blob)  # our own bytes, made just above
                summary.merge(batch.summary)
                spool.write(b",\n".join(batch.report_lines))
            spent = time.perf_counter() - start
        merge_only = time.perf_counter()
        summary = scorer.new_summary()
        for batch in batches:
            summary.merge(batch.summary)
        merge_only = time.perf_counter() - merge_only
        print(
            f"driver, batches of {size}: {spent / len(batches) * 1e3:.2f} ms per batch "
            f"({spent / sample * 1e6:.2f} us per case) of which merging summaries "
            f"{merge_only / len(batches) * 1e3:.3f} ms per batch",
            flush=True,
        )
    del outcome


def driver_in_a_run(folder: Path, sizes: list[int]) -> None:
    """Part 3: a Ray run in this process, per batch size: its wall time, and the CPU time
    this process (the driver: Ray's client threads, the merge, the report) spent in it."""
    from toolscore.engines.partitions import write_joined  # noqa: PLC0415
    from toolscore.engines.ray import RayScoring, start_ray  # noqa: PLC0415
    from toolscore.report.json_report import ReportWriter  # noqa: PLC0415

    specs = load_specs(folder / "tools.yaml")
    sources = (str(folder / "cases.jsonl"), str(folder / "outputs.jsonl"))
    with tempfile.TemporaryDirectory(prefix="toolscore-bench-ray-") as temporary:
        joined = write_joined(*sources, Path(temporary) / "joined")
        start_ray(None, 2)
        try:
            for size in sizes:
                scorer = BatchScorer(specs, sources, want_report=True)
                run = RayScoring(scorer, str(folder / "tools.yaml"), joined, batch_size=size)
                report = ReportWriter(str(Path(temporary) / "report.json"))
                wall, cpu = time.perf_counter(), time.process_time()
                batches = 0
                for outcome in run:
                    report.add_all_encoded(outcome.report_lines)
                    batches += 1
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                report.discard()
                print(
                    f"ray run, batches of {size}: {joined.cases_count:,} cases in {wall:.1f} s "
                    f"({joined.cases_count / wall:,.0f} cases/s); driver CPU {cpu:.1f} s = "
                    f"{cpu / wall:.0%} of the wall time, {cpu / batches * 1e3:.1f} ms per batch "
                    f"({batches} batches), {cpu / joined.cases_count * 1e6:.1f} us per case",
                    flush=True,
                )
        finally:
            sys.modules["ray"].shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--sample", type=int, default=100_000, help="cases for part 2")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "tsray")
    parser.add_argument("--skip-command-line", action="store_true")
    parser.add_argument("--driver-n", type=int, default=200_000, help="cases for part 3")
    args = parser.parse_args()
    print(f"machine: {machine()}; revision {revision()}; {os.cpu_count()} cores; n={args.n:,}")
    folder = data(args.data / str(args.n), args.n)
    if not args.skip_command_line:
        command_line(folder, args.repeat)
    driver_costs(folder, min(args.sample, args.n))
    small = data(args.data / str(args.driver_n), args.driver_n)
    driver_in_a_run(small, [500, 2000, 10000])


if __name__ == "__main__":
    main()
