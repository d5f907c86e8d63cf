"""Auditing the scorer itself: how much of a spec the cases exercise (`coverage`), which
known-bad answers a spec forgives and which harmless ones it fails (`planted`, run by
`toolscore audit`), rule changes the evidence points to (`suggest`), and which spec change
flipped a stored verdict (`blame`)."""

from toolscore.audit.audit_run import AuditReport, audit_cases, audit_files
from toolscore.audit.blame import Blame, BlamedChange, blame
from toolscore.audit.coverage import Coverage, Item, coverage, coverage_files, coverage_of_run
from toolscore.audit.planted import BAD_KINDS, HARMLESS_KINDS, Planted, planted_answers
from toolscore.audit.suggest import Suggestion, Suggestions, suggest_run

__all__ = [
    "BAD_KINDS",
    "HARMLESS_KINDS",
    "AuditReport",
    "Blame",
    "BlamedChange",
    "Coverage",
    "Item",
    "Planted",
    "Suggestion",
    "Suggestions",
    "audit_cases",
    "audit_files",
    "blame",
    "coverage",
    "coverage_files",
    "coverage_of_run",
    "planted_answers",
    "suggest_run",
]
