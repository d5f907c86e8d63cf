"""`restore` on a document environment of Python objects (docs/formats.md 9.6): used states
are brought back and reused instead of deep-copied afresh, the verdicts are those of fresh
copies, a state is reused only on a `True`, and `restore` with plain data is refused."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolscore import SpecSet, parse_case, parse_output, parse_specs
from toolscore.errors import InputError
from toolscore.state import DocumentEnvironment, check_state, load_environment

DOCS = Path(__file__).parents[1] / "state_docs"


def env_with(restore: str | None, data: str = "objects.py:make_state") -> DocumentEnvironment:
    block: dict[str, Any] = {
        "kind": "documents", "data": data, "tools": "objects.py",
        "snapshot": "objects.py:snapshot", "on_error": "keep",
    }  # fmt: skip
    if restore is not None:
        block["restore"] = restore
    env = load_environment(block, DOCS, str(DOCS / "tools.yaml"))
    assert isinstance(env, DocumentEnvironment)
    return env


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
        st.sampled_from(["a", "readme.txt"]),
        st.sampled_from(["x", "y"]),
    ),
    st.just({"name": "broken", "args": {}}),
)


def verdicts(env: DocumentEnvironment, pairs: list[tuple[list[Any], list[Any]]]) -> list[Any]:
    found = []
    for k, (plan, made) in enumerate(pairs):
        case = parse_case(
            {"id": f"c{k}", "plans": [plan], "goal_state": "plan"}, spec(), "cases.jsonl", k + 1
        )
        verdict = check_state(env, case, parse_output({"id": case.id, "calls": made}).calls, None)
        diff = verdict.diff.lines() if verdict.diff is not None else None
        found.append((verdict.passed, diff, verdict.calls))
    return found


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(call, max_size=3), st.lists(call, max_size=3)), max_size=6))
def test_restored_states_give_the_verdicts_of_fresh_copies(
    pairs: list[tuple[list[Any], list[Any]]],
) -> None:
    assert verdicts(env_with("objects.py:restore"), pairs) == verdicts(env_with(None), pairs)


def test_a_state_is_reused_only_when_restore_says_true() -> None:
    pairs = [([call_of("a", "x")], [call_of("a", "y")])] * 3
    for restore, reused in (("objects.py:restore", True), ("objects.py:refuse", False)):
        env = env_with(restore)
        objects: Any = inspect.getmodule(env.snapshot_function)
        objects.RESTORED.clear()
        verdicts(env, pairs)
        handed = [id(state) for state in objects.RESTORED]
        assert len(handed) >= 3
        # restored states come back to later replays; refused ones are dropped
        assert (len(set(handed)) < len(handed)) is reused
        assert objects.SHARED.files == {"readme.txt": "hello"}  # the data function's object


def call_of(name: str, text: str) -> dict[str, Any]:
    return {"name": "write_file", "args": {"name": name, "text": text}}


def test_restore_with_plain_data_is_refused() -> None:
    with pytest.raises(InputError) as error:
        env_with("objects.py:restore", data="objects.py:plain_state")
    assert error.value.field == "environment.restore"


def test_replays_kept_to_resume_are_restored_once_forgotten() -> None:
    from toolscore.state import resume  # noqa: PLC0415

    restored = env_with("objects.py:restore")
    restored.snapshot_function.shares_nothing = True  # type: ignore[union-attr]
    assert resume.resumable(restored)
    objects: Any = inspect.getmodule(restored.snapshot_function)
    objects.RESTORED.clear()
    # more cases than resume keeps (16 of each kind), each kept, the oldest forgotten
    pairs = [
        ([call_of(f"f{k}", "x")], [call_of(f"f{k}", "x" if k % 3 else "y")]) for k in range(40)
    ]
    fresh = env_with(None)
    assert verdicts(restored, pairs) == verdicts(fresh, pairs)
    assert objects.RESTORED  # forgotten replays' states were handed back
