"""Write deterministic synthetic benchmark data: tools.yaml, cases.jsonl and outputs.jsonl.

Usage: python bench/generate.py --kind single|parallel|overlap --n N --out DIR [--shuffle-outputs]
Case i depends only on (seed, i), so files of any size stream in constant memory.
"""

from __future__ import annotations

import argparse
import random
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

SEED = 20261129
SPEC = """\
# Synthetic tools for bench/: the argument kinds a real scorer meets most.
version: "bench-1"
tools:
  refund:
    version: 1
    args:
      order_id: exact
      amount: {kind: number, tol: 0.005, reason: "amounts are computed; the ledger keeps cents"}
      currency:
        kind: enum
        values: [EUR, USD, GBP]
        aliases: {euro: EUR, dollar: USD, pound: GBP}
        default: EUR
      category: {kind: casefold, reason: "the refund API treats category labels case-blind"}
  get_order:
    version: 1
    args:
      order_id: exact
      detail: {kind: enum, values: [summary, full], default: summary}
  reschedule:
    version: 1
    args:
      order_id: exact
      day: date
      slot: {kind: enum, values: [am, pm], aliases: {morning: am, afternoon: pm}}
"""

Json = dict[str, Any]
Pair = tuple[Json, Json]
"""One case line and its output line."""

FAIL_RATE = 0.2
OVERLAP_CALLS = 50
_ALIASES = {"EUR": "euro", "USD": "dollar", "GBP": "pound", "am": "morning", "pm": "afternoon"}
_CATEGORIES = ("damaged", "late delivery", "wrong item", "not received", "duplicate charge")


def case_rng(i: int, seed: int = SEED) -> random.Random:
    """The random source of case `i` alone, so that any case can be rebuilt on its own."""
    return random.Random(seed * 10_000_019 + i)


def _expected(rng: random.Random, name: str, order_id: str) -> Json:
    if name == "refund":
        return {
            "order_id": order_id,
            "amount": round(rng.uniform(1, 500), 2),
            "currency": rng.choice(("EUR", "EUR", "USD", "GBP")),
            "category": rng.choice(_CATEGORIES),
        }
    if name == "get_order":
        return {"order_id": order_id, "detail": rng.choice(("summary", "full"))}
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return {"order_id": order_id, "day": day, "slot": rng.choice(("am", "pm"))}


def _vary(rng: random.Random, name: str, args: Json) -> Json | str:
    """The produced arguments: equal under the rules, but with the harmless noise agents make."""
    args = dict(args)
    for key in ("currency", "slot"):
        if key in args and rng.random() < 0.2:
            args[key] = _ALIASES[args[key]]
    if args.get("currency") == "EUR" and rng.random() < 0.3:
        del args["currency"]
    if args.get("detail") == "summary" and rng.random() < 0.3:
        del args["detail"]
    if "category" in args and rng.random() < 0.3:
        args["category"] = rng.choice((str.upper, str.title))(args["category"])
    if "amount" in args and rng.random() < 0.2:
        args["amount"] = args["amount"] + rng.uniform(-1e-6, 1e-6)
    return orjson.dumps(args).decode() if rng.random() < 0.2 else args


def _break(rng: random.Random, calls: list[Json], may_drop: bool) -> None:
    """Make one real mistake: a wrong id or amount, an extra call, or (if allowed) a missing one."""
    index = rng.randrange(len(calls))
    args = calls[index]["args"]
    if isinstance(args, str):
        args = calls[index]["args"] = orjson.loads(args)
    mistake = rng.choice(("id", "amount", "extra", "drop")[: 4 if may_drop else 3])
    if mistake == "amount" and "amount" in args:
        args["amount"] += rng.choice((-1, 1)) * rng.choice((0.01, 1.0, 10.0))
    elif mistake == "extra":
        extra = {"name": "get_order", "args": {"order_id": args["order_id"]}}
        calls.insert(rng.randrange(len(calls) + 1), extra)
    elif mistake == "drop":
        del calls[index]
    else:
        order_id = args["order_id"]
        args["order_id"] = rng.choice((order_id.upper(), order_id + "0"))


def _pair(rng: random.Random, case_id: str, names: list[str], may_drop: bool) -> Pair:
    plan: list[Json] = [
        {"name": name, "args": _expected(rng, name, f"ord-{case_id}-{k}")}
        for k, name in enumerate(names)
    ]
    calls: list[Json] = [
        {"name": call["name"], "args": _vary(rng, call["name"], call["args"])} for call in plan
    ]
    rng.shuffle(calls)
    if rng.random() < FAIL_RATE:
        _break(rng, calls, may_drop)
    case = {"id": case_id, "prompt": f"Handle the request of {case_id}", "plans": [plan]}
    return case, {"id": case_id, "calls": calls, "response": "Done."}


def single(rng: random.Random, i: int) -> Pair:
    """One refund call with four arguments of four kinds; about 80% of outputs pass."""
    return _pair(rng, f"s{i:07d}", ["refund"], may_drop=False)


_PARALLEL = ["get_order"] * 3 + ["refund"] * 3 + ["reschedule"] * 2


def parallel(rng: random.Random, i: int) -> Pair:
    """Eight independent calls of three tools, produced in shuffled order; about 80% pass."""
    return _pair(rng, f"p{i:07d}", _PARALLEL, may_drop=True)


def overlap(rng: random.Random, i: int, wrong: bool | None = None) -> Pair:
    """50 refunds where expected call k accepts order k or k+1, produced in reverse order.

    Only the pairing k <-> k exists, and first-fit greedy (expected k takes order k+1, seen
    first) leaves the last call unpaired. `wrong` (default: odd i) breaks one produced call.
    """
    case_id = f"o{i:07d}"
    common = {"amount": 12.5, "currency": "EUR", "category": "damaged"}
    ids = [f"ord-{case_id}-{k}" for k in range(OVERLAP_CALLS + 1)]
    plan = [
        {"name": "refund", "args": {"order_id": {"$any": [ids[k], ids[k + 1]]}, **common}}
        for k in range(OVERLAP_CALLS)
    ]
    calls: list[Json] = [
        {"name": "refund", "args": {"order_id": ids[k], **common}}
        for k in reversed(range(OVERLAP_CALLS))
    ]
    broken = i % 2 == 1 if wrong is None else wrong
    if broken:
        calls[OVERLAP_CALLS // 2]["args"]["amount"] = 13.5
    case = {"id": case_id, "prompt": "Refund every order in the list", "plans": [plan]}
    return case, {"id": case_id, "calls": calls, "response": "All refunded."}


CHAINS = 10


def chains(rng: random.Random, i: int, wrong: bool | None = None) -> Pair:
    """10 lookup -> refund chains (20 calls): each refund uses the id its lookup returned.

    The trajectory interleaves the chains in a random order that keeps each refund after its
    lookup. `wrong` (default: odd i) puts one refund before its lookup.
    """
    case_id = f"c{i:07d}"
    plan: list[Json] = []
    for k in range(CHAINS):
        plan.append({"id": f"l{k}", "name": "get_order", "args": {"order_id": f"q-{case_id}-{k}"}})
        plan.append(
            {
                "name": "refund",
                "args": {
                    "order_id": {"$ref": f"l{k}#/order/id"},
                    "amount": 10 + k,
                    "category": "damaged",
                },
            }
        )
    events = [k for k in range(CHAINS) for _ in range(2)]
    rng.shuffle(events)
    seen: set[int] = set()
    calls: list[Json] = []
    for k in events:
        if k in seen:
            calls.append(
                {
                    "name": "refund",
                    "args": {
                        "order_id": f"ORD-{case_id}-{k}",
                        "amount": 10 + k,
                        "category": "Damaged",
                    },
                }
            )
        else:
            seen.add(k)
            calls.append(
                {
                    "name": "get_order",
                    "args": {"order_id": f"q-{case_id}-{k}"},
                    "result": {"order": {"id": f"ORD-{case_id}-{k}", "total": 10 + k}},
                }
            )
    broken = i % 2 == 1 if wrong is None else wrong
    if broken:
        first = next(j for j, c in enumerate(calls) if c["name"] == "get_order")
        later = next(
            j
            for j, c in enumerate(calls)
            if j > first
            and c["name"] == "refund"
            and c["args"]["order_id"] == calls[first]["result"]["order"]["id"]
        )
        calls.insert(first, calls.pop(later))
    case = {"id": case_id, "prompt": "Look up and refund each order", "plans": [plan]}
    return case, {"id": case_id, "calls": calls, "response": "Done."}


KINDS: dict[str, Callable[[random.Random, int], Pair]] = {
    "single": single,
    "parallel": parallel,
    "overlap": overlap,
    "chains": chains,
}


def write(kind: str, n: int, out: Path, shuffle_outputs: bool = False, seed: int = SEED) -> None:
    """Write DIR/tools.yaml, DIR/cases.jsonl and DIR/outputs.jsonl, one line at a time."""
    make = KINDS[kind]
    out.mkdir(parents=True, exist_ok=True)
    (out / "tools.yaml").write_text(SPEC)
    dump = orjson.OPT_APPEND_NEWLINE
    with (
        open(out / "cases.jsonl", "wb", buffering=1 << 20) as cases,
        open(out / "outputs.jsonl", "wb", buffering=1 << 20) as outputs,
    ):
        for i in range(n):
            case, output = make(case_rng(i, seed), i)
            cases.write(orjson.dumps(case, option=dump))
            if not shuffle_outputs:
                outputs.write(orjson.dumps(output, option=dump))
        if shuffle_outputs:
            order = array("L", range(n))
            random.Random(seed).shuffle(order)
            for i in order:
                outputs.write(orjson.dumps(make(case_rng(i, seed), i)[1], option=dump))


def main() -> None:
    """Parse the command line and write the files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=sorted(KINDS), required=True)
    parser.add_argument("--n", type=int, required=True, help="number of cases")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into")
    parser.add_argument("--shuffle-outputs", action="store_true", help="outputs in random order")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    write(args.kind, args.n, args.out, args.shuffle_outputs, args.seed)


if __name__ == "__main__":
    main()
