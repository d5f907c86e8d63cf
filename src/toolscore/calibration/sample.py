"""A seeded, stratified sample: every stratum gets its turn, so rare ones are not drowned.

Disagreements between scorers cluster: one lenient rule on a busy tool can account for most
of them. A uniform sample of a hundred would then be a hundred cases of the same rule. Here
each stratum (a tool and the rule that decided) gives one case per round until the sample is
full, and the run's counts per stratum are kept beside the sample so that agreement can
still be weighed against the whole run.

The cases where the scorers agree are sampled the other way, in proportion to each stratum's
size (`proportional_sample`): they estimate the rule scorer's accuracy on the run, where
proportional allocation is the efficient default and every stratum still gets a case.
"""

from __future__ import annotations

import heapq
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping


def _grouped(population: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    strata: defaultdict[str, list[str]] = defaultdict(list)
    for stratum, item in population:
        strata[stratum].append(item)
    return strata


def stratified_sample(population: Iterable[tuple[str, str]], n: int, seed: int) -> list[str]:
    """`n` ids (all, if fewer) from (stratum, id) pairs, in a shuffled labelling order.

    Equal allocation: strata take turns, one id each, a small stratum dropping out when it
    is used up. The result depends only on the seed and the set of pairs, not on their order.
    """
    strata = _grouped(population)
    rng = random.Random(seed)
    queues = []
    for stratum in sorted(strata):
        members = sorted(strata[stratum])
        rng.shuffle(members)
        queues.append(members)
    rng.shuffle(queues)  # which strata fill the last, incomplete round is up to the seed
    chosen: list[str] = []
    depth = 0
    while len(chosen) < n and queues:
        queues = [queue for queue in queues if depth < len(queue)]
        for queue in queues:
            if len(chosen) == n:
                break
            chosen.append(queue[depth])
        depth += 1
    rng.shuffle(chosen)  # labelled in random order, not stratum by stratum
    return chosen


def allocation(sizes: Mapping[str, int], k: int, rng: random.Random) -> dict[str, int]:
    """How many of `k` to take from each stratum of these sizes: one each first when `k` is
    at least the number of strata, then one at a time to the stratum furthest below its
    proportional share `k * size / total` (largest remainders), never more than its size.
    Ties go to strata in an order drawn from `rng`."""
    total = sum(sizes.values())
    if k >= total:
        return dict(sizes)
    names = sorted(name for name, size in sizes.items() if size > 0)
    rng.shuffle(names)
    taken = dict.fromkeys(names, 1 if k >= len(names) else 0)
    # shortfall below the share, times total (integers, so that ties are exact)
    heap = [(taken[name] * total - k * sizes[name], rank, name) for rank, name in enumerate(names)]
    heapq.heapify(heap)
    for _ in range(k - sum(taken.values())):
        _, rank, name = heapq.heappop(heap)
        taken[name] += 1
        if taken[name] < sizes[name]:
            heapq.heappush(heap, (taken[name] * total - k * sizes[name], rank, name))
    return taken


def proportional_sample(population: Iterable[tuple[str, str]], k: int, seed: str) -> list[str]:
    """`k` ids (all, if fewer) from (stratum, id) pairs, each stratum giving its share in
    proportion to its size (see `allocation`), in a shuffled order. The result depends only
    on the seed and the set of pairs."""
    strata = _grouped(population)
    rng = random.Random(seed)
    counts = allocation({name: len(members) for name, members in strata.items()}, k, rng)
    chosen: list[str] = []
    for stratum in sorted(strata):
        members = sorted(strata[stratum])
        rng.shuffle(members)
        chosen += members[: counts.get(stratum, 0)]
    rng.shuffle(chosen)
    return chosen
