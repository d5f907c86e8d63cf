"""Verdict blame (`toolscore blame`): for each case whose verdict changed between two stored
runs, the spec change that flipped it.

The changes between the runs' spec sets are those `spec-diff` finds, taken an argument at a
time (every change on one argument, or on one tool's presence and relaxations, is one step).
Each changed case is re-scored, from run A's stored case and output as `rescore` reads them,
under run A's spec set with one step applied: the steps that alone flip the verdict are the
ones to blame. When no single step does, the steps whose undoing alone, from run B's spec
set, restores the old verdict are named instead (the change is one of several acting
together); when even B's whole spec set does not flip A's inputs, the flip came from the
cases or outputs, not from the spec.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolscore.core.model import MISSING, Trajectory
from toolscore.core.rules import ListRule, ObjectRule, Rule
from toolscore.core.values import show
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.stream import score_trials
from toolscore.specs.loading import SpecSet, ToolSpec
from toolscore.store.specdiff import LIST_ITEMS, Change, spec_diff

if TYPE_CHECKING:
    from toolscore.store.database import RunInfo, Store

SINGLE, TOGETHER, INPUTS, NOT_REPRODUCED = (
    "single change",
    "changes together",
    "not the spec",
    "not reproduced",
)
"""How a blame was found (`found`): one step alone flips the case; only several together
do (the steps named are those whose undoing restores the old verdict); B's whole spec set
does not flip run A's inputs (the cases or outputs differ); or re-scoring A's inputs under
A's spec set does not give A's stored verdict (a run judged on replayed state, say)."""


@dataclass(frozen=True)
class BlamedChange:
    """One step between the two spec sets: the tool, the argument (None for the tool's own
    presence or relaxations), the rule before and after as reports show it (None where
    absent), the `spec-diff` changes it is made of, and the tool's version on each side."""

    tool: str | None
    argument: str | None
    old: str | None
    new: str | None
    codes: tuple[str, ...]
    description: str
    old_version: Any = None
    new_version: Any = None

    def to_json(self) -> dict[str, Any]:
        """The change as `blame --json` lists it."""
        return {
            "tool": self.tool,
            "argument": self.argument,
            "old": self.old,
            "new": self.new,
            "codes": list(self.codes),
            "description": self.description,
            "old_version": self.old_version,
            "new_version": self.new_version,
        }

    def line(self) -> str:
        """`refund.unit: <old> -> <new> (what changed; tool version 3 -> 4)`."""
        where = self.tool or "(spec set)"
        if self.argument:
            where += f".{self.argument}"
        versions = f"tool version {self.old_version} -> {self.new_version}"
        rules = f"{self.old or '(none)'} -> {self.new or '(none)'}"
        return f"{where}: {rules} ({self.description}; {versions})"


@dataclass(frozen=True)
class Blame:
    """A case whose verdict changed (`before` in run A, `after` in run B) and the steps that
    flipped it; `found` says how (`SINGLE`, `TOGETHER`, `INPUTS`, `NOT_REPRODUCED`)."""

    case: str
    before: bool
    after: bool
    changes: tuple[BlamedChange, ...]
    found: str

    def to_json(self) -> dict[str, Any]:
        """The entry as `blame --json` lists it."""
        return {
            "case": self.case,
            "before": self.before,
            "after": self.after,
            "changes": [change.to_json() for change in self.changes],
            "found": self.found,
        }


Step = tuple[str | None, tuple[str, ...], tuple[Change, ...]]
"""(tool, argument path, the changes on it): what blame applies at once."""


def steps(changes: Sequence[Change]) -> list[Step]:
    """The rule changes (warnings left out) grouped by tool and argument, in spec-diff order."""
    grouped: dict[tuple[str | None, tuple[str, ...]], list[Change]] = {}
    for change in changes:
        if not change.warning:
            grouped.setdefault((change.tool, change.path), []).append(change)
    return [(tool, path, tuple(found)) for (tool, path), found in grouped.items()]


def blame(
    store: Store, run_a: int | str, run_b: int | str, case_id: str | None = None
) -> tuple[RunInfo, RunInfo, list[Blame]]:
    """The runs and, for each case whose verdict differs between run `run_a` (before) and
    `run_b` (after), in run A's case order, what flipped it; only `case_id` when given (an
    InputError when neither run has it)."""
    a, b = store.run(run_a), store.run(run_b)
    for run in (a, b):
        if "trials" in store.summary(run.id):
            raise InputError(
                str(store.path),
                f"run {run.id} has trials (several outputs per case); blame pairs cases one to "
                "one and does not blame runs with trials yet",
            )
    verdicts_b = dict(_verdicts(store, b.id))
    flipped: dict[str, tuple[bool, bool]] = {}
    known = False
    for case, passed in _verdicts(store, a.id):
        if case_id is not None and case != case_id:
            continue
        known = True
        after = verdicts_b.get(case)
        if after is not None and after != passed:
            flipped[case] = (passed, after)
    if case_id is not None and not known and case_id not in verdicts_b:
        raise InputError(
            str(store.path), f"neither run {a.id} nor run {b.id} has a case {case_id!r}"
        )
    if not flipped:
        return a, b, []
    specs_a, specs_b = store.specs(a), store.specs(b)
    found = steps(spec_diff(specs_a, specs_b))
    cases = _case_data(store, a, set(flipped))
    outputs = _outputs(store, a, set(flipped))
    inputs_same = a.cases_sha256 == b.cases_sha256 and a.outputs_sha256 == b.outputs_sha256
    blames = []
    for case, (before, after) in flipped.items():
        data = cases.get(case)
        judge = _Judge(data, outputs.get(case, []), f"{a.cases_path} (stored with run {a.id})")
        blames.append(_blame_case(case, before, after, judge, specs_a, specs_b, found, inputs_same))
    return a, b, blames


def _blame_case(
    case: str,
    before: bool,
    after: bool,
    judge: _Judge,
    specs_a: SpecSet,
    specs_b: SpecSet,
    found: list[Step],
    inputs_same: bool,
) -> Blame:
    if judge(specs_a) is not before:
        return Blame(case, before, after, (), NOT_REPRODUCED)
    if not found or judge(specs_b) is before:
        return Blame(
            case, before, after, (), INPUTS if not inputs_same or not found else NOT_REPRODUCED
        )
    single = [step for step in found if judge(applied(specs_a, specs_b, step)) is after]
    if single:
        return Blame(
            case, before, after, tuple(_described(specs_a, specs_b, s) for s in single), SINGLE
        )
    needed = [step for step in found if judge(applied(specs_b, specs_a, step)) is before]
    named = needed or found
    return Blame(
        case, before, after, tuple(_described(specs_a, specs_b, s) for s in named), TOGETHER
    )


class _Judge:
    """A case's stored line and outputs, re-scored under any spec set: its verdict, or None
    when that spec set cannot read the case."""

    def __init__(
        self, data: tuple[int, Mapping[str, Any]] | None, outputs: list[Trajectory], source: str
    ) -> None:
        self.data = data
        self.outputs = outputs
        self.source = source

    def __call__(self, specs: SpecSet) -> bool | None:
        if self.data is None:
            return None
        line, data = self.data
        try:
            case = parse_case(data, specs, self.source, line)
        except CaseError:
            return None
        return score_trials(specs, case, self.outputs)[0].passed


def _verdicts(store: Store, run_id: int) -> Iterator[tuple[str, bool]]:
    rows = store.db.execute(
        "SELECT case_id, passed FROM results WHERE run_id = ? ORDER BY seq", (run_id,)
    )
    for case, passed in rows:
        yield case, bool(passed)


def _case_data(
    store: Store, run: RunInfo, ids: set[str]
) -> dict[str, tuple[int, Mapping[str, Any]]]:
    source = f"{run.cases_path} (stored with run {run.id})"
    found: dict[str, tuple[int, Mapping[str, Any]]] = {}
    for number, raw in store.content_lines(run.cases_sha256):
        data = parse_line(raw, source, number, CaseError)
        case = data.get("id")
        if isinstance(case, str) and case in ids:
            found[case] = (number, data)
    return found


def _outputs(store: Store, run: RunInfo, ids: set[str]) -> dict[str, list[Trajectory]]:
    source = f"{run.outputs_path} (stored with run {run.id})"
    found: dict[str, list[Trajectory]] = {}
    for number, raw in store.content_lines(run.outputs_sha256):
        output = parse_output(
            parse_line(raw, source, number, OutputError, lenient=True), source, number
        )
        if output.case_id in ids:
            found.setdefault(output.case_id, []).append(output)
    return found


# --- one step applied -------------------------------------------------------------------------


def applied(base: SpecSet, other: SpecSet, step: Step) -> SpecSet:
    """`base` with one step taken from `other`: the argument's rule (its own options; its
    nested arguments and items stay `base`'s, they are steps of their own), or, for a
    tool-level step, the tool's presence and its relaxations."""
    tool, path, _ = step
    if tool is None:
        return base
    tools = dict(base.tools)
    if not path:
        if tool in other.tools:
            tools[tool] = other.tools[tool] if tool not in base.tools else base.tools[tool]
        else:
            tools.pop(tool, None)
        relaxations = [
            replace(r, tools=tuple(t for t in r.tools if t != tool)) for r in base.relaxations
        ]
        relaxations = [r for r in relaxations if r.tools]
        relaxations += [replace(r, tools=(tool,)) for r in other.relaxations if tool in r.tools]
        forbid = tuple(f for f in base.forbid if f.tool in tools)
        return replace(base, tools=tools, relaxations=tuple(relaxations), forbid=forbid)
    if tool not in base.tools or tool not in other.tools:
        return base
    spec = base.tools[tool]
    grafted = _graft(spec.args, other.tools[tool].args, path)
    assert isinstance(grafted, ObjectRule)
    tools[tool] = ToolSpec(spec.name, spec.version, grafted, spec.description)
    return replace(base, tools=tools)


def _graft(a: Rule, b: Rule, path: tuple[str, ...]) -> Rule:
    """Rule `a` with the node at `path` taken from rule `b` (its children kept from `a`)."""
    if not path:
        if isinstance(a, ObjectRule) and isinstance(b, ObjectRule):
            return replace(b, args=dict(a.args))
        if isinstance(a, ListRule) and isinstance(b, ListRule):
            return replace(b, items=a.items)
        return b
    head, rest = path[0], path[1:]
    if head == LIST_ITEMS and isinstance(a, ListRule) and isinstance(b, ListRule):
        return replace(a, items=_graft(a.items, b.items, rest))
    if not (isinstance(a, ObjectRule) and isinstance(b, ObjectRule)):
        return b
    args = dict(a.args)
    if head not in b.args:
        args.pop(head, None)
    elif head not in a.args:
        args[head] = b.args[head]
    else:
        args[head] = _graft(a.args[head], b.args[head], rest)
    return replace(a, args=args)


def _described(specs_a: SpecSet, specs_b: SpecSet, step: Step) -> BlamedChange:
    tool, path, changes = step
    argument = changes[0].argument
    versions = (
        [s.tools[tool].version if tool in s.tools else None for s in (specs_a, specs_b)]
        if tool
        else [None, None]
    )
    return BlamedChange(
        tool,
        argument,
        _rule_text(specs_a, tool, path),
        _rule_text(specs_b, tool, path),
        tuple(change.code for change in changes),
        "; ".join(change.description for change in changes),
        versions[0],
        versions[1],
    )


def _rule_text(specs: SpecSet, tool: str | None, path: tuple[str, ...]) -> str | None:
    """The rule at `path` of `tool` as reports show it, with its default; for a tool-level
    step, the tool and its relaxations; None where absent."""
    if tool is None or tool not in specs.tools:
        return None
    if not path:
        relaxed = [f"relax {r.allow}" for r in specs.relaxations if tool in r.tools]
        return ", ".join(["tool", *relaxed])
    rule: Rule = specs.tools[tool].args
    for part in path:
        if part == LIST_ITEMS and isinstance(rule, ListRule):
            rule = rule.items
        elif isinstance(rule, ObjectRule) and part in rule.args:
            rule = rule.args[part]
        else:
            return None
    text = rule.describe()
    if rule.default is not MISSING:
        text += f" default={show(rule.default)}"
    return text
