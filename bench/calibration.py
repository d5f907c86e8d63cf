"""Measure calibration on a large stored run: sampling its disagreements, and calibrating.

Usage: python bench/calibration.py [--n N] [--repeat R] [--record]

On N single-call cases (bench/data/single-N, written by generate.py when missing) scored and
saved into a new store: `disagreements` of the rules against exact JSON and against the
lowercase baseline (100 cases each; two passes over the stored files, the disagreeing cases
scored again), then `calibrate` on a batch with a label for every case, and the exact
disagreements again with `--agreements 100` (the agreeing cases stratified too: a third pass,
scoring again the ones the rules passed). Side by side, in the same run: re-scoring the
whole run from the store, the floor a sampler that scores everything again would stand on.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

from run import DATA, Figure, dataset, machine, record, revision
from store import remove_store
from toolscore import __version__, load_specs, read_cases, read_outputs, score
from toolscore.calibration.batches import LABELS, Batches, Label
from toolscore.calibration.calibrate import calibrate
from toolscore.calibration.disagreements import sample_disagreements, stored_disagreements
from toolscore.store import RunMeta, open_store
from toolscore.store.rescore import rescore

T = TypeVar("T")


def save_run(folder: Path, db: Path) -> None:
    """Score the folder's cases and save the run as run 1 of a new store at `db`."""
    remove_store(db)
    specs_path = folder / "tools.yaml"
    cases, outputs = folder / "cases.jsonl", folder / "outputs.jsonl"
    specs = load_specs(specs_path)
    with open_store(db) as store:
        meta = RunMeta.from_files(specs, specs_path, cases, outputs, "bench", __version__)
        with store.begin_run(meta) as writer:
            run = score(specs, read_cases(cases, specs), read_outputs(outputs))
            for result in run:
                writer.add(result)
            writer.finish(run.summary())


def timed(work: Callable[[], T]) -> tuple[float, T]:
    """Seconds `work()` took, and what it returned."""
    start = time.perf_counter()
    value = work()
    return time.perf_counter() - start, value


def measure(db: Path, specs_path: Path, n: int, repeat: int) -> list[Figure]:
    """The figures, each the best of `repeat` runs, with the rescore floor in the same loop."""
    best: dict[str, float] = {}
    counts: dict[str, int] = {}
    with open_store(db) as store:
        for vs in ("exact", "lowercase"):
            counts[vs] = sum(1 for _ in stored_disagreements(store, 1, vs))
        for _ in range(repeat):
            for vs in ("exact", "lowercase"):
                seconds, batch = timed(partial(sample_disagreements, store, 1, vs, 100, 0))
                best[vs] = min(best.get(vs, seconds), seconds)
            ids = Batches.of(store).case_ids(batch)
            labels = [Label(case, "bench", LABELS[k % 2]) for k, case in enumerate(ids)]
            Batches.of(store).set_labels(batch, labels)
            seconds, _ = timed(partial(calibrate, Batches.of(store), batch))
            best["calibrate"] = min(best.get("calibrate", seconds), seconds)
            seconds, batch = timed(partial(sample_disagreements, store, 1, "exact", 100, 0, 100))
            best["agreements"] = min(best.get("agreements", seconds), seconds)
            agreements = Batches.of(store).info(batch).agreement_strata or {}
            seconds, _ = timed(partial(rescore, store, 1, specs_path))
            best["rescore"] = min(best.get("rescore", seconds), seconds)
    floor = best["rescore"]
    return [
        Figure(
            f"k{k}. disagreements --vs {vs} --n 100",
            f"{best[vs]:.1f} s",
            "-",
            None,
            f"{counts[vs]:,} disagreements of {n:,} cases; {best[vs] / floor:.2f}x re-scoring "
            f"the run from the store ({floor:.1f} s)",
        )
        for k, vs in enumerate(("exact", "lowercase"), 1)
    ] + [
        Figure(
            "k3. calibrate, 100 labels",
            f"{1000 * best['calibrate']:.0f} ms",
            "-",
            None,
            "agreement, kappa, confusion, scorer bugs",
        ),
        Figure(
            "k6. disagreements --vs exact --n 100 --agreements 100",
            f"{best['agreements']:.1f} s",
            "-",
            None,
            f"{sum(agreements.values()):,} agreements in {len(agreements)} strata; "
            f"{best['agreements'] / best['exact']:.2f}x k1, {best['agreements'] / floor:.2f}x "
            "re-scoring the run from the store",
        ),
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
    db = DATA / f"calibration-{args.n}.db"
    save_run(folder, db)
    header = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    rows = [figure.row() for figure in measure(db, folder / "tools.yaml", args.n, args.repeat)]
    print("\n".join([*header, *rows]), flush=True)
    remove_store(db)
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()}); run took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/calibration.py", *sys.argv[1:]])
        record(command, started, elapsed, [], [*header, *rows])


if __name__ == "__main__":
    main()
