"""Which BFCL categories convert, and why the others do not.

BFCL names a case `<category>_<n>` (`simple_python_3`, `live_multiple_12-3-4`): the category
decides how a case converts. Single-turn Python categories with possible answers become tool
cases; the irrelevance categories become abstention cases (the right answer is no call).
Everything else is refused with the reason, rather than converted into something that would
score differently from what the category means.
"""

from __future__ import annotations

import re

CALL_CATEGORIES = frozenset(
    {
        "simple",
        "simple_python",
        "multiple",
        "parallel",
        "parallel_multiple",
        "live_simple",
        "live_multiple",
        "live_parallel",
        "live_parallel_multiple",
    }
)
"""Categories whose possible answers are the calls a correct model makes."""

ABSTENTION_CATEGORIES = frozenset({"irrelevance", "live_irrelevance"})
"""Categories whose right answer is no call at all (BFCL: no decodable function call)."""

_REFUSED = {  # looked up in order: "javascript" before "java"
    "javascript": "JavaScript categories are not supported: BFCL's checker reads values from "
    "JavaScript source text with its own type converter, which toolscore does not reproduce",
    "java": "Java categories are not supported: BFCL's checker reads values from Java source "
    "text with its own type converter, which toolscore does not reproduce",
    "live_relevance": "live_relevance is not supported: it accepts any call at all, which a "
    "list of expected plans cannot state",
    "multi_turn": "a multi-turn entry converts only with its initial_config and "
    "involved_classes, as BFCL ships its multi-turn category files",
    "exec": "executable categories are not supported: BFCL checks them by running the functions",
    "memory": "memory categories are agentic: BFCL checks the final answer, not calls",
    "web_search": "web_search categories are agentic: BFCL checks the final answer, not calls",
    "format_sensitivity": "format_sensitivity is a prompt-format study over other categories; "
    "import those categories instead",
}

_ID = re.compile(r"(?P<category>[A-Za-z_]+?)_\d+(?:-\d+)*")


def category_of(case_id: str) -> str | None:
    """The category part of a BFCL case id, or None when the id does not look like one."""
    match = _ID.fullmatch(case_id)
    return match.group("category") if match else None


def refusal(category: str) -> str | None:
    """Why a category cannot be converted, or None when it can."""
    if category in CALL_CATEGORIES or category in ABSTENTION_CATEGORIES:
        return None
    for prefix, reason in _REFUSED.items():
        if prefix in category:
            return reason
    return f"unknown BFCL category {category!r}"
