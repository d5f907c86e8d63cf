"""Measure how a case's replay cost follows the store's size: before (a full copy per replay)
and after (one copy per process, each case undone by savepoints), side by side in one run,
and the peak memory of the same replay through the CLI (`toolscore score --env`).

Usage: python bench/state_size.py [--store support|library] [--n 300]
           [--sizes 10,100000,1000000] [--repeat 3] [--record]

`--store support` (the default) is the support example's schema (examples/support/env) grown
to the given number of rows (customers and orders); the cases are bench/state.py's: 3 calls
(get_order, refund, get_order) against `goal_state: "plan"`, 40% the plan's calls, 40%
another way to the goal, 20% wrong. `--store library` is a lending library's store grown to
the given number of book rows, and its cases (bench/library_store.py). Every (store, path)
pair runs in its own process, so that each peak RSS is its own: the process loads the
environment, replays one case (the workspace is built then), then all the cases `--repeat`
times (the best time is kept); its peak RSS is read after the first third of the first pass
and at its end, to show whether memory grows with cases. The CLI column is the peak RSS of
one `toolscore score --env --workers 1` process over the same cases (its whole run: start,
load, replay, report), and whether its state verdicts are the in-process ones.
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
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import yaml

import library_store
from run import best_of, machine, record, revision
from toolscore import Case, Trajectory, __version__, parse_case, parse_output, parse_specs
from toolscore.state import Environment, check_state, load_environment
from toolscore.state.touched import full_copies

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support" / "env"
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


def support_lines(n: int, database: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """`n` (case, output) lines of 3 calls on the store's orders (as bench/state.py's)."""
    orders = orders_of(database)
    lines = []
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
        lines.append((case, {"id": case["id"], "calls": produced}))
    return lines


class Store(NamedTuple):
    """A store the benchmark grows: its database, its spec and environment, its cases."""

    make_database: Callable[[Path, int], Path]
    spec: Path
    """The spec file whose tools the cases call (its `environment` names the tools module)."""
    ignore: dict[str, list[str]]
    lines: Callable[[int, Path], list[tuple[dict[str, Any], dict[str, Any]]]]


STORES = {
    "support": Store(
        make_database, EXAMPLE / "tools.yaml", {"refunds": ["created_at"]}, support_lines
    ),
    "library": Store(
        library_store.make_database,
        library_store.FOLDER / "tools.yaml",
        {},
        library_store.case_lines,
    ),
}


def environment(store: Store, database: Path) -> dict[str, Any]:
    """The store's environment block, on `database`, every path absolute."""
    return {
        "database": str(database),
        "tools": str(store.spec.parent / "tools.py"),
        **({"ignore": store.ignore} if store.ignore else {}),
    }


def cases(store: Store, n: int, database: Path) -> list[tuple[Case, Trajectory]]:
    """`n` cases of the store, parsed as the CLI parses its files."""
    data = yaml.safe_load(store.spec.read_text(encoding="utf-8"))
    specs, errors = parse_specs(data, "bench")
    if specs is None:
        raise SystemExit(f"bench spec is invalid: {errors[0]}")
    return [
        (parse_case(case, specs), parse_output(output)) for case, output in store.lines(n, database)
    ]


def peak_mib() -> float:
    """This process's peak RSS so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(store: Store, database: Path, n: int, repeat: int, path: str) -> None:
    """Measure one store on one path; print the figures as one JSON line."""
    if path == "cli":
        print(json.dumps(cli(store, database, n)))
        return
    clock = time.perf_counter()
    env = load_environment(environment(store, database), database.parent, "bench")
    assert isinstance(env, Environment)
    loaded = time.perf_counter() - clock
    pairs = cases(store, n, database)

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


def cli(store: Store, database: Path, n: int) -> dict[str, Any]:
    """Score the store's cases with `toolscore score --env` in a subprocess: its peak RSS (the
    largest of this process's children: the only one), its time, its state verdicts."""
    folder = database.parent
    spec = yaml.safe_load(store.spec.read_text(encoding="utf-8"))
    spec["environment"] = environment(store, database)
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    lines = store.lines(n, database)
    for name, column in (("cases", 0), ("outputs", 1)):
        text = "".join(json.dumps(line[column]) + "\n" for line in lines)
        (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")
    report = folder / "report.json"
    command = [sys.executable, "-m", "toolscore", "score", "--specs", str(folder / "spec.yaml")]
    command += ["--cases", str(folder / "cases.jsonl"), "--outputs", str(folder / "outputs.jsonl")]
    command += ["--env", "--workers", "1", "--json", str(report)]
    clock = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - clock
    if done.returncode not in (0, 1):
        raise SystemExit(f"toolscore score failed ({done.returncode}): {done.stderr.strip()}")
    verdicts = [case["state"]["passed"] for case in json.loads(report.read_text())["cases"]]
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mib": children, "verdicts": verdicts}


def measure(store: str, database: Path, n: int, repeat: int, path: str) -> dict[str, Any]:
    """Run `child` in a new process and read its figures."""
    command = [sys.executable, __file__, "--child", store, str(database), path, "--n", str(n)]
    done = subprocess.run(
        [*command, "--repeat", str(repeat)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    """Build the stores, measure each on every path, print the table (and record it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=sorted(STORES), default="support", help="which store")
    parser.add_argument("--n", type=int, default=300, help="cases per store")
    parser.add_argument("--sizes", default="10,100000,1000000", help="rows per store")
    parser.add_argument("--repeat", type=int, default=2, help="timed repetitions (best is kept)")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    parser.add_argument("--child", nargs=3, metavar=("STORE", "DB", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        store, database, path = args.child
        child(STORES[store], Path(database), args.n, args.repeat, path)
        return
    started, clock = datetime.now(UTC), time.perf_counter()
    header = [
        "| store | before: per case | after: per case | time ratio | before: peak RSS "
        "(loaded, 1/3 of cases, all) | after: peak RSS (loaded, 1/3 of cases, all) | verdicts "
        "| CLI `score --env`: peak RSS, whole run | CLI verdicts |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(header), flush=True)
    rows: list[str] = []
    base: float | None = None
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            database = STORES[args.store].make_database(Path(folder), size)
            mib = database.stat().st_size / 2**20
            before = measure(args.store, database, args.n, args.repeat, "before")
            after = measure(args.store, database, args.n, args.repeat, "after")
            run = measure(args.store, database, args.n, args.repeat, "cli")
            base = base or after["per_case_ms"]
            same = "identical" if before["verdicts"] == after["verdicts"] else "DIFFER"
            also = "identical" if run["verdicts"] == after["verdicts"] else "DIFFER"
            rows.append(
                f"| {size:,} rows ({mib:.1f} MiB) | {before['per_case_ms']:.2f} ms | "
                f"{after['per_case_ms']:.2f} ms ({after['per_case_ms'] / base:.2f}x the "
                f"smallest store's) | {before['per_case_ms'] / after['per_case_ms']:.1f}x | "
                f"{before['loaded_mib']:.0f}, {before['third_mib']:.0f}, "
                f"{before['peak_mib']:.0f} MiB | {after['loaded_mib']:.0f}, "
                f"{after['third_mib']:.0f}, {after['peak_mib']:.0f} MiB | {same} | "
                f"{run['peak_mib']:.0f} MiB, {run['seconds']:.1f} s | {also} |"
            )
            print(rows[-1], flush=True)
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()})\nrun took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/state_size.py", *sys.argv[1:]])
        notes = [
            f"store: {args.store} ({STORES[args.store].spec.parent.relative_to(ROOT)})",
            "before: every replay (the agent's, the plan's) deserializes the whole initial "
            "image into a new connection (`full_copies()`, the fallback path); after: one "
            "connection per process, each case in a savepoint rolled back at its end, only "
            "the touched rows read and diffed (state/touched.py)",
            f"{args.n} cases of 3 calls per store, goal_state: plan, 80% pass; each (store, "
            "path) in its own process; per case: best of the timed repetitions; CLI: one "
            "`toolscore score --env --workers 1` process, its peak RSS (getrusage of children)",
        ]
        record(command, started, elapsed, notes, [*header, *rows])


if __name__ == "__main__":
    main()
