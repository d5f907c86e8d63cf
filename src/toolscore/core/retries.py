"""Retried calls: a produced call whose tool reported an error, followed later by a call to
the same tool (docs/formats.md, retries).

Under a `retries` relaxation such a call is excused: the matcher pairs the other calls, as if
it had not been made, so the later call is the one a plan call is paired with, and it is
neither an extra call nor a mismatch. What the matcher finds on the calls it was given is
mapped back to the calls' own positions (`Excused`), so that every pair and mismatch names
the call as the agent made it.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import NamedTuple

from toolscore.core.dataflow import order_message
from toolscore.core.model import Call, Efficiency, Mismatch, Pairs, Partial, Retry
from toolscore.core.plans import PlanVerdict

_ERROR = attrgetter("result_error")


def find_retries(calls: Sequence[Call], excusable: frozenset[str]) -> tuple[Retry, ...]:
    """The retried calls of `calls`, in order: each call whose result is an error and that a
    later call to the same tool follows, with the first such call (`retried_by`); `excused`
    for the tools in `excusable` (those a `retries` relaxation covers)."""
    if len(calls) < 2 or not any(map(_ERROR, calls)):
        return ()
    following: dict[str, int] = {}
    later: list[int | None] = [None] * len(calls)
    for j in range(len(calls) - 1, -1, -1):
        name = calls[j].name
        later[j] = following.get(name)
        following[name] = j
    found = []
    for j, call in enumerate(calls):
        k = later[j]
        if call.result_error and k is not None:
            found.append(Retry(j, call.name, k, call.name in excusable))
    return tuple(found)


class Excused(NamedTuple):
    """The calls the matcher is given when some retried calls are excused (`scored`), and
    for each of them its position among all the calls (`kept`)."""

    scored: tuple[Call, ...]
    kept: tuple[int, ...]
    left_out: int
    """How many calls were excused (left out of `scored`)."""

    def verdict(self, verdict: PlanVerdict) -> PlanVerdict:
        """`verdict`, found on `scored`, with its pairs and mismatches at the calls' own
        positions."""
        return verdict._replace(
            pairs=self.pairs(verdict.pairs),
            mismatches=tuple(self.mismatch(m) for m in verdict.mismatches),
        )

    def pairs(self, pairs: Pairs) -> Pairs:
        """(plan call, produced call) pairs over `scored`, over all the calls."""
        kept = self.kept
        return tuple((i, kept[j]) for i, j in pairs)

    def mismatch(self, mismatch: Mismatch) -> Mismatch:
        """A mismatch found on `scored`, at the call's own position (an `order_violation`
        names its source call by position too: that is mapped as well)."""
        if mismatch.call is None:
            return mismatch
        call = self.kept[mismatch.call]
        if mismatch.code == "order_violation" and type(mismatch.produced) is int:
            source = self.kept[mismatch.produced]
            message = order_message(call, str(mismatch.expected), source)
            return mismatch._replace(call=call, produced=source, message=message)
        return mismatch._replace(call=call)

    def credit(
        self, partial: Partial, efficiency: Efficiency, repeated: int
    ) -> tuple[Partial, Efficiency]:
        """Partial credit found on `scored`, over all the calls: the excused calls are left
        unpaired, counted in `extra` and `excused` (and so not in `produced`); `repeated` is
        counted over all the calls."""
        return partial._replace(pairs=self.pairs(partial.pairs)), Efficiency(
            efficiency.extra + self.left_out, efficiency.excused + self.left_out, repeated
        )


def excused_calls(calls: Sequence[Call], retries: Sequence[Retry]) -> Excused | None:
    """The calls left for the matcher once the excused retried calls are taken out, None
    when no retried call is excused."""
    out = {retry.call for retry in retries if retry.excused}
    if not out:
        return None
    kept = tuple(j for j in range(len(calls)) if j not in out)
    return Excused(tuple(calls[j] for j in kept), kept, len(out))
