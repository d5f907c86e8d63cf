"""Time the scoring of conversation cases (issue 27, part 1a): the cost must be linear in
the number of turns, each call matched in its own turn only.

Each turn has one plan of 5 calls (a lookup labelled per turn, three refunds, one notify);
from the second turn on, one refund takes its order id by `$ref` from the previous turn's
lookup, so every turn resolves an earlier result. The agent makes the 5 calls in reverse
order. Shapes of the same 250 calls: one conversation of 50 turns, and 10 conversations of 5
turns; then one conversation of 10, 50, 200 and 800 turns, per turn; and, for reference, one plain
case of the same 5 calls. Scoring only (cases and outputs parsed before timing).

With `--env` (issue 27, part 1b) the same shapes are scored and judged on a documents
environment (`score_replayed`): every turn has `goal_state: "plan"` and a state check, so the
agent's calls and the turns' chosen plans are each replayed once, and each turn's state is
diffed against the plans' state once. The store holds 2,000 orders and 1,000 customers; the
tools change counters in place, so the state's size does not grow with the turns.

    .venv/bin/python bench/conversation.py [--repeat 5] [--env]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolscore.core.model import Case, CaseResult, Trajectory
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case, score_replayed
from toolscore.specs.loading import SpecSet, parse_specs
from toolscore.state import DocumentEnvironment, load_environment

SPEC = {
    "version": "bench",
    "tools": {
        "get_order": {"args": {"order_id": "exact"}},
        "refund": {"args": {"order_id": "exact", "amount": {"kind": "number", "tol": 0.005}}},
        "notify": {"args": {"customer": "exact"}},
    },
}


TOOLS = """\
def get_order(state, order_id):
    return {"order_id": order_id, "total": state["orders"][order_id]["total"]}


def refund(state, order_id, amount):
    state["orders"][order_id]["refunded"] += amount
    return state["orders"][order_id]["refunded"]


def notify(state, customer):
    state["customers"][customer]["notified"] += 1
    return "sent"
"""


def environment(folder: Path) -> DocumentEnvironment:
    """The documents environment of `--env`: 2,000 orders and 1,000 customers."""
    data = {
        "orders": {f"o-{k}": {"total": 100 + k, "refunded": 0} for k in range(-1, 1999)},
        "customers": {f"c-{k}": {"notified": 0, "name": f"n{k}"} for k in range(1000)},
    }
    (folder / "data.json").write_text(json.dumps(data), encoding="utf-8")
    (folder / "tools.py").write_text(TOOLS, encoding="utf-8")
    block = {"kind": "documents", "data": "data.json", "tools": "tools.py"}
    env = load_environment(block, folder, "bench")
    assert isinstance(env, DocumentEnvironment)
    return env


def judged(case: Case, k: int) -> Case:
    """The case with each turn (a plain case: the case) judged under `--env`: the plans'
    state, and a check."""
    check = {"name": "named", "path": f"/customers/c-{k}/name", "equals": f"n{k}"}
    keys = {"goal_state": "plan", "state_checks": [check]}
    if not case.turns:
        return case._replace(extra=keys)
    return case._replace(turns=tuple(turn._replace(extra=keys) for turn in case.turns))


def specs() -> SpecSet:
    """The spec of every shape."""
    found, problems = parse_specs(SPEC)
    assert found is not None, problems
    return found


def _turn(k: int, amount: float = 7.001) -> tuple[list[Any], list[Any]]:
    """Turn k's plan and the agent's calls for it (reversed); the agent's third refund is of
    `amount` where the plan's is of 7 (within the tolerance; `--env` gives 7, so that the
    states agree and no difference accumulates over the turns)."""
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
        {"name": "refund", "args": {"order_id": f"o-{k}", "amount": amount}},
        {"name": "notify", "args": {"customer": f"c-{k}"}},
    ]
    return plan, calls[::-1]


def conversation(
    found: SpecSet, turns: int, case_id: str = "c", amount: float = 7.001
) -> tuple[Case, Trajectory]:
    """One conversation case of `turns` turns and its output (a `turns` line)."""
    shapes = [_turn(k, amount) for k in range(turns)]
    case = parse_case({"id": case_id, "turns": [{"plans": [plan]} for plan, _ in shapes]}, found)
    output = parse_output({"id": case_id, "turns": [{"calls": calls} for _, calls in shapes]})
    return case, output


def plain(found: SpecSet, amount: float = 7.001) -> tuple[Case, Trajectory]:
    """One plain case of turn 0's five calls."""
    plan, calls = _turn(0, amount)
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
    parser.add_argument("--env", action="store_true", help="judge each turn on a documents env")
    options = parser.parse_args()
    found = specs()
    with tempfile.TemporaryDirectory() as folder:
        env = environment(Path(folder)) if options.env else None
        _table(found, env, options.repeat)


def _table(found: SpecSet, env: DocumentEnvironment | None, repeat: int) -> None:
    """Time every shape and print the table."""

    def score(case: Case, output: Trajectory) -> CaseResult:
        if env is None:
            return score_case(found, case, output)
        return score_replayed(found, judged(case, 0), output, env, "bench")

    def timed(pairs: list[tuple[Case, Trajectory]], rounds: int) -> float:
        for case, output in pairs:
            result = score(case, output)
            assert result.passed, case.id
            if env is not None:  # every call replayed once, every turn's outcome passed
                assert len(result.state.calls) == len(output.calls), case.id
                assert result.state.passed, result.state
        if env is not None:
            pairs = [(judged(case, 0), output) for case, output in pairs]

        def work() -> None:
            for _ in range(rounds):
                for case, output in pairs:
                    if env is None:
                        score_case(found, case, output)
                    else:
                        score_replayed(found, case, output, env, "bench")

        return best(work, repeat) / rounds

    rows: list[tuple[str, int, float]] = []
    amount = 7.001 if env is None else 7
    once = [conversation(found, 50, amount=amount)]
    rows.append(("1 conversation x 50 turns x 5 calls", 50, timed(once, 4)))
    ten = [conversation(found, 5, f"c{n}", amount) for n in range(10)]
    rows.append(("10 conversations x 5 turns x 5 calls", 50, timed(ten, 4)))
    for turns in (10, 50, 200, 800):
        shape = [conversation(found, turns, amount=amount)]
        rows.append((f"1 conversation x {turns} turns x 5 calls", turns,
                     timed(shape, max(1, 200 // turns))))  # fmt: skip
    rounds = 200 if env is None else 20
    rows.append(("plain case, 5 calls (reference)", 1, timed([plain(found, amount)], rounds)))
    print(f"machine: {platform.machine()}, {platform.system()}, Python {platform.python_version()}")
    print("judged on a documents environment (--env)" if env is not None else "calls only")
    print("| shape | turns | total ms | ms per turn |")
    print("|---|---:|---:|---:|")
    for label, turns, seconds in rows:
        print(f"| {label} | {turns} | {seconds * 1000:.2f} | {seconds * 1000 / turns:.3f} |")


if __name__ == "__main__":
    main()
