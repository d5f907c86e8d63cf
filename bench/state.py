"""Measure state-based scoring: replay cases against a SQLite database, print cases per second.

Usage: python bench/state.py [--n N] [--repeat R] [--record]
       python bench/state.py --n N --replay-only K   (under valgrind: instructions per case)

Each case replays 3 calls of the support example's tools (examples/support/env/tools.py)
against a generated 1,000-row database and compares the final state with the state its plan
(get_order, refund, get_order) leaves, `goal_state: "plan"`. The agents take the three paths
of `check_state` in turn: 40% make exactly the plan's calls (the plan need not be replayed),
40% reach the goal another way (list_orders first: the plan is replayed and the two images
are equal), 20% err (a refund applied twice, a wrong amount: the rows that differ are read
and diffed). One process, one core.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from run import Figure, best_of, machine, record, revision
from toolscore import Case, Trajectory, __version__, parse_case, parse_output, parse_specs
from toolscore.state import Environment, check_state, load_environment

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "support" / "env"
CUSTOMERS, ORDERS = 50, 950
"""1,000 rows: customers and orders (plus the store's one refund)."""


def make_database(folder: Path) -> Path:
    """The example store's schema and rows, grown to 1,000 rows, as a SQLite file."""
    path = folder / "store.db"
    db = sqlite3.connect(path)
    db.executescript((EXAMPLE / "store.sql").read_text(encoding="utf-8"))
    have_customers = db.execute("SELECT count(*) FROM customers").fetchone()[0]
    have_orders = db.execute("SELECT count(*) FROM orders").fetchone()[0]
    rng = random.Random(7)
    db.executemany(
        "INSERT INTO customers VALUES (?, ?, ?)",
        [
            (f"cust-{i}", f"Customer {i}", f"c{i}@example.com")
            for i in range(100, 100 + CUSTOMERS - have_customers)
        ],
    )
    db.executemany(
        "INSERT INTO orders (order_id, customer_id, total, status) VALUES (?, ?, ?, 'shipped')",
        [
            (f"order-{1000 + i}", customer(i), float(rng.randint(100, 300)))
            for i in range(ORDERS - have_orders)
        ],
    )
    db.commit()
    db.close()
    return path


def customer(order: int) -> str:
    """The customer of generated order `order-{1000 + order}`."""
    return f"cust-{100 + order % 40}"


def environment(database: Path, compare: str) -> Environment:
    """The benchmark's environment: the generated database, the example's tools."""
    config = {
        "database": str(database),
        "tools": str(EXAMPLE / "tools.py"),
        "ignore": {"refunds": ["created_at"]},
        "compare": compare,
    }
    env = load_environment(config, database.parent, "bench")
    assert isinstance(env, Environment)
    return env


def cases(n: int) -> list[tuple[Case, Trajectory]]:
    """`n` cases of 3 calls, parsed ahead so that only replay and comparison are timed."""
    data = yaml.safe_load((EXAMPLE / "tools.yaml").read_text(encoding="utf-8"))
    specs, errors = parse_specs(data, "bench")
    if specs is None:
        raise SystemExit(f"example spec is invalid: {errors[0]}")
    pairs = []
    for i in range(n):
        rng = random.Random(i)
        number = rng.randrange(ORDERS - 6)
        order, amount = f"order-{1000 + number}", float(rng.randint(1, 20))
        plan: list[dict[str, Any]] = [
            {"id": "look", "name": "get_order", "args": {"order_id": order}},
            {"name": "refund", "args": {"order_id": {"$ref": "look#/order_id"}, "amount": amount}},
            {"name": "get_order", "args": {"order_id": order}},
        ]
        look: dict[str, Any] = {"name": "get_order", "args": {"order_id": order}}
        pay: dict[str, Any] = {"name": "refund", "args": {"order_id": order, "amount": amount}}
        produced = [look, pay, look]
        if i % 10 == 1:
            produced = [look, pay, pay]  # the refund applied twice
        elif i % 10 == 2:
            produced = [look, {**pay, "args": {**pay["args"], "amount": amount + 1}}, look]
        elif i % 2 == 1:
            listing = {"name": "list_orders", "args": {"customer_id": customer(number)}}
            produced = [listing, pay, look]
        case = {"id": f"case-{i}", "prompt": "", "tags": [], "plans": [plan], "goal_state": "plan"}
        pairs.append((parse_case(case, specs), parse_output({"id": case["id"], "calls": produced})))
    return pairs


def replay_rate(
    env: Environment,
    pairs: Sequence[tuple[Case, Trajectory]],
    repeat: int,
    name: str,
    target: int | None,
) -> Figure:
    """Cases per second through `check_state`, best of `repeat` runs."""
    passed = sum(bool(check_state(env, c, t.calls, t.response).passed) for c, t in pairs)

    def work() -> None:
        for case, trajectory in pairs:
            check_state(env, case, trajectory.calls, trajectory.response)

    rate = len(pairs) / best_of(repeat, work)
    note = f"{len(pairs):,} cases of 3 calls, {passed / len(pairs):.0%} pass, best of {repeat}"
    ok = None if target is None else rate >= target
    shown = "-" if target is None else f">= {target:,} cases/s"
    return Figure(name, f"{rate:,.0f} cases/s", shown, ok, note)


def copy_cost(env: Environment, repeat: int) -> Figure:
    """What one isolated copy of the initial database costs, beside the backup API's copy."""
    n = 2000

    def deserialize() -> None:
        for _ in range(n):
            env.connect().close()

    template = env.connect()

    def backup() -> None:
        for _ in range(n):
            db = sqlite3.connect(":memory:")
            template.backup(db)
            db.close()

    fresh = best_of(repeat, deserialize) / n * 1e6
    copied = best_of(repeat, backup) / n * 1e6
    template.close()
    note = (
        f"a new in-memory connection per replay, loaded with `deserialize` from the "
        f"{len(env.image) / 1024:.0f} KiB image; the backup API takes {copied:.0f} µs"
    )
    return Figure("f. isolated copy of the database", f"{fresh:.0f} µs", "-", None, note)


def replay_only(n: int, k: int) -> None:
    """Generate `n` cases and replay the first `k` once (see `--replay-only`)."""
    pairs = cases(n)
    with tempfile.TemporaryDirectory() as folder:
        env = environment(make_database(Path(folder)), "diff")
        for case, trajectory in pairs[:k]:
            check_state(env, case, trajectory.calls, trajectory.response)


def main() -> None:
    """Run the measurements, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="cases to replay")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is kept)")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    parser.add_argument(
        "--replay-only",
        type=int,
        metavar="K",
        help="replay the first K of the N cases once and print nothing: run it under "
        "`valgrind --tool=callgrind` for K and K' and divide the difference in instructions "
        "by K' - K, a per-case cost that a busy machine does not blur",
    )
    args = parser.parse_args()
    if args.replay_only is not None:
        replay_only(args.n, args.replay_only)
        return
    started, clock = datetime.now(UTC), time.perf_counter()
    header = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    print("\n".join(header), flush=True)
    rows: list[str] = []
    pairs = cases(args.n)
    with tempfile.TemporaryDirectory() as folder:
        database = make_database(Path(folder))
        env, exact = environment(database, "diff"), environment(database, "exact")
        figures: list[Callable[[], Figure]] = [
            lambda: replay_rate(env, pairs, args.repeat, "e. state replay, plan goal", 1_000),
            lambda: replay_rate(
                exact, pairs[: args.n // 5], args.repeat, "e. state replay, compare: exact", None
            ),
            lambda: copy_cost(env, args.repeat),
        ]
        for figure in figures:
            rows.append(figure().row())
            print(rows[-1], flush=True)
    elapsed = time.perf_counter() - clock
    isolation = (
        "isolation: the initial image is loaded once per process; each case runs in a "
        "transaction rolled back at its end, each replay (the agent's, the plan's) in a "
        "savepoint, and what a rollback cannot undo (transaction SQL, PRAGMAs, schema "
        "changes) sends the case to private full copies (state/touched.py)"
    )
    print(f"\n{isolation}\n{machine()}; toolscore {__version__} ({revision()})")
    print(f"run took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/state.py", *sys.argv[1:]])
        notes = [
            isolation,
            f"database: {CUSTOMERS} customers and {ORDERS} orders; "
            "tools: examples/support/env/tools.py; paths: 40% the plan's calls, 40% another "
            "way to the goal, 20% wrong (see bench/state.py)",
        ]
        record(command, started, elapsed, notes, [*header, *rows])


if __name__ == "__main__":
    main()
