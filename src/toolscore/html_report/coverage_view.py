"""The page's coverage section: `toolscore coverage --json`'s report of how much of the spec
the run's cases exercise and decide (docs/formats.md 15.1), as the template reads it, when
`toolscore report --coverage` computed one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_COVERAGE_ROWS = 1000
"""Coverage rows the page lists at most (untested and uncovered items are all named)."""


def coverage_view(block: Any) -> dict[str, Any] | None:
    """The coverage report for the page: its counts, the untested items and uncovered tools
    in full, and its rows (the untested first, then in spec order) up to MAX_COVERAGE_ROWS;
    None when the page was asked for no coverage."""
    if not isinstance(block, Mapping):
        return None
    untested = set(block.get("untested", ()))
    items = list(block.get("items", ()))
    ordered = [i for i in items if i["name"] in untested] + [
        i for i in items if i["name"] not in untested
    ]
    return {
        "cases": block.get("cases"),
        "scored": block.get("scored"),
        "untested": list(block.get("untested", ())),
        "uncovered": list(block.get("uncovered", ())),
        "rows": [{**item, "untested": item["name"] in untested} for item in ordered][
            :MAX_COVERAGE_ROWS
        ],
        "rows_left": max(len(items) - MAX_COVERAGE_ROWS, 0),
    }
