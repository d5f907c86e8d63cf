"""Conversations of two stored runs, paired turn by turn on the cases both have: the
difference of the turn accuracy, and the cases whose first failing turn changed.

Turn k of a case in run A is paired with turn k of the same case in run B. The turns of
one conversation are not independent, so the interval of B - A resamples cases, each with
all its turns (`stats.paired.cluster_test`, the test the rubric entries of a case get): the
difference is that of the turn accuracy over the paired turns, McNemar's counts are turns.
A shared case whose two entries have different numbers of turns cannot be paired turn by
turn: it is counted (`unpaired_cases`) and left out of the test, never guessed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from toolscore.stats.paired import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Clusters,
    PairedTest,
    cluster_test,
)
from toolscore.store.codec import unpack_json
from toolscore.store.compare_partial import shared_details
from toolscore.store.database import RunInfo, Store

MAX_FIRST_TURN_CHANGES = 50
"""Cases whose first failing turn changed listed at most (all are counted)."""


class FirstTurnChange(NamedTuple):
    """A shared conversation case whose first failing turn differs between the runs
    (None where the conversation passed every turn)."""

    case_id: str
    a: int | None
    b: int | None

    def to_json(self) -> dict[str, Any]:
        """The change as `compare --json` lists it."""
        return {"case": self.case_id, "a": self.a, "b": self.b}


class TurnComparison(NamedTuple):
    """The conversations of both runs paired on the shared cases."""

    test: PairedTest | None
    """Turn accuracy B - A over the paired turns, resampling cases; None without a turn."""
    cases: int
    """Shared conversation cases paired turn by turn."""
    unpaired: int
    """Shared cases that are a conversation in one run only, or with other numbers of
    turns in the two runs: left out of `test`."""
    changed: int
    """Shared conversation cases whose first failing turn differs."""
    changes: tuple[FirstTurnChange, ...]
    """The first `MAX_FIRST_TURN_CHANGES` of them, in case order."""

    def to_json(self) -> dict[str, Any]:
        """The `turns` block of `compare --json`."""
        return {
            "paired": None if self.test is None else self.test.to_json(),
            "cases": self.cases,
            "unpaired_cases": self.unpaired,
            "first_failed_turn_changed": self.changed,
            "first_failed_turn_changes": [change.to_json() for change in self.changes],
        }


def _turns(detail: bytes | None) -> tuple[list[bool], int | None] | None:
    """The stored case's turn verdicts and first failing turn; None for a case that is not
    a conversation (or was stored without its turns)."""
    if detail is None:
        return None
    entry = unpack_json(detail)
    turns = entry.get("turns")
    if not isinstance(turns, list):
        return None
    first = entry.get("first_failed_turn")
    verdicts = [bool(t.get("passed")) for t in turns if isinstance(t, dict)]
    return verdicts, first if type(first) is int else None


def compare_turns(
    store: Store,
    a: RunInfo,
    b: RunInfo,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> TurnComparison:
    """The paired turn accuracy and the first-failing-turn changes of the cases both runs
    have, read a case at a time (memory holds the counts and the capped list)."""
    counts = [0, 0, 0, 0]  # a passed, b passed, n01, n10
    patterns: Counter[tuple[int, int]] = Counter()
    paired = unpaired = changed = 0
    changes: list[FirstTurnChange] = []
    for case_id, detail_a, detail_b in shared_details(store, a, b):
        turns_a, turns_b = _turns(detail_a), _turns(detail_b)
        if turns_a is None and turns_b is None:
            continue
        if turns_a is None or turns_b is None or len(turns_a[0]) != len(turns_b[0]):
            unpaired += 1
            continue
        paired += 1
        _add(counts, patterns, turns_a[0], turns_b[0])
        if turns_a[1] != turns_b[1]:
            changed += 1
            if len(changes) < MAX_FIRST_TURN_CHANGES:
                changes.append(FirstTurnChange(case_id, turns_a[1], turns_b[1]))
    clusters = Clusters(
        a_passed=counts[0],
        b_passed=counts[1],
        n01=counts[2],
        n10=counts[3],
        patterns=tuple((diff, size, n) for (diff, size), n in sorted(patterns.items())),
    )
    test = cluster_test("turn accuracy", clusters, seed=seed, resamples=resamples)
    if test is not None:
        test = test._replace(unit="turn")  # n, n01 and n10 count turns
    return TurnComparison(test, paired, unpaired, changed, tuple(changes))


def _add(
    counts: list[int],
    patterns: Counter[tuple[int, int]],
    verdicts_a: Sequence[bool],
    verdicts_b: Sequence[bool],
) -> None:
    """Count one case's paired turns: passes in each run, the discordant turns, and the
    case's pattern (sum of B - A over its turns, its number of turns)."""
    for passed_a, passed_b in zip(verdicts_a, verdicts_b, strict=True):
        counts[0] += passed_a
        counts[1] += passed_b
        counts[2] += not passed_a and passed_b
        counts[3] += passed_a and not passed_b
    if verdicts_a:
        patterns[(sum(verdicts_b) - sum(verdicts_a), len(verdicts_a))] += 1
