"""Replay in place (state/touched.py): one copy of the store per process, each case undone.

The property test replays random cases on random small stores both ways, in place and on
full copies (`full_copies()`, the fallback and the path before), and requires the same
verdicts: results, errors, diffs, hashes. The other tests pin isolation between cases and
which cases fall back to full copies.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolscore import Case, SpecSet, parse_case, parse_output, parse_specs
from toolscore.core.model import Call
from toolscore.state import Environment, check_state, load_environment
from toolscore.state import verdict as verdict_module
from toolscore.state.touched import full_copies, split_statements, workspace

SCHEMA = """\
CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, qty INTEGER);
CREATE TABLE tags (name TEXT PRIMARY KEY, note TEXT);
CREATE TABLE log (entry TEXT);
"""

TOOLS = """\
def add(db, name, qty):
    return db.execute("INSERT INTO items (name, qty) VALUES (?, ?)", (name, qty)).lastrowid


def set_qty(db, id, qty):
    return db.execute("UPDATE items SET qty = ? WHERE id = ?", (qty, id)).rowcount


def remove(db, id):
    return db.execute("DELETE FROM items WHERE id = ?", (id,)).rowcount


def tag(db, name, note):
    db.execute("INSERT OR REPLACE INTO tags VALUES (?, ?)", (name, note))


def note(db, entry):
    db.execute("INSERT INTO log VALUES (?)", (entry,))


def wipe(db):
    for table in ("items", "tags", "log"):
        db.execute(f"DELETE FROM {table}")


def add_then_fail(db, name):
    add(db, name, 1)
    raise ValueError("refused")


def commit_then_fail(db, name):
    add(db, name, 1)
    db.commit()
    add(db, name + "!", 2)
    raise ValueError("after a commit")


def rollback_midway(db, name):
    add(db, name, 1)
    db.rollback()
    return add(db, name + "?", 3)


def in_block_fail(db, name):
    with db:
        add(db, name, 5)
        raise RuntimeError("inside with")


def script(db, name):
    db.executescript(f"INSERT INTO log VALUES ('{name}'); UPDATE items SET qty = qty + 1;")


def begin_sql(db, name):
    db.execute("BEGIN")
    return add(db, name, 6)


def rollback_sql(db, name):
    add(db, name, 8)
    db.execute("ROLLBACK")
    return db.execute("SELECT count(*) FROM items").fetchone()[0]


def savepoint_sql(db, name):
    db.execute("SAVEPOINT mine")
    add(db, name, 7)
    db.execute("ROLLBACK TO mine")
    db.execute("RELEASE mine")


def new_table(db):
    db.execute("CREATE TABLE extra (x)")
    db.execute("INSERT INTO extra VALUES (1)")


def like_pragma(db):
    db.execute("PRAGMA case_sensitive_like = 1")


def scratch(db):
    db.execute("CREATE TEMP TABLE scratch (x)")
    db.execute("INSERT INTO scratch VALUES (1)")


def rows_as_dicts(db):
    import sqlite3
    db.row_factory = sqlite3.Row


def probe(db):
    temp = db.execute(
        "SELECT count(*) FROM sqlite_temp_master WHERE name NOT LIKE 'toolscore%'"
    ).fetchone()[0]
    seq = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'items'").fetchone()
    tables = ("items", "tags", "log")
    counts = [db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables]
    like = db.execute("SELECT 'a' LIKE 'A'").fetchone()[0]
    return {"temp": temp, "seq": None if seq is None else seq[0], "counts": counts, "like": like,
            "row_factory": db.row_factory is None}
"""

NAMED = [
    "add_then_fail",
    "commit_then_fail",
    "rollback_midway",
    "in_block_fail",
    "script",
    "begin_sql",
    "rollback_sql",
    "savepoint_sql",
]
"""Tools taking a name: failing calls, their own commit or rollback, scripts, transaction SQL."""
BARE = ["wipe", "probe", "new_table", "like_pragma", "scratch", "rows_as_dicts"]
NAMES = st.sampled_from(["a", "b", "c"])
IDS = st.integers(min_value=1, max_value=7)
CALL = st.one_of(
    st.tuples(st.just("add"), st.fixed_dictionaries({"name": NAMES, "qty": IDS})),
    st.tuples(st.just("set_qty"), st.fixed_dictionaries({"id": IDS, "qty": IDS})),
    st.tuples(st.just("remove"), st.fixed_dictionaries({"id": IDS})),
    st.tuples(st.just("tag"), st.fixed_dictionaries({"name": NAMES, "note": NAMES})),
    st.tuples(st.just("note"), st.fixed_dictionaries({"entry": NAMES})),
    st.tuples(st.sampled_from(NAMED), st.fixed_dictionaries({"name": NAMES})),
    st.tuples(st.sampled_from(BARE), st.just({})),
)
CALLS = st.lists(CALL, max_size=6)
ARGS: dict[str, list[str]] = {
    "add": ["name", "qty"],
    "set_qty": ["id", "qty"],
    "remove": ["id"],
    "tag": ["name", "note"],
    "note": ["entry"],
    **{name: ["name"] for name in NAMED},
    **{name: [] for name in BARE},
}
SPECS: SpecSet = parse_specs(
    {"tools": {name: {"args": dict.fromkeys(args, "exact")} for name, args in ARGS.items()}},
    "tools.yaml",
)[0]  # type: ignore[assignment]


def store_sql(items: list[tuple[str, int]], tags: dict[str, str], log: list[str]) -> str:
    """The schema and the given rows as a SQL script."""
    lines = [SCHEMA]
    lines += [f"INSERT INTO items (name, qty) VALUES ('{n}', {q});" for n, q in items]
    lines += [f"INSERT INTO tags VALUES ('{n}', '{t}');" for n, t in tags.items()]
    lines += [f"INSERT INTO log VALUES ('{e}');" for e in log]
    return "\n".join(lines) + "\n"


def make_env(folder: Path, sql: str, **config: Any) -> Environment:
    (folder / "store.sql").write_text(sql, encoding="utf-8")
    (folder / "tools.py").write_text(TOOLS, encoding="utf-8")
    env = load_environment({"database": "store.sql", "tools": "tools.py", **config}, folder, "s")
    assert isinstance(env, Environment)
    return env


def make_case(number: int, *plans: list[tuple[str, dict[str, Any]]], **extra: Any) -> Case:
    data = {
        "id": f"case-{number}",
        "tags": [],
        "plans": [[{"name": name, "args": args} for name, args in plan] for plan in plans],
        "goal_state": "plan",
        **extra,
    }
    return parse_case(data, SPECS, "cases.jsonl", number + 1)


def produced(items: list[tuple[str, dict[str, Any]]]) -> tuple[Call, ...]:
    line = {"id": "c", "calls": [{"name": name, "args": args} for name, args in items]}
    return parse_output(line).calls


def judge_all(env: Environment, cases: list[tuple[Case, tuple[Call, ...]]]) -> list[Any]:
    """Each case's verdict as JSON (or the error it raised), in order."""
    found: list[Any] = []
    for case, calls in cases:
        try:
            found.append(check_state(env, case, calls, None).to_json())
        except Exception as error:
            found.append(f"{type(error).__name__}: {error}")
    return found


CASE = st.tuples(
    CALLS,
    st.lists(st.lists(CALL, max_size=4), max_size=2),
    st.one_of(
        st.just("plan"),
        st.lists(st.tuples(NAMES, NAMES), max_size=3).map(
            lambda rows: {"tags": [{"name": n, "note": t} for n, t in dict(rows).items()]}
        ),
    ),
    st.sampled_from(
        [
            None,
            "INSERT INTO log VALUES ('set up')",
            [{"name": "tag", "args": {"name": "z", "note": "z"}}],
        ]
    ),
    st.booleans(),
)
"""The agent's calls, the plans, the goal, the setup, and whether the agent makes exactly the
first plan's calls instead (that plan is then not replayed)."""


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(st.tuples(NAMES, IDS), max_size=5),
    tags=st.dictionaries(NAMES, NAMES, max_size=3),
    log=st.lists(NAMES, max_size=3),
    cases=st.lists(CASE, min_size=1, max_size=4),
    on_error=st.sampled_from(["rollback", "keep"]),
    compare=st.sampled_from(["diff", "exact"]),
    numbers=st.sampled_from(["numeric", "typed"]),
)
def test_in_place_and_full_copies_give_the_same_verdicts(
    items: list[tuple[str, int]],
    tags: dict[str, str],
    log: list[str],
    cases: list[Any],
    on_error: str,
    compare: str,
    numbers: str,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = make_env(
            Path(folder),
            store_sql(items, tags, log),
            on_error=on_error,
            compare=compare,
            numbers=numbers,
        )
        built = []
        for number, (agent, plans, goal, setup, follows) in enumerate(cases):
            made = plans[0] if follows and plans else agent
            extra = {"goal_state": goal} | ({"setup": setup} if setup is not None else {})
            built.append((make_case(number, *plans, **extra), produced(made)))
        assert workspace(env) is not None
        in_place = judge_all(env, built)
        with full_copies():
            copies = judge_all(env, built)
        assert in_place == copies


@pytest.fixture
def env(tmp_path: Path) -> Environment:
    sql = store_sql([("a", 1), ("b", 2), ("c", 3)], {"a": "x", "b": "y"}, ["one"])
    return make_env(tmp_path, sql)


def _probe(env: Environment, number: int) -> Any:
    verdict = check_state(env, make_case(number, []), produced([("probe", {})]), None)
    return verdict.calls[0].result


INITIAL = {"temp": 0, "seq": 3, "counts": [3, 2, 1], "like": 1, "row_factory": True}


def _no_full_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> Any:
        raise AssertionError("replayed on full copies")

    monkeypatch.setattr(verdict_module, "_plans_on_copies", refuse)
    monkeypatch.setattr(verdict_module, "_annotation_on_copies", refuse)


def test_a_case_that_deletes_everything_leaves_the_next_case_everything(
    env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_full_copies(monkeypatch)
    wiped = check_state(env, make_case(0, []), produced([("wipe", {})]), None)
    assert wiped.passed is False
    assert len(wiped.diff.to_json()["tables"]["items"]["removed"]) == 3  # type: ignore[union-attr]
    assert _probe(env, 1) == INITIAL


def test_autoincrement_counters_start_again_for_each_case(
    env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_full_copies(monkeypatch)
    adds = [("add", {"name": "n", "qty": 1})] * 3
    first = check_state(env, make_case(0, adds), produced(adds), None)
    assert [c.result for c in first.calls] == [4, 5, 6]
    assert first.passed is True
    again = check_state(env, make_case(1, adds[:1]), produced(adds[:1]), None)
    assert [c.result for c in again.calls] == [4]


@pytest.mark.parametrize(
    "tool", ["scratch", "like_pragma", "rows_as_dicts", "begin_sql", "savepoint_sql", "new_table"]
)
def test_what_a_case_does_to_the_connection_is_gone_for_the_next(
    env: Environment, tool: str
) -> None:
    args = {"name": "t"} if tool in ("begin_sql", "savepoint_sql") else {}
    check_state(env, make_case(0, []), produced([(tool, args), ("probe", {})]), None)
    assert _probe(env, 1) == INITIAL


@pytest.mark.parametrize(
    ("tool", "falls_back"),
    [
        ("add", False),
        ("commit_then_fail", False),
        ("rollback_midway", False),
        ("in_block_fail", False),
        ("script", False),
        ("scratch", False),
        ("rows_as_dicts", False),
        ("begin_sql", True),
        ("savepoint_sql", True),
        ("new_table", True),
        ("like_pragma", True),
    ],
)
def test_which_cases_fall_back_to_full_copies(
    env: Environment, monkeypatch: pytest.MonkeyPatch, tool: str, falls_back: bool
) -> None:
    copied: list[str] = []
    original = verdict_module._plans_on_copies

    def on_copies(*args: Any) -> Any:
        copied.append(args[1].id)
        return original(*args)

    monkeypatch.setattr(verdict_module, "_plans_on_copies", on_copies)
    args: dict[str, Any] = {"name": "t"}
    args = {"name": "t", "qty": 1} if tool == "add" else args
    args = {} if tool in ("new_table", "like_pragma", "scratch", "rows_as_dicts") else args
    check_state(env, make_case(0, []), produced([(tool, args)]), None)
    assert copied == (["case-0"] if falls_back else [])


def test_a_tool_s_transaction_sql_never_ends_the_case(env: Environment) -> None:
    """BEGIN, SAVEPOINT and friends are made no-ops in place (the case is then replayed on
    full copies): nothing a tool commits outlives its case."""
    verdict = check_state(
        env, make_case(0, []), produced([("begin_sql", {"name": "kept?"}), ("wipe", {})]), None
    )
    assert verdict.calls[0].result == 4
    assert _probe(env, 1) == INITIAL


def test_a_commit_inside_a_failing_call_keeps_what_came_before_it(env: Environment) -> None:
    verdict = check_state(
        env, make_case(0, []), produced([("commit_then_fail", {"name": "k"})]), None
    )
    added = verdict.diff.to_json()["tables"]["items"]["added"]  # type: ignore[union-attr]
    assert [row["name"] for row in added] == ["k"]


def test_environments_the_capture_cannot_follow_replay_on_full_copies(tmp_path: Path) -> None:
    with_trigger = SCHEMA + "CREATE TRIGGER t AFTER INSERT ON log BEGIN SELECT 1; END;\n"
    assert workspace(make_env(tmp_path, with_trigger)) is None
    without_rowid = SCHEMA.replace("note TEXT)", "note TEXT) WITHOUT ROWID")
    assert workspace(make_env(tmp_path, without_rowid)) is None
    deferred = SCHEMA + (
        "CREATE TABLE refs (id INTEGER REFERENCES items (id) DEFERRABLE INITIALLY DEFERRED);\n"
    )
    assert workspace(make_env(tmp_path, deferred)) is None
    assert workspace(make_env(tmp_path, SCHEMA)) is not None


def test_scripts_split_into_their_statements() -> None:
    script = (
        "INSERT INTO t VALUES ('a;b'); CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT 1; END;"
        "\n -- end"
    )
    assert list(split_statements(script)) == [
        "INSERT INTO t VALUES ('a;b');",
        " CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT 1; END;",
        "\n -- end",
    ]


def test_an_agent_that_follows_its_plan_with_transaction_sql_is_judged_on_full_copies(
    env: Environment,
) -> None:
    """The plan need not be replayed, but the agent's own replay ignored its ROLLBACK in
    place: the case is replayed on full copies, where the ROLLBACK undid the insert."""
    plan = [("rollback_sql", {"name": "r"})]
    verdict = check_state(env, make_case(0, plan), produced(plan), None)
    assert verdict.passed is True
    assert verdict.calls[0].result == 3


def test_a_workspace_does_not_keep_its_environment_alive(tmp_path: Path) -> None:
    import gc  # noqa: PLC0415 - only this test collects
    import weakref  # noqa: PLC0415

    env = make_env(tmp_path, SCHEMA)
    check_state(env, make_case(0, []), produced([("note", {"entry": "x"})]), None)
    alive = weakref.ref(env)
    del env
    gc.collect()
    assert alive() is None
