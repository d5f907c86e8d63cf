"""The one-file HTML page of a comparison of two stored runs (`compare A B --html`).

It shows what `compare --json` gives, read from that JSON: each metric of both runs, the
paired difference with its bootstrap interval, McNemar's counts and p-value and the plain
sentence; the rubric results paired per rubric and per argument (when either run has any);
per-tool and per-argument moves; and the cases that flipped, with the rule (and
spec change) that decided each, the first `MAX_FLIPS` of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscore.html_report.page import render

MAX_FLIPS = 2_000
"""Flipped cases listed at most (`compare --json` lists them all)."""
MAX_MOVES = 200
"""Per-tool and per-argument rows listed at most, the largest differences first."""


def compare_html(comparison: Mapping[str, Any], max_flips: int = MAX_FLIPS) -> str:
    """The page of `comparison` (as `Comparison.to_json()` gives it)."""
    a, b = comparison["a"], comparison["b"]
    flips = comparison.get("flips", [])
    return render(
        "compare.html",
        title=f"toolscore compare: run {a['id']} and run {b['id']}",
        a=a,
        b=b,
        c=comparison,
        flips=flips[:max_flips],
        flips_left=max(len(flips) - max_flips, 0),
        per_tool=comparison.get("per_tool", [])[:MAX_MOVES],
        per_argument=comparison.get("per_argument", [])[:MAX_MOVES],
    )
