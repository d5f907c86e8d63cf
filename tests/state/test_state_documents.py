"""Document environments (`kind: documents`): the golden cases under tests/state_docs/golden/,
and the properties no single case shows (isolation, time limits, bounded diffs, bad blocks).

A golden file holds an `environment` (keys merged over the fixture's block in
tests/state_docs/tools.yaml) and cases, each with `plans`, the agent's `produced` calls and
what the verdict must say: `passed`, the diff's `diff` lines, and optionally its `changes`
(JSON), `errors` (each replayed call's error or null), `plan_errors`, `terminal`,
`plan_not_replayed`, `notes`, `plan`, `hashes_equal`; a case's own `environment` replaces the
file's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from document_envs import DOCS, _spec_data, env, make_case, produced
from toolscore import parse_case, parse_output, parse_specs
from toolscore.cli.app import cli
from toolscore.errors import ReplayInterrupted
from toolscore.state import DocumentDiff, check_state, load_environment
from toolscore.state.document_hash import document_hash
from toolscore.state.documents_verdict import replay_documents
from toolscore.state.pointer_diff import MAX_CHANGES, diff_documents

GOLDEN = DOCS / "golden"


def _golden() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    found = []
    for path in sorted(GOLDEN.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in data["cases"]:
            found.append((f"{path.stem}/{item['description']}", data["environment"], item))
    return found


@pytest.mark.parametrize(
    ("name", "environment", "item"), _golden(), ids=[name for name, _, _ in _golden()]
)
def test_golden(name: str, environment: dict[str, Any], item: dict[str, Any]) -> None:
    verdict = check_state(
        env(**item.get("environment", environment)),
        make_case(item),
        produced(item["produced"]),
        None,
    )
    data = verdict.to_json()
    assert verdict.passed is item["passed"]
    assert verdict.diff is not None
    assert verdict.diff.lines() == item["diff"]
    if "changes" in item:
        assert data["diff"]["changes"] == item["changes"]
    if "errors" in item:
        assert [call.error for call in verdict.calls] == item["errors"]
    assert data.get("plan_errors", []) == item.get("plan_errors", [])
    assert data.get("terminal") == item.get("terminal")
    assert data.get("plan_not_replayed", 0) == item.get("plan_not_replayed", 0)
    if "notes" in item:
        assert verdict.notes() == item["notes"]
    if "plan" in item:
        assert verdict.plan == item["plan"]
    if "hashes_equal" in item:
        assert verdict.hashes is not None
        assert (verdict.hashes[0] == verdict.hashes[1]) is item["hashes_equal"]


def test_every_golden_topic_has_a_file() -> None:
    topics = {path.stem for path in GOLDEN.glob("*.json")}
    assert topics >= {
        "diffs", "ignore", "numbers", "numbers_typed", "errors_rollback", "errors_keep",
        "plan_failing", "terminal",
    }  # fmt: skip


# --- isolation: every replay has its own copy; the user's data never changes ----------------


def test_cases_never_see_each_other_s_changes_and_the_data_file_is_untouched() -> None:
    before = (DOCS / "data.json").read_bytes()
    fixture = env()
    writes = make_case({"plans": [[]]}, "writes")
    calls = produced([{"name": "cancel_order", "args": {"order_id": "#W1"}}])
    assert check_state(fixture, writes, calls, None).passed is False
    reads = make_case({"plans": [[]]}, "reads")
    look = produced([{"name": "get_order", "args": {"order_id": "#W1"}}])
    verdict = check_state(fixture, reads, look, None)
    assert verdict.passed is True
    assert verdict.calls[0].result["status"] == "pending"
    assert fixture.fresh() == json.loads(before)
    assert (DOCS / "data.json").read_bytes() == before


def test_a_rolled_back_call_leaves_the_state_as_it_was_before_it() -> None:
    calls = produced(
        [
            {"name": "charge", "args": {"user_id": "u2", "amount": 5}},
            {"name": "charge", "args": {"user_id": "u2", "amount": 30}},
        ]
    )
    final, outcomes = replay_documents(env(), make_case({}), calls)
    assert [o.error for o in outcomes] == [None, "Error: insufficient balance"]
    assert final["users"]["u2"]["balance"] == 15


OBJECTS = {
    "data": "objects.py:make_state",
    "tools": "objects.py",
    "snapshot": "objects.py:snapshot",
}


def test_python_objects_are_deep_copied_and_compared_through_their_snapshot() -> None:
    fixture = env(error_prefix=None, **OBJECTS)
    assert fixture.image is None  # not plain JSON: deep-copied for each replay
    objects = __import__(fixture.tools["write_file"].function.__module__)
    shared = objects.SHARED
    spec, _ = parse_specs(
        {"tools": {"write_file": {"args": {"name": "exact", "text": "exact"}}, "broken": {}}},
        "objects.yaml",
    )
    assert spec is not None
    case = parse_case({"id": "o", "plans": [[]], "goal_state": "plan"}, spec, "c.jsonl", 1)
    calls = parse_output(
        {"id": "o", "calls": [{"name": "write_file", "args": {"name": "a/b", "text": "x"}}]}
    ).calls
    verdict = check_state(fixture, case, calls, None)
    assert verdict.diff is not None
    assert verdict.diff.lines() == ["added /fs/files/a~1b: 'x' (not in the goal)"]
    broken = parse_output({"id": "o", "calls": [{"name": "broken", "args": {}}]}).calls
    rolled_back = check_state(fixture, case, broken, None)
    assert (rolled_back.passed, rolled_back.calls[0].error) == (True, "OSError: disk full")
    kept = check_state(env(error_prefix=None, on_error="keep", **OBJECTS), case, broken, None)
    assert kept.diff is not None
    assert kept.diff.lines() == ["added /fs/files/half.txt: 'x' (not in the goal)"]
    assert shared.files == {"readme.txt": "hello"}  # the user's object never changed


# --- limits: the time limit, Ctrl-C, huge and deep states ------------------------------------


def test_a_tool_that_loops_forever_is_stopped_and_replay_goes_on() -> None:
    fixture = env(timeout=0.2)
    calls = produced(
        [
            {"name": "loop_forever", "args": {}},
            {"name": "set_setting", "args": {"key": "k", "value": 1}},
        ]
    )
    verdict = check_state(fixture, make_case({"plans": [[]]}), calls, None)
    error = verdict.calls[0].error
    assert error is not None
    assert error.startswith("timed out: did not return within 0.2 s")
    assert verdict.diff is not None
    assert verdict.diff.lines() == ["added /settings/k: 1 (not in the goal)"]  # spin undone


def test_a_keyboard_interrupt_in_a_tool_stops_the_run_naming_the_call() -> None:
    calls = produced([{"name": "interrupt", "args": {}}])
    with pytest.raises(ReplayInterrupted, match=r"case 'c', call 0 \(interrupt\)"):
        check_state(env(), make_case({"plans": [[]]}), calls, None)


def test_a_deeply_nested_state_is_diffed_and_hashed_without_recursion() -> None:
    depth = 50_000
    calls = produced([{"name": "nest", "args": {"depth": depth}}])
    deeper = produced(
        [
            {"name": "nest", "args": {"depth": depth}},
            {"name": "charge", "args": {"user_id": "u2", "amount": 99}},
        ]
    )
    rolled_back = check_state(env(), make_case({"plans": [[]]}), deeper, None)  # copied first
    assert rolled_back.calls[1].error == "Error: insufficient balance"
    assert isinstance(rolled_back.diff, DocumentDiff)
    assert len(rolled_back.diff.changes) == 1
    for compare in ("diff", "exact"):
        verdict = check_state(env(compare=compare), make_case({"plans": [[]]}), calls, None)
        assert verdict.passed is False
        assert verdict.diff is not None
        (line,) = verdict.diff.lines()
        assert line == 'added /settings/deep: {"$elided":"an object of 1 key"} (not in the goal)'
    nested = make_case({"plans": [[{"name": "nest", "args": {"depth": depth + 1}}]]})
    verdict = check_state(env(), nested, calls, None)
    assert isinstance(verdict.diff, DocumentDiff)
    removed, added = verdict.diff.changes
    # /settings, then `depth` times /deep, then /leaf: the last 200 segments are shown
    assert removed.path == f"/…{depth + 2 - 200} levels…" + "/deep" * 200
    assert added.path == f"/…{depth + 2 - 200} levels…" + "/deep" * 199 + "/leaf"
    assert (removed.goal, added.final) == ({"leaf": depth + 1}, depth)


def test_a_huge_diff_lists_a_bounded_number_of_paths_and_counts_the_rest() -> None:
    goal = {"rows": [{"n": i} for i in range(30_000)]}
    final = {"rows": [{"n": i + 1} for i in range(30_000)]}
    diff = diff_documents(goal, final)
    assert len(diff.changes) == MAX_CHANGES
    assert diff.unlisted == 30_000 - MAX_CHANGES
    assert diff.lines()[-1] == f"... and {30_000 - MAX_CHANGES} more changed paths, not listed"
    assert diff.to_json()["unlisted"] == 30_000 - MAX_CHANGES
    assert diff.changes[0].path == "/rows/0/n"


# --- the command line: scoring with a documents environment, and bad blocks -----------------


def _inputs(tmp_path: Path) -> list[str]:
    cases = [
        {"id": "cancel", "plans": [[{"name": "cancel_order", "args": {"order_id": "#W1"}}]],
         "goal_state": "plan", "tags": []},
        {"id": "price", "plans": [[{"name": "set_price",
                                    "args": {"order_id": "#W1", "item": 1, "price": 6}}]],
         "goal_state": "plan", "tags": []},
    ]  # fmt: skip
    outputs = [
        {"id": "cancel", "calls": [{"name": "cancel_order", "args": {"order_id": "#W1"}}]},
        {"id": "price", "calls": [{"name": "set_price",
                                   "args": {"order_id": "#W1", "item": 1, "price": 7}}]},
    ]  # fmt: skip
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))
    return [
        "score", "--specs", str(DOCS / "tools.yaml"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--env",
    ]  # fmt: skip


def test_score_with_a_documents_environment_reports_pointer_diffs(tmp_path: Path) -> None:
    args = _inputs(tmp_path)
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    result = CliRunner().invoke(cli, [*args, "--json", str(one)])
    assert result.exit_code == 0, result.output
    assert "changed /orders/#W1/items/1/price: goal 6, final 7" in result.output
    report = json.loads(one.read_text())
    assert report["environment"]["kind"] == "documents"
    assert report["environment"]["error_prefix"] == "Error:"
    by_id = {case["id"]: case for case in report["cases"]}
    assert by_id["cancel"]["state_passed"] is True
    assert by_id["price"]["state"]["diff"] == {
        "passed": False,
        "changes": [
            {"path": "/orders/#W1/items/1/price", "kind": "changed", "goal": 6, "final": 7}
        ],
    }
    result = CliRunner().invoke(cli, [*args, "--json", str(two), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert json.loads(two.read_text())["cases"] == report["cases"]


def test_replay_shows_the_changes_from_the_initial_data(tmp_path: Path) -> None:
    _inputs(tmp_path)
    result = CliRunner().invoke(
        cli,
        ["replay", "--specs", str(DOCS / "tools.yaml"), "--outputs",
         str(tmp_path / "outputs.jsonl"), "--case", "price"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "changed /orders/#W1/items/1/price: goal 5, final 7"


@pytest.mark.parametrize(
    ("block", "field", "message"),
    [
        ({"kind": "couchdb"}, "environment.kind", "must be 'sqlite' or 'documents', got 'couchdb'"),
        ({"data": "nope.json"}, "environment.data", "no such file: "),
        ({"data": 3}, "environment.data", "required: a JSON file or 'module:function'"),
        ({"data": "data.txt"}, "environment.data", "must be a .json file or 'module:function'"),
        ({"data": "tools.py:interrupt"}, "environment.data", "tools.py:interrupt raised TypeError"),
        ({"data": "tools.py:nothing"}, "environment.data", "'tools.py' has no function 'nothing'"),
        ({"numbers": "exact"}, "environment.numbers", "must be 'numeric' or 'typed', got 'exact'"),
        ({"ignore": ["orders/*"]}, "environment.ignore[0]", "not a JSON pointer: 'orders/*'"),
        ({"ignore": ["/a", "/a/~2"]}, "environment.ignore[1]", "not a JSON pointer: '/a/~2'"),
        ({"ignore": "/a"}, "environment.ignore", "must be a list of JSON pointers"),
        ({"on_error": "retry"}, "environment.on_error", "must be 'rollback' or 'keep'"),
        ({"error_prefix": ""}, "environment.error_prefix", "must be a non-empty string"),
        ({"terminal_tools": ["transfer"]}, "environment.terminal_tools",
         "the tools module has no function 'transfer'"),
        ({"database": "x.sql"}, "environment.database", "unknown key"),
    ],
)  # fmt: skip
def test_a_bad_documents_block_is_one_line_naming_file_and_field(
    tmp_path: Path, block: dict[str, Any], field: str, message: str
) -> None:
    env_file = tmp_path / "env.yaml"
    config = {**_spec_data()["environment"], **block}
    config["data"] = block.get("data", str(DOCS / "data.json"))  # relative: to env.yaml
    config["tools"] = str(DOCS / "tools.py")
    (tmp_path / "tools.py").write_text((DOCS / "tools.py").read_text())
    env_file.write_text(yaml.safe_dump({"environment": config}))
    args = _inputs(tmp_path)
    result = CliRunner().invoke(cli, [*args[:-1], "--env", str(env_file)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"toolscore: error: {env_file}: {field}: "), lines[0]
    assert message in lines[0]


# --- the same error semantics on SQLite -----------------------------------------------------

SQLITE_TOOLS = """\
def deposit(db, account, amount):
    db.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", (amount, account))
    if amount > 50:
        raise ValueError("over the limit")
    return "ok"


def withdraw(db, account, amount):
    db.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", (amount, account))
    (balance,) = db.execute("SELECT balance FROM accounts WHERE id = ?", (account,)).fetchone()
    return "Error: insufficient funds" if balance < 0 else balance


def hand_over(db):
    return "handed over"
"""
SQLITE_SPEC: dict[str, Any] = {
    "tools": {
        "deposit": {"args": {"account": "exact", "amount": "number"}},
        "withdraw": {"args": {"account": "exact", "amount": "number"}},
        "hand_over": {},
    }
}


def _sqlite(tmp_path: Path, **config: Any) -> Any:
    (tmp_path / "store.sql").write_text(
        "CREATE TABLE accounts (id TEXT PRIMARY KEY, balance);\n"
        "INSERT INTO accounts VALUES ('a', 10);\n"
    )
    (tmp_path / "tools.py").write_text(SQLITE_TOOLS)
    block = {"database": "store.sql", "tools": "tools.py", **config}
    return load_environment(block, tmp_path, "tools.yaml")


def _sqlite_verdict(env: Any, plan: list[dict[str, Any]], made: list[dict[str, Any]]) -> Any:
    spec, _ = parse_specs(SQLITE_SPEC, "tools.yaml")
    assert spec is not None
    case = parse_case({"id": "s", "plans": [plan], "goal_state": "plan"}, spec, "c.jsonl", 1)
    return check_state(env, case, parse_output({"id": "s", "calls": made}).calls, None)


def test_sqlite_keeps_a_failed_call_s_changes_under_on_error_keep(tmp_path: Path) -> None:
    over = [{"name": "deposit", "args": {"account": "a", "amount": 60}}]
    rolled_back = _sqlite_verdict(_sqlite(tmp_path), [], over)
    assert (rolled_back.passed, rolled_back.calls[0].error) == (True, "ValueError: over the limit")
    kept = _sqlite_verdict(_sqlite(tmp_path, on_error="keep"), [], over)
    assert kept.passed is False
    assert kept.diff.lines() == ["accounts: changed id='a': balance: goal 10, final 70"]
    same = _sqlite_verdict(_sqlite(tmp_path, on_error="keep"), over, over)
    assert same.passed is True
    assert same.to_json()["plan_errors"] == [
        {"call": 0, "name": "deposit", "error": "ValueError: over the limit"}
    ]


def test_sqlite_error_values_and_terminal_tools(tmp_path: Path) -> None:
    overdraw = [{"name": "withdraw", "args": {"account": "a", "amount": 30}}]
    plain = _sqlite_verdict(_sqlite(tmp_path), [], overdraw)
    assert (plain.passed, plain.calls[0].error) == (False, None)  # a string like any other
    prefixed = _sqlite_verdict(_sqlite(tmp_path, error_prefix="Error:"), [], overdraw)
    assert (prefixed.passed, prefixed.calls[0].error) == (True, "Error: insufficient funds")
    kept = _sqlite_verdict(_sqlite(tmp_path, error_prefix="Error:", on_error="keep"), [], overdraw)
    assert (kept.passed, kept.calls[0].error) == (False, "Error: insufficient funds")
    ended = _sqlite_verdict(
        _sqlite(tmp_path, terminal_tools=["hand_over"]),
        [{"name": "hand_over"}],
        [{"name": "hand_over", "args": {}}, *overdraw],
    )
    assert ended.passed is True
    assert ended.to_json()["terminal"] == {"call": 0, "name": "hand_over", "not_replayed": 1}


def test_sqlite_numbers_typed_keeps_2_and_2_0_apart_as_documents_do(tmp_path: Path) -> None:
    as_float = [{"name": "deposit", "args": {"account": "a", "amount": 2.0}}]
    as_int = [{"name": "deposit", "args": {"account": "a", "amount": 2}}]
    assert _sqlite_verdict(_sqlite(tmp_path), as_float, as_int).passed is True
    for compare in ("diff", "exact"):
        typed = _sqlite_verdict(
            _sqlite(tmp_path, numbers="typed", compare=compare), as_float, as_int
        )
        assert typed.passed is False
        assert typed.diff.lines() == ["accounts: changed id='a': balance: goal 12.0, final 12"]
        if compare == "exact":
            assert typed.hashes[0] != typed.hashes[1]
    # the plan replayed (its arguments differ) reaches the agent's typed state: equal
    also_int = [{"name": "deposit", "args": {"account": "a", "amount": 1}}] * 2
    assert _sqlite_verdict(_sqlite(tmp_path, numbers="typed"), as_int, also_int).passed is True


def test_the_fast_hash_of_typed_documents_is_the_walked_one() -> None:
    data = json.loads((DOCS / "data.json").read_text())
    data["settings"] = {"é": 1, "z": [2.0, True, None], "A": {"b~/": "x"}, "": 0.1}
    walked = document_hash(data, [("nothing",)], typed=True)  # an ignore forces the walk
    assert document_hash(data, typed=True) == walked
    assert document_hash(data) != walked  # numeric: 10.0 is hashed as 10


def test_plain_data_from_a_function_is_copied_and_never_changed() -> None:
    fixture = env(error_prefix=None, data="objects.py:plain_state", tools="objects.py")
    assert fixture.image is not None  # plain JSON: parsed afresh for each replay
    module = __import__(fixture.tools["write_plain"].function.__module__)
    spec, _ = parse_specs(
        {"tools": {"write_plain": {"args": {"name": "exact", "text": "exact"}}}}, "o"
    )
    assert spec is not None
    case = parse_case({"id": "p", "plans": [[]], "goal_state": "plan"}, spec, "c.jsonl", 1)
    write = [{"name": "write_plain", "args": {"name": "new.txt", "text": "x"}}]
    for _ in range(2):  # the second replay starts from the same data as the first
        verdict = check_state(fixture, case, parse_output({"id": "p", "calls": write}).calls, None)
        assert verdict.diff is not None
        assert verdict.diff.lines() == ["added /fs/files/new.txt: 'x' (not in the goal)"]
    assert module.PLAIN == {"fs": {"files": {"readme.txt": "hello"}, "cwd": "/"}}


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 0.1, 1e-13, 0.30000000000000004, 1e16, 2.5]),
    st.sampled_from(["", "a", "A", "~/", "é"]),
)
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "~1", "x/y"]), inner, max_size=3)
    ),
    max_leaves=12,
)
_IGNORES = st.lists(
    st.lists(st.sampled_from(["a", "b", "*", "0", "x/y"]), min_size=1, max_size=3).map(tuple),
    max_size=2,
)


@settings(max_examples=400, deadline=None)
@given(goal=_DOCUMENTS, final=_DOCUMENTS, ignore=_IGNORES, typed=st.booleans())
def test_equal_hashes_mean_an_empty_diff(
    goal: Any, final: Any, ignore: list[tuple[str, ...]], typed: bool
) -> None:
    """`compare: exact` skips the diff when the hashes agree (the verdict is the hashes'
    either way): sound only if equal hashes never hide a difference the diff would list."""
    same_hash = document_hash(goal, ignore, typed) == document_hash(final, ignore, typed)
    diff = diff_documents(goal, final, ignore, typed)
    if same_hash:
        assert diff.passed, diff
    if diff.passed:
        assert same_hash


def test_typed_numbers_keep_minus_zero_apart_as_the_typed_hash_does() -> None:
    """Hypothesis found `0.0` against `-0.0`: the typed hash (of the numbers' text) told them
    apart while the diff called them equal, so `compare: exact` and `diff` disagreed."""
    goal, final = {"a": [0.0]}, {"a": [-0.0]}
    assert document_hash(goal, [], True) != document_hash(final, [], True)
    assert [c.path for c in diff_documents(goal, final, [], True).changes] == ["/a/0"]
    assert diff_documents(goal, final, [], False).passed  # as numbers they are equal
    assert document_hash(goal, [], False) == document_hash(final, [], False)
