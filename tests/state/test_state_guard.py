"""Replay SQL reaches no file (issue 11, item 3): the guard's authorizer on every replay
connection, for a case's `setup` SQL and for tool code using the connection it is given."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore import Case, parse_case, parse_output, parse_specs
from toolscore.cli.app import cli
from toolscore.state import Environment, StateVerdict, check_state, load_environment
from toolscore.state.guard import DENIED_PRAGMAS

STORE = "CREATE TABLE t (x INTEGER);\nINSERT INTO t VALUES (1);\n"

TOOLS = """\
import sqlite3


def add(db, x):
    db.execute("INSERT INTO t VALUES (?)", (x,))
    return x


def run_sql(db, sql):
    db.executescript(sql)
    return "ran"


def run_sql_quietly(db, sql):
    try:
        db.executescript(sql)
    except sqlite3.Error as error:
        return str(error)
    return "ran"


def read_pragma(db, name):
    return [list(row) for row in db.execute(f"PRAGMA {name}")]
"""

SPEC: dict[str, Any] = {
    "version": "1",
    "tools": {
        "add": {"args": {"x": "exact"}},
        "run_sql": {"args": {"sql": "exact"}},
        "run_sql_quietly": {"args": {"sql": "exact"}},
        "read_pragma": {"args": {"name": "exact"}},
    },
    "environment": {"database": "store.db", "tools": "tools.py"},
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A spec, its tools module, and the environment's database as a SQLite file."""
    db = sqlite3.connect(tmp_path / "store.db")
    db.executescript(STORE)
    db.close()
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(SPEC), encoding="utf-8")
    return tmp_path


def _env(folder: Path) -> Environment:
    env = load_environment(SPEC["environment"], folder, "tools.json")
    assert isinstance(env, Environment)
    return env


def _case(data: dict[str, Any]) -> Case:
    specs, errors = parse_specs(SPEC, "tools.json")
    assert specs is not None, errors
    line = {"id": "c", "plans": [[{"name": "add", "args": {"x": 2}}]], "goal_state": "plan"}
    return parse_case({**line, **data}, specs, "cases.jsonl", 1)


def _verdict(folder: Path, setup: Any, *produced: tuple[str, dict[str, Any]]) -> StateVerdict:
    data = {} if setup is None else {"setup": setup}
    calls = [{"name": name, "args": args} for name, args in produced]
    trajectory = parse_output({"id": "c", "calls": calls})
    return check_state(_env(folder), _case(data), trajectory.calls, None)


def _write_jsonl(path: Path, lines: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_the_reproducer_attach_in_setup_is_denied_and_the_run_goes_on(folder: Path) -> None:
    """The issue's reproducer: setup ATTACHes the environment's own database and inserts 666.
    The file stays as it was, the case fails with the denial, the other case is scored."""
    store = folder / "store.db"
    before = _sha256(store)
    attack = [f"ATTACH '{store}' AS v", "INSERT INTO v.t VALUES (666)"]
    plan = [[{"name": "add", "args": {"x": 2}}]]
    cases = _write_jsonl(
        folder / "cases.jsonl",
        [
            {"id": "attack", "plans": plan, "goal_state": "plan", "setup": attack},
            {"id": "fine", "plans": plan, "goal_state": "plan"},
        ],
    )
    call = {"name": "add", "args": {"x": 2}}
    outputs = _write_jsonl(
        folder / "outputs.jsonl",
        [{"id": "attack", "calls": [call]}, {"id": "fine", "calls": [call]}],
    )
    report = folder / "report.json"
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(folder / "tools.json"), "--cases", cases, "--outputs", outputs,
         "--env", "--json", str(report)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert _sha256(store) == before
    check = sqlite3.connect(store)
    assert check.execute("SELECT x FROM t").fetchall() == [(1,)]
    check.close()
    by_id = {case["id"]: case for case in json.loads(report.read_text())["cases"]}
    assert by_id["attack"]["state_passed"] is False
    assert by_id["attack"]["state"]["error"] == (
        f"setup[0]: denied: ATTACH or VACUUM of {str(store)!r} "
        "(a replay works on a private in-memory copy and never opens a file)"
    )
    assert by_id["fine"]["state_passed"] is True
    assert "replay stopped at setup[0]: denied: ATTACH" in result.output


def test_vacuum_into_asks_the_authorizer_to_attach_its_target(tmp_path: Path) -> None:
    """What the guard relies on: SQLite authorizes VACUUM INTO as an ATTACH of the target
    file (and a plain VACUUM as an ATTACH of a temporary database), so denying ATTACH denies
    both. If a new SQLite stops doing so, this fails before the guard silently does."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (x)")
    seen: list[tuple[int, str | None]] = []

    def log(action: int, arg1: str | None, *_: str | None) -> int:
        seen.append((action, arg1))
        return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_ATTACH else sqlite3.SQLITE_OK

    db.set_authorizer(log)
    target = tmp_path / "copy.db"
    for sql, attached in [(f"VACUUM INTO '{target}'", str(target)), ("VACUUM", "")]:
        seen.clear()
        with pytest.raises(sqlite3.DatabaseError, match="authoriz"):
            db.execute(sql)
        assert (sqlite3.SQLITE_ATTACH, attached) in seen
    assert not target.exists()
    db.close()


@pytest.mark.parametrize(
    ("sql", "denied"),
    [
        ("VACUUM INTO '{folder}/copy.db'", "ATTACH or VACUUM of '{folder}/copy.db'"),
        ("VACUUM", "ATTACH or VACUUM of a temporary database"),
        ("ATTACH '{folder}/new.db' AS n", "ATTACH or VACUUM of '{folder}/new.db'"),
        ("ATTACH 'file:shared?mode=memory&cache=shared' AS s",
         "ATTACH or VACUUM of 'file:shared?mode=memory&cache=shared'"),
        ("SELECT load_extension('{folder}/evil')", "the function load_extension()"),
        ("SELECT LOAD_EXTENSION('{folder}/evil', 'entry')", "the function load_extension()"),
        ("SELECT fts3_tokenizer('simple', x'0000000000000000')", "the function fts3_tokenizer()"),
        ("PRAGMA temp_store_directory = '{folder}'", "PRAGMA temp_store_directory = {folder}"),
        ("PRAGMA writable_schema = ON", "PRAGMA writable_schema = ON"),
        ("PRAGMA main.journal_mode = OFF", "PRAGMA journal_mode = OFF"),
    ],
)  # fmt: skip
def test_setup_sql_that_reaches_for_a_file_is_denied(folder: Path, sql: str, denied: str) -> None:
    before, names = _sha256(folder / "store.db"), sorted(p.name for p in folder.iterdir())
    setup = ["INSERT INTO t VALUES (5)", sql.format(folder=folder)]
    verdict = _verdict(folder, setup, ("add", {"x": 2}))
    assert verdict.passed is False
    assert verdict.error is not None
    assert verdict.error.startswith(f"setup[1]: denied: {denied.format(folder=folder)} (")
    assert _sha256(folder / "store.db") == before
    assert sorted(p.name for p in folder.iterdir() if p.name != "__pycache__") == names


@pytest.mark.parametrize("pragma", sorted(DENIED_PRAGMAS))
def test_every_risky_pragma_is_denied_when_set_and_allowed_when_read(
    folder: Path, pragma: str
) -> None:
    value = "'x'" if pragma.endswith("directory") else "0"
    verdict = _verdict(
        folder,
        None,
        ("read_pragma", {"name": pragma}),
        ("run_sql", {"sql": f"PRAGMA {pragma} = {value}"}),
    )
    read, written = verdict.calls
    assert read.error is None
    assert written.error is not None
    assert written.error.startswith(f"denied: PRAGMA {pragma} = ")


def test_a_tool_running_agent_sql_cannot_attach_and_its_call_is_an_error(folder: Path) -> None:
    store = folder / "store.db"
    before = _sha256(store)
    attack = f"ATTACH '{store}' AS v; INSERT INTO v.t VALUES (666)"
    verdict = _verdict(folder, None, ("run_sql", {"sql": attack}), ("add", {"x": 2}))
    denied, added = verdict.calls
    assert denied.error == (
        f"denied: ATTACH or VACUUM of {str(store)!r} "
        "(a replay works on a private in-memory copy and never opens a file)"
    )
    assert added.error is None
    assert verdict.passed is True
    assert _sha256(store) == before


def test_a_tool_that_catches_the_denial_still_fails_the_call(folder: Path) -> None:
    verdict = _verdict(
        folder,
        None,
        ("run_sql_quietly", {"sql": "VACUUM INTO 'stolen.db'"}),
        ("add", {"x": 2}),
    )
    quiet, _ = verdict.calls
    assert quiet.error is not None
    assert quiet.error.startswith("denied: ATTACH or VACUUM of 'stolen.db'")
    assert verdict.passed is True
    assert not (folder / "stolen.db").exists()
    assert not Path("stolen.db").exists()


def test_ordinary_sql_and_pragmas_still_work(folder: Path) -> None:
    """The guard lets through what setups and tools do: writes, temp tables, connection
    pragmas, reading any pragma; temporary storage is memory."""
    setup = [
        "CREATE TEMP TABLE scratch (y); INSERT INTO scratch VALUES (1)",
        "PRAGMA foreign_keys = OFF",
        "INSERT INTO t SELECT y + 1 FROM scratch",
    ]
    verdict = _verdict(
        folder,
        setup,
        ("add", {"x": 2}),
        ("read_pragma", {"name": "temp_store"}),
        ("read_pragma", {"name": "journal_mode"}),
        ("read_pragma", {"name": "table_info(t)"}),
    )
    assert verdict.error is None
    assert verdict.passed is True
    assert [c.result for c in verdict.calls] == [
        2,
        [[2]],  # temp_store 2: MEMORY
        [["memory"]],
        [[0, "x", "INTEGER", 0, None, 0]],
    ]


def test_the_replay_command_says_where_a_denied_setup_stopped(folder: Path) -> None:
    store = folder / "store.db"
    before = _sha256(store)
    setup = [f"ATTACH '{store}' AS v", "INSERT INTO v.t VALUES (666)"]
    cases = _write_jsonl(folder / "cases.jsonl", [{"id": "c", "plans": [], "setup": setup}])
    outputs = _write_jsonl(folder / "outputs.jsonl", [{"id": "c", "calls": []}])
    result = CliRunner().invoke(
        cli,
        ["replay", "--specs", str(folder / "tools.json"), "--cases", cases, "--outputs", outputs,
         "--case", "c", "--tool-timeout", "5"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"replay stopped at setup[0]: denied: ATTACH or VACUUM of {str(store)!r} "
        "(a replay works on a private in-memory copy and never opens a file)\n"
    )
    assert _sha256(store) == before
