"""Rubrics: free-text arguments scored apart from the call score (docs/formats.md).

The call scorer never compares a `text` argument; a rubric named on it scores the produced
text on its own scale, and its results are reported beside the call verdict, never in it.

Its modules: `spec` (declarations), `base` (the values rubrics work on), `checks` (local
checks), `backtrack` (patterns known to backtrack), `remote`, `jobs`, `endpoint`,
`judge_prompt` (judges and embeddings), `cache` (stored judgments), `entries` and `summary`
(results and their block).
"""

__all__ = [
    "backtrack",
    "base",
    "cache",
    "checks",
    "endpoint",
    "entries",
    "jobs",
    "judge_prompt",
    "remote",
    "spec",
    "summary",
]
