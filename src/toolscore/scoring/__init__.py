"""Scoring: one case against what the agent produced (`case`), the stream of a run's verdicts
(`stream`) and its summary (`summary`, built of `tallies`), the rubrics of each case
(`rubric_run`), and one case from plain Python data for test harnesses (`check`)."""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from toolscore.scoring.case import exact_baseline, exact_difference, score_case
    from toolscore.scoring.check import assert_tool_calls, check
    from toolscore.scoring.rubric_run import RubricRunner, run_remote
    from toolscore.scoring.stream import Scoring, score, score_trials
    from toolscore.scoring.summary import Summary, SummaryBuilder

__getattr__, __dir__, _lazy = lazy_loader.attach(
    __name__,
    submod_attrs={
        "case": ["exact_baseline", "exact_difference", "score_case"],
        "check": ["assert_tool_calls", "check"],
        "rubric_run": ["RubricRunner", "run_remote"],
        "stream": ["Scoring", "score", "score_trials"],
        "summary": ["Summary", "SummaryBuilder"],
    },
)

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
