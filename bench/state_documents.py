"""Measure state scoring on a document environment (`kind: documents`), cases per second.

Usage: python bench/state_documents.py [--users N] [--n N] [--repeat R] [--record]

The store is retail-like JSON in tau-bench's shape (users, and orders keyed `#W...` with
items), 500 users and 1,000 orders by default (about tau-bench retail's size). Each case makes
3 calls (get_order, cancel_order, charge) against `goal_state: "plan"`: 40% make exactly the
plan's calls (the plan need not be replayed), 40% reach the goal another way (the plan is
replayed and the states diffed), 20% err (a wrong amount, or a charge that returns "Error:
..." after debiting). Figures: replay under `on_error: rollback` (a copy of the state before
each call) and `keep` (no copy: tau-bench's semantics), `compare: exact`, and what one fresh
copy of the data costs. One process, one core.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from run import Figure, best_of, record
from toolscore import Case, Trajectory, parse_case, parse_output, parse_specs
from toolscore.state import DocumentEnvironment, check_state, load_environment

TOOLS = """\
def get_order(state, order_id):
    order = state["orders"].get(order_id)
    return order if order is not None else "Error: order not found"


def cancel_order(state, order_id):
    order = state["orders"].get(order_id)
    if order is None or order["status"] != "pending":
        return "Error: non-pending order cannot be cancelled"
    order["status"] = "cancelled"
    return order


def charge(state, user_id, amount):
    user = state["users"][user_id]
    user["balance"] -= amount
    if user["balance"] < 0:
        return "Error: insufficient balance"
    return user["balance"]
"""
SPEC: dict[str, Any] = {
    "tools": {
        "get_order": {"args": {"order_id": "exact"}},
        "cancel_order": {"args": {"order_id": "exact"}},
        "charge": {"args": {"user_id": "exact", "amount": "number"}},
    }
}


def make_store(folder: Path, users: int) -> Path:
    """A retail-like JSON store: `users` users, two orders each, 1-4 items an order."""
    rng = random.Random(7)
    data: dict[str, Any] = {"users": {}, "orders": {}}
    for u in range(users):
        user_id = f"user_{u}"
        orders = [f"#W{1_000_000 + 2 * u + k}" for k in range(2)]
        data["users"][user_id] = {
            "name": {"first_name": f"First{u}", "last_name": f"Last{u}"},
            "address": {"address1": f"{u} Main St", "city": "Springfield", "zip": "12345"},
            "payment_methods": {f"credit_card_{u}": {"source": "credit_card", "last_four": "1234"}},
            "orders": orders,
            "balance": 500,
        }
        for order_id in orders:
            data["orders"][order_id] = {
                "order_id": order_id,
                "user_id": user_id,
                "status": "pending",
                "items": [
                    {"item_id": f"{rng.randrange(10**10)}", "price": rng.randint(10, 500) + 0.99,
                     "options": {"color": "blue", "size": "M"}}
                    for _ in range(rng.randint(1, 4))
                ],
            }  # fmt: skip
    path = folder / "store.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    (folder / "tools.py").write_text(TOOLS, encoding="utf-8")
    return path


def environment(folder: Path, **config: Any) -> DocumentEnvironment:
    """The benchmark's environment, with some keys set."""
    block = {"kind": "documents", "data": "store.json", "tools": "tools.py"}
    block["error_prefix"] = "Error:"
    env = load_environment({**block, **config}, folder, "bench")
    assert isinstance(env, DocumentEnvironment)
    return env


def cases(n: int, users: int) -> list[tuple[Case, Trajectory]]:
    """`n` cases of 3 calls, parsed ahead so that only replay and comparison are timed."""
    specs, errors = parse_specs(SPEC, "bench")
    if specs is None:
        raise SystemExit(f"bench spec is invalid: {errors[0]}")
    pairs = []
    for i in range(n):
        rng = random.Random(i)
        u = rng.randrange(users)
        user_id, order_id, amount = f"user_{u}", f"#W{1_000_000 + 2 * u}", rng.randint(1, 100)
        look: dict[str, Any] = {"name": "get_order", "args": {"order_id": order_id}}
        cancel: dict[str, Any] = {"name": "cancel_order", "args": {"order_id": order_id}}
        pay: dict[str, Any] = {"name": "charge", "args": {"user_id": user_id, "amount": amount}}
        plan = [look, cancel, pay]
        produced = [look, cancel, pay]
        if i % 10 == 1:
            produced = [look, cancel, {**pay, "args": {**pay["args"], "amount": amount + 1}}]
        elif i % 10 == 2:
            produced = [look, cancel, {**pay, "args": {**pay["args"], "amount": 900}}]
        elif i % 2 == 1:
            produced = [cancel, look, pay]  # the same state another way: the plan is replayed
        case: dict[str, Any] = {"id": f"case-{i}", "tags": [], "plans": [plan]}
        case["goal_state"] = "plan"
        pairs.append((parse_case(case, specs), parse_output({"id": case["id"], "calls": produced})))
    return pairs


def replay_rate(
    env: DocumentEnvironment, pairs: Sequence[tuple[Case, Trajectory]], repeat: int, name: str
) -> Figure:
    """Cases per second through `check_state`, best of `repeat` runs."""
    passed = sum(bool(check_state(env, c, t.calls, t.response).passed) for c, t in pairs)

    def work() -> None:
        for case, trajectory in pairs:
            check_state(env, case, trajectory.calls, trajectory.response)

    seconds = best_of(repeat, work)
    note = f"{len(pairs):,} cases of 3 calls, {passed / len(pairs):.0%} pass, best of {repeat}"
    per_case = seconds / len(pairs) * 1e3
    return Figure(
        name, f"{len(pairs) / seconds:,.0f} cases/s ({per_case:.2f} ms/case)", "-", None, note
    )


def copy_cost(env: DocumentEnvironment, repeat: int) -> Figure:
    """What one private copy of the initial data costs (every replay makes one)."""
    n = 50

    def work() -> None:
        for _ in range(n):
            env.fresh()  # dropped at once, as a replay's copy is

    seconds = best_of(repeat, work) / n
    size = len(env.image or b"")
    note = f"the {size / 1024:.0f} KiB store parsed from its JSON bytes (orjson)"
    return Figure("fresh copy of the data", f"{seconds * 1e3:.2f} ms", "-", None, note)


def main() -> None:
    """Run the measurements, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=500, help="users in the store (2 orders each)")
    parser.add_argument("--n", type=int, default=500, help="cases to replay")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (best is kept)")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    header = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    print("\n".join(header), flush=True)
    rows: list[str] = []
    pairs = cases(args.n, args.users)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        make_store(folder, args.users)
        figures: list[Callable[[], Figure]] = [
            lambda: copy_cost(environment(folder), args.repeat),
            lambda: replay_rate(environment(folder, on_error="keep"), pairs, args.repeat,
                                "replay, on_error: keep"),
            lambda: replay_rate(environment(folder), pairs, args.repeat,
                                "replay, on_error: rollback"),
            lambda: replay_rate(environment(folder, on_error="keep", compare="exact"), pairs,
                                args.repeat, "replay, keep, compare: exact"),
            lambda: replay_rate(environment(folder, on_error="keep", compare="exact",
                                            numbers="typed"), pairs, args.repeat,
                                "replay, keep, exact, typed (tau-bench's options)"),
        ]  # fmt: skip
        for figure in figures:
            row = figure().row()
            rows.append(row)
            print(row, flush=True)
    if args.record:
        command = f"python bench/state_documents.py --users {args.users} --n {args.n} " + (
            f"--repeat {args.repeat} --record"
        )
        notes = [f"store: {args.users:,} users, {2 * args.users:,} orders (JSON documents)"]
        record(command, started, time.perf_counter() - clock, notes, header + rows)


if __name__ == "__main__":
    main()
