"""Auditing the scorer itself: how much of a spec the cases exercise (`coverage`), which
known-bad answers a spec forgives and which harmless ones it fails (`planted`, run by
`toolscore audit`), rule changes the evidence points to (`suggest`), and which spec change
flipped a stored verdict (`blame`)."""

from toolscore.audit.blame import Blame, BlamedChange, blame
from toolscore.audit.coverage import Coverage, Item, coverage, coverage_files, coverage_of_run

__all__ = [
    "Blame",
    "BlamedChange",
    "Coverage",
    "Item",
    "blame",
    "coverage",
    "coverage_files",
    "coverage_of_run",
]
