"""The comparison itself, values in and verdicts out, with no I/O and no command line.

- `model`: the value types (calls, plans, cases, trajectories, verdicts, mismatch codes).
- `values`: the JSON value helpers every layer shares (`json_equal`, `show`, ...).
- `rules/`: one frozen rule object per argument kind, a module per family of kinds, compiled
  from a spec.
- `assignment`, `dataflow`: minimum-cost assignment; `$ref` values and `after` orderings.
- `matching`: the one argument walk, order-free matching of calls to plans, the diagnosis.
- `plan_calls`: the calls a correct agent makes for a plan.
"""

from toolscore.core.assignment import assign
from toolscore.core.dataflow import first_options, substitute, topological
from toolscore.core.matching import (
    best_plan,
    iter_mismatches,
    matches,
    mismatch_line,
    names_match,
    plan_passes,
)
from toolscore.core.model import (
    MISMATCH_CODES,
    MISSING,
    OMITTED,
    AnyOf,
    Call,
    Case,
    CaseResult,
    Mismatch,
    Plan,
    Ref,
    Trajectory,
)
from toolscore.core.plan_calls import plan_calls
from toolscore.core.rules import Rule, RuleError, compile_args, compile_rule
from toolscore.core.values import json_equal, show

__all__ = [
    "MISMATCH_CODES",
    "MISSING",
    "OMITTED",
    "AnyOf",
    "Call",
    "Case",
    "CaseResult",
    "Mismatch",
    "Plan",
    "Ref",
    "Rule",
    "RuleError",
    "Trajectory",
    "assign",
    "best_plan",
    "compile_args",
    "compile_rule",
    "first_options",
    "iter_mismatches",
    "json_equal",
    "matches",
    "mismatch_line",
    "names_match",
    "plan_calls",
    "plan_passes",
    "show",
    "substitute",
    "topological",
]
