"""Stored judgments: what a cache of remote verdicts offers, and the key a judgment is kept by.

The key is the sha256 of the canonical JSON of everything that decides a score: the kind, the
model and endpoint, the rubric's text, scale, seed and version, the prompt template's version
and the texts judged. The rubric's name and pass threshold are not in it (they do not change
what the endpoint answers: `passed` is worked out again from the stored score), nor are the
timeout, retries and concurrency, nor, ever, the key to the endpoint.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

import orjson

from toolscore.rubrics import judge_prompt
from toolscore.rubrics.base import JudgeRubric, RubricTarget, RubricVerdict, SimilarityRubric


class JudgmentCache(Protocol):
    """Where remote verdicts are kept between runs (the results store's `judgments` table)."""

    def get(self, key: str) -> RubricVerdict | None:
        """The verdict stored under `key`, or None."""

    def put(self, key: str, verdict: RubricVerdict) -> None:
        """Keep `verdict` (a scored one) under `key`, replacing what was there."""


def judge_request(rubric: JudgeRubric, target: RubricTarget) -> dict[str, Any]:
    """Everything that decides a judge's score of `target`: for a case's response, the
    case's assertion stands as the rubric's text, and the prompt version is the response
    prompt's (`response-1`), so no argument's judgment is ever reused for a response."""
    return {
        "kind": "judge",
        "base_url": _base_url(rubric.endpoint.base_url),
        "model": rubric.endpoint.model,
        "prompt_version": judge_prompt.prompt_version(target),
        "rubric": {
            "text": judge_prompt.rubric_text(rubric, target),
            "low": rubric.low,
            "high": rubric.high,
            "seed": rubric.seed,
            "version": rubric.version,
        },
        "inputs": {
            "tool": target.tool,
            "argument": target.argument,
            "prompt": target.prompt,
            "expected": target.expected,
            "produced": target.produced,
        },
    }


def similarity_request(rubric: SimilarityRubric, produced: str, expected: str) -> dict[str, Any]:
    """Everything that decides the similarity of `produced` to `expected`."""
    return {
        "kind": "similarity",
        "base_url": _base_url(rubric.endpoint.base_url),
        "model": rubric.endpoint.model,
        "rubric": {"version": rubric.version},
        "inputs": {"produced": produced, "expected": expected},
    }


def key_of(request: dict[str, Any]) -> str:
    """The sha256 (hex) of the request's canonical JSON (sorted keys, no spaces, UTF-8)."""
    return hashlib.sha256(orjson.dumps(request, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _base_url(url: str) -> str:
    """The endpoint as the key sees it: `http://h/v1/` and `http://h/v1` are one endpoint."""
    return url.strip().rstrip("/")
