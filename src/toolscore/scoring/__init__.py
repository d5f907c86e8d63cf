"""Scoring: one case against what the agent produced, the stream of a run's verdicts and its
summary (`case`), the rubrics of each case (`rubric_run`), and `check`, one case from plain
Python data for test harnesses (`check`)."""

from toolscore.scoring.case import (
    Scoring,
    Summary,
    SummaryBuilder,
    exact_baseline,
    exact_difference,
    score,
    score_case,
    score_trials,
)
from toolscore.scoring.check import assert_tool_calls, check
from toolscore.scoring.rubric_run import RubricRunner, run_remote

__all__ = [
    "RubricRunner",
    "Scoring",
    "Summary",
    "SummaryBuilder",
    "assert_tool_calls",
    "check",
    "exact_baseline",
    "exact_difference",
    "run_remote",
    "score",
    "score_case",
    "score_trials",
]
