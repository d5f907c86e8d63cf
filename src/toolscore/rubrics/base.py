"""The values rubrics work on and give back, shared by the local checks and the remote
(judge and embedding) rubrics, so that each side is written and tested on its own."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

RESPONSE_TOOL = "(case)"
"""The `tool` of a rubric result on a case's response (`response_rubrics`): no tool of a
spec is written with brackets, so these results never mix with an argument's."""
RESPONSE_ARGUMENT = "(response)"
"""The `argument` of a rubric result on a case's response."""


@dataclass(frozen=True, slots=True)
class RubricTarget:
    """One produced text to score: a `text` argument of a produced call paired with a plan
    call, or what the agent said in a case (`tool` RESPONSE_TOOL, `call` None, `plan_call`
    the entry's index in the case's `response_rubrics`). `expected` is the plan's value when
    it is a plain string; `arguments` are the produced call's arguments (a `mentions` check
    looks up another argument there); `rubric_text`, when given, is the case's own assertion
    in place of the judge rubric's text."""

    case_id: str
    tool: str
    argument: str
    """The argument's path as the summary names it (`note`, `refund.note`, `tags[]`)."""
    call: int | None
    plan_call: int
    produced: str
    expected: str | None
    prompt: str | None
    arguments: Mapping[str, Any]
    rubric_text: str | None = None

    @property
    def is_response(self) -> bool:
        """Whether this is what the agent said in a case, not a call's argument."""
        return self.tool == RESPONSE_TOOL


@dataclass(frozen=True, slots=True)
class RubricVerdict:
    """A rubric's result on one target. `score` and `passed` are None when it could not be
    scored, and `unscored` then says why (an unreachable endpoint, an answer that is not the
    requested JSON, ...). `cached` is True when a stored judgment was reused."""

    rubric: str
    score: float | None
    passed: bool | None
    reason: str
    cached: bool = False
    unscored: str | None = None
    tokens: int = 0
    """Tokens the endpoint reported for this judgment (0 for local checks and cached ones)."""


MAX_ANSWER_BYTES = 4 * 1024 * 1024
"""The largest answer read from an endpoint by default (`max_answer_bytes`): 4 MiB, far above
any judgment or batch of embeddings, far below what a hostile server could send."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An OpenAI-compatible endpoint (a hosted API, vLLM, Ollama, llama.cpp). `api_key_env`
    names the environment variable that holds the key; the key itself is never stored."""

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout: float = 30.0
    """Seconds for one request."""
    retries: int = 3
    """Further attempts after a 429, a 5xx or a timeout, with exponential backoff."""
    concurrency: int = 4
    """Requests in flight at once."""
    max_answer_bytes: int = MAX_ANSWER_BYTES
    """The largest answer body read from the endpoint; a longer one is refused."""


@dataclass(frozen=True, slots=True)
class JudgeRubric:
    """A language-model judge: `text` is the rubric it applies; it answers a score on the
    scale `low..high` and the target passes at `threshold` or above."""

    name: str
    text: str
    endpoint: Endpoint
    low: int = 1
    high: int = 5
    threshold: float = 4.0
    seed: int | None = 0
    version: str | None = None


@dataclass(frozen=True, slots=True)
class SimilarityRubric:
    """Cosine similarity of the produced text's embedding to the expected text's; passes at
    `threshold` or above. A target without an expected text is unscored."""

    name: str
    endpoint: Endpoint
    threshold: float = 0.8
    version: str | None = None


RemoteRubric = JudgeRubric | SimilarityRubric
"""The rubrics that ask an endpoint (imported only when one runs: the `openai` extra)."""
