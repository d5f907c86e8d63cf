"""A case's `state_checks`: named tests of single values in a state, read and judged.

A check names one place of the state (a document's JSON pointer; a SQLite table, the row a
`where` selects and a column) and one test of it: `equals`, `in`, `matches` (under an
argument rule given inline), `absent` (documents) or `count` (SQLite: the rows `where`
selects). Each back end has one entry point that takes a state and the parsed checks and
returns a result per check (`document_checks`, `sqlite_checks`), so that any state can be
checked: the final one of a case, or one at the end of a turn. No SQL text from a cases file
runs: the one SELECT is built here, its identifiers checked against the schema and quoted,
its values bound as parameters.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from toolscore.core.arguments import iter_mismatches
from toolscore.core.rules import Rule, RuleError, compile_rule
from toolscore.core.values import json_equal, show, suggest
from toolscore.state.goal import cell
from toolscore.state.guard import trusted
from toolscore.state.pointer_diff import parse_pointer
from toolscore.state.replay import Fail
from toolscore.state.snapshot import jsonable, quote, read_all, same

DOCUMENT_TESTS = ("equals", "in", "absent", "matches")
"""The tests a check of a documents environment may make (exactly one per check)."""
SQLITE_TESTS = ("equals", "in", "matches", "count")
"""The tests a check of a SQLite environment may make (exactly one per check)."""
DOCUMENT_CHECK_KEYS = ("name", "path", *DOCUMENT_TESTS, "rule")
"""The keys of a check of a documents environment; any other is an input error."""
SQLITE_CHECK_KEYS = ("name", "table", "where", "column", *SQLITE_TESTS, "rule")
"""The keys of a check of a SQLite environment."""
ROWID_NAMES = ("rowid", "_rowid_", "oid")
"""Names that read a table's rowid where no column shadows them (keys of tables without a
declared primary key)."""


class StateCheck(NamedTuple):
    """One parsed check: its test and what it tests (a pointer, or a table's row and column)."""

    position: int
    """The check's position in the case's `state_checks` (for errors: `state_checks[k]`)."""
    name: str
    test: str
    """One of `DOCUMENT_TESTS` or `SQLITE_TESTS`."""
    expected: Any
    """The test's value: the value `equals` wants, the list `in` takes, the value `matches`
    compares under `rule`, the row count `count` wants (True for `absent`)."""
    rule: Rule | None = None
    path: str = ""
    """Documents: the JSON pointer as written."""
    segments: tuple[str, ...] = ()
    """Documents: the pointer's segments (`~0`, `~1` decoded)."""
    table: str = ""
    where: tuple[tuple[str, Any], ...] = ()
    """SQLite: (column, value) pairs the selected rows hold (values as goal rows give them)."""
    column: str | None = None


class CheckResult(NamedTuple):
    """A check's outcome; `reason` (on a failure) names the place and both values."""

    name: str
    passed: bool
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """`{"name", "passed", "reason"?}`."""
        found: dict[str, Any] = {"name": self.name, "passed": self.passed}
        if self.reason is not None:
            found["reason"] = self.reason
        return found


def parse_checks(node: Any, documents: bool, fail: Fail) -> tuple[StateCheck, ...]:
    """The checks of a case's `state_checks` (None: no check), for a documents environment or
    a SQLite one; an input error names the check and the field of anything ill-formed."""
    if node is None:
        return ()
    if not isinstance(node, list) or not node:
        raise fail("state_checks", "must be a non-empty list of checks {name, ...}")
    seen: set[str] = set()
    found: list[StateCheck] = []
    for k, item in enumerate(node):
        check = _parse_one(k, item, documents, fail)
        if check.name in seen:
            raise fail(f"state_checks[{k}].name", f"two checks are named {check.name!r}")
        seen.add(check.name)
        found.append(check)
    return tuple(found)


def _parse_one(k: int, item: Any, documents: bool, fail: Fail) -> StateCheck:
    at = f"state_checks[{k}]"
    if not isinstance(item, Mapping):
        raise fail(at, "a check must be an object {name, ...}")
    keys = DOCUMENT_CHECK_KEYS if documents else SQLITE_CHECK_KEYS
    for key in item:
        if key == "absent" and not documents:
            raise fail(f"{at}.absent", "a SQLite check says `count: 0` for no row (absent is "
                       "for documents)")  # fmt: skip
        if key not in keys:
            kind = "a documents" if documents else "a SQLite"
            raise fail(f"{at}.{key}", f"unknown key {key!r} of {kind} check"
                       f"{suggest(str(key), list(keys))}")  # fmt: skip
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail(f"{at}.name", "must be a non-empty string")
    tests = [t for t in (DOCUMENT_TESTS if documents else SQLITE_TESTS) if t in item]
    if len(tests) != 1:
        allowed = ", ".join(DOCUMENT_TESTS if documents else SQLITE_TESTS)
        given = f" (it gives {', '.join(tests)})" if tests else ""
        raise fail(at, f"a check makes exactly one test of {allowed}{given}")
    test = tests[0]
    expected = item[test]
    rule = _rule(item, test, f"{at}.rule", fail)
    if test == "in" and (not isinstance(expected, list) or not expected):
        raise fail(f"{at}.in", "must be a non-empty list of values")
    if test == "absent" and expected is not True:
        raise fail(f"{at}.absent", "must be true (the path resolves to nothing)")
    if test == "count" and (
        isinstance(expected, bool) or not isinstance(expected, int) or expected < 0
    ):
        raise fail(f"{at}.count", "must be a whole number of rows (>= 0)")
    check = StateCheck(k, name, test, expected, rule)
    if documents:
        return _document_check(check, item, at, fail)
    return _sqlite_check(check, item, at, fail)


def _rule(item: Mapping[str, Any], test: str, at: str, fail: Fail) -> Rule | None:
    node = item.get("rule")
    if test != "matches":
        if node is not None:
            raise fail(at, "a rule goes with `matches` only")
        return None
    if node is None:
        raise fail(at, "`matches` needs the rule it compares under, e.g. {kind: number, tol: 0.01}")
    try:
        rule = compile_rule(node)
    except RuleError as error:
        raise fail(at, error.message) from None
    if not rule.compared:
        raise fail(at, f"a {rule.kind!r} rule compares nothing: a check needs a compared kind")
    return rule


def _document_check(check: StateCheck, item: Mapping[str, Any], at: str, fail: Fail) -> StateCheck:
    path = item.get("path")
    segments = parse_pointer(path) if isinstance(path, str) else None
    if segments is None:
        raise fail(f"{at}.path", "must be a JSON pointer such as /orders/#W1/status")
    assert isinstance(path, str)
    return check._replace(path=path, segments=segments)


def _sqlite_check(check: StateCheck, item: Mapping[str, Any], at: str, fail: Fail) -> StateCheck:
    table = item.get("table")
    if not isinstance(table, str) or not table:
        raise fail(f"{at}.table", "must be a table name")
    node = item.get("where", {})
    if not isinstance(node, Mapping):
        raise fail(f"{at}.where", "must be an object of column values {column: value}")
    where = tuple(
        (str(column), cell(value, f"{at}.where.{column}", fail)) for column, value in node.items()
    )
    column = item.get("column")
    if check.test == "count":
        if column is not None:
            raise fail(f"{at}.column", "`count` counts rows: it takes no column")
    elif not isinstance(column, str) or not column:
        raise fail(f"{at}.column", f"`{check.test}` tests one column: give its name")
    expected = check.expected
    if check.test == "equals":
        expected = cell(expected, f"{at}.equals", fail)
    elif check.test == "in":
        expected = [cell(v, f"{at}.in[{i}]", fail) for i, v in enumerate(expected)]
    return check._replace(table=table, where=where, column=column, expected=expected)


def check_schema(
    checks: Sequence[StateCheck], columns_of: Mapping[str, Sequence[str]], fail: Fail
) -> None:
    """Refuse a SQLite check naming a table or a column that `columns_of` (every column of
    each table) lacks; a rowid name counts as a column where no column shadows it."""
    for check in checks:
        at = f"state_checks[{check.position}]"
        columns = columns_of.get(check.table)
        if columns is None:
            hint = suggest(check.table, list(columns_of))
            raise fail(f"{at}.table", f"no table {check.table!r} in the database{hint}")
        known = [*columns, *(name for name in ROWID_NAMES if name not in columns)]
        named = [(f"{at}.where.{c}", c) for c, _ in check.where]
        if check.column is not None:
            named.append((f"{at}.column", check.column))
        for where, column in named:
            if column not in known:
                hint = suggest(column, list(columns))
                raise fail(where, f"table {check.table!r} has no column {column!r}{hint}")


def table_columns(db: sqlite3.Connection, tables: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Every column of each of `tables` that `db` holds (a table it lacks is left out)."""
    found: dict[str, tuple[str, ...]] = {}
    for table in tables:
        info = db.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall()
        if info:
            found[table] = tuple(row[0] for row in info)
    return found


def sqlite_checks(
    db: sqlite3.Connection, checks: Sequence[StateCheck], fail: Fail, typed: bool = False
) -> tuple[CheckResult, ...]:
    """Judge SQLite checks on the database `db` holds now (a check naming a table or column
    it lacks is an input error); `typed` is the environment's `numbers: typed`."""
    if not checks:
        return ()
    with trusted(db):
        check_schema(checks, table_columns(db, sorted({c.table for c in checks})), fail)
        return tuple(_sqlite_check_result(db, check, typed) for check in checks)


def _sqlite_check_result(db: sqlite3.Connection, check: StateCheck, typed: bool) -> CheckResult:
    place = _row_words(check)
    condition = " AND ".join(f"{quote(c)} IS ?" for c, _ in check.where) or "1"
    source = f"FROM main.{quote(check.table)} WHERE {condition}"
    values = tuple(v for _, v in check.where)
    if check.test == "count":
        count = db.execute(f"SELECT count(*) {source}", values).fetchone()[0]
        if count == check.expected:
            return CheckResult(check.name, True)
        return CheckResult(
            check.name, False, f"{place}: expected {check.expected} row(s), found {count}"
        )
    assert check.column is not None
    rows = read_all(db, f"SELECT {quote(check.column)} {source} LIMIT 2", values)
    if len(rows) != 1:
        count = db.execute(f"SELECT count(*) {source}", values).fetchone()[0] if rows else 0
        return CheckResult(
            check.name, False, f"{place}: {count} rows (a column test needs exactly one row)"
        )
    value = rows[0][0]
    failure = _failure(check, value, lambda a, b: same(a, b, typed))
    if failure is None:
        return CheckResult(check.name, True)
    return CheckResult(check.name, False, f"{place}, column {check.column}: {failure}")


def _row_words(check: StateCheck) -> str:
    if not check.where:
        return f"table {check.table} (every row)"
    chosen = ", ".join(f"{c}={show(jsonable(v))}" for c, v in check.where)
    return f"table {check.table} where {chosen}"


def document_checks(state: Any, checks: Sequence[StateCheck]) -> tuple[CheckResult, ...]:
    """Judge document checks on a state (its compared form: JSON values)."""
    return tuple(_document_check_result(state, check) for check in checks)


def _document_check_result(state: Any, check: StateCheck) -> CheckResult:
    found, value = resolve(state, check.segments)
    if check.test == "absent":
        if not found:
            return CheckResult(check.name, True)
        found_words = f"{check.path}: expected nothing, found {show(value)}"
        return CheckResult(check.name, False, found_words)
    if not found:
        wanted = _wanted(check)
        return CheckResult(
            check.name, False, f"{check.path}: expected {wanted}, found nothing (no such path)"
        )
    failure = _failure(check, value, json_equal)
    if failure is None:
        return CheckResult(check.name, True)
    return CheckResult(check.name, False, f"{check.path}: {failure}")


def resolve(state: Any, segments: Sequence[str]) -> tuple[bool, Any]:
    """(True, the value) at a pointer's segments, or (False, None) where it leads nowhere:
    a key an object lacks, or a list index (decimal, no leading zero) out of range."""
    value = state
    for segment in segments:
        if isinstance(value, Mapping):
            if segment not in value:
                return False, None
            value = value[segment]
        elif isinstance(value, list | tuple):
            if not _index(segment) or int(segment) >= len(value):
                return False, None
            value = value[int(segment)]
        else:
            return False, None
    return True, value


def _index(segment: str) -> bool:
    return segment.isascii() and segment.isdigit() and (segment == "0" or segment[0] != "0")


def _failure(check: StateCheck, value: Any, equal: Callable[[Any, Any], bool]) -> str | None:
    """Why `value` fails the check's test (`equal` judges `equals` and `in`), or None."""
    if check.test == "equals":
        if equal(check.expected, value):
            return None
    elif check.test == "in":
        if any(equal(option, value) for option in check.expected):
            return None
    else:
        assert check.rule is not None
        mismatch = next(iter_mismatches(check.rule, check.expected, value), None)
        if mismatch is None:
            return None
        return f"expected {_wanted(check)}, found {show(jsonable(value))} ({mismatch.message})"
    return f"expected {_wanted(check)}, found {show(jsonable(value))}"


def _wanted(check: StateCheck) -> str:
    if check.test == "in":
        return "one of " + show([jsonable(v) for v in check.expected])
    if check.test == "matches":
        assert check.rule is not None
        return f"{show(check.expected)} under {check.rule.describe()}"
    return show(jsonable(check.expected))


def failed_checks(node: Any, reason: str) -> tuple[CheckResult, ...]:
    """Every check of an already validated `state_checks` failed for one `reason` (a case
    without an output line, or whose own setup could not be replayed)."""
    if not isinstance(node, list):
        return ()
    return tuple(
        CheckResult(str(item.get("name")), False, reason)
        for item in node
        if isinstance(item, Mapping)
    )


def checks_passed(results: Sequence[CheckResult]) -> bool:
    """Whether every check passed."""
    return all(result.passed for result in results)
