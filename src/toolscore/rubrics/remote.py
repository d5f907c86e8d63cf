"""Judge and similarity rubrics: scores asked of an OpenAI-compatible endpoint.

`score_remote` gives one verdict per target, in order. It first reuses what the cache holds
(keys: `rubrics.cache`), asks the endpoint once per distinct key for the rest, with at most
`Endpoint.concurrency` requests in flight, and keeps every scored answer in the cache as it
arrives, so that a run cut short loses only the answers still in flight. A fault of the
endpoint (unreachable, too slow after its retries, an answer that is not what was asked for)
makes that target's verdict unscored with the reason; it never raises. Unscored verdicts are
not cached: a later run asks again.

The requests run on an event loop of their own thread, so that this works the same from
plain code and from code that already runs an event loop; the cache is only ever used from
the caller's thread. `openai` is imported only when a remote rubric actually asks (the
`judge` extra); `check_keys` needs none of it.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolscore.errors import InputError
from toolscore.rubrics.base import (
    JudgeRubric,
    RemoteRubric,
    RubricTarget,
    RubricVerdict,
    SimilarityRubric,
)
from toolscore.rubrics.cache import JudgmentCache, judge_request, key_of, similarity_request

EMBED_BATCH = 64
"""Targets whose texts go into one embeddings request (at most twice as many texts)."""


def check_keys(rubrics: Iterable[RemoteRubric], source: str = "rubrics") -> None:
    """InputError naming the rubric and the variable when a rubric's key variable is unset
    or empty (for the command line to call before anything is sent; `source` is the spec
    file the rubrics come from). The key's value is never read into a message."""
    for rubric in rubrics:
        name = rubric.endpoint.api_key_env
        if name is not None and not os.environ.get(name):
            raise InputError(
                source,
                f"rubric {rubric.name!r} reads its endpoint's key from the environment "
                f"variable {name}, which is not set",
                field=f"rubrics.{rubric.name}.api_key_env",
            )


def score_remote(
    rubric: JudgeRubric | SimilarityRubric,
    targets: Sequence[RubricTarget],
    cache: JudgmentCache | None,
    *,
    refresh: bool = False,
    backoff: float | None = None,
) -> list[RubricVerdict]:
    """One verdict of `rubric` per target, in order (see the module's docstring).

    `refresh` asks again even where the cache has an answer (and keeps the new one);
    `backoff` is the pause before a first retry in seconds (default
    `endpoint.BACKOFF_SECONDS`). InputError when the rubric's key variable is unset.
    """
    check_keys([rubric])
    verdicts: list[RubricVerdict | None] = [None] * len(targets)
    wanted: dict[str, list[int]] = {}  # key -> the targets it scores, in order
    for index, target in enumerate(targets):
        request = _request(rubric, target)
        if isinstance(request, RubricVerdict):
            verdicts[index] = request
        else:
            wanted.setdefault(key_of(request), []).append(index)

    asked = []
    for key, indices in wanted.items():
        stored = None if cache is None or refresh else cache.get(key)
        if stored is None or stored.score is None:
            asked.append((key, targets[indices[0]]))
            continue
        for index in indices:
            verdicts[index] = _reused(rubric, stored)

    def settle(key: str, verdict: RubricVerdict) -> None:
        if cache is not None and verdict.score is not None:
            cache.put(key, verdict)
        for number, index in enumerate(wanted[key]):
            verdicts[index] = verdict if number == 0 else replace(verdict, tokens=0)

    if asked:
        _ask(rubric, asked, settle, backoff)
    done = [verdict for verdict in verdicts if verdict is not None]
    assert len(done) == len(targets), "every target gets a verdict"
    return done


def _request(rubric: RemoteRubric, target: RubricTarget) -> dict[str, Any] | RubricVerdict:
    """What deciding `target` takes (hashed into its key), or its verdict when it needs no
    endpoint: a similarity with no expected text, or with an empty produced one."""
    if isinstance(rubric, JudgeRubric):
        return judge_request(rubric, target)
    if target.expected is None or not target.expected.strip():
        why = "no expected text to compare the produced text with"
        return RubricVerdict(rubric.name, None, None, why, unscored=why)
    if not target.produced.strip():
        return RubricVerdict(rubric.name, 0.0, False, "the produced text is empty")
    return similarity_request(rubric, target.produced, target.expected)


def _reused(rubric: RemoteRubric, stored: RubricVerdict) -> RubricVerdict:
    """A stored verdict as this rubric gives it: its name, its threshold, cached, no tokens."""
    assert stored.score is not None
    return replace(
        stored,
        rubric=rubric.name,
        passed=stored.score >= rubric.threshold,
        cached=True,
        tokens=0,
    )


Settle = Callable[[str, RubricVerdict], None]
"""Keeps the verdict that came back for a key (on the caller's thread)."""


def _ask(
    rubric: RemoteRubric,
    asked: list[tuple[str, RubricTarget]],
    settle: Settle,
    backoff: float | None,
) -> None:
    """Ask the endpoint about every (key, target) and settle each verdict on this thread as
    it arrives; the requests themselves run on an event loop in a thread of their own."""
    from toolscore.rubrics import endpoint, jobs  # noqa: PLC0415 - they import openai

    variable = rubric.endpoint.api_key_env
    key = os.environ.get(variable) if variable else None
    requester = endpoint.Requester(
        rubric.endpoint, key, endpoint.BACKOFF_SECONDS if backoff is None else backoff
    )
    todo: list[jobs.Job]
    if isinstance(rubric, JudgeRubric):
        todo = [jobs.judge_job(rubric, requester, k, target) for k, target in asked]
    else:
        todo = [
            jobs.similarity_job(rubric, requester, asked[start : start + EMBED_BATCH])
            for start in range(0, len(asked), EMBED_BATCH)
        ]
    arrived: queue.Queue[_Arrival] = queue.Queue()
    stop = threading.Event()

    async def work() -> None:
        pending = iter(todo)
        async with endpoint.client(rubric.endpoint, key) as client:

            async def worker() -> None:
                for job in pending:  # shared: each job is taken by one worker
                    if stop.is_set():
                        return
                    arrived.put(_Arrival(await job(client)))

            workers = min(max(1, rubric.endpoint.concurrency), len(todo))
            await asyncio.gather(*(worker() for _ in range(workers)))

    def run() -> None:
        try:
            asyncio.run(work())
        except BaseException as error:  # a bug, not a fault of the endpoint: re-raised below
            arrived.put(_Arrival([], error))
        finally:
            arrived.put(_Arrival(None))

    thread = threading.Thread(target=run, name="toolscore-rubric-requests", daemon=True)
    thread.start()
    try:
        while (arrival := arrived.get()).settled is not None:
            if arrival.error is not None:
                raise arrival.error
            for k, verdict in arrival.settled:
                settle(k, verdict)
    finally:
        stop.set()
    thread.join()


@dataclass(frozen=True, slots=True)
class _Arrival:
    """Verdicts that came back (None: the requests are over), or the error that ended them."""

    settled: list[tuple[str, RubricVerdict]] | None
    error: BaseException | None = None
