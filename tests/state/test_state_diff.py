"""The state diff on its own: what it reports for rows added, removed and changed, for tables
on one side only and for tables whose columns differ, as data and as lines."""

from __future__ import annotations

import sqlite3

from toolscore.state.diff import StateDiff, diff_states
from toolscore.state.snapshot import Ignore, Snapshot, read_shapes, take_snapshot

SCHEMA = """
CREATE TABLE accounts (id TEXT PRIMARY KEY, balance REAL, owner TEXT);
CREATE TABLE notes (body TEXT);
"""


def snapshot(sql: str, schema: str = SCHEMA) -> Snapshot:
    db = sqlite3.connect(":memory:")
    db.executescript(schema + sql)
    try:
        return take_snapshot(db, read_shapes(db, Ignore()).values())
    finally:
        db.close()


GOAL = snapshot(
    "INSERT INTO accounts VALUES ('a', 100, 'ann'), ('b', 50, 'bob'), ('c', 5, 'cy');"
    "INSERT INTO notes VALUES ('hello');"
)


def test_equal_states_have_no_diff() -> None:
    same = snapshot(
        "INSERT INTO accounts VALUES ('c', 5, 'cy'), ('b', 50, 'bob'), ('a', 100, 'ann');"
        "INSERT INTO notes VALUES ('hello');"
    )
    diff = diff_states(GOAL, same)
    assert diff == StateDiff()
    assert diff.passed
    assert diff.to_json() == {"passed": True, "tables": {}}
    assert diff.lines() == []


def test_rows_added_removed_and_changed() -> None:
    final = snapshot(
        "INSERT INTO accounts VALUES ('a', 130, 'ann'), ('c', 5, 'cyd'), ('d', 0, NULL);"
        "INSERT INTO notes VALUES ('hello');"
    )
    diff = diff_states(GOAL, final)
    assert not diff.passed
    (table,) = diff.tables
    assert table.table == "accounts"
    assert table.key == ("id",)
    assert table.to_json() == {
        "key": ["id"],
        "added": [{"id": "d", "balance": 0.0, "owner": None}],
        "removed": [{"id": "b", "balance": 50.0, "owner": "bob"}],
        "changed": [
            {"key": {"id": "a"}, "columns": {"balance": {"goal": 100.0, "final": 130.0}}},
            {"key": {"id": "c"}, "columns": {"owner": {"goal": "cy", "final": "cyd"}}},
        ],
    }
    assert diff.lines() == [
        "accounts: added id='d': balance=0.0, owner=null (not in the goal)",
        "accounts: removed id='b': balance=50.0, owner='bob' (in the goal, missing from the "
        "final state)",
        "accounts: changed id='a': balance: goal 100.0, final 130.0",
        "accounts: changed id='c': owner: goal 'cy', final 'cyd'",
    ]
    assert diff.to_json()["passed"] is False
    assert list(diff.to_json()["tables"]) == ["accounts"]


def test_float_noise_is_not_a_change_and_rows_without_a_key_use_the_rowid() -> None:
    final = snapshot(
        "INSERT INTO accounts VALUES ('a', 100.00000000000001, 'ann'), ('b', 50, 'bob'),"
        " ('c', 5, 'cy');"
        "INSERT INTO notes VALUES ('hello'), ('again');"
    )
    (table,) = diff_states(GOAL, final).tables
    assert table.table == "notes"
    assert table.key == ("rowid",)
    assert table.lines() == ["notes: added rowid=2: body='again' (not in the goal)"]


def test_a_table_on_one_side_only_lists_its_rows_in_key_order() -> None:
    only_goal = snapshot("INSERT INTO gone VALUES (2, 'y'), (1, 'x');", "CREATE TABLE gone "
                         "(k INTEGER PRIMARY KEY, v TEXT);")  # fmt: skip
    empty = snapshot("", "")
    gone = diff_states(only_goal, empty)
    (table,) = gone.tables
    assert table.note == "the table is missing from the final state"
    assert [dict(row) for row in table.removed] == [{"k": 1, "v": "x"}, {"k": 2, "v": "y"}]
    assert table.added == ()
    assert gone.lines()[0] == "gone: the table is missing from the final state"
    assert gone.to_json()["tables"]["gone"]["note"] == "the table is missing from the final state"
    new = diff_states(empty, only_goal)
    (table,) = new.tables
    assert table.note == "the table is not in the goal state"
    assert [dict(row) for row in table.added] == [{"k": 1, "v": "x"}, {"k": 2, "v": "y"}]
    assert new.lines() == [
        "gone: the table is not in the goal state",
        "gone: added k=1: v='x' (not in the goal)",
        "gone: added k=2: v='y' (not in the goal)",
    ]


def test_tables_whose_columns_differ_are_one_note() -> None:
    wider = snapshot(
        "INSERT INTO accounts VALUES ('a', 100, 'ann', 1);",
        "CREATE TABLE accounts (id TEXT PRIMARY KEY, balance REAL, owner TEXT, flag INT);"
        "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello');",
    )
    (table,) = diff_states(GOAL, wider).tables
    assert table.note == (
        "columns differ: goal has id, balance, owner; final has id, balance, owner, flag"
    )
    assert (table.added, table.removed, table.changed) == ((), (), ())
    assert table.lines() == [f"accounts: {table.note}"]


def test_a_row_with_only_key_columns_shows_a_dash() -> None:
    goal = snapshot("", "CREATE TABLE tags (name TEXT PRIMARY KEY);")
    final = snapshot("INSERT INTO tags VALUES ('x');", "CREATE TABLE tags (name TEXT PRIMARY KEY);")
    assert diff_states(goal, final).lines() == ["tags: added name='x': - (not in the goal)"]


MIXED = "CREATE TABLE things (k PRIMARY KEY, v);"


def test_keys_of_mixed_types_are_ordered_without_error() -> None:
    goal = snapshot(
        "INSERT INTO things VALUES (1, 'a'), ('b', 'b'), (2.5, 'c'), (NULL, 'd');", MIXED
    )
    final = snapshot(
        "INSERT INTO things VALUES ('b', 'B'), (2.5, 'C'), ('z', 'z'), (0, 'y');", MIXED
    )
    diff = diff_states(goal, final)
    assert diff.lines() == [
        "things: added k=0: v='y' (not in the goal)",
        "things: added k='z': v='z' (not in the goal)",
        "things: removed k=null: v='d' (in the goal, missing from the final state)",
        "things: removed k=1: v='a' (in the goal, missing from the final state)",
        "things: changed k=2.5: v: goal 'c', final 'C'",
        "things: changed k='b': v: goal 'b', final 'B'",
    ]
    gone = diff_states(goal, snapshot("", ""))
    assert [row["k"] for row in gone.tables[0].removed] == [None, 1, 2.5, "b"]


def test_composite_keys_name_every_key_column() -> None:
    schema = "CREATE TABLE seats (row INT, seat TEXT, who TEXT, PRIMARY KEY (row, seat));"
    goal = snapshot("INSERT INTO seats VALUES (1, 'A', 'ann');", schema)
    final = snapshot("INSERT INTO seats VALUES (1, 'A', 'bob');", schema)
    (table,) = diff_states(goal, final).tables
    assert table.key == ("row", "seat")
    assert table.lines() == ["seats: changed row=1, seat='A': who: goal 'ann', final 'bob'"]
    assert table.to_json()["changed"] == [
        {"key": {"row": 1, "seat": "A"}, "columns": {"who": {"goal": "ann", "final": "bob"}}}
    ]


def test_a_schema_difference_keeps_the_final_key() -> None:
    wider = snapshot("", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, extra TEXT);")
    narrow = snapshot("", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);")
    (table,) = diff_states(narrow, wider).tables
    assert table.to_json() == {
        "key": ["id"],
        "added": [],
        "removed": [],
        "changed": [],
        "note": "columns differ: goal has id, body; final has id, body, extra",
    }
