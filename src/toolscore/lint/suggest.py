"""`lint --suggest-checks`: a case's `goal_state` turned into the `state_checks` that say
the same of what the goal changes.

The goal's changes are those from the state the case's setup leaves: for `"plan"`, what the
first plan's replay (made call by call, as `lint --env` makes it) changes; for rows, what the
annotated tables change. Documents: each added or changed path `equals` its new value, each
removed path is `absent`. SQLite: each changed column of a row (the row chosen by its key)
`equals` its new value, each added row's columns likewise, each removed row has `count: 0`.
What a check cannot say (a blob, a change of schema, changes beyond the diff's listing, a
plan that could not be replayed) is left out and named in the line's `notes`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from toolscore.core.model import Case
from toolscore.errors import CaseError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.converted import Conversion, as_json_lines
from toolscore.inputs.jsonl import read_jsonl
from toolscore.lint.replay import replayed_calls
from toolscore.specs.loading import SpecSet, check_specs
from toolscore.state.diff import StateDiff, TableDiff, diff_states
from toolscore.state.environment import Environment
from toolscore.state.goal import annotated_goal
from toolscore.state.pointer_diff import DocumentDiff, diff_documents
from toolscore.state.replay import case_error
from toolscore.state.snapshot import Snapshot, jsonable
from toolscore.state.verdict import replay_any, validate_case

if TYPE_CHECKING:
    from toolscore.state import AnyEnvironment


class Suggestion(NamedTuple):
    """The checks suggested for one case, and what they leave out."""

    case_id: str
    checks: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """`{"id", "state_checks", "notes"?}`: one JSON line of the command's output."""
        found: dict[str, Any] = {"id": self.case_id, "state_checks": list(self.checks)}
        if self.notes:
            found["notes"] = list(self.notes)
        return found


def suggest_file(
    specs_path: str | Path,
    cases_path: str | Path,
    environment: Callable[[SpecSet], AnyEnvironment],
) -> Iterator[Suggestion]:
    """`suggest_checks` for each case of a cases file with a `goal_state`, in file order;
    an invalid spec or case is an input error (the first one met)."""
    specs, errors = check_specs(specs_path)
    if specs is None or errors:
        raise errors[0]
    env = environment(specs)
    with as_json_lines(str(cases_path), Conversion("cases")) as lines:
        for number, _raw, data in read_jsonl(lines, CaseError):
            case = parse_case(data, specs, lines, number)
            found = suggest_checks(env, case, lines)
            if found is not None:
                yield found


def suggest_checks(env: AnyEnvironment, case: Case, source: str) -> Suggestion | None:
    """The checks equivalent to what `case`'s goal changes (None without a `goal_state`)."""
    node = case.extra.get("goal_state")
    if node is None:
        return None
    validate_case(env, case, source)
    start, _ = replay_any(env, case, (), source)
    if node == "plan":
        if not case.plans:
            return Suggestion(case.id, (), ("no plan: the goal is the state the setup leaves",))
        made = replayed_calls(env, case, case.plans[0], source)
        if made.stopped is not None or made.unresolved is not None:
            why = made.stopped or (made.unresolved[1] if made.unresolved else "")
            return Suggestion(case.id, (), (f"plan 0 could not be replayed: {why}",))
        goal, _ = replay_any(env, case, made.calls, source)
    else:
        assert isinstance(env, Environment)
        assert isinstance(start, Snapshot)
        goal = annotated_goal(node, start, env.ignore, case_error(case, source))
    if isinstance(env, Environment):
        checks, notes = _table_checks(diff_states(start, goal, env.typed))
    else:
        checks, notes = _document_checks(diff_documents(start, goal, env.ignore, env.typed))
    return Suggestion(case.id, tuple(_named(checks)), tuple(notes))


def _document_checks(diff: DocumentDiff) -> tuple[list[dict[str, Any]], list[str]]:
    checks: list[dict[str, Any]] = []
    notes: list[str] = []
    for change in diff.changes:
        if not change.path:
            notes.append("the whole document changed kind: no pointer names it")
        elif change.kind == "removed":
            checks.append({"name": change.path[1:], "path": change.path, "absent": True})
        else:
            checks.append({"name": change.path[1:], "path": change.path, "equals": change.final})
    if diff.unlisted:
        notes.append(f"{diff.unlisted} more changed paths, beyond the diff's listing, left out")
    return checks, notes


def _table_checks(diff: StateDiff) -> tuple[list[dict[str, Any]], list[str]]:
    checks: list[dict[str, Any]] = []
    notes: list[str] = []
    for table in diff.tables:
        if table.note is not None:
            notes.append(f"table {table.table}: {table.note}: left out")
            continue
        checks += _row_checks(table, notes)
    return checks, notes


def _row_checks(table: TableDiff, notes: list[str]) -> Iterator[dict[str, Any]]:
    name = table.table

    def chosen(row: Mapping[str, Any]) -> dict[str, Any] | None:
        where = {column: row[column] for column in table.key}
        if any(isinstance(value, bytes) for value in where.values()):
            notes.append(f"table {name}: a row keyed by a blob: left out")
            return None
        return where

    def column_check(where: dict[str, Any], column: str, value: Any) -> dict[str, Any] | None:
        if isinstance(value, bytes):
            notes.append(f"table {name}: column {column} holds a blob: left out")
            return None
        label = f"{name}[{_where_words(where)}].{column}"
        return {"name": label, "table": name, "where": where, "column": column, "equals": value}

    for row in table.removed:
        where = chosen(row)
        if where is not None:
            label = f"{name}[{_where_words(where)}] removed"
            yield {"name": label, "table": name, "where": where, "count": 0}
    for row in table.added:
        where = chosen(row)
        if where is None:
            continue
        values = [(c, v) for c, v in row.items() if c not in table.key]
        if not values:
            label = f"{name}[{_where_words(where)}] added"
            yield {"name": label, "table": name, "where": where, "count": 1}
        for column, value in values:
            check = column_check(where, column, value)
            if check is not None:
                yield check
    for change in table.changed:
        where = chosen(change.key)
        if where is None:
            continue
        for column, (_, final) in change.columns.items():
            check = column_check(where, column, final)
            if check is not None:
                yield check


def _where_words(where: Mapping[str, Any]) -> str:
    return ",".join(f"{column}={jsonable(value)}" for column, value in where.items())


def _named(checks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The checks with names made unique in the case (a later twin gets ` (2)`, ...)."""
    seen: dict[str, int] = {}
    for check in checks:
        name = check["name"] or "(check)"
        count = seen[name] = seen.get(name, 0) + 1
        yield {**check, "name": name if count == 1 else f"{name} ({count})"}
