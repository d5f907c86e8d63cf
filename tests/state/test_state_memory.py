"""A SQLite environment's memory (issue 30): the store is kept as a private file, not in
Python, and a replay reads only what it touches.

Memory is measured without a clock: tracemalloc counts what Python allocates while a store
loads (SQLite's own pages are not Python's), which must stay far below the store's size (the
old load read the file whole, serialized it again and held every row as a tuple). SQLite's
trace callback lists the SQL a replay runs: none of it reads a whole table when the goal is a
plan and the comparison a diff. The stream that reads a `.sql` script must split it into the
lines and statements the whole text gave (a property test), and mutated stores and scripts
must load or be one input error (a fuzz test).
"""

from __future__ import annotations

import gc
import os
import sqlite3
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolscore import Case, SpecSet, parse_case, parse_specs
from toolscore.errors import InputError
from toolscore.inputs.outputs import parse_output
from toolscore.state import Environment, check_state, load_environment
from toolscore.state import image as image_module
from toolscore.state.snapshot import NotUtf8Error, StoredTables, TableState, take_snapshot
from toolscore.state.touched import full_copies, workspace
from toolscore.state.verdict import same_image

SCHEMA = """\
CREATE TABLE books (book_id TEXT PRIMARY KEY, title TEXT NOT NULL, available INTEGER NOT NULL);
CREATE TABLE loans (book_id TEXT NOT NULL REFERENCES books (book_id), member TEXT NOT NULL);
CREATE INDEX loans_by_book ON loans (book_id);
"""
"""Books, and loans: a table without a primary key (keyed by rowid)."""

TOOLS = """\
def find_book(db, book_id):
    row = db.execute("SELECT title, available FROM books WHERE book_id = ?", (book_id,))
    title, available = row.fetchone()
    return {"book_id": book_id, "title": title, "available": available}


def borrow(db, book_id, member):
    if find_book(db, book_id)["available"] < 1:
        raise ValueError("no copy on the shelf")
    db.execute("UPDATE books SET available = available - 1 WHERE book_id = ?", (book_id,))
    db.execute("INSERT INTO loans VALUES (?, ?)", (book_id, member))
"""
SPECS: SpecSet = parse_specs(
    {
        "tools": {
            "find_book": {"args": {"book_id": "exact"}},
            "borrow": {"args": {"book_id": "exact", "member": "exact"}},
        }
    },
    "tools.yaml",
)[0]  # type: ignore[assignment]
PADDING = "x" * 60


def book_rows(count: int) -> list[tuple[str, str, int]]:
    """`count` books, every other one with a copy on the shelf."""
    return [(f"book-{i}", f"Title {i} {PADDING}", i % 2) for i in range(count)]


def sqlite_store(folder: Path, count: int) -> Path:
    """A SQLite file of `count` books and a few loans."""
    path = folder / "store.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO books VALUES (?, ?, ?)", book_rows(count))
    db.executemany("INSERT INTO loans VALUES (?, ?)", [("book-0", "ada"), ("book-2", "alan")])
    db.commit()
    db.close()
    return path


def script_store(folder: Path, count: int) -> Path:
    """The same store as a `.sql` script: an INSERT a line."""
    lines = [SCHEMA]
    lines += [f"INSERT INTO books VALUES ('{b}', '{t}', {a});" for b, t, a in book_rows(count)]
    lines.append("INSERT INTO loans VALUES ('book-0', 'ada'), ('book-2', 'alan');")
    path = folder / "store.sql"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def load(folder: Path, database: Path, **config: Any) -> Environment:
    (folder / "tools.py").write_text(TOOLS, encoding="utf-8")
    env = load_environment(
        {"database": database.name, "tools": "tools.py", **config}, folder, "spec.yaml"
    )
    assert isinstance(env, Environment)
    return env


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables whose rows are read from a stored state from now on, in order."""
    reads: list[str] = []
    real = StoredTables.__getitem__

    def counted(tables: StoredTables, name: str) -> TableState:
        reads.append(name)
        return real(tables, name)

    monkeypatch.setattr(StoredTables, "__getitem__", counted)
    return reads


def python_peak(action: Callable[[], Any]) -> int:
    """The most bytes Python held at once while `action` ran (above what it held before)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = action()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del result
    return peak


@pytest.mark.parametrize("make", [sqlite_store, script_store], ids=["sqlite file", "sql script"])
def test_loading_a_store_holds_no_copy_of_it_in_python(
    tmp_path: Path, make: Callable[[Path, int], Path]
) -> None:
    warm = tmp_path / "warm"
    warm.mkdir()
    load(warm, make(warm, 10))  # a first load imports what loading needs
    database = make(tmp_path, 50_000)
    size = database.stat().st_size
    assert size > 5_000_000
    peak = python_peak(lambda: load(tmp_path, database))
    # what is read a chunk at a time (a quarter of a megabyte), not the store
    assert peak < size / 5, f"{peak:,} bytes held while loading a {size:,}-byte store"


def test_the_initial_state_reads_its_rows_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = load(tmp_path, sqlite_store(tmp_path, 50))
    assert isinstance(env.initial.tables, StoredTables)
    reads = count_reads(monkeypatch)
    assert "books" in env.initial.tables
    assert "nothing" not in env.initial.tables
    assert list(env.initial.tables) == ["books", "loans"]
    assert reads == []
    copy = env.connect()
    try:
        assert dict(env.initial.tables) == dict(take_snapshot(copy, env.shapes.values()).tables)
    finally:
        copy.close()
    assert env.initial.tables["loans"].rows == [(1, "book-0", "ada"), (2, "book-2", "alan")]
    assert env.initial.tables["books"].shape.key == ("book_id",)


def lending(
    number: int, book: str, produced: list[dict[str, Any]], **extra: Any
) -> tuple[Case, Any]:
    """A case lending `book` to ada (its plan: look the book up, lend it) and what an agent
    did for it."""
    plan = [
        {"name": "find_book", "args": {"book_id": book}},
        {"name": "borrow", "args": {"book_id": book, "member": "ada"}},
    ]
    data = {"id": f"case-{number}", "plans": [plan], "goal_state": "plan"}
    case = parse_case(data, SPECS, "cases.jsonl", number + 1)
    return case, parse_output({"id": case.id, "calls": produced})


CASES = [
    ("book-1", [{"name": "borrow", "args": {"book_id": "book-1", "member": "ada"}}]),
    ("book-3", [{"name": "find_book", "args": {"book_id": "book-3"}}]),
    ("book-5", [{"name": "borrow", "args": {"book_id": "book-7", "member": "ada"}}]),
    (
        "book-9",
        [
            {"name": "find_book", "args": {"book_id": "book-9"}},
            {"name": "borrow", "args": {"book_id": "book-9", "member": "ada"}},
        ],
    ),
]
"""Another way to the goal, nothing done, another book lent, the plan's own calls."""


def replay_all(env: Environment) -> list[bool | None]:
    """The state verdicts of `CASES`."""
    verdicts = []
    for number, (book, produced) in enumerate(CASES):
        case, output = lending(number, book, produced)
        verdicts.append(check_state(env, case, output.calls, None).passed)
    return verdicts


def traced_replay(env: Environment) -> tuple[list[bool | None], list[str]]:
    """The verdicts of `CASES` replayed in place, and every SQL statement the workspace ran."""
    space = workspace(env)
    assert space is not None
    db = space.connection()
    statements: list[str] = []
    sqlite3.Connection.set_trace_callback(db, statements.append)
    return replay_all(env), statements


def whole_reads(env: Environment, statements: list[str]) -> list[str]:
    """The statements that read a compared table whole."""
    selects = {shape.select for shape in env.shapes.values()}
    return [s for s in statements if s.strip() in selects]


def test_a_replay_in_place_reads_no_whole_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = load(tmp_path, sqlite_store(tmp_path, 2_000))
    reads = count_reads(monkeypatch)
    verdicts, statements = traced_replay(env)
    assert verdicts == [True, False, False, True]
    assert statements, "the trace saw nothing: the test would pass whatever ran"
    assert whole_reads(env, statements) == []
    assert reads == []
    with full_copies():
        assert replay_all(env) == verdicts


def test_the_trace_sees_whole_reads_where_they_are_made(tmp_path: Path) -> None:
    env = load(tmp_path, sqlite_store(tmp_path, 200), compare="exact")
    verdicts, statements = traced_replay(env)
    assert verdicts == [True, False, False, True]
    assert {s.split(" FROM ")[1] for s in whole_reads(env, statements)} == {
        'main."books"',
        'main."loans"',
    }


def test_the_workspace_goes_back_to_the_initial_image(tmp_path: Path) -> None:
    env = load(tmp_path, sqlite_store(tmp_path, 300))
    copy = env.connect()
    try:  # a copy is the image as it is (SQLite's backup moves the schema version on)
        assert copy.serialize() == env.image
        assert copy.execute("PRAGMA schema_version").fetchone()[0] == env.schema_version == 3
    finally:
        copy.close()
    verdicts, _ = traced_replay(env)
    assert verdicts == [True, False, False, True]
    space = workspace(env)
    assert space is not None
    assert space.db is not None
    assert same_image(space.db.serialize(), env.image)
    state = take_snapshot(space.db, env.shapes.values())
    assert dict(state.tables) == dict(env.initial.tables)


def test_the_private_copy_goes_with_the_environment(tmp_path: Path) -> None:
    env = load(tmp_path, sqlite_store(tmp_path, 10))
    folder = env.image_path.parent
    assert env.image_path.is_file()
    assert folder != tmp_path
    assert folder.name.startswith("toolscore-env-")
    image_module._remove(folder, os.getpid() + 1)  # a forked worker's exit: not its folder
    assert env.image_path.is_file()
    del env
    gc.collect()
    assert not folder.exists()


def test_a_store_that_cannot_be_copied_is_one_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = sqlite_store(tmp_path, 10)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no such folder"))
    with pytest.raises(InputError) as raised:
        load(tmp_path, database)
    text = str(raised.value)
    assert text.startswith("spec.yaml: environment.database: cannot make a folder"), text
    assert "\n" not in text


def test_a_store_whose_damaged_schema_is_not_utf8_is_one_input_error(tmp_path: Path) -> None:
    """SQLite's complaint about a malformed schema quotes it; Python cannot decode a quote
    that is not UTF-8 and raises UnicodeDecodeError in place of sqlite3.Error."""
    database = tmp_path / "store.db"
    db = sqlite3.connect(database)
    db.execute("CREATE TABLE t(x)")
    db.commit()
    db.execute("PRAGMA writable_schema=ON")
    db.execute("UPDATE sqlite_schema SET sql = CAST(X'43524541544520' || X'cb28' AS TEXT)")
    db.commit()
    db.close()
    with pytest.raises(InputError) as raised:
        load(tmp_path, database)
    assert str(raised.value) == (
        f"spec.yaml: environment.database: cannot read the database {database}: "
        "it is damaged (its schema is not UTF-8 text)"
    )


def test_a_script_not_in_utf8_is_refused_where_the_whole_text_would_be(tmp_path: Path) -> None:
    database = script_store(tmp_path, 20_000)  # over a megabyte: the bad byte in a later chunk
    with database.open("ab") as file:
        file.write(b"INSERT INTO loans VALUES ('book-1', '\xff');\n")
    with pytest.raises(UnicodeDecodeError) as whole:
        database.read_text(encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load(tmp_path, database)
    assert str(raised.value) == (
        f"spec.yaml: environment.database: cannot read {database}: {whole.value}"
    )


def test_a_nul_in_a_script_is_one_input_error_naming_its_line(tmp_path: Path) -> None:
    database = tmp_path / "store.sql"
    database.write_bytes(SCHEMA.encode() + b"INSERT INTO loans VALUES ('book-1', 'a\x00b');\n")
    with pytest.raises(InputError) as raised:
        load(tmp_path, database)
    assert str(raised.value) == (
        f"{database}:4: environment.database: a NUL character: SQL text cannot hold one"
    )


BREAKS = st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", ""])
PIECES = st.sampled_from(["SELECT 1", ";", " ", "-- note", "'a", "b'", "é", "INSERT", "x"])
SCRIPTS = st.lists(st.tuples(st.lists(PIECES, max_size=4), BREAKS), max_size=12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCRIPTS)
def test_a_streamed_script_splits_as_its_whole_text(parts: list[tuple[list[str], str]]) -> None:
    text = "".join("".join(pieces) + end for pieces, end in parts)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sql"
        path.write_bytes(text.encode("utf-8"))
        whole = path.read_text(encoding="utf-8").splitlines(keepends=True)
        with path.open(encoding="utf-8") as file:
            streamed = list(image_module._lines(file))
    assert streamed == whole
    assert list(image_module.statements(streamed)) == list(image_module.statements(whole))


SEED_SQL = (Path(__file__).parents[2] / "examples" / "support" / "env" / "store.sql").read_bytes()


def seed_database() -> bytes:
    """A small real SQLite file, as bytes."""
    with tempfile.TemporaryDirectory() as folder:
        return sqlite_store(Path(folder), 40).read_bytes()


SEED_DB = seed_database()
EDITS = st.lists(
    st.tuples(st.sampled_from(["flip", "insert", "delete", "truncate"]), st.integers(0, 1 << 20),
              st.integers(0, 255)),
    min_size=1, max_size=4,
)  # fmt: skip


def mutated(seed: bytes, edits: list[tuple[str, int, int]]) -> bytes:
    data = bytearray(seed)
    for kind, where, value in edits:
        at = where % max(1, len(data))
        if kind == "flip" and data:
            data[at] ^= value or 1
        elif kind == "insert":
            data[at:at] = bytes([value])
        elif kind == "delete":
            del data[at : at + 1 + value % 64]
        else:
            del data[at:]
    return bytes(data)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.sampled_from(["store.sql", "store.db"]), EDITS)
@example("store.db", [("flip", 3992, 128)])  # SQLite's complaint quotes a schema not UTF-8
@example("store.db", [("flip", 437386, 128)])  # a stored text not UTF-8
def test_a_mutated_store_loads_or_is_one_input_error(name: str, edits: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        database = base / name
        database.write_bytes(mutated(SEED_SQL if name == "store.sql" else SEED_DB, edits))
        (base / "tools.py").write_text(TOOLS, encoding="utf-8")
        try:
            env = load_environment({"database": name, "tools": "tools.py"}, base, "spec.yaml")
        except InputError as error:
            text = str(error)
            assert text.startswith(("spec.yaml", str(database))), text
            assert "\n" not in text, text
            assert "\r" not in text, text
            return
        assert isinstance(env, Environment)
        copy = env.connect()
        try:
            try:
                initial = dict(env.initial.tables)
            except NotUtf8Error:  # a flipped byte in a stored text: refused when read
                with pytest.raises(NotUtf8Error):
                    take_snapshot(copy, env.shapes.values())
                return
            assert initial == dict(take_snapshot(copy, env.shapes.values()).tables)
        finally:
            copy.close()
