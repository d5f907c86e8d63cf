"""`toolscore lint`: problems in a spec and its cases found before they distort a score: the
spec and case checks (`checks`), the gold checks that a case's own plans pass it and doing
nothing does not (`gold`), and what `lint --env` replays (`replay`)."""

from toolscore.lint.checks import Finding, lint_cases, lint_files

__all__ = ["Finding", "lint_cases", "lint_files"]
