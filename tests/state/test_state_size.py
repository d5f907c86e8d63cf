"""A replay's database is bounded in size (issue 25, item 1): `max_size_mb` caps main, temp
and any one value, the cap cannot be moved from SQL, and a setup or plan past it is the
case's state error while an agent's call past it is that call's error."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore import Case, parse_case, parse_output, parse_specs
from toolscore.cli.app import cli
from toolscore.errors import InputError
from toolscore.state import Environment, StateVerdict, check_state, load_environment
from toolscore.state.size import DEFAULT_MAX_SIZE_MB
from toolscore.state.touched import full_copies

SUPPORT = Path(__file__).parents[2] / "examples" / "support" / "env"
BLOB = 900_000
"""Bytes of one blob: one fits under a 1 MB cap, two do not."""

TOOLS = """\
def add(db, x):
    db.execute("INSERT INTO t VALUES (?)", (x,))
    return x


def run_sql(db, sql):
    db.executescript(sql)
    return "ran"


def blob(db, n):
    db.execute("INSERT INTO t SELECT randomblob(?)", (n,))
    return n
"""

SPEC: dict[str, Any] = {
    "version": "1",
    "tools": {
        "add": {"args": {"x": "exact"}},
        "run_sql": {"args": {"sql": "exact"}},
        "blob": {"args": {"n": "exact"}},
    },
    "environment": {"database": "store.sql", "tools": "tools.py", "max_size_mb": 1},
}


@pytest.fixture(params=["workspace", "full copies"])
def paths(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test runs on the shared workspace and on private full copies alike."""
    if request.param == "workspace":
        yield
    else:
        with full_copies():
            yield


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "store.sql").write_text("CREATE TABLE t (x);\n", encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    return tmp_path


def _env(folder: Path, **config: Any) -> Environment:
    env = load_environment({**SPEC["environment"], **config}, folder, "tools.json")
    assert isinstance(env, Environment)
    return env


def _case(data: dict[str, Any]) -> Case:
    specs, errors = parse_specs(SPEC, "tools.json")
    assert specs is not None, errors
    line = {"id": "c", "plans": [[{"name": "add", "args": {"x": 2}}]], "goal_state": "plan"}
    return parse_case({**line, **data}, specs, "cases.jsonl", 1)


def _verdict(
    folder: Path, data: dict[str, Any], *produced: tuple[str, dict[str, Any]]
) -> StateVerdict:
    calls = [{"name": name, "args": args} for name, args in produced]
    trajectory = parse_output({"id": "c", "calls": calls})
    return check_state(_env(folder), _case(data), trajectory.calls, None)


CAP = "(a replay's database holds at most 1 MB: the environment's max_size_mb)"


def test_the_reproducer_a_huge_randomblob_in_setup_is_the_cases_state_error(
    tmp_path: Path,
) -> None:
    """The issue's reproducer, under the default cap: `CREATE TABLE big(b)` and three
    `INSERT INTO big SELECT randomblob(900000000)` on examples/support/env. The first insert
    is refused before SQLite allocates the blob; the case fails on state, the run goes on."""
    for name in ("tools.yaml", "tools.py", "store.sql", "outputs.jsonl"):
        shutil.copy(SUPPORT / name, tmp_path / name)
    lines = [json.loads(line) for line in (SUPPORT / "cases.jsonl").read_text().splitlines()]
    insert = "INSERT INTO big SELECT randomblob(900000000)"
    lines[0]["setup"] = ["CREATE TABLE big(b)", insert, insert, insert]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = tmp_path / "report.json"
    result = CliRunner().invoke(cli, [
        "score", "--specs", str(tmp_path / "tools.yaml"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--env", "--json", str(report),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    cases = json.loads(report.read_text())["cases"]
    assert cases[0]["state_passed"] is False
    assert cases[0]["state"]["error"] == (
        "setup[1]: over the size cap: DataError: string or blob too big (a replay's database "
        f"holds at most {DEFAULT_MAX_SIZE_MB} MB: the environment's max_size_mb)"
    )
    assert all("error" not in case["state"] for case in cases[1:])


@pytest.mark.usefixtures("paths")
@pytest.mark.parametrize("table", ["t", "temp.u"])
def test_setup_that_fills_main_or_temp_past_the_cap_stops_the_case(
    folder: Path, table: str
) -> None:
    """Blobs each under the cap, together over it: the database is full at the second."""
    create = [] if table == "t" else ["CREATE TEMP TABLE u (x)"]
    insert = f"INSERT INTO {table} SELECT randomblob({BLOB})"
    verdict = _verdict(folder, {"setup": [*create, insert, insert]}, ("add", {"x": 2}))
    assert verdict.passed is False
    assert verdict.error == (
        f"setup[{len(create) + 1}]: over the size cap: OperationalError: database or disk is "
        f"full {CAP}"
    )


@pytest.mark.usefixtures("paths")
def test_one_value_longer_than_the_cap_is_refused_before_it_is_built(folder: Path) -> None:
    verdict = _verdict(folder, {"setup": f"SELECT length(randomblob({2 * BLOB}))"})
    assert verdict.error == (f"setup: over the size cap: DataError: string or blob too big {CAP}")


@pytest.mark.usefixtures("paths")
def test_an_agents_call_past_the_cap_is_that_calls_error_and_replay_goes_on(
    folder: Path,
) -> None:
    verdict = _verdict(folder, {}, ("blob", {"n": BLOB}), ("blob", {"n": BLOB}), ("add", {"x": 2}))
    first, second, added = verdict.calls
    assert first.error is None
    assert second.error == f"over the size cap: OperationalError: database or disk is full {CAP}"
    assert added.error is None
    assert verdict.error is None


@pytest.mark.usefixtures("paths")
def test_a_plan_or_setup_call_past_the_cap_stops_the_case(folder: Path) -> None:
    plan = [[{"name": "blob", "args": {"n": BLOB}}, {"name": "blob", "args": {"n": BLOB}}]]
    verdict = _verdict(folder, {"plans": plan}, ("add", {"x": 2}))
    assert verdict.passed is False
    assert verdict.error == (
        f"plans[0][1] (blob): over the size cap: OperationalError: database or disk is full {CAP}"
    )
    setup = [{"name": "blob", "args": {"n": BLOB}}, {"name": "blob", "args": {"n": BLOB}}]
    verdict = _verdict(folder, {"setup": setup}, ("add", {"x": 2}))
    assert verdict.error == (
        f"setup[1]: over the size cap: OperationalError: database or disk is full {CAP}"
    )


@pytest.mark.usefixtures("paths")
@pytest.mark.parametrize(
    "sql",
    [
        "PRAGMA max_page_count = 2147483646",
        "PRAGMA main.max_page_count = 2147483646",
        "PRAGMA temp.max_page_count = 2147483646",
        "PRAGMA temp.page_size = 65536",
    ],
)
def test_sql_that_would_move_the_cap_is_denied(folder: Path, sql: str) -> None:
    setting = sql.replace("main.", "").replace("temp.", "")
    why = "(a replay's database holds at most the environment's max_size_mb)"
    verdict = _verdict(folder, {"setup": sql}, ("add", {"x": 2}))
    assert verdict.error == f"setup: denied: {setting} {why}"
    verdict = _verdict(folder, {}, ("run_sql", {"sql": sql}), ("add", {"x": 2}))
    assert verdict.calls[0].error == f"denied: {setting} {why}"


@pytest.mark.parametrize("value", [0, -1, 1.5, "64", True, 2**21])
def test_a_bad_cap_is_refused_naming_the_key(folder: Path, value: Any) -> None:
    with pytest.raises(InputError, match="must be a whole number of megabytes") as caught:
        _env(folder, max_size_mb=value)
    assert caught.value.field == "environment.max_size_mb"


def test_a_database_file_larger_than_the_cap_is_refused_at_load(folder: Path) -> None:
    store = sqlite3.connect(folder / "store.db")
    store.executescript("CREATE TABLE t (x); INSERT INTO t SELECT randomblob(1200000);")
    store.close()
    with pytest.raises(InputError, match=r"holds 1\.\d MB, over the cap of 1 MB") as caught:
        _env(folder, database="store.db")
    assert caught.value.field == "environment.max_size_mb"
    assert _env(folder, database="store.db", max_size_mb=2).max_size_mb == 2


def test_the_cap_is_in_the_reports_provenance_only_when_set(folder: Path) -> None:
    assert _env(folder).describe()["max_size_mb"] == 1
    default = load_environment({"database": "store.sql", "tools": "tools.py"}, folder, "tools.json")
    assert isinstance(default, Environment)
    assert default.max_size_mb == DEFAULT_MAX_SIZE_MB
    assert "max_size_mb" not in default.describe()


def test_a_database_script_that_grows_past_the_cap_is_refused_naming_its_line(
    folder: Path,
) -> None:
    """The environment's own `.sql` script is built under the same cap, one line naming the
    statement, before anything is allocated past it."""
    script = f"CREATE TABLE t (x);\nINSERT INTO t VALUES (randomblob({2 * BLOB}));\n"
    (folder / "store.sql").write_text(script, encoding="utf-8")
    with pytest.raises(InputError, match="string or blob too big") as caught:
        _env(folder)
    assert caught.value.line == 2
    assert "over the cap of 1 MB: raise max_size_mb" in str(caught.value)
