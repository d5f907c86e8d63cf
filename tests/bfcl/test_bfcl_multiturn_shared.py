"""Replays that share their calls (toolscore.bfcl.call_tree) give what replays from scratch
give: the same results and snapshots for any order of replays, and the same report on the
multi-turn fixture, whether the runtime shares or not."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bfcl_runs import invoke, scored_cases
from toolscore.bfcl.call_tree import Cursor, Instances, Tree
from toolscore.bfcl.runtime import Runtime
from toolscore.state import resume

FIXTURE = Path(__file__).parents[1] / "bfcl_multiturn"

CALLS = ("push", "pop", "double")


class Stack:
    """A state whose results depend on every earlier call, so that a wrong start shows."""

    def __init__(self) -> None:
        self.items: list[int] = [1]
        self.builds = 0


def _execute(instances: Instances, name: str, args: dict[str, Any]) -> str:
    items = instances["Stack"].items
    if name == "push":
        items.append(args["n"])
    elif name == "pop":
        if not items:
            return "Error during execution: pop from empty list"
        items.pop()
    else:
        items[:] = [2 * item for item in items]
    return str(sum(items))


def _fresh(calls: list[tuple[str, int]]) -> tuple[list[str], list[int]]:
    instances: Instances = {"Stack": Stack()}
    results = [_execute(instances, name, {"n": n} if name == "push" else {}) for name, n in calls]
    return results, list(instances["Stack"].items)


def _take(instances: Instances) -> dict[str, Any]:
    return {"items": list(instances["Stack"].items)}


replays = st.lists(
    st.lists(st.tuples(st.sampled_from(CALLS), st.integers(0, 2)), max_size=6), max_size=12
)


@settings(max_examples=200, deadline=None)
@given(replays, st.lists(st.booleans(), min_size=12, max_size=12))
def test_shared_replays_give_the_results_and_snapshots_of_fresh_ones(
    sequences: list[list[tuple[str, int]]], rollbacks: list[bool]
) -> None:
    builds = []

    def build() -> Instances:
        builds.append(1)
        return {"Stack": Stack()}

    tree = Tree(build, _execute, {})
    for sequence, copied in zip(sequences, rollbacks, strict=False):
        cursor = Cursor(tree, None)
        results = []
        for i, (name, n) in enumerate(sequence):
            if copied and i == len(sequence) // 2:  # a rollback's copy goes on in its place
                cursor = copy.deepcopy(cursor)
            results.append(cursor.call(name, {"n": n} if name == "push" else {}))
        expected_results, expected_items = _fresh(sequence)
        assert results == expected_results
        assert cursor.snapshot(_take) == {"items": expected_items}
        assert cursor.snapshot(_take) == {"items": expected_items}  # taken twice: the same
    assert len(builds) <= len(sequences)


def test_a_known_sequence_runs_nothing_and_a_parked_state_is_taken_over() -> None:
    ran: list[str] = []

    def execute(instances: Instances, name: str, args: dict[str, Any]) -> str:
        ran.append(name)
        return _execute(instances, name, args)

    tree = Tree(lambda: {"Stack": Stack()}, execute, {})
    first = Cursor(tree, None)
    first.call("push", {"n": 2})
    first.snapshot(_take)  # parks its instances after push(2)
    again = Cursor(tree, None)
    assert again.call("push", {"n": 2}) == "3"
    assert again.snapshot(_take) == {"items": [1, 2]}
    assert ran == ["push"]  # the second replay ran nothing
    assert again.call("double", {}) == "6"  # goes on from the parked instances
    assert ran == ["push", "double"]


def test_a_call_that_does_not_finish_detaches_the_replay() -> None:
    def execute(instances: Instances, name: str, args: dict[str, Any]) -> str:
        instances["Stack"].items.append(9)
        if name == "stop":
            raise KeyboardInterrupt
        return _execute(instances, name, args)

    tree = Tree(lambda: {"Stack": Stack()}, execute, {})
    cursor = Cursor(tree, None)
    with pytest.raises(KeyboardInterrupt):
        cursor.call("stop", {})
    assert cursor.node is None
    assert tree.root.children == {}
    assert cursor.snapshot(_take) == {"items": [1, 9]}  # its own state, shared with no one
    assert Cursor(tree, None).snapshot(_take) == {"items": [1]}


@pytest.fixture
def converted(tmp_path: Path) -> Path:
    out = tmp_path / "mt"
    data = FIXTURE / "BFCL_v4_multi_turn_base.json"
    answers = FIXTURE / "possible_answer" / "BFCL_v4_multi_turn_base.json"
    invoke(
        "import", "bfcl", str(data), str(answers), "--out", str(out),
        "--classes-module", str(FIXTURE / "classes.py"), "--per-turn",
    )  # fmt: skip
    return out


def _report(converted: Path, result: Path) -> list[dict[str, Any]]:
    cases = scored_cases(converted, result)
    return [{k: v for k, v in case.items() if k != "timing"} for case in cases]


@pytest.mark.parametrize("result", ["result_correct.json", "result_perturbed.json"])
def test_the_report_is_the_same_with_and_without_sharing(
    converted: Path, monkeypatch: pytest.MonkeyPatch, result: str
) -> None:
    """Calls shared between replays (`Runtime.share`) and replays resumed from an earlier
    case's (`state.resume`), each on or off: the same report."""
    reports = [_report(converted, FIXTURE / result)]
    assert "bfcl_snapshot.shares_nothing = True" in (converted / "bfcl_env.py").read_text()
    monkeypatch.setattr(Runtime, "share", False)
    reports.append(_report(converted, FIXTURE / result))
    monkeypatch.setattr(resume, "resumable", lambda env: False)
    reports.append(_report(converted, FIXTURE / result))
    monkeypatch.setattr(Runtime, "share", True)
    reports.append(_report(converted, FIXTURE / result))
    assert all(report == reports[-1] for report in reports)
    perturbed = result != "result_correct.json"
    assert any(case["state"]["diff"]["changes"] for case in reports[0]) == perturbed
