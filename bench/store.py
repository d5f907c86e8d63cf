"""Measure the results store: what saving adds to scoring, compare, re-scoring, store size.

Usage: python bench/store.py [--n N] [--repeat R] [--record]

On N single-call cases (bench/data/single-N, written by generate.py when missing), in one
process: scoring alone and scoring while saving, alternated so that both meet the same load;
then the saved run re-scored from the store under a spec with one enum value renamed (a
third of the cases flip), `compare` of the two runs in a process of its own (wall time and
peak memory), and the store's size on disk.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from run import DATA, Figure, dataset, machine, record, revision, run_child
from toolscore import __version__, load_specs, read_cases, read_outputs, score
from toolscore.store import RunMeta, open_store
from toolscore.store.rescore import rescore

RENAMED = ("values: [EUR, USD, GBP]", "values: [EUR, USD, GBX]")
ALIAS = ("pound: GBP", "pound: GBX")
COMPARE = """
import sys
from toolscore.store import compare, open_store
with open_store(sys.argv[1], create=False) as store:
    comparison = compare(store, 1, 2)
print(len(comparison.flips), comparison.by_rule()[0][:5])
"""
"""`compare` of runs 1 and 2, in a process of its own so that its peak memory is its own."""


def score_only(folder: Path) -> float:
    """Seconds to score the folder's cases, reading both files, storing nothing."""
    specs = load_specs(folder / "tools.yaml")
    start = time.perf_counter()
    run = score(
        specs, read_cases(folder / "cases.jsonl", specs), read_outputs(folder / "outputs.jsonl")
    )
    for _ in run:
        pass
    run.summary()
    return time.perf_counter() - start


def score_and_save(folder: Path, db: Path) -> float:
    """Seconds to score and save the run into a new store at `db` (inputs hashed and
    stored, results staged, the run committed)."""
    remove_store(db)
    specs_path, cases, outputs = (
        folder / "tools.yaml",
        folder / "cases.jsonl",
        folder / "outputs.jsonl",
    )
    specs = load_specs(specs_path)
    start = time.perf_counter()
    with open_store(db) as store:
        meta = RunMeta.from_files(specs, specs_path, cases, outputs, "bench", __version__)
        with store.begin_run(meta) as writer:
            run = score(specs, read_cases(cases, specs), read_outputs(outputs))
            for result in run:
                writer.add(result)
            writer.finish(run.summary())
    return time.perf_counter() - start


def remove_store(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def store_size(db: Path) -> tuple[float, float, float]:
    """The store's size on disk, and the compressed inputs' and case details' share, in MB."""
    with open_store(db, create=False) as store:
        inputs = store.db.execute("SELECT sum(length(data)) FROM content_chunks").fetchone()[0]
        details = store.db.execute("SELECT sum(length(detail)) FROM results").fetchone()[0]
    total = sum(Path(f"{db}{s}").stat().st_size for s in ("", "-wal") if Path(f"{db}{s}").exists())
    return total / 1e6, (inputs or 0) / 1e6, (details or 0) / 1e6


def saving(folder: Path, db: Path, n: int, repeat: int) -> list[Figure]:
    """Scoring alone beside scoring and saving (alternated), and the size of the store."""
    alone, saving = [], []
    for _ in range(repeat):
        alone.append(score_only(folder))
        saving.append(score_and_save(folder, db))
    plain, saved = min(alone), min(saving)
    ratio = saved / plain
    note = f"{n:,} cases, best of {repeat}, alternated"
    total, inputs, details = store_size(db)
    return [
        Figure(
            "s1. score, nothing saved",
            f"{plain:.2f} s",
            "-",
            None,
            f"{n / plain:,.0f} cases/s, {note}",
        ),
        Figure(
            "s2. score and save", f"{saved:.2f} s", "-", None, f"{n / saved:,.0f} cases/s, {note}"
        ),
        Figure(
            "s3. score and save / score alone",
            f"{ratio:.2f}x",
            "<= 1.5x",
            ratio <= 1.5,
            f"saving adds {saved - plain:.2f} s ({100 * (ratio - 1):.0f}%)",
        ),
        Figure(
            "s4. store size, one run",
            f"{total:.0f} MB",
            "< 300 MB",
            total < 300,
            f"inputs compressed {inputs:.0f} MB, case details {details:.0f} MB, {n:,} cases",
        ),
    ]


def rescoring(folder: Path, db: Path, n: int, repeat: int) -> list[Figure]:
    """The saved run re-scored from the store under renamed specs, then the two compared."""
    renamed = DATA / f"store-{n}-renamed.yaml"
    renamed.write_text((folder / "tools.yaml").read_text().replace(*RENAMED).replace(*ALIAS))
    start = time.perf_counter()
    with open_store(db, create=False) as store:
        assert rescore(store, 1, renamed) == 2
    rescored = time.perf_counter() - start
    times, peaks, said = [], [], ""
    for _ in range(repeat):
        seconds, peak, said = run_child([sys.executable, "-c", COMPARE, str(db)])
        times.append(seconds)
        peaks.append(peak)
    best = min(times)
    total, _, _ = store_size(db)
    renamed.unlink()
    return [
        Figure(
            "s5. rescore from the store",
            f"{rescored:.2f} s",
            "-",
            None,
            f"{n / rescored:,.0f} cases/s, enum value GBP renamed, inputs read from the store",
        ),
        Figure(
            "s6. compare two runs",
            f"{best:.2f} s",
            "< 10 s",
            best < 10,
            f"{int(said.split()[0]):,} flipped cases, peak {max(peaks):.0f} MB, process start "
            f"included, {n:,} cases each, best of {repeat}",
        ),
        Figure("s7. store size, the two runs", f"{total:.0f} MB", "-", None, "inputs shared"),
    ]


def main() -> None:
    """Run the measurements, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="single-call cases")
    parser.add_argument("--repeat", type=int, default=2, help="timed repetitions (best is kept)")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    folder = dataset(args.n)
    db = DATA / f"store-{args.n}.db"
    header = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    print("\n".join(header), flush=True)
    rows: list[str] = []
    for measure in (saving, rescoring):
        for figure in measure(folder, db, args.n, args.repeat):
            rows.append(figure.row())
            print(rows[-1], flush=True)
    remove_store(db)
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()}); run took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/store.py", *sys.argv[1:]])
        record(command, started, elapsed, [], [*header, *rows])


if __name__ == "__main__":
    main()
