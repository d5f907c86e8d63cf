"""The requests remote rubrics make, one job each: a judge's grading of one target, or the
embeddings of a chunk of targets' texts, turned into verdicts.

A job never raises for a fault of the endpoint: the requester's failure, an answer that is
not a chat completion or not the embeddings asked for, or a judge's answer that is not the
requested JSON, each makes the verdicts it decides unscored with the reason. Tokens come from
the answer's `usage`; an embeddings request's tokens are shared out over its targets so that
they add up to what it used. This module imports `openai` (the `judge` extra).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any

import openai

from toolscore.rubrics import judge_prompt
from toolscore.rubrics.base import (
    JudgeRubric,
    RemoteRubric,
    RubricTarget,
    RubricVerdict,
    SimilarityRubric,
)
from toolscore.rubrics.endpoint import EndpointError, Requester

Job = Callable[[openai.AsyncOpenAI], Coroutine[Any, Any, list[tuple[str, RubricVerdict]]]]
"""One request to the endpoint, giving the verdicts of the keys it decides."""


def judge_job(rubric: JudgeRubric, requester: Requester, key: str, target: RubricTarget) -> Job:
    """A request asking the judge about one distinct target (cached under `key`)."""
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
        except EndpointError as fault:
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


def similarity_job(
    rubric: SimilarityRubric, requester: Requester, chunk: list[tuple[str, RubricTarget]]
) -> Job:
    """One embeddings request for the texts of a chunk of distinct targets, each with its
    key (a text two targets share is sent once)."""
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
        except EndpointError as fault:
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
            reason = f"cosine similarity {score:.3f}"
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
    if len(data) != count or set(by_index) != set(range(count)):
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


def _unscored(rubric: RemoteRubric, why: str, tokens: int = 0) -> RubricVerdict:
    return RubricVerdict(rubric.name, None, None, why, unscored=why, tokens=tokens)
