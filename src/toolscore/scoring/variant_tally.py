"""The variants block of a run's summary: cases that give the same task another way (a
rephrased prompt, another tool-description format, another language) share a `variant_of`
id, and the run says per group whether every variant passed, how accuracy spreads across
the `variant` labels, and which groups' verdicts differ (the robustness that BFCL's
format-sensitivity category measures).

It keeps one entry per case in a group (its id, label and verdicts), so its memory follows
the cases that name a group, as the cases file does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolscore.stats.intervals import Rate, rounded

DIFFERING_SHOWN = 100
"""Groups whose verdicts differ that the summary lists by name (all are counted)."""


@dataclass
class VariantTally:
    """Cases with a `variant_of` id, by group (`SummaryBuilder` adds each entry)."""

    groups: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    """Group id -> case id -> [variant label or None, entries, entries passed]."""

    def add(self, group: str, case_id: str, label: str | None, passed: bool) -> None:
        """Count one entry (one outputs line, one trial) of a case in a group."""
        members = self.groups.setdefault(group, {})
        counts = members.get(case_id)
        if counts is None:
            counts = members[case_id] = [label, 0, 0]
        counts[1] += 1
        counts[2] += passed

    def merge(self, other: VariantTally) -> None:
        """Add the entries of a worker's chunk."""
        for group, members in other.groups.items():
            mine = self.groups.setdefault(group, {})
            for case_id, (label, entries, passed) in members.items():
                counts = mine.setdefault(case_id, [label, 0, 0])
                counts[1] += entries
                counts[2] += passed

    def to_json(self) -> dict[str, Any]:
        """The `variants` block of the summary (docs/formats.md 7.11)."""
        all_pass = 0
        labels: dict[str, list[int]] = {}
        unlabelled = 0
        differing: list[dict[str, Any]] = []
        for group in sorted(self.groups):
            members = self.groups[group]
            passed_ids = [c for c, (_, n, p) in sorted(members.items()) if p == n]
            failed_ids = [c for c, (_, n, p) in sorted(members.items()) if p < n]
            all_pass += not failed_ids
            if passed_ids and failed_ids:
                differing.append({"group": group, "passed": passed_ids, "failed": failed_ids})
            for label, entries, passed in members.values():
                if label is None:
                    unlabelled += entries
                    continue
                counts = labels.setdefault(label, [0, 0])
                counts[0] += entries
                counts[1] += passed
        per_variant = {k: Rate(p, n).to_json() for k, (n, p) in sorted(labels.items())}
        values = [Rate(p, n).value for n, p in labels.values()]
        known = [v for v in values if v is not None]
        spread = rounded(max(known) - min(known)) if len(known) >= 2 else None
        return {
            "groups": len(self.groups),
            "all_variants_pass": Rate(all_pass, len(self.groups)).to_json(),
            "per_variant": per_variant,
            "unlabelled": unlabelled,
            "spread": spread,
            "differing": len(differing),
            "differing_groups": differing[:DIFFERING_SHOWN],
        }
