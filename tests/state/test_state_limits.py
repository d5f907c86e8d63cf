"""Tools that never return, or end the process (issue 11, item 4): a time limit per call,
and `sys.exit` / KeyboardInterrupt from tool code reported clearly.

Limits are short (0.2 s) so that the tests are quick. The command-line tests run toolscore
in a subprocess with a generous `timeout=`: a hang fails the test instead of stalling the
suite, and `sys.exit` in a tool would end that process, not pytest's.
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import toolscore
from toolscore import Case, parse_case, parse_output, parse_specs
from toolscore.cli.app import cli
from toolscore.errors import CaseError, InputError, ReplayInterrupted, SpecError
from toolscore.specs.loading import MAX_TIMEOUT
from toolscore.state import Environment, StateVerdict, check_state, load_environment

LIMIT = 0.2
STORE = "CREATE TABLE t (x INTEGER);\nINSERT INTO t VALUES (1);\n"
FOREVER = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"

TOOLS = f"""\
import signal
import sqlite3
import sys
import time


def add(db, x):
    db.execute("INSERT INTO t VALUES (?)", (x,))
    return x


def spin(db, x):
    db.execute("INSERT INTO t VALUES (?)", (x,))
    while True:
        pass


def stubborn(db):
    while True:
        try:
            db.execute("{FOREVER}").fetchone()
        except Exception:
            pass


def long_query(db):
    return db.execute("{FOREVER}").fetchone()[0]


def nap(db):
    time.sleep(60)


def leave(db, code):
    db.execute("INSERT INTO t VALUES (99)")
    sys.exit(code)


def interrupt(db):
    raise KeyboardInterrupt


def ring(db):
    signal.raise_signal(signal.SIGALRM)
    return "rang"
"""

SPEC: dict[str, Any] = {
    "version": "1",
    "tools": {
        "add": {"args": {"x": "exact"}},
        "spin": {"args": {"x": "exact"}},
        "stubborn": {"args": {}},
        "long_query": {"args": {}},
        "nap": {"args": {}},
        "leave": {"args": {"code": "ignored"}},
        "interrupt": {"args": {}},
        "ring": {"args": {}},
    },
    "environment": {"database": "store.sql", "tools": "tools.py", "timeout": LIMIT},
}


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """Should a regression let a tool hang, end pytest loudly (with every thread's traceback)
    after a minute rather than stall the suite: faulthandler's watchdog is a C thread, apart
    from the signals under test."""
    faulthandler.dump_traceback_later(60, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "store.sql").write_text(STORE, encoding="utf-8")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(SPEC), encoding="utf-8")
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


def _verdict(env: Environment, *produced: tuple[str, dict[str, Any]], **case: Any) -> StateVerdict:
    calls = [{"name": name, "args": args} for name, args in produced]
    return check_state(env, _case(case), parse_output({"id": "c", "calls": calls}).calls, None)


TIMED_OUT = f"timed out: did not return within {LIMIT:g} s (the time limit per call)"


@pytest.mark.parametrize("tool", ["spin", "stubborn", "long_query", "nap"])
def test_a_call_past_the_limit_is_that_call_s_error_and_replay_goes_on(
    folder: Path, tool: str
) -> None:
    """A Python loop, a loop that catches the aborted query's error, a query that never
    ends, a sleep: each is stopped, recorded, rolled back; the next call runs."""
    args = {"x": 5} if tool == "spin" else {}
    verdict = _verdict(_env(folder), (tool, args), ("add", {"x": 2}))
    stopped, added = verdict.calls
    assert stopped.error == TIMED_OUT
    assert added.error is None
    assert verdict.passed is True  # spin's 5 was rolled back with its call


def test_the_alarm_handler_and_timer_are_restored_after_a_replay(folder: Path) -> None:
    before = signal.getsignal(signal.SIGALRM)
    _verdict(_env(folder), ("spin", {"x": 5}))
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_sigalrm_that_is_not_the_time_limit_s_does_not_stop_the_call(folder: Path) -> None:
    verdict = _verdict(_env(folder, timeout=30), ("ring", {}))
    assert verdict.calls[0].result == "rang"
    assert verdict.calls[0].error is None


def test_a_timer_already_in_use_is_left_alone_and_sql_is_still_stopped(folder: Path) -> None:
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 100)
        verdict = _verdict(_env(folder), ("long_query", {}))
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 90 < remaining <= 100
        assert verdict.calls[0].error == TIMED_OUT
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert fired == []


def test_off_the_main_thread_a_long_query_is_still_stopped(folder: Path) -> None:
    env = _env(folder)
    found: list[StateVerdict] = []
    worker = threading.Thread(target=lambda: found.append(_verdict(env, ("long_query", {}))))
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert found[0].calls[0].error == TIMED_OUT


def test_a_long_query_in_setup_stops_the_case_not_the_run(folder: Path) -> None:
    verdict = _verdict(_env(folder), ("add", {"x": 2}), setup=["INSERT INTO t VALUES (3)", FOREVER])
    assert verdict.passed is False
    assert verdict.error == f"setup[1]: {TIMED_OUT}"


def test_a_setup_call_or_a_plan_call_past_the_limit_stops_the_case(folder: Path) -> None:
    env = _env(folder)
    setup = _verdict(env, ("add", {"x": 2}), setup=[{"name": "spin", "args": {"x": 1}}])
    assert setup.error == f"setup[0]: {TIMED_OUT}"
    plan = [[{"name": "add", "args": {"x": 2}}, {"name": "long_query", "args": {}}]]
    planned = _verdict(env, ("add", {"x": 2}), plans=plan)
    assert planned.passed is False
    assert planned.error == f"plans[0][1] (long_query): {TIMED_OUT}"
    assert [c.result for c in planned.calls] == [2]  # the agent's calls were replayed


def test_sys_exit_in_a_tool_is_that_call_s_error(folder: Path) -> None:
    verdict = _verdict(
        _env(folder), ("leave", {"code": 3}), ("leave", {"code": None}), ("add", {"x": 2})
    )
    assert [c.error for c in verdict.calls] == [
        "SystemExit: the tool called sys.exit(3)",
        "SystemExit: the tool called sys.exit()",
        None,
    ]
    assert verdict.passed is True  # both 99s were rolled back


def test_sys_exit_in_a_setup_call_is_an_error_naming_the_case(folder: Path) -> None:
    with pytest.raises(CaseError, match=r"setup\[0\]: case 'c': leave raised SystemExit: the "):
        _verdict(_env(folder), setup=[{"name": "leave", "args": {"code": 4}}])


def test_a_keyboard_interrupt_in_a_tool_says_where_and_exits_130(folder: Path) -> None:
    with pytest.raises(ReplayInterrupted) as caught:
        _verdict(_env(folder), ("add", {"x": 2}), ("interrupt", {}))
    assert str(caught.value) == "interrupted during case 'c', call 1 (interrupt)"
    cases, outputs = _files(folder, {"c": [("interrupt", {})]})
    result = CliRunner().invoke(cli, ["score", *_args(folder, cases, outputs), "--env"])
    assert result.exit_code == 130
    assert result.output == "toolscore: interrupted during case 'c', call 0 (interrupt)\n"


@pytest.mark.parametrize("value", [0, -1, "10", True, math.nan, math.inf, MAX_TIMEOUT + 1, None])
def test_the_timeout_is_validated_when_the_spec_and_the_environment_load(
    folder: Path, value: Any
) -> None:
    message = "must be a number of seconds above 0 and at most 86,400"
    specs, errors = parse_specs({**SPEC, "environment": {**SPEC["environment"], "timeout": value}})
    assert specs is None
    assert isinstance(errors[0], SpecError)
    assert errors[0].field == "environment.timeout"
    assert message in errors[0].message
    with pytest.raises(InputError, match=f"environment.timeout: {message}"):
        _env(folder, timeout=value)


def test_the_default_and_the_override_are_in_the_report(folder: Path) -> None:
    block = {k: v for k, v in SPEC["environment"].items() if k != "timeout"}
    assert load_environment(block, folder, "t").describe()["timeout"] == 10.0
    cases, outputs = _files(folder, {"c": [("add", {"x": 2})]})
    report = folder / "report.json"
    args = [*_args(folder, cases, outputs), "--env", "--tool-timeout", "3", "--json", str(report)]
    assert CliRunner().invoke(cli, ["score", *args]).exit_code == 0
    assert json.loads(report.read_text())["environment"]["timeout"] == 3.0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--env", "--tool-timeout", "0"], "Invalid value for '--tool-timeout'"),
        (["--tool-timeout", "1"], "--tool-timeout applies to replay: add --env"),
    ],
)
def test_bad_tool_timeout_options_are_usage_errors(
    folder: Path, extra: list[str], message: str
) -> None:
    cases, outputs = _files(folder, {"c": []})
    result = CliRunner().invoke(cli, ["score", *_args(folder, cases, outputs), *extra])
    assert result.exit_code == 2
    assert message in result.output


# --- the command line, in a subprocess ----------------------------------------------------


def _files(folder: Path, agents: dict[str, list[tuple[str, dict[str, Any]]]]) -> tuple[Path, Path]:
    plan = [[{"name": "add", "args": {"x": 2}}]]
    cases = folder / "cases.jsonl"
    outputs = folder / "outputs.jsonl"
    cases.write_text(
        "".join(json.dumps({"id": i, "plans": plan, "goal_state": "plan"}) + "\n" for i in agents),
        encoding="utf-8",
    )
    outputs.write_text(
        "".join(
            json.dumps({"id": i, "calls": [{"name": n, "args": a} for n, a in calls]}) + "\n"
            for i, calls in agents.items()
        ),
        encoding="utf-8",
    )
    return cases, outputs


def _args(folder: Path, cases: Path, outputs: Path) -> list[str]:
    return ["--specs", str(folder / "tools.json"), "--cases", str(cases), "--outputs", str(outputs)]


def _toolscore(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the command line on the toolscore these tests import, in a process of its own."""
    command = [sys.executable, "-c", "from toolscore.cli.app import main; main()", *args]
    source = str(Path(toolscore.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": source}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, env=env
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_score_env_scores_every_case_around_a_tool_that_never_returns(
    folder: Path, workers: str
) -> None:
    agents = {
        "before": [("add", {"x": 2})],
        "loops": [("spin", {"x": 2}), ("add", {"x": 2})],
        "exits": [("leave", {"code": 7}), ("add", {"x": 2})],
        "after": [("add", {"x": 2})],
    }
    cases, outputs = _files(folder, agents)
    report = folder / "report.json"
    done = _toolscore(
        "score", *_args(folder, cases, outputs), "--env", "--workers", workers,
        "--json", str(report),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    by_id = {case["id"]: case for case in json.loads(report.read_text())["cases"]}
    assert list(by_id) == list(agents)
    assert [by_id[i]["state_passed"] for i in agents] == [True, True, True, True]
    assert by_id["loops"]["state"]["calls"][0]["error"] == TIMED_OUT
    assert by_id["exits"]["state"]["calls"][0]["error"] == "SystemExit: the tool called sys.exit(7)"


def test_sys_exit_when_the_tools_module_is_imported_is_one_input_error_line(folder: Path) -> None:
    (folder / "tools.py").write_text("import sys\nsys.exit(5)\n", encoding="utf-8")
    cases, outputs = _files(folder, {"c": []})
    done = _toolscore("score", *_args(folder, cases, outputs), "--env")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"toolscore: error: {folder / 'tools.json'}: environment.tools: cannot import "
        "'tools.py': it called sys.exit(5) on import\n"
    )
