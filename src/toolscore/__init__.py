"""toolscore: score what an LLM agent did with its tools, offline, against what a correct agent
would have done, with comparison rules that belong to each tool.

The public names are imported on first use (`lazy_loader`), so that a command loads only the
modules its path needs; `from toolscore import score_case` works as an eager import does. The
`TYPE_CHECKING` block names the same things for type checkers (a test holds the two equal).
"""

from typing import TYPE_CHECKING

import lazy_loader

# First: under TOOLSCORE_PURE_PYTHON=1 it makes the imports below load .py sources (build.py).
from toolscore.build import build_kind

# isort: split
from toolscore._version import __version__

if TYPE_CHECKING:
    from toolscore.core.arguments import iter_mismatches, matches
    from toolscore.core.diagnosis import best_plan
    from toolscore.core.model import (
        MISMATCH_CODES,
        MISSING,
        Call,
        Case,
        CaseResult,
        Mismatch,
        Trajectory,
    )
    from toolscore.core.rules import Rule, compile_rule
    from toolscore.errors import CaseError, InputError, OutputError, SpecError
    from toolscore.inputs.cases import parse_case, read_cases
    from toolscore.inputs.outputs import parse_output, read_outputs
    from toolscore.scoring.case import score_case
    from toolscore.scoring.check import assert_tool_calls, check
    from toolscore.scoring.stream import Scoring, score
    from toolscore.scoring.summary import Summary
    from toolscore.specs.loading import SpecSet, load_specs, parse_specs

__getattr__, __dir__, _lazy = lazy_loader.attach(
    __name__,
    submod_attrs={
        "core.arguments": ["iter_mismatches", "matches"],
        "core.diagnosis": ["best_plan"],
        "core.model": [
            "MISMATCH_CODES",
            "MISSING",
            "Call",
            "Case",
            "CaseResult",
            "Mismatch",
            "Trajectory",
        ],
        "core.rules": ["Rule", "compile_rule"],
        "errors": ["CaseError", "InputError", "OutputError", "SpecError"],
        "inputs.cases": ["parse_case", "read_cases"],
        "inputs.outputs": ["parse_output", "read_outputs"],
        "scoring.case": ["score_case"],
        "scoring.check": ["assert_tool_calls", "check"],
        "scoring.stream": ["Scoring", "score"],
        "scoring.summary": ["Summary"],
        "specs.loading": ["SpecSet", "load_specs", "parse_specs"],
    },
)

__all__ = [
    "MISMATCH_CODES",
    "MISSING",
    "Call",
    "Case",
    "CaseError",
    "CaseResult",
    "InputError",
    "Mismatch",
    "OutputError",
    "Rule",
    "Scoring",
    "SpecError",
    "SpecSet",
    "Summary",
    "Trajectory",
    "__version__",
    "assert_tool_calls",
    "best_plan",
    "build_kind",
    "check",
    "compile_rule",
    "iter_mismatches",
    "load_specs",
    "matches",
    "parse_case",
    "parse_output",
    "parse_specs",
    "read_cases",
    "read_outputs",
    "score",
    "score_case",
]
