"""Measure how a case's replay cost follows the store's size: before (a full copy per replay)
and after (one copy per process, each case undone by savepoints), side by side in one run.

Usage: python bench/state_size.py [--n 300] [--sizes 10,100000,1000000] [--repeat 3] [--record]

Each store is the support example's schema (examples/support/env) grown to the given number of
rows (customers and orders); the cases are bench/state.py's: 3 calls (get_order, refund,
get_order) against `goal_state: "plan"`, 40% the plan's calls, 40% another way to the goal,
20% wrong. Every (store, path) pair runs in its own process, so that each peak RSS is its
own: the process loads the environment, replays one case (the workspace is built then),
then all the cases `--repeat` times (the best time is kept); its peak RSS is read after the
first third of the first pass and at its end, to show whether memory grows with cases.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from run import best_of, machine, record, revision
from toolscore import Case, Trajectory, __version__, parse_case, parse_output, parse_specs
from toolscore.state import Environment, check_state, load_environment
from toolscore.state.touched import full_copies

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "support" / "env"
ORDERS_PER_CUSTOMER = 9
"""A grown store has one customer for every 9 orders, as the example's own store has about
two: `list_orders` returns as much whatever the store's size."""


def make_database(folder: Path, rows: int) -> Path:
    """The example store as a SQLite file: its own 10 rows, or grown to `rows` rows with an
    index on the orders' customer (else `list_orders` alone scans the whole table)."""
    path = folder / f"store-{rows}.db"
    db = sqlite3.connect(path)
    db.executescript((EXAMPLE / "store.sql").read_text(encoding="utf-8"))
    if rows > 10:
        customers = rows // (ORDERS_PER_CUSTOMER + 1)
        orders = rows - customers - 10
        db.executemany(
            "INSERT INTO customers VALUES (?, ?, ?)",
            ((f"cust-{100 + i}", f"Customer {i}", f"c{i}@example.com") for i in range(customers)),
        )
        rng = random.Random(7)
        db.executemany(
            "INSERT INTO orders (order_id, customer_id, total, status) VALUES (?, ?, ?, 'shipped')",
            (
                (f"order-{1000 + i}", f"cust-{100 + i % customers}", float(rng.randint(100, 300)))
                for i in range(orders)
            ),
        )
        db.execute("CREATE INDEX orders_by_customer ON orders (customer_id)")
    db.commit()
    db.close()
    return path


def orders_of(path: Path) -> list[tuple[str, str, float]]:
    """Up to 2,000 refundable orders of the store (id, customer, what is left to refund)."""
    db = sqlite3.connect(path)
    try:
        return db.execute(
            "SELECT order_id, customer_id, total - refunded FROM orders "
            "WHERE total - refunded >= 25 ORDER BY rowid LIMIT 2000"
        ).fetchall()
    finally:
        db.close()


def cases(n: int, orders: list[tuple[str, str, float]]) -> list[tuple[Case, Trajectory]]:
    """`n` cases of 3 calls on the store's orders (as bench/state.py's)."""
    data = yaml.safe_load((EXAMPLE / "tools.yaml").read_text(encoding="utf-8"))
    specs, errors = parse_specs(data, "bench")
    if specs is None:
        raise SystemExit(f"example spec is invalid: {errors[0]}")
    pairs = []
    for i in range(n):
        rng = random.Random(i)
        order, owner, _ = orders[rng.randrange(len(orders))]
        amount = float(rng.randint(1, 10))
        plan: list[dict[str, Any]] = [
            {"id": "look", "name": "get_order", "args": {"order_id": order}},
            {"name": "refund", "args": {"order_id": {"$ref": "look#/order_id"}, "amount": amount}},
            {"name": "get_order", "args": {"order_id": order}},
        ]
        look: dict[str, Any] = {"name": "get_order", "args": {"order_id": order}}
        pay: dict[str, Any] = {"name": "refund", "args": {"order_id": order, "amount": amount}}
        produced = [look, pay, look]
        if i % 10 == 1:
            produced = [look, pay, pay]
        elif i % 10 == 2:
            produced = [look, {**pay, "args": {**pay["args"], "amount": amount + 1}}, look]
        elif i % 2 == 1:
            produced = [{"name": "list_orders", "args": {"customer_id": owner}}, pay, look]
        case = {"id": f"case-{i}", "prompt": "", "tags": [], "plans": [plan], "goal_state": "plan"}
        pairs.append((parse_case(case, specs), parse_output({"id": case["id"], "calls": produced})))
    return pairs


def peak_mib() -> float:
    """This process's peak RSS so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(database: Path, n: int, repeat: int, path: str) -> None:
    """Measure one store on one path; print the figures as one JSON line."""
    clock = time.perf_counter()
    config = {
        "database": str(database),
        "tools": str(EXAMPLE / "tools.py"),
        "ignore": {"refunds": ["created_at"]},
    }
    env = load_environment(config, database.parent, "bench")
    assert isinstance(env, Environment)
    loaded = time.perf_counter() - clock
    pairs = cases(n, orders_of(database))

    def replay(chunk: list[tuple[Case, Trajectory]]) -> list[bool | None]:
        if path == "before":
            with full_copies():
                return [check_state(env, c, t.calls, t.response).passed for c, t in chunk]
        return [check_state(env, c, t.calls, t.response).passed for c, t in chunk]

    replay(pairs[:1])  # the workspace is built once per process: not a per-case cost
    after_load = peak_mib()
    clock = time.perf_counter()
    verdicts = replay(pairs[: n // 3])
    third = peak_mib()
    verdicts += replay(pairs[n // 3 :])
    seconds = time.perf_counter() - clock
    whole = peak_mib()
    if repeat > 1:
        seconds = min(seconds, best_of(repeat - 1, lambda: replay(pairs)))
    figures = {
        "load_s": loaded,
        "per_case_ms": seconds / n * 1000,
        "loaded_mib": after_load,
        "third_mib": third,
        "peak_mib": max(whole, peak_mib()),
        "verdicts": verdicts,
    }
    print(json.dumps(figures))


def measure(database: Path, n: int, repeat: int, path: str) -> dict[str, Any]:
    """Run `child` in a new process and read its figures."""
    command = [sys.executable, __file__, "--child", str(database), path, "--n", str(n)]
    done = subprocess.run(
        [*command, "--repeat", str(repeat)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    """Build the stores, measure each on both paths, print the table (and record it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="cases per store")
    parser.add_argument("--sizes", default="10,100000,1000000", help="rows per store")
    parser.add_argument("--repeat", type=int, default=2, help="timed repetitions (best is kept)")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    parser.add_argument("--child", nargs=2, metavar=("DATABASE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), args.n, args.repeat, args.child[1])
        return
    started, clock = datetime.now(UTC), time.perf_counter()
    header = [
        "| store | before: per case | after: per case | time ratio | before: peak RSS "
        "(loaded, 1/3 of cases, all) | after: peak RSS (loaded, 1/3 of cases, all) | verdicts |",
        "|---|---|---|---|---|---|---|",
    ]
    print("\n".join(header), flush=True)
    rows: list[str] = []
    base: float | None = None
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            database = make_database(Path(folder), size)
            mib = database.stat().st_size / 2**20
            before = measure(database, args.n, args.repeat, "before")
            after = measure(database, args.n, args.repeat, "after")
            base = base or after["per_case_ms"]
            same = "identical" if before["verdicts"] == after["verdicts"] else "DIFFER"
            rows.append(
                f"| {size:,} rows ({mib:.1f} MiB) | {before['per_case_ms']:.2f} ms | "
                f"{after['per_case_ms']:.2f} ms ({after['per_case_ms'] / base:.2f}x the "
                f"smallest store's) | {before['per_case_ms'] / after['per_case_ms']:.1f}x | "
                f"{before['loaded_mib']:.0f}, {before['third_mib']:.0f}, "
                f"{before['peak_mib']:.0f} MiB | {after['loaded_mib']:.0f}, "
                f"{after['third_mib']:.0f}, {after['peak_mib']:.0f} MiB | {same} |"
            )
            print(rows[-1], flush=True)
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()})\nrun took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/state_size.py", *sys.argv[1:]])
        notes = [
            "before: every replay (the agent's, the plan's) deserializes the whole initial "
            "image into a new connection (`full_copies()`, the fallback path); after: one "
            "connection per process, each case in a savepoint rolled back at its end, only "
            "the touched rows read and diffed (state/touched.py)",
            f"{args.n} cases of 3 calls per store, goal_state: plan, 80% pass; each (store, "
            "path) in its own process; per case: best of the timed repetitions",
        ]
        record(command, started, elapsed, notes, [*header, *rows])


if __name__ == "__main__":
    main()
