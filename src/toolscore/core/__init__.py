"""The comparison itself, values in and verdicts out, with no I/O and no command line.

- `model`: the value types (calls, plans, cases, trajectories, verdicts, mismatch codes).
- `values`: the JSON value helpers every layer shares (`json_equal`, `show`, ...).
- `rules/`: one frozen rule object per argument kind, a module per family of kinds, compiled
  from a spec.
- `assignment`, `dataflow`: minimum-cost assignment; `$ref` values and `after` orderings.
- `arguments`: the one argument walk (whether, why and how often arguments differ).
- `plans`: order-free matching of produced calls to a plan: whether it passes.
- `diagnosis`: why a plan fails, the best of a case's plans, a mismatch's line.
- `plan_calls`: the calls a correct agent makes for a plan.
- `partial`: how close a case came (partial credit) and the calls it wasted (efficiency).
- `answers`: required outputs that name what a call returned, and finding them in text.
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from toolscore.core.arguments import iter_mismatches, matches
    from toolscore.core.assignment import assign
    from toolscore.core.dataflow import first_options, substitute, topological
    from toolscore.core.diagnosis import best_plan, mismatch_line
    from toolscore.core.model import (
        MISMATCH_CODES,
        MISSING,
        OMITTED,
        AnyOf,
        Call,
        Case,
        CaseResult,
        Efficiency,
        Mismatch,
        Partial,
        Plan,
        Ref,
        Retry,
        Trajectory,
    )
    from toolscore.core.partial import partial_credit
    from toolscore.core.plan_calls import plan_calls
    from toolscore.core.plans import names_match, plan_passes
    from toolscore.core.rules import Rule, RuleError, compile_args, compile_rule
    from toolscore.core.values import json_equal, show

__getattr__, __dir__, _lazy = lazy_loader.attach(
    __name__,
    submod_attrs={
        "arguments": ["iter_mismatches", "matches"],
        "assignment": ["assign"],
        "dataflow": ["first_options", "substitute", "topological"],
        "diagnosis": ["best_plan", "mismatch_line"],
        "model": [
            "MISMATCH_CODES",
            "MISSING",
            "OMITTED",
            "AnyOf",
            "Call",
            "Case",
            "CaseResult",
            "Efficiency",
            "Mismatch",
            "Partial",
            "Plan",
            "Ref",
            "Retry",
            "Trajectory",
        ],
        "partial": ["partial_credit"],
        "plan_calls": ["plan_calls"],
        "plans": ["names_match", "plan_passes"],
        "rules": ["Rule", "RuleError", "compile_args", "compile_rule"],
        "values": ["json_equal", "show"],
    },
)

__all__ = [
    "MISMATCH_CODES",
    "MISSING",
    "OMITTED",
    "AnyOf",
    "Call",
    "Case",
    "CaseResult",
    "Efficiency",
    "Mismatch",
    "Partial",
    "Plan",
    "Ref",
    "Retry",
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
    "partial_credit",
    "plan_calls",
    "plan_passes",
    "show",
    "substitute",
    "topological",
]
