"""A documents replay resumed where an earlier case's replay ended (toolscore.state.resume)
gives the verdict a replay from the start gives: on cases made one per turn, as BFCL's
multi-turn categories are, with failing calls (rolled back or kept) and results required."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolscore import SpecSet, parse_case, parse_output, parse_specs
from toolscore.state import DocumentEnvironment, check_state, load_environment, resume

DOCS = Path(__file__).parents[1] / "state_docs"


@cache
def objects_env(on_error: str, terminal: bool = False) -> DocumentEnvironment:
    block: dict[str, Any] = {
        "kind": "documents",
        "data": "objects.py:make_state",
        "tools": "objects.py",
        "snapshot": "objects.py:snapshot",
        "on_error": on_error,
    }
    if terminal:
        block["terminal_tools"] = ["broken"]
    env = load_environment(block, DOCS, str(DOCS / "tools.yaml"))
    assert isinstance(env, DocumentEnvironment)
    assert not resume.resumable(env)  # its snapshot function does not say it shares nothing
    env.snapshot_function.shares_nothing = True  # type: ignore[union-attr]
    return env


def test_only_environments_without_terminal_tools_resume() -> None:
    assert resume.resumable(objects_env("keep"))
    # a replay that ended at a terminal tool must not go on with a later case's calls
    assert not resume.resumable(objects_env("keep", terminal=True))


@cache
def spec() -> SpecSet:
    found, _ = parse_specs(
        {"tools": {"write_file": {"args": {"name": "exact", "text": "exact"}}, "broken": {}}},
        "objects.yaml",
    )
    assert found is not None
    return found


call = st.one_of(
    st.builds(
        lambda name, text: {"name": "write_file", "args": {"name": name, "text": text}},
        st.sampled_from(["a", "b", "readme.txt"]),
        st.sampled_from(["x", "y"]),
    ),
    st.just({"name": "broken", "args": {}}),
)
turns = st.lists(st.lists(call, max_size=3), min_size=1, max_size=4)


def _verdicts(
    env: DocumentEnvironment, truth: list[list[dict[str, Any]]], made: list[list[dict[str, Any]]]
) -> list[Any]:
    """Each turn's case judged, in turn order: the plan and the agent's calls so far."""
    found = []
    for t in range(len(truth)):
        plan = [c for turn in truth[: t + 1] for c in turn]
        line: dict[str, Any] = {"id": f"e/turn-{t}", "plans": [plan], "goal_state": "plan"}
        line["results_from_plan"] = len(plan) - len(truth[t])
        case = parse_case(line, spec(), "cases.jsonl", t + 1)
        calls = parse_output({"id": case.id, "calls": [c for turn in made[: t + 1] for c in turn]})
        verdict = check_state(env, case, calls.calls, None)
        diff = verdict.diff.lines() if verdict.diff is not None else None
        found.append(
            (verdict.passed, diff, verdict.calls, verdict.plan_replay, verdict.missing_results)
        )
    return found


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["rollback", "keep"]), st.lists(st.tuples(turns, turns), min_size=1, max_size=4)
)
def test_resumed_replays_give_the_verdicts_of_replays_from_the_start(
    on_error: str, entries: list[tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]]
) -> None:
    env = objects_env(on_error)
    for truth, given_turns in entries:
        made = (given_turns + truth)[: len(truth)]  # the agent's turns, as many as the truth's
        resumed = _verdicts(env, truth, made)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(resume, "resumable", lambda env: False)
            alone = _verdicts(env, truth, made)
        assert resumed == alone


def test_a_resumed_replay_runs_only_the_new_calls() -> None:
    env = objects_env("keep")
    turns = [
        [{"name": "write_file", "args": {"name": "a", "text": "x"}}],
        [{"name": "write_file", "args": {"name": "b", "text": "y"}}],
    ]
    file_system = type(env.original["fs"])  # the class of the data function's objects
    ran: list[Any] = []
    original = file_system.write

    def write(fs: Any, *args: Any) -> Any:
        ran.append(args)
        return original(fs, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(file_system, "write", write)
        patch.setattr(resume, "AGENT", resume.Ends())  # none kept from other tests
        patch.setattr(resume, "PLANS", resume.Ends())
        verdicts = _verdicts(env, turns, turns)
    assert [v[0] for v in verdicts] == [True, True]
    # turn 0: the agent's call (the plan is not replayed: the agent made its calls);
    # turn 1: only the new call, on the state turn 0 ended with
    assert ran == [("a", "x"), ("b", "y")]
