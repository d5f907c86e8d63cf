"""A seeded, stratified sample: every stratum gets its turn, so rare ones are not drowned.

Disagreements between scorers cluster: one lenient rule on a busy tool can account for most
of them. A uniform sample of a hundred would then be a hundred cases of the same rule. Here
each stratum (a tool and the rule that decided) gives one case per round until the sample is
full, and the run's counts per stratum are kept beside the sample so that agreement can
still be weighed against the whole run.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable


def stratified_sample(population: Iterable[tuple[str, str]], n: int, seed: int) -> list[str]:
    """`n` ids (all, if fewer) from (stratum, id) pairs, in a shuffled labelling order.

    Equal allocation: strata take turns, one id each, a small stratum dropping out when it
    is used up. The result depends only on the seed and the set of pairs, not on their order.
    """
    strata: defaultdict[str, list[str]] = defaultdict(list)
    for stratum, item in population:
        strata[stratum].append(item)
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
