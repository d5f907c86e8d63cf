"""Reading what users have into toolscore's values: paths and standard input, JSON Lines,
lenient JSON, cases, outputs and their calls, trials, the join of cases to outputs by id and
what it leaves unpaired, whole-file layouts converted to JSON Lines (Parquet, Inspect logs,
collector exports), and `formats/`, one reader per provider's transcript or response.

Every reader names the file, the line and the field of what it refuses; an agent's output
that cannot be read is a scored failure, never an input error.
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from toolscore.inputs.calls import produced_call
    from toolscore.inputs.cases import parse_case, read_cases
    from toolscore.inputs.converted import converted_inputs
    from toolscore.inputs.join import join, join_groups_by_id, one_each
    from toolscore.inputs.jsonl import iter_lines, read_jsonl
    from toolscore.inputs.missing import MISSING_POLICIES, missing_result
    from toolscore.inputs.outputs import parse_output, read_outputs
    from toolscore.inputs.paths import check_inputs, close_input, open_input
    from toolscore.inputs.trials import ordered_trials, pass_at, pass_hat

__getattr__, __dir__, _lazy = lazy_loader.attach(
    __name__,
    submod_attrs={
        "calls": ["produced_call"],
        "cases": ["parse_case", "read_cases"],
        "converted": ["converted_inputs"],
        "join": ["join", "join_groups_by_id", "one_each"],
        "jsonl": ["iter_lines", "read_jsonl"],
        "missing": ["MISSING_POLICIES", "missing_result"],
        "outputs": ["parse_output", "read_outputs"],
        "paths": ["check_inputs", "close_input", "open_input"],
        "trials": ["ordered_trials", "pass_at", "pass_hat"],
    },
)

__all__ = [
    "MISSING_POLICIES",
    "check_inputs",
    "close_input",
    "converted_inputs",
    "iter_lines",
    "join",
    "join_groups_by_id",
    "missing_result",
    "one_each",
    "open_input",
    "ordered_trials",
    "parse_case",
    "parse_output",
    "pass_at",
    "pass_hat",
    "produced_call",
    "read_cases",
    "read_jsonl",
    "read_outputs",
]
