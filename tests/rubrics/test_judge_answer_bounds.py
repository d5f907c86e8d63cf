"""The judge client reads at most `max_answer_bytes` of an answer and follows no redirect to
another origin (issue 25, item 4), against scripted servers on 127.0.0.1: a 1 MiB answer
to a 64 KiB bound, with and without a declared length, is refused, as is a 307 to another
port, whose server is never asked; a redirect within the endpoint's origin is followed.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from fake_openai import FakeOpenAI, Reply, judge_answer, serving
from toolscore.rubrics.base import MAX_ANSWER_BYTES, Endpoint, JudgeRubric, RubricTarget
from toolscore.rubrics.remote import score_remote
from toolscore.rubrics.spec import RubricSpecError, parse_rubric

BOUND = 64 * 1024
GOOD = '{"score": 5, "reason": "good"}'


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serving()


@pytest.fixture
def elsewhere() -> Iterator[FakeOpenAI]:
    yield from serving()


def rubric(server: FakeOpenAI, **options: Any) -> JudgeRubric:
    endpoint = Endpoint(server.url, "judge-1", retries=2, **options)
    return JudgeRubric("apology", "Does the note apologise?", endpoint)


def target() -> RubricTarget:
    return RubricTarget("c0", "refund", "note", 0, 0, "Sorry.", None, None, {"note": "Sorry."})


def huge(chunked: bool) -> Reply:
    """A judge's answer padded to 1 MiB (16 times the bound) in an ignored field."""
    body = judge_answer(GOOD).body
    body["padding"] = "x" * (1024 * 1024)
    return Reply(body=orjson.dumps(body), chunked=chunked)


@pytest.mark.parametrize("chunked", [False, True], ids=["declared length", "chunked"])
def test_an_answer_over_the_bound_is_refused_at_once(server: FakeOpenAI, chunked: bool) -> None:
    server.chat = lambda body, n: huge(chunked)
    [verdict] = score_remote(rubric(server, max_answer_bytes=BOUND), [target()], None)
    assert verdict.score is None
    assert verdict.unscored == (
        "refused an answer larger than 65,536 bytes (the endpoint's max_answer_bytes)"
    )
    assert len(server.requests()) == 1  # not retried


def test_an_answer_within_the_bound_is_read(server: FakeOpenAI) -> None:
    server.chat = lambda body, n: huge(True)
    [verdict] = score_remote(rubric(server, max_answer_bytes=2 * 1024 * 1024), [target()], None)
    assert verdict.score == 5.0


def test_a_compressed_answer_is_refused(server: FakeOpenAI) -> None:
    raw = gzip.compress(orjson.dumps(judge_answer(GOOD).body))
    server.chat = lambda body, n: Reply(body=raw, headers={"Content-Encoding": "gzip"})
    [verdict] = score_remote(rubric(server), [target()], None)
    assert verdict.unscored is not None
    assert verdict.unscored.startswith("refused a compressed answer (Content-Encoding: gzip)")


def test_a_redirect_to_another_origin_is_refused_and_not_followed(
    server: FakeOpenAI, elsewhere: FakeOpenAI
) -> None:
    away = elsewhere.url + "/chat/completions"
    server.chat = lambda body, n: Reply(307, b"", headers={"Location": away})
    [verdict] = score_remote(rubric(server), [target()], None)
    assert verdict.unscored == (f"refused a redirect from {server.url} to another origin ({away})")
    assert elsewhere.requests() == []
    assert len(server.requests()) == 1


def test_a_redirect_within_the_origin_is_followed(server: FakeOpenAI) -> None:
    moved = server.url.replace("/v1", "/v2") + "/chat/completions"
    asked: list[int] = []

    def chat(body: dict[str, Any], n: int) -> Reply:
        asked.append(n)
        return (
            Reply(307, b"", headers={"Location": moved}) if len(asked) == 1 else judge_answer(GOOD)
        )

    server.chat = chat
    [verdict] = score_remote(rubric(server), [target()], None)
    assert verdict.score == 5.0
    assert [seen.path for seen in server.requests()] == [
        "/v1/chat/completions",
        "/v2/chat/completions",
    ]


def test_the_bound_is_a_spec_option_with_a_documented_default() -> None:
    node = {"kind": "judge", "text": "Kind?", "base_url": "http://127.0.0.1:1/v1", "model": "m"}
    assert MAX_ANSWER_BYTES == 4 * 1024 * 1024
    assert parse_rubric("r", node).endpoint.max_answer_bytes == MAX_ANSWER_BYTES  # type: ignore[union-attr]
    set_to = parse_rubric("r", {**node, "max_answer_bytes": 10_000})
    assert set_to.endpoint.max_answer_bytes == 10_000  # type: ignore[union-attr]
    for wrong in (0, 1023, 2 * 1024**3, "4MB"):
        with pytest.raises(RubricSpecError) as refused:
            parse_rubric("r", {**node, "max_answer_bytes": wrong})
        assert refused.value.where == "max_answer_bytes"
