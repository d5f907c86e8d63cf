"""`toolscore audit`: every planted answer of every case scored by the library's own scorer
(`scoring.check`), and tallied per kind, tool and argument: the bad answers the spec catches
and those it forgives (naming what forgave each), the harmless variants it passes and fails.

A bad answer is caught when the case fails; forgiven when it passes, by the plan it was
planted from (the rule, relaxation or entry its kind names) or by another of the case's plans
(`plans[K]`). Cases the audit cannot plant in are counted with the reason, never dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.audit.planted import (
    BAD_KINDS,
    HARMLESS_KINDS,
    Planted,
    entries,
    plan_answers,
    planted_answers,
)
from toolscore.core.diagnosis import mismatch_line
from toolscore.core.model import Case, CaseResult
from toolscore.inputs.cases import read_cases
from toolscore.inputs.converted import Conversion, as_json_lines
from toolscore.scoring.check import check
from toolscore.specs.loading import SpecSet, load_specs

EXAMPLES = 5
"""Case ids a row keeps of the answers it counts as forgiven (or failed), for the reader."""


@dataclass
class Row:
    """One (kind, tool, argument) of the report: how many answers were planted and what the
    scorer said of them (`caught`/`forgiven` for bad ones, `passed`/`failed` for harmless)."""

    kind: str
    tool: str
    argument: str | None
    n: int = 0
    ok: int = 0
    """Caught (a bad answer) or passed (a harmless variant)."""
    wrong: int = 0
    """Forgiven (a bad answer) or failed (a harmless variant)."""
    forgiven_by: Counter[str] = field(default_factory=Counter)
    """For bad answers: what forgave them, and how many each (for harmless ones: the first
    mismatch that failed them)."""
    examples: list[str] = field(default_factory=list)

    def add(self, ok: bool, case_id: str, why: str | None) -> None:
        """Count one planted answer's verdict."""
        self.n += 1
        if ok:
            self.ok += 1
            return
        self.wrong += 1
        if why is not None:
            self.forgiven_by[why] += 1
        if len(self.examples) < EXAMPLES and case_id not in self.examples:
            self.examples.append(case_id)

    def bad_json(self) -> dict[str, Any]:
        """The row as an entry of the report's `bad` list."""
        return {
            "kind": self.kind,
            "tool": self.tool,
            "argument": self.argument,
            "n": self.n,
            "caught": self.ok,
            "forgiven": self.wrong,
            "forgiven_by": dict(sorted(self.forgiven_by.items())),
            "examples": self.examples,
        }

    def harmless_json(self) -> dict[str, Any]:
        """The row as an entry of the report's `harmless` list."""
        return {
            "kind": self.kind,
            "tool": self.tool,
            "argument": self.argument,
            "n": self.n,
            "passed": self.ok,
            "failed": self.wrong,
            "failed_by": dict(sorted(self.forgiven_by.items())),
            "examples": self.examples,
        }


@dataclass
class AuditReport:
    """What an audit found: a row per (kind, tool, argument) of each family, and the cases
    (or plans) that could not be planted in, with why."""

    seed: int
    bad: dict[tuple[str, str, str | None], Row] = field(default_factory=dict)
    harmless: dict[tuple[str, str, str | None], Row] = field(default_factory=dict)
    cases: int = 0
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def row(self, planted: Planted) -> Row:
        """The row a planted answer counts in (made on first use)."""
        rows = self.bad if planted.family == "bad" else self.harmless
        key = (planted.kind, planted.tool, planted.argument)
        if key not in rows:
            rows[key] = Row(*key)
        return rows[key]

    def bad_rows(self) -> list[Row]:
        """The bad rows in the order of BAD_KINDS, then by tool and argument."""
        return sorted(self.bad.values(), key=lambda r: _order(r, BAD_KINDS))

    def harmless_rows(self) -> list[Row]:
        """The harmless rows in the order of HARMLESS_KINDS, then by tool and argument."""
        return sorted(self.harmless.values(), key=lambda r: _order(r, HARMLESS_KINDS))

    def to_json(self) -> dict[str, Any]:
        """The `--json` document (docs/formats.md, "toolscore audit")."""
        return {
            "bad": [row.bad_json() for row in self.bad_rows()],
            "harmless": [row.harmless_json() for row in self.harmless_rows()],
            "seed": self.seed,
            "cases": self.cases,
            "skipped": self.skipped,
        }


def _order(row: Row, kinds: tuple[str, ...]) -> tuple[int, str, str]:
    return kinds.index(row.kind), row.tool, row.argument or ""


def audit_cases(specs: SpecSet, cases: Iterable[Case], seed: int = 0) -> AuditReport:
    """Plant every kind in every case, score each answer, and tally the verdicts."""
    report = AuditReport(seed)
    for case in cases:
        report.cases += 1
        audit_case(specs, case, report)
    return report


def audit_case(specs: SpecSet, case: Case, report: AuditReport) -> None:
    """Plant in one case and count each answer in `report` (a plan whose own answer fails
    its case is skipped with the first mismatch; so is a conversation case)."""
    if case.turns:
        report.skipped.append(
            {"case": case.id, "plan": None, "reason": "a conversation case (turns)"}
        )
        return
    for plan, answer in plan_answers(case):
        own = check(specs, case, list(entries(answer.calls)), case_id=case.id)
        if not own.passed:
            why = mismatch_line(own.mismatches[0]) if own.mismatches else "it fails"
            report.skipped.append(
                {"case": case.id, "plan": plan, "reason": f"the plan's own calls fail: {why}"}
            )
            continue
        for planted in planted_answers(specs, case, plan, answer, report.seed):
            result = check(specs, case, list(planted.calls), case_id=case.id)
            count(report, planted, result, case.id)


def count(report: AuditReport, planted: Planted, result: CaseResult, case_id: str) -> None:
    """Count one planted answer's verdict in its row."""
    row = report.row(planted)
    if planted.family == "bad":
        why = None
        if result.passed:
            same = result.plan == planted.plan
            why = planted.forgiver if same else f"plans[{result.plan}]"
        row.add(not result.passed, case_id, why)
    else:
        first = result.mismatches[0] if result.mismatches else None
        why = None if first is None else f"{first.code} {first.rule or ''}".strip()
        row.add(result.passed, case_id, why if not result.passed else None)


def audit_files(specs_path: str | Path, cases_path: str | Path, seed: int = 0) -> AuditReport:
    """Audit a spec file with a cases file (any layout `score` reads): input errors as
    `score` raises them."""
    specs = load_specs(specs_path)
    with as_json_lines(str(cases_path), Conversion("cases")) as lines:
        return audit_cases(specs, read_cases(lines, specs), seed)
