"""The terminal's tables of cases counted in groups: conversation cases turn by turn, and
variant groups (cases sharing a `variant_of` id)."""

from __future__ import annotations

from typing import Any

from toolscore.report.cells import interval, percent, rate_row
from toolscore.report.layout import Block, Table, safe_line
from toolscore.stats.intervals import Rate

FIRST_FAILED_SHOWN = 10
"""First failing turns the turns table lists one by one (the rest are added up)."""


def turns_table(block: dict[str, Any]) -> Table:
    """Conversation cases turn by turn (the summary's turn figures): the turn accuracy with
    its Wilson interval and the one clustered by case, and how many conversations first
    failed at each turn."""
    title = f"Turns ({block['conversations']} conversations)"
    table = Table(title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("passed/n", justify="right")
    table.add_column("95% interval", justify="right")
    rate = block["turn_accuracy"]
    table.add_row(*rate_row("turn accuracy", Rate(rate["passed"], rate["n"])))
    bounds = rate["clustered"]["ci95"]
    table.add_row("  clustered by case", "", "", interval(tuple(bounds) if bounds else None))
    failed = sorted(block["first_failed_turn"].items(), key=lambda item: int(item[0]))
    for turn, count in failed[:FIRST_FAILED_SHOWN]:
        table.add_row(f"first failed at turn {turn}", "", str(count))
    rest = sum(count for _, count in failed[FIRST_FAILED_SHOWN:])
    if rest:
        table.add_row("first failed at a later turn", "", str(rest))
    return table


DIFFERING_LISTED = 5
"""Variant groups with differing verdicts the terminal names one by one."""


def variants_table(block: dict[str, Any]) -> list[Block]:
    """Variant groups (the summary's `variants` block): the share of groups whose every
    variant passed, the accuracy of each variant label and their spread, and the first
    groups whose verdicts differ, naming the cases that failed."""
    table = Table(f"Variants ({block['groups']} groups)", soft_wrap=True)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("passed/n", justify="right")
    table.add_column("95% interval", justify="right")
    whole = block["all_variants_pass"]
    table.add_row(*rate_row("every variant passes", Rate(whole["passed"], whole["n"])))
    for label, rate in block["per_variant"].items():
        table.add_row(*rate_row(f"variant {label}", Rate(rate["passed"], rate["n"])))
    if block["unlabelled"]:
        table.add_row("cases without a variant label", "", str(block["unlabelled"]), "")
    if block["spread"] is not None:
        table.add_row("spread (best - worst variant)", percent(block["spread"]), "", "")
    parts: list[Block] = [table]
    if block["differing"]:
        parts.append(safe_line(f"Groups whose variants disagree: {block['differing']}"))
        for entry in block["differing_groups"][:DIFFERING_LISTED]:
            failed = ", ".join(entry["failed"])
            parts.append(safe_line(f"  {entry['group']}: failed {failed}", style="red"))
    return parts
