"""Compare two stored runs: metrics side by side, and every case whose verdict flipped.

Each flipped case names what decided it, read from the mismatches of the side that failed:
the tool, the argument and the rule's kind (`refund.unit`, enum). When the two runs were
scored under different spec sets, the spec change on that argument is named too, so that a
moved number leads straight to the line of the spec that moved it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from toolscore.core.rules import ListRule, ObjectRule, Rule
from toolscore.errors import InputError
from toolscore.specs.loading import SpecSet
from toolscore.stats.intervals import ratio, rounded
from toolscore.stats.paired import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MeanTest,
    PairedTest,
    Table,
    table_test,
)
from toolscore.stats.records import fields_json
from toolscore.store.codec import BASELINES, case_json
from toolscore.store.compare_partial import partial_tests
from toolscore.store.compare_turns import TurnComparison, compare_turns
from toolscore.store.database import RunInfo, Store
from toolscore.store.restore import pointer_path
from toolscore.store.rubric_compare import RubricComparison, compare_rubrics
from toolscore.store.specdiff import LIST_ITEMS, Change, spec_diff

_FLIPS_SAME_CASES = """
    SELECT a.case_id, a.passed, a.kind, a.plan, a.baselines, a.detail,
           b.passed, b.kind, b.plan, b.baselines, b.detail
    FROM results AS a JOIN results AS b ON b.run_id = ? AND b.seq = a.seq
    WHERE a.run_id = ? AND a.passed != b.passed
    ORDER BY a.seq
"""
"""Runs of the same cases file hold the same case at the same position: a merge on the key."""

_FLIPS_OTHER_CASES = """
    SELECT a.case_id, a.passed, a.kind, a.plan, a.baselines, a.detail,
           b.passed, b.kind, b.plan, b.baselines, b.detail
    FROM results AS a
    JOIN temp.compare_ids AS other ON other.case_id = a.case_id
    JOIN results AS b ON b.run_id = ? AND b.seq = other.seq
    WHERE a.run_id = ? AND a.passed != other.passed
    ORDER BY a.seq
"""

_VERDICT_GROUPS = """
    SELECT a.passed, b.passed, a.baselines, b.baselines,
           a.kind = 'abstention' AND b.kind = 'abstention', count(*)
    FROM results AS a {join}
    WHERE a.run_id = ?
    GROUP BY 1, 2, 3, 4, 5
"""
"""Both runs' verdicts of the shared cases, counted by kind of pair: a handful of rows."""
_JOIN_SAME_CASES = "JOIN results AS b ON b.run_id = ? AND b.seq = a.seq"
_JOIN_OTHER_CASES = """JOIN temp.compare_ids AS other ON other.case_id = a.case_id
    JOIN results AS b ON b.run_id = ? AND b.seq = other.seq"""

_CALL_LEVEL_CHANGES = {
    "unknown_tool": ("tool_removed", "tool_added"),
    "extra_call": ("relaxation_added", "relaxation_removed", "tool_added"),
    "missing_call": ("tool_removed",),
    "wrong_tool": ("tool_removed", "tool_added"),
    "unexpected_argument": ("relaxation_added", "relaxation_removed"),
}
"""Tool-level spec changes that can decide a mismatch with no argument of its own."""


class Cause(NamedTuple):
    """One mismatch of the failing side: the rule that decided a flip, and the spec change
    on that argument when the runs' spec sets differ (None when there is none)."""

    tool: str | None
    argument: str | None
    kind: str | None
    code: str
    rule: str | None
    message: str
    change: Change | None

    @property
    def where(self) -> str:
        """`tool.argument`, the tool alone for a call-level mismatch, or `?`."""
        tool = self.tool or "?"
        return f"{tool}.{self.argument}" if self.argument else tool

    def to_json(self) -> dict[str, Any]:
        """The cause as `compare --json` lists it."""
        return {
            **fields_json(self, "tool", "argument", "kind", "code", "rule", "message"),
            "spec_change": None if self.change is None else self.change.to_json(),
        }


class Flip(NamedTuple):
    """A case that passed in one run and failed in the other."""

    case_id: str
    before: bool
    after: bool
    causes: tuple[Cause, ...]

    def to_json(self) -> dict[str, Any]:
        """The flip as `compare --json` lists it."""
        return {
            "id": self.case_id,
            "before": self.before,
            "after": self.after,
            "causes": [cause.to_json() for cause in self.causes],
        }


RATE, COUNT = "rate", "count"
"""A metric's `unit`: a proportion with its denominators, or a count of cases."""


class Metric(NamedTuple):
    """One metric of both runs, with its denominators. `unit` says whether it is a rate (a
    proportion of `a_n` and `b_n`, its difference in points) or a count (no denominators,
    its difference in cases): every view of a comparison reads it from here."""

    name: str
    a: float | None
    a_n: int | None
    b: float | None
    b_n: int | None
    unit: str = RATE

    @property
    def difference(self) -> float | None:
        """b - a, or None when either is unmeasured."""
        return None if self.a is None or self.b is None else self.b - self.a

    def to_json(self) -> dict[str, Any]:
        """The metric as `compare --json` lists it."""
        return {
            "metric": self.name,
            **fields_json(self, "unit", "a", "a_n", "b", "b_n"),
            "difference": rounded(self.difference),
        }


@dataclass
class Comparison:
    """Two runs side by side: metrics, flipped cases with their causes, spec changes."""

    a: RunInfo
    b: RunInfo
    metrics: list[Metric]
    flips: list[Flip]
    spec_changes: list[Change]
    only_in_a: int = 0
    only_in_b: int = 0
    arguments: list[tuple[str, tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    """Per `tool.argument` whose counts moved: (name, (passed, failed) in a, in b)."""
    paired: list[PairedTest] = field(default_factory=list)
    """Paired tests on the cases both runs have (empty when they share none)."""
    shared: int = 0
    """How many cases both runs have."""
    tool_rates: list[RateMove] = field(default_factory=list)
    """Per tool: pass rates of both runs, largest move first."""
    argument_rates: list[RateMove] = field(default_factory=list)
    """Per `tool.argument`: pass rates of both runs, largest move first."""
    rubrics: RubricComparison | None = None
    """The rubric results of both runs, paired (None when neither run has any)."""
    partial: list[MeanTest] = field(default_factory=list)
    """Macro F1, precision and recall paired on the shared cases (`compare_partial`)."""
    partial_notes: list[str] = field(default_factory=list)
    """Why there is no partial-credit difference: "F1 not stored for run N"."""
    turns: TurnComparison | None = None
    """The conversations paired turn by turn (`compare_turns`); None when neither run has
    a conversation case."""

    def by_rule(self) -> list[tuple[str, str | None, str, str, int, Change | None]]:
        """Flips grouped by what decided them: (tool.argument, kind, code, direction, count,
        spec change), most flips first."""
        counts: Counter[tuple[str, str | None, str, str]] = Counter()
        changes: dict[tuple[str, str | None, str, str], Change | None] = {}
        for flip in self.flips:
            direction = "pass -> fail" if flip.before else "fail -> pass"
            for cause in flip.causes:
                key = (cause.where, cause.kind, cause.code, direction)
                counts[key] += 1
                changes.setdefault(key, cause.change)
        return [(*key, count, changes[key]) for key, count in counts.most_common()]

    @property
    def blame_command(self) -> str | None:
        """The command that finds the spec change behind each flip (`toolscore blame A B`),
        None when no verdict flipped."""
        return f"toolscore blame {self.a.id} {self.b.id}" if self.flips else None

    def to_json(self) -> dict[str, Any]:
        """The comparison as `compare --json` writes it."""
        data = {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "metrics": [metric.to_json() for metric in self.metrics],
            "flipped": len(self.flips),
            "pass_to_fail": sum(1 for f in self.flips if f.before),
            "fail_to_pass": sum(1 for f in self.flips if not f.before),
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
            "by_rule": [
                {
                    "rule": where,
                    "kind": kind,
                    "code": code,
                    "direction": direction,
                    "cases": count,
                    "spec_change": None if change is None else change.to_json(),
                }
                for where, kind, code, direction, count, change in self.by_rule()
            ],
            "arguments": [
                {
                    "argument": name,
                    "a": {"passed": a[0], "failed": a[1]},
                    "b": {"passed": b[0], "failed": b[1]},
                }
                for name, a, b in self.arguments
            ],
            "spec_changes": [change.to_json() for change in self.spec_changes],
            "flips": [flip.to_json() for flip in self.flips],
            "blame": self.blame_command,
            "shared_cases": self.shared,
            "paired": [test.to_json() for test in self.paired],
            "per_tool": [move.to_json("tool") for move in self.tool_rates],
            "per_argument": [move.to_json("argument") for move in self.argument_rates],
            "partial_paired": [test.to_json() for test in self.partial],
            "partial_not_stored": self.partial_notes,
        } | ({} if self.rubrics is None else {"rubrics": self.rubrics.to_json()})
        if self.turns is not None:
            data["turns"] = self.turns.to_json()
        return data


class RateMove(NamedTuple):
    """One tool's or argument's pass rate in both runs (from their summaries)."""

    name: str
    a: tuple[int, int]
    """(passed, failed) in run a."""
    b: tuple[int, int]

    @staticmethod
    def rate(counts: tuple[int, int]) -> float | None:
        """passed / (passed + failed), or None when nothing was counted."""
        return ratio(counts[0], counts[0] + counts[1])

    @property
    def difference(self) -> float | None:
        """B's rate minus A's, or None when either run counted nothing."""
        rate_a, rate_b = self.rate(self.a), self.rate(self.b)
        return None if rate_a is None or rate_b is None else rate_b - rate_a

    def to_json(self, key: str) -> dict[str, Any]:
        """The move as `compare --json` lists it under `per_tool` or `per_argument`."""
        rate_a, rate_b, difference = self.rate(self.a), self.rate(self.b), self.difference
        return {
            key: self.name,
            "a": {"passed": self.a[0], "failed": self.a[1], "rate": rounded(rate_a)},
            "b": {"passed": self.b[0], "failed": self.b[1], "rate": rounded(rate_b)},
            "difference": rounded(difference),
        }


def compare(
    store: Store,
    run_a: int | str,
    run_b: int | str,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Compare run `run_a` (before) with run `run_b` (after); the paired bootstrap draws
    `resamples` resamples of the shared cases from a generator seeded with `seed`."""
    a, b = store.run(run_a), store.run(run_b)
    summary_a, summary_b = store.summary(a.id), store.summary(b.id)
    for run, summary in ((a, summary_a), (b, summary_b)):
        if "trials" in summary:  # several results per case id: no one-to-one pairing
            raise InputError(
                str(store.path),
                f"run {run.id} has trials (several outputs per case); compare pairs cases one "
                "to one and does not compare runs with trials yet",
            )
    specs_a, specs_b = _specs(store, a), _specs(store, b)
    changes: list[Change] = []
    if a.specs_sha256 != b.specs_sha256 and specs_a is not None and specs_b is not None:
        changes = spec_diff(specs_a, specs_b)
    flips, only_a, only_b = _flipped(store, a, b, _Explainer(specs_a, specs_b, changes))
    shared, tables = _shared_tables(store, a, b)
    paired = [
        table_test(name, Table(*counts), seed=seed, resamples=resamples)
        for name, counts in tables.items()
    ]
    aligned = store.same_positions(a, b)
    partial, partial_notes = partial_tests(store, a, b, seed=seed, resamples=resamples)
    turns = (
        compare_turns(store, a, b, seed=seed, resamples=resamples)
        if "turn_accuracy" in summary_a or "turn_accuracy" in summary_b
        else None
    )
    return Comparison(
        a,
        b,
        _metrics(summary_a, summary_b),
        flips,
        changes,
        only_a,
        only_b,
        _argument_moves(summary_a, summary_b),
        [test for test in paired if test is not None],
        shared,
        _rate_moves(summary_a["per_tool"], summary_b["per_tool"]),
        _rate_moves(summary_a["per_argument"], summary_b["per_argument"]),
        compare_rubrics(store.db, a, b, seed=seed, resamples=resamples, same_positions=aligned),
        partial,
        partial_notes,
        turns,
    )


def _specs(store: Store, run: RunInfo) -> SpecSet | None:
    """The run's spec set, or None when the stored file no longer reads as a spec (a run
    saved by an older toolscore whose spec format has since changed)."""
    try:
        return store.specs(run)
    except InputError:
        return None


def _shared_tables(store: Store, a: RunInfo, b: RunInfo) -> tuple[int, dict[str, list[int]]]:
    """How many cases both runs have, and the 2x2 tables (both, A only, B only, neither
    passed) of each paired metric: accuracy; abstention accuracy over the cases that are
    abstention cases in both runs; each baseline when both runs kept it as bits. Name and
    argument accuracy are not kept per case, so they have no table."""
    db = store.db
    if store.same_positions(a, b):
        groups = list(db.execute(_VERDICT_GROUPS.format(join=_JOIN_SAME_CASES), (b.id, a.id)))
    else:
        db.execute("DROP TABLE IF EXISTS temp.compare_ids")
        db.execute("CREATE TEMP TABLE compare_ids (case_id TEXT PRIMARY KEY, seq INTEGER)")
        try:
            db.execute(
                "INSERT INTO temp.compare_ids SELECT case_id, seq FROM results WHERE run_id = ?",
                (b.id,),
            )
            query = _VERDICT_GROUPS.format(join=_JOIN_OTHER_CASES)
            groups = list(db.execute(query, (b.id, a.id)))
        finally:
            db.execute("DROP TABLE temp.compare_ids")
    tables: dict[str, list[int]] = {"accuracy": [0, 0, 0, 0]}
    baselines = all(
        bits_a is not None and bits_b is not None for _, _, bits_a, bits_b, *_ in groups
    )
    if any(abstention for *_, abstention, _ in groups):
        tables["abstention accuracy"] = [0, 0, 0, 0]
    if baselines:
        for name in BASELINES:
            tables[f"{name} baseline accuracy"] = [0, 0, 0, 0]
    shared = 0
    for passed_a, passed_b, bits_a, bits_b, abstention, count in groups:
        shared += count
        _count(tables["accuracy"], passed_a, passed_b, count)
        if abstention:
            _count(tables["abstention accuracy"], passed_a, passed_b, count)
        if baselines:
            for bit, name in enumerate(BASELINES):
                table = tables[f"{name} baseline accuracy"]
                _count(table, bits_a >> bit & 1, bits_b >> bit & 1, count)
    return shared, tables


def _count(table: list[int], passed_a: int, passed_b: int, count: int) -> None:
    """Add `count` cases to a (both, A only, B only, neither) table."""
    table[2 * (not passed_a) + (not passed_b)] += count


def _flipped(
    store: Store, a: RunInfo, b: RunInfo, explain: _Explainer
) -> tuple[list[Flip], int, int]:
    """The flipped cases, and how many cases only run a and only run b have."""
    if store.same_positions(a, b):
        rows = store.db.execute(_FLIPS_SAME_CASES, (b.id, a.id))
        return [explain.flip(row) for row in rows], 0, 0
    db = store.db
    # The results table is keyed by position, not id: index run b's ids for the join.
    db.execute("DROP TABLE IF EXISTS temp.compare_ids")
    db.execute(
        "CREATE TEMP TABLE compare_ids (case_id TEXT PRIMARY KEY, seq INTEGER, passed INTEGER)"
    )
    try:
        db.execute(
            "INSERT INTO temp.compare_ids SELECT case_id, seq, passed FROM results "
            "WHERE run_id = ?",
            (b.id,),
        )
        flips = [explain.flip(row) for row in db.execute(_FLIPS_OTHER_CASES, (b.id, a.id))]
        both = db.execute(
            "SELECT count(*) FROM results AS a JOIN temp.compare_ids AS other "
            "ON other.case_id = a.case_id WHERE a.run_id = ?",
            (a.id,),
        ).fetchone()[0]
    finally:
        db.execute("DROP TABLE temp.compare_ids")
    return flips, a.cases - both, b.cases - both


class _Explainer:
    """Turns a flipped row into a `Flip` with the causes read from the failing side."""

    def __init__(self, specs_a: SpecSet | None, specs_b: SpecSet | None, changes: list[Change]):
        self.specs = (specs_a, specs_b)
        self.changes = [c for c in changes if not c.warning]

    def flip(self, row: tuple[Any, ...]) -> Flip:
        case_id, a_passed = row[0], bool(row[1])
        failing = 0 if not a_passed else 1
        columns = row[1:6] if failing == 0 else row[6:11]
        case, tools = case_json(case_id, *columns)
        specs = self.specs[failing] or self.specs[1 - failing]
        causes: list[Cause] = []
        for mismatch, tool in zip(case["mismatches"], tools, strict=True):
            cause = self._cause(mismatch, tool, specs)
            if cause not in causes:
                causes.append(cause)
        return Flip(case_id, a_passed, not a_passed, tuple(causes))

    def _cause(self, mismatch: Mapping[str, Any], tool: str | None, specs: SpecSet | None) -> Cause:
        rule = mismatch["rule"]
        kind = rule.split()[0] if rule else None
        code = mismatch["code"]
        keys = pointer_path(mismatch["path"])
        if tool is None and keys and specs is not None:
            tool = _tool_with(specs, str(keys[0]), kind)
        path = _argument_path(specs, tool, keys)
        argument = "".join(p if p == LIST_ITEMS else f".{p}" for p in path).lstrip(".") or None
        return Cause(
            tool, argument, kind, code, rule, mismatch["message"], self._change(tool, path, code)
        )

    def _change(self, tool: str | None, path: tuple[str, ...], code: str) -> Change | None:
        if tool is None or not self.changes:
            return None
        best: Change | None = None
        for change in self.changes:
            if change.tool != tool:
                continue
            fits = bool(path and change.path) and path[: len(change.path)] == change.path
            if fits and (best is None or len(change.path) > len(best.path)):
                best = change
        if best is not None:
            return best
        wanted = _CALL_LEVEL_CHANGES.get(code, ())
        return next((c for c in self.changes if c.tool == tool and c.code in wanted), None)


def _tool_with(specs: SpecSet, argument: str, kind: str | None) -> str | None:
    """The only tool with this argument compared by this kind, if exactly one has it (for
    results saved without the tool of each mismatch)."""
    found = [
        name
        for name, tool in specs.tools.items()
        if argument in tool.args.args and kind in (None, tool.args.args[argument].kind)
    ]
    return found[0] if len(found) == 1 else None


def _argument_path(
    specs: SpecSet | None, tool: str | None, keys: tuple[str | int, ...]
) -> tuple[str, ...]:
    """A mismatch's JSON pointer keys as an argument path: list indexes become `[]`."""
    rule: Rule | None = None
    if specs is not None and tool is not None and tool in specs.tools:
        rule = specs.tools[tool].args
    path: list[str] = []
    for key in keys:
        text = str(key)
        if isinstance(rule, ListRule):
            path.append(LIST_ITEMS)
            rule = rule.items
        elif isinstance(rule, ObjectRule):
            path.append(text)
            rule = rule.args.get(text)
        else:
            path.append(LIST_ITEMS if rule is None and text.isdigit() else text)
            rule = None
    return tuple(path)


def _rate(summary: Mapping[str, Any], key: str) -> tuple[float | None, int | None]:
    node = summary.get(key)
    if not isinstance(node, Mapping):
        return None, None
    return node["value"], node["n"]


def _metrics(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Metric]:
    """The headline metrics of both summaries (state accuracy when either run has it)."""
    rows = [Metric("accuracy", a["accuracy"], a["cases"], b["accuracy"], b["cases"])]
    for name, key in (
        ("name accuracy", "name_accuracy"),
        ("argument accuracy", "argument_accuracy"),
        ("abstention accuracy", "abstention_accuracy"),
    ):
        rows.append(Metric(name, *_rate(a, key), *_rate(b, key)))
    for key in ("exact", "lowercase"):
        base_a, base_b = a["baselines"].get(key, {}), b["baselines"].get(key, {})
        rows.append(
            Metric(
                f"{key} baseline accuracy",
                base_a.get("accuracy"),
                a["cases"],
                base_b.get("accuracy"),
                b["cases"],
            )
        )
    if "turn_accuracy" in a or "turn_accuracy" in b:  # conversation cases, turn by turn
        rows.append(Metric("turn accuracy", *_rate(a, "turn_accuracy"), *_rate(b, "turn_accuracy")))
    if "state" in a or "state" in b:
        rows.append(
            Metric(
                "state accuracy",
                *_rate(a.get("state", {}), "state_accuracy"),
                *_rate(b.get("state", {}), "state_accuracy"),
            )
        )
    for name in ("missed_calls", "missing_outputs"):
        rows.append(Metric(name.replace("_", " "), a[name], None, b[name], None, COUNT))
    return rows


def _argument_moves(
    a: Mapping[str, Any], b: Mapping[str, Any]
) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    moves = []
    for name in sorted(a["per_argument"].keys() | b["per_argument"].keys()):
        node_a = a["per_argument"].get(name, {"passed": 0, "failed": 0})
        node_b = b["per_argument"].get(name, {"passed": 0, "failed": 0})
        counts_a = (node_a["passed"], node_a["failed"])
        counts_b = (node_b["passed"], node_b["failed"])
        if counts_a != counts_b:
            moves.append((name, counts_a, counts_b))
    return moves


def _rate_moves(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[RateMove]:
    """Pass rates of every tool (or argument) of either summary, largest move first; those
    with no rate in one run last, by name."""
    moves = []
    for name in sorted(a.keys() | b.keys()):
        node_a = a.get(name, {"passed": 0, "failed": 0})
        node_b = b.get(name, {"passed": 0, "failed": 0})
        moves.append(
            RateMove(
                name, (node_a["passed"], node_a["failed"]), (node_b["passed"], node_b["failed"])
            )
        )
    return sorted(moves, key=lambda m: (m.difference is None, -abs(m.difference or 0.0), m.name))
