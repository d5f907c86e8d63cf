"""Time scoring of linked plans that used to take factorial time (issue 11, item 1).

A plan holds a lookup and N refunds whose `order_id` comes from the lookup (by `$ref`, or by
`after`), plus one call the agent never made; the agent made the lookup and the N refunds.
The pairing search used to try every order of the interchangeable refunds (N=10: 86 s).

    .venv/bin/python bench/linked.py [--n 8 20 50 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Any

from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case
from toolscore.specs.loading import SpecSet, parse_specs

SPEC = {
    "version": "bench",
    "tools": {
        "get_order": {"args": {"order_id": "exact"}},
        "refund": {"args": {"order_id": "exact", "amount": "number"}},
        "notify": {"args": {"customer": "exact"}},
    },
}


def specs() -> SpecSet:
    """The spec of every shape below."""
    found, problems = parse_specs(SPEC)
    assert found is not None, problems
    return found


def shape(n: int, link: str, missing: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A case and its output: a lookup, n linked refunds and one call the agent left out.

    `link` is "ref" (the refunds take the order id from the lookup's result) or "after";
    `missing` is "free" (an unlinked notify is missing), "linked" (one more linked refund) or
    "none" (the agent did everything: the case passes).
    """
    refunds: list[dict[str, Any]] = []
    for _ in range(n + (missing == "linked")):
        if link == "ref":
            refunds.append(
                {"name": "refund", "args": {"order_id": {"$ref": "look#/order_id"}, "amount": 5}}
            )
        else:
            refunds.append(
                {"name": "refund", "args": {"order_id": "X-1", "amount": 5}, "after": ["look"]}
            )
    plan = [{"id": "look", "name": "get_order", "args": {"order_id": "o-1"}}, *refunds]
    if missing == "free":
        plan.append({"name": "notify", "args": {"customer": "c-1"}})
    calls = [{"name": "get_order", "args": {"order_id": "o-1"}, "result": {"order_id": "X-1"}}]
    calls += [{"name": "refund", "args": {"order_id": "X-1", "amount": 5}} for _ in range(n)]
    return {"id": "c", "plans": [plan]}, {"id": "c", "calls": calls}


def time_case(spec: SpecSet, n: int, link: str, missing: str, repeat: int) -> tuple[float, bool]:
    """Best wall time of scoring one case of the shape, and its verdict."""
    case_data, output_data = shape(n, link, missing)
    case = parse_case(case_data, spec)
    trajectory = parse_output(output_data)
    best = float("inf")
    passed = True
    for _ in range(repeat):
        start = time.perf_counter()
        result = score_case(spec, case, trajectory)
        best = min(best, time.perf_counter() - start)
        passed = result.passed
    return best, passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[8, 10, 20, 50, 200])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    spec = specs()
    time_case(spec, 2, "ref", "free", 1)  # warm up: a first failure imports scipy.optimize
    print(
        f"# {platform.node()} {platform.machine()} {platform.python_implementation()} "
        f"{platform.python_version()}, best of {options.repeat}"
    )
    print("| N | link | missing call | seconds | passed |")
    print("|---|---|---|---|---|")
    for n in options.n:
        for link in ("ref", "after"):
            for missing in ("free", "linked", "none"):
                seconds, passed = time_case(spec, n, link, missing, options.repeat)
                print(f"| {n} | {link} | {missing} | {seconds:.4f} | {passed} |")


if __name__ == "__main__":
    main()
