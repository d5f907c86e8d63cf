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
import math
import os
import queue
import threading
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolscore.errors import InputError
from toolscore.rubrics.base import (
    JudgeRubric,
    RemoteRubric,
    RubricTarget,
    RubricVerdict,
    SimilarityRubric,
)
from toolscore.rubrics.cache import JudgmentCache, judge_request, key_of, similarity_request

if TYPE_CHECKING:
    import openai

    from toolscore.rubrics.endpoint import Requester

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
        return _unscored(rubric, "no expected text to compare the produced text with")
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
        reason=_similarity_reason(stored.score, rubric.threshold)
        if isinstance(rubric, SimilarityRubric)
        else stored.reason,
        cached=True,
        tokens=0,
    )


def _unscored(rubric: RemoteRubric, why: str, tokens: int = 0) -> RubricVerdict:
    return RubricVerdict(rubric.name, None, None, why, unscored=why, tokens=tokens)


def _similarity_reason(score: float, threshold: float) -> str:
    return f"cosine similarity {score:.3f} (passes at {threshold:g})"


Settle = Callable[[str, RubricVerdict], None]
"""Keeps the verdict that came back for a key (on the caller's thread)."""
Job = Callable[["openai.AsyncOpenAI"], Coroutine[Any, Any, list[tuple[str, RubricVerdict]]]]
"""One request to the endpoint, giving the verdicts of the keys it decides."""


def _ask(
    rubric: RemoteRubric,
    asked: list[tuple[str, RubricTarget]],
    settle: Settle,
    backoff: float | None,
) -> None:
    """Ask the endpoint about every (key, target) and settle each verdict on this thread as
    it arrives; the requests themselves run on an event loop in a thread of their own."""
    from toolscore.rubrics import endpoint  # noqa: PLC0415 - imports openai

    variable = rubric.endpoint.api_key_env
    key = os.environ.get(variable) if variable else None
    requester = endpoint.Requester(
        rubric.endpoint, key, endpoint.BACKOFF_SECONDS if backoff is None else backoff
    )
    jobs: list[Job]
    if isinstance(rubric, JudgeRubric):
        jobs = [_judge_job(rubric, requester, k, target) for k, target in asked]
    else:
        jobs = [
            _similarity_job(rubric, requester, asked[start : start + EMBED_BATCH])
            for start in range(0, len(asked), EMBED_BATCH)
        ]
    arrived: queue.Queue[_Arrival] = queue.Queue()
    stop = threading.Event()

    async def work() -> None:
        pending = iter(jobs)
        async with endpoint.client(rubric.endpoint, key) as client:

            async def worker() -> None:
                for job in pending:  # shared: each job is taken by one worker
                    if stop.is_set():
                        return
                    arrived.put(_Arrival(await job(client)))

            workers = min(max(1, rubric.endpoint.concurrency), len(jobs))
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


def _judge_job(rubric: JudgeRubric, requester: Requester, key: str, target: RubricTarget) -> Job:
    """A request asking the judge about one distinct target."""
    import openai  # noqa: PLC0415 - the `judge` extra

    from toolscore.rubrics import endpoint, judge_prompt  # noqa: PLC0415

    messages: Any = judge_prompt.messages(rubric, target)
    seed: Any = openai.omit if rubric.seed is None else rubric.seed

    async def job(client: openai.AsyncOpenAI) -> list[tuple[str, RubricVerdict]]:
        try:
            response = await requester.send(
                lambda: client.chat.completions.create(
                    model=rubric.endpoint.model,
                    messages=messages,
                    temperature=0,
                    seed=seed,
                    response_format={"type": "json_object"},
                )
            )
        except endpoint.EndpointError as fault:
            return [(key, _unscored(rubric, str(fault)))]
        tokens = _tokens(response)
        try:
            choice = response.choices[0]
            answer = choice.message.content
        except (AttributeError, IndexError, TypeError):
            why = "the endpoint's answer has no message (not a chat completion)"
            return [(key, _unscored(rubric, why, tokens))]
        try:
            score, reason = judge_prompt.parse_answer(answer, rubric.low, rubric.high)
        except judge_prompt.MalformedAnswerError as error:
            return [(key, _unscored(rubric, requester.redacted(str(error)), tokens))]
        passed = score >= rubric.threshold
        verdict = RubricVerdict(rubric.name, score, passed, requester.redacted(reason))
        return [(key, replace(verdict, tokens=tokens))]

    return job


def _similarity_job(
    rubric: SimilarityRubric, requester: Requester, chunk: list[tuple[str, RubricTarget]]
) -> Job:
    """One embeddings request for the texts of a chunk of distinct targets."""
    from toolscore.rubrics import endpoint  # noqa: PLC0415 - imports openai

    texts: list[str] = []
    position: dict[str, int] = {}
    for _, target in chunk:
        for text in (target.produced, target.expected or ""):
            if text not in position:
                position[text] = len(texts)
                texts.append(text)

    async def job(client: openai.AsyncOpenAI) -> list[tuple[str, RubricVerdict]]:
        def everyone(why: str, tokens: int = 0) -> list[tuple[str, RubricVerdict]]:
            shares = _shares(tokens, len(chunk))
            return [(k, _unscored(rubric, why, t)) for (k, _), t in zip(chunk, shares, strict=True)]

        try:
            response = await requester.send(
                lambda: client.embeddings.create(
                    model=rubric.endpoint.model, input=texts, encoding_format="float"
                )
            )
        except endpoint.EndpointError as fault:
            return everyone(str(fault))
        tokens = _tokens(response)
        vectors = _vectors(response, len(texts))
        if isinstance(vectors, str):
            return everyone(vectors, tokens)
        settled = []
        for (k, target), share in zip(chunk, _shares(tokens, len(chunk)), strict=True):
            produced = vectors[position[target.produced]]
            expected = vectors[position[target.expected or ""]]
            score = _cosine(produced, expected)
            if score is None:
                why = "the endpoint gave embeddings of different lengths, or a zero vector"
                settled.append((k, _unscored(rubric, why, share)))
                continue
            reason = _similarity_reason(score, rubric.threshold)
            passed = score >= rubric.threshold
            settled.append((k, RubricVerdict(rubric.name, score, passed, reason, tokens=share)))
        return settled

    return job


def _vectors(response: Any, count: int) -> list[list[float]] | str:
    """The `count` embeddings of a response in input order, or why they cannot be read."""
    bad = "the endpoint's answer is not the embeddings asked for"
    try:
        data = list(response.data)
        by_index = {item.index: item.embedding for item in data}
    except (AttributeError, TypeError):
        return bad
    if len(data) != count or sorted(by_index) != list(range(count)):
        return f"{bad} ({len(data)} embeddings for {count} texts)"
    vectors = []
    for index in range(count):
        vector = by_index[index]
        if not isinstance(vector, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
            for x in vector
        ):
            return f"{bad} (embedding {index} is not a list of numbers)"
        vectors.append([float(x) for x in vector])
    return vectors


def _cosine(a: list[float], b: list[float]) -> float | None:
    """The cosine of the angle between `a` and `b`, clamped to -1..1 (None when undefined)."""
    if len(a) != len(b) or not a:
        return None
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    if norms == 0:
        return None
    return max(-1.0, min(1.0, math.fsum(x * y for x, y in zip(a, b, strict=True)) / norms))


def _tokens(response: Any) -> int:
    """The tokens an answer says it used (0 when it does not say)."""
    usage = getattr(response, "usage", None)
    total = getattr(usage, "total_tokens", None)
    if not isinstance(total, int):
        total = getattr(usage, "prompt_tokens", None)
    return total if isinstance(total, int) and total >= 0 else 0


def _shares(tokens: int, parts: int) -> list[int]:
    """`tokens` split into `parts` near-equal integers that add up to it."""
    base, extra = divmod(tokens, parts)
    return [base + (1 if part < extra else 0) for part in range(parts)]
