"""Time the scoring of conversation cases (issue 27, part 1a): the cost must be linear in
the number of turns, each call matched in its own turn only.

Each turn has one plan of 5 calls (a lookup labelled per turn, three refunds, one notify);
from the second turn on, one refund takes its order id by `$ref` from the previous turn's
lookup, so every turn resolves an earlier result. The agent makes the 5 calls in reverse
order. Shapes of the same 250 calls: one conversation of 50 turns, and 10 conversations of 5
turns; then one conversation of 10, 50, 200 and 800 turns, per turn; and, for reference, one plain
case of the same 5 calls. Scoring only (cases and outputs parsed before timing): no `--env`
is needed, since this step never replays a conversation.

    .venv/bin/python bench/conversation.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

from toolscore.core.model import Case, Trajectory
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case
from toolscore.specs.loading import SpecSet, parse_specs

SPEC = {
    "version": "bench",
    "tools": {
        "get_order": {"args": {"order_id": "exact"}},
        "refund": {"args": {"order_id": "exact", "amount": {"kind": "number", "tol": 0.005}}},
        "notify": {"args": {"customer": "exact"}},
    },
}


def specs() -> SpecSet:
    """The spec of every shape."""
    found, problems = parse_specs(SPEC)
    assert found is not None, problems
    return found


def _turn(k: int) -> tuple[list[Any], list[Any]]:
    """Turn k's plan and the agent's calls for it (reversed)."""
    ref = {"$ref": f"g{k - 1}#/order_id"} if k else "o-0"
    plan = [
        {"id": f"g{k}", "name": "get_order", "args": {"order_id": f"o-{k}"}},
        {"name": "refund", "args": {"order_id": ref, "amount": 5}},
        {"name": "refund", "args": {"order_id": f"o-{k}", "amount": 6}},
        {"name": "refund", "args": {"order_id": f"o-{k}", "amount": 7}},
        {"name": "notify", "args": {"customer": f"c-{k}"}},
    ]
    calls = [
        {"name": "get_order", "args": {"order_id": f"o-{k}"}, "result": {"order_id": f"o-{k}"}},
        {"name": "refund", "args": {"order_id": f"o-{k - 1}" if k else "o-0", "amount": 5}},
        {"name": "refund", "args": {"order_id": f"o-{k}", "amount": 6}},
        {"name": "refund", "args": {"order_id": f"o-{k}", "amount": 7.001}},
        {"name": "notify", "args": {"customer": f"c-{k}"}},
    ]
    return plan, calls[::-1]


def conversation(found: SpecSet, turns: int, case_id: str = "c") -> tuple[Case, Trajectory]:
    """One conversation case of `turns` turns and its output (a `turns` line)."""
    shapes = [_turn(k) for k in range(turns)]
    case = parse_case({"id": case_id, "turns": [{"plans": [plan]} for plan, _ in shapes]}, found)
    output = parse_output({"id": case_id, "turns": [{"calls": calls} for _, calls in shapes]})
    return case, output


def plain(found: SpecSet) -> tuple[Case, Trajectory]:
    """One plain case of turn 0's five calls."""
    plan, calls = _turn(0)
    return parse_case({"id": "p", "plans": [plan]}, found), parse_output(
        {"id": "p", "calls": calls}
    )


def best(work: Callable[[], None], repeat: int) -> float:
    """The best wall time of `repeat` runs of `work`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    """Print the timings as a Markdown table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    found = specs()

    def timed(pairs: list[tuple[Case, Trajectory]], rounds: int) -> float:
        for case, output in pairs:
            assert score_case(found, case, output).passed, case.id

        def work() -> None:
            for _ in range(rounds):
                for case, output in pairs:
                    score_case(found, case, output)

        return best(work, options.repeat) / rounds

    rows: list[tuple[str, int, float]] = []
    rows.append(("1 conversation x 50 turns x 5 calls", 50, timed([conversation(found, 50)], 4)))
    ten = [conversation(found, 5, f"c{n}") for n in range(10)]
    rows.append(("10 conversations x 5 turns x 5 calls", 50, timed(ten, 4)))
    for turns in (10, 50, 200, 800):
        rows.append((f"1 conversation x {turns} turns x 5 calls", turns,
                     timed([conversation(found, turns)], max(1, 200 // turns))))  # fmt: skip
    rows.append(("plain case, 5 calls (reference)", 1, timed([plain(found)], 200)))
    print(f"machine: {platform.machine()}, {platform.system()}, Python {platform.python_version()}")
    print("| shape | turns | total ms | ms per turn |")
    print("|---|---:|---:|---:|")
    for label, turns, seconds in rows:
        print(f"| {label} | {turns} | {seconds * 1000:.2f} | {seconds * 1000 / turns:.3f} |")


if __name__ == "__main__":
    main()
