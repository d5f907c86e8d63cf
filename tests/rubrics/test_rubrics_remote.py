"""Judge and similarity rubrics against a scripted OpenAI-compatible server on 127.0.0.1,
asked through the real `openai` client: verdicts and tokens, faults made unscored, bounded
retries and time, the concurrency limit, the judgments kept in the results store, the key.
"""

from __future__ import annotations

import asyncio
import math
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from fake_openai import FakeOpenAI, Reply, judge_answer, serving, vector
from toolscore.errors import InputError
from toolscore.rubrics import judge_prompt
from toolscore.rubrics.base import (
    Endpoint,
    JudgeRubric,
    RubricTarget,
    RubricVerdict,
    SimilarityRubric,
)
from toolscore.rubrics.cache import JudgmentCache, judge_request, key_of
from toolscore.rubrics.endpoint import BACKOFF_CAP, Requester
from toolscore.rubrics.remote import EMBED_BATCH, check_keys, score_remote
from toolscore.store import Store, open_store
from toolscore.store.judgments import StoredJudgments

KEY_VAR = "TOOLSCORE_TEST_JUDGE_KEY"
SECRET = "sk-test-5f0b8d3c9a7e41d2b6"
FAST = 0.01
"""The backoff the tests use, so that retries take milliseconds."""


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    yield from serving()


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_VAR, SECRET)
    return SECRET


def endpoint(server: FakeOpenAI, **options: Any) -> Endpoint:
    return Endpoint(base_url=server.url, model="judge-1", api_key_env=KEY_VAR, **options)


def judge(
    server: FakeOpenAI, text: str = "Does the note apologise?", **options: Any
) -> JudgeRubric:
    return JudgeRubric("apology", text, endpoint(server, **options))


def target(produced: str, expected: str | None = "We are sorry.", n: int = 0) -> RubricTarget:
    return RubricTarget(
        case_id=f"c{n}",
        tool="refund",
        argument="note",
        call=0,
        plan_call=0,
        produced=produced,
        expected=expected,
        prompt="Refund order 77, the parcel never came",
        arguments={"order_id": "o77", "note": produced},
    )


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Callable[[], StoredJudgments]]:
    """Opens the judgments of one results store (each call a new connection to it)."""
    opened: list[Store] = []

    def store_cache() -> StoredJudgments:
        opened.append(open_store(tmp_path / "results.db"))
        return opened[-1].judgments

    yield store_cache
    for store in opened:
        store.close()


# The judge: what it is asked, and how its answer is read


def test_the_judge_is_asked_with_the_documented_prompt_and_settings(
    server: FakeOpenAI, key: str
) -> None:
    server.chat = lambda body, n: judge_answer('{"score": 4, "reason": "it apologises"}', 42)
    rubric = replace(judge(server), seed=7)
    [verdict] = score_remote(rubric, [target("Sorry for the delay.")], None)
    assert verdict == RubricVerdict("apology", 4.0, True, "it apologises", tokens=42)
    [seen] = server.requests("/chat/completions")
    assert seen.authorization == f"Bearer {key}"
    body = seen.body
    assert (body["model"], body["temperature"], body["seed"]) == ("judge-1", 0, 7)
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"] == judge_prompt.messages(rubric, target("Sorry for the delay."))
    user = body["messages"][1]["content"]
    for part in (
        "Does the note apologise?",
        "Refund order 77, the parcel never came",
        "<expected>\nWe are sorry.\n</expected>",
        "<produced>\nSorry for the delay.\n</produced>",
        "from 1 (worst) to 5 (best)",
        '{"score": <a number from 1 to 5>, "reason":',
    ):
        assert part in user


def test_without_an_expected_text_or_a_prompt_those_parts_are_left_out() -> None:
    rubric = JudgeRubric("r", "Is it kind?", Endpoint("http://x", "m"))
    bare = replace(target("Hi"), expected=None, prompt=None)
    user = judge_prompt.messages(rubric, bare)[1]["content"]
    assert "<expected>" not in user
    assert "<request>" not in user
    assert "<produced>\nHi\n</produced>" in user


def test_no_seed_is_sent_when_the_rubric_has_none(server: FakeOpenAI, key: str) -> None:
    score_remote(replace(judge(server), seed=None), [target("Sorry")], None)
    assert "seed" not in server.requests()[0].body


def test_the_score_passes_at_the_threshold_and_fails_below(server: FakeOpenAI, key: str) -> None:
    answers = {"A": 4, "B": 3.5, "C": 1}
    server.chat = lambda body, n: judge_answer(
        orjson.dumps(
            {
                "score": answers[body["messages"][1]["content"].split("<produced>\n")[1][0]],
                "reason": "r",
            }
        ).decode()
    )
    verdicts = score_remote(judge(server), [target("A"), target("B"), target("C")], None)
    assert [(v.score, v.passed) for v in verdicts] == [(4.0, True), (3.5, False), (1.0, False)]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("", "empty answer"),
        ("The score is 5.", "is not JSON"),
        ('```json\n{"score": 5, "reason": "x"}\n```', "is not JSON"),
        ("[5]", "is not a JSON object"),
        ('{"score": 5}', "lacks a key or has one too many"),
        ('{"score": 5, "reason": "x", "confidence": 1}', "lacks a key or has one too many"),
        ('{"score": "5", "reason": "x"}', "score that is not a number"),
        ('{"score": true, "reason": "x"}', "score that is not a number"),
        ('{"score": 6, "reason": "x"}', "score outside 1..5"),
        ('{"score": 0.99, "reason": "x"}', "score outside 1..5"),
        ('{"score": 1e400, "reason": "x"}', "is not JSON"),
        ('{"score": 3, "reason": null}', "reason that is not a string"),
    ],
)
def test_an_answer_that_is_not_the_requested_json_is_refused(answer: str, why: str) -> None:
    with pytest.raises(judge_prompt.MalformedAnswerError, match=why):
        judge_prompt.parse_answer(answer, 1, 5)


def test_the_bounds_of_the_scale_are_valid_scores() -> None:
    assert judge_prompt.parse_answer('{"score": 1, "reason": "a"}', 1, 5) == (1.0, "a")
    assert judge_prompt.parse_answer('{"reason": "b", "score": 5.0}', 1, 5) == (5.0, "b")


def test_a_malformed_answer_makes_the_target_unscored_quoting_a_little_of_it(
    server: FakeOpenAI, key: str
) -> None:
    server.chat = lambda body, n: judge_answer("I think " + "very " * 400 + "good", 77)
    [verdict] = score_remote(judge(server), [target("Sorry")], None)
    assert (verdict.score, verdict.passed, verdict.tokens) == (None, None, 77)
    assert verdict.unscored == verdict.reason
    assert verdict.reason.startswith("the judge's answer is not JSON: 'I think very very")
    assert len(verdict.reason) < 260


def test_a_long_reason_is_shortened_and_missing_usage_counts_no_tokens(
    server: FakeOpenAI, key: str
) -> None:
    answer = judge_answer(orjson.dumps({"score": 2, "reason": "no " * 2000}).decode())
    del answer.body["usage"]
    server.chat = lambda body, n: answer
    [verdict] = score_remote(judge(server), [target("Sorry")], None)
    assert (verdict.score, verdict.tokens) == (2.0, 0)
    assert len(verdict.reason) == judge_prompt.REASON_CHARS
    assert verdict.reason.endswith("…")


def test_an_out_of_range_score_is_unscored(server: FakeOpenAI, key: str) -> None:
    server.chat = lambda body, n: judge_answer('{"score": 10, "reason": "great"}')
    [verdict] = score_remote(judge(server), [target("Sorry")], None)
    assert verdict.score is None
    assert verdict.unscored is not None
    assert "score outside 1..5" in verdict.unscored


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (Reply(body=b"<html>gateway</html>"), "unreadable answer from the endpoint"),
        (Reply(body={"choices": []}), "has no message"),
        (Reply(body={"object": "chat.completion"}), "has no message"),
    ],
)
def test_an_answer_that_is_no_chat_completion_is_unscored(
    server: FakeOpenAI, key: str, reply: Reply, why: str
) -> None:
    server.chat = lambda body, n: reply
    [verdict] = score_remote(judge(server), [target("Sorry")], None)
    assert verdict.unscored is not None
    assert why in verdict.unscored


# Faults: retries, timeouts, an unreachable endpoint


def test_a_429_is_retried_and_then_scored(server: FakeOpenAI, key: str) -> None:
    server.chat = lambda body, n: (
        Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
        if n == 1
        else judge_answer('{"score": 5, "reason": "fine"}', 20)
    )
    [verdict] = score_remote(judge(server), [target("Sorry")], None, backoff=FAST)
    assert (verdict.score, verdict.tokens) == (5.0, 20)
    assert len(server.requests()) == 2


def test_a_retry_after_is_waited_for(server: FakeOpenAI, key: str) -> None:
    server.chat = lambda body, n: (
        Reply(429, {"error": {}}, {"Retry-After": "0.4"}) if n == 1 else judge_answer(None)
    )
    start = time.monotonic()
    score_remote(judge(server), [target("Sorry")], None, backoff=FAST)
    assert time.monotonic() - start >= 0.4


def test_5xx_are_retried_as_often_as_allowed_and_no_more(server: FakeOpenAI, key: str) -> None:
    server.chat = lambda body, n: Reply(503, {"error": {"message": "overloaded"}})
    [verdict] = score_remote(judge(server, retries=2), [target("Sorry")], None, backoff=FAST)
    assert len(server.requests()) == 3
    assert (
        verdict.unscored
        == 'HTTP 503 from the endpoint: {"error":{"message":"overloaded"}} (3 attempts)'
    )


def test_a_refused_request_is_not_retried(server: FakeOpenAI, key: str) -> None:
    server.chat = lambda body, n: Reply(401, {"error": {"message": "bad key"}})
    [verdict] = score_remote(judge(server, retries=3), [target("Sorry")], None, backoff=FAST)
    assert len(server.requests()) == 1
    assert verdict.unscored is not None
    assert verdict.unscored.startswith("HTTP 401 from the endpoint:")


def test_a_slow_answer_times_out_after_each_retry_within_a_bounded_time(
    server: FakeOpenAI, key: str
) -> None:
    server.chat = lambda body, n: Reply(delay=30)
    start = time.monotonic()
    [verdict] = score_remote(
        judge(server, timeout=0.3, retries=1), [target("Sorry")], None, backoff=FAST
    )
    assert time.monotonic() - start < 2 * 0.3 + 1.5
    assert verdict.unscored == "no answer within 0.3 s (2 attempts)"
    assert len(server.requests()) == 2


def test_an_answer_dripped_out_slowly_is_cut_off_at_the_timeout(
    server: FakeOpenAI, key: str
) -> None:
    """Each byte comes well within the timeout, the whole answer never does: the timeout is
    on the whole request, not on silence."""
    good = judge_answer('{"score": 5, "reason": "good"}')
    server.chat = lambda body, n: replace(good, drip=0.05)
    start = time.monotonic()
    [verdict] = score_remote(
        judge(server, timeout=0.5, retries=0), [target("Sorry")], None, backoff=FAST
    )
    assert time.monotonic() - start < 2.0
    assert verdict.unscored == "no answer within 0.5 s (1 attempt)"


def test_an_unreachable_endpoint_makes_every_target_unscored_quickly(key: str) -> None:
    with socket.socket() as sock:  # a port nothing listens on once this is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://user:pw-{SECRET}@127.0.0.1:{port}/v1"  # credentials in the URL are not shown
    rubric = JudgeRubric("apology", "Apologises?", Endpoint(url, "m"))
    targets = [target(f"Sorry {i}") for i in range(20)]
    start = time.monotonic()
    verdicts = score_remote(rubric, targets, None, backoff=FAST)
    assert time.monotonic() - start < 5
    reason = f"cannot reach http://127.0.0.1:{port}/v1"
    assert all(v.score is None and v.unscored and reason in v.unscored for v in verdicts)
    assert any(v.unscored and v.unscored.endswith("(4 attempts)") for v in verdicts)
    assert any(v.unscored and v.unscored.startswith("not sent") for v in verdicts)
    assert SECRET not in repr(verdicts)


def test_backoff_doubles_and_never_exceeds_its_cap() -> None:
    requester = Requester(Endpoint("http://x", "m"), None, backoff=1.0)
    for attempt in range(1, 12):
        pause = requester.pause(attempt)
        assert (
            min(BACKOFF_CAP, 2 ** (attempt - 1) / 2)
            <= pause
            <= min(BACKOFF_CAP, 2 ** (attempt - 1))
        )
    assert requester.pause(1, wait_at_least=5.0) == 5.0
    assert requester.pause(1, wait_at_least=1e9) == BACKOFF_CAP


# Concurrency, and one request per distinct question


def test_no_more_requests_are_in_flight_than_the_limit(server: FakeOpenAI, key: str) -> None:
    server.chat = lambda body, n: replace(judge_answer('{"score": 3, "reason": "ok"}'), delay=0.25)
    targets = [target(f"Sorry {i}") for i in range(9)]
    verdicts = score_remote(judge(server, concurrency=3), targets, None)
    assert [v.score for v in verdicts] == [3.0] * 9
    assert len(server.requests()) == 9
    assert server.max_in_flight == 3  # reached (requests overlap), never exceeded


def test_retries_stay_within_the_limit_too(server: FakeOpenAI, key: str) -> None:
    server.chat = lambda body, n: (
        Reply(500, delay=0.05) if n % 2 else judge_answer('{"score": 3, "reason": "ok"}')
    )
    targets = [target(f"Sorry {i}") for i in range(10)]
    score_remote(judge(server, concurrency=2, retries=5), targets, None, backoff=FAST)
    assert server.max_in_flight <= 2


def test_identical_targets_are_asked_once_and_answered_in_order(
    server: FakeOpenAI, key: str
) -> None:
    def answer(body: dict[str, Any], n: int) -> Reply:
        score = 5 if "Sorry" in body["messages"][1]["content"] else 1
        return judge_answer(orjson.dumps({"score": score, "reason": "r"}).decode(), 25)

    server.chat = answer
    targets = [target("Sorry"), target("Whatever"), target("Sorry", n=1), target("Whatever")]
    verdicts = score_remote(judge(server), targets, None)
    assert [v.score for v in verdicts] == [5.0, 1.0, 5.0, 1.0]
    assert [v.tokens for v in verdicts] == [25, 25, 0, 0]
    assert len(server.requests()) == 2


def test_it_runs_from_code_that_already_runs_an_event_loop(server: FakeOpenAI, key: str) -> None:
    async def inside() -> list[RubricVerdict]:
        return score_remote(judge(server), [target("Sorry")], None)

    assert [v.score for v in asyncio.run(inside())] == [5.0]


# Similarity


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def test_similarity_is_the_cosine_of_the_embeddings_asked_in_one_request(
    server: FakeOpenAI, key: str
) -> None:
    rubric = SimilarityRubric("close", endpoint(server), threshold=0.9)
    pairs = [
        ("We are sorry.", "We are sorry."),
        ("abc", "xyz"),
        ("Sorry, we're late", "We are sorry."),
    ]
    verdicts = score_remote(rubric, [target(p, e) for p, e in pairs], None)
    [seen] = server.requests("/embeddings")
    assert seen.body["model"] == "judge-1"
    assert seen.body["encoding_format"] == "float"
    assert sorted(seen.body["input"]) == sorted({t for pair in pairs for t in pair})
    for verdict, (produced, expected) in zip(verdicts, pairs, strict=True):
        assert verdict.score == pytest.approx(cosine(vector(produced), vector(expected)))
        assert verdict.passed == (verdict.score is not None and verdict.score >= 0.9)
    assert verdicts[0].passed is True
    assert verdicts[1].passed is False
    words = sum(len(t.split()) for t in seen.body["input"])
    assert sum(v.tokens for v in verdicts) == words


def test_similarity_asks_one_request_per_chunk(server: FakeOpenAI, key: str) -> None:
    rubric = SimilarityRubric("close", endpoint(server, concurrency=2))
    targets = [target(f"note {i}", f"expected {i}") for i in range(EMBED_BATCH * 2 + 1)]
    verdicts = score_remote(rubric, targets, None)
    assert all(v.score is not None for v in verdicts)
    assert [len(s.body["input"]) for s in server.requests("/embeddings")] == [
        2 * EMBED_BATCH, 2 * EMBED_BATCH, 2
    ]  # fmt: skip


def test_similarity_without_an_expected_text_is_unscored_and_an_empty_text_fails(
    server: FakeOpenAI, key: str
) -> None:
    rubric = SimilarityRubric("close", endpoint(server))
    no_expected, empty = score_remote(rubric, [target("Sorry", None), target("  ", "Sorry")], None)
    assert no_expected.score is None
    assert no_expected.unscored == "no expected text to compare the produced text with"
    assert (empty.score, empty.passed, empty.reason) == (0.0, False, "the produced text is empty")
    assert server.requests() == []


@pytest.mark.parametrize(
    "data",
    [
        [{"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}],
        [{"object": "embedding", "index": i, "embedding": ["a", "b"]} for i in range(2)],
        [{"object": "embedding", "index": 0, "embedding": [1.0]} for _ in range(2)],
        [{"index": None, "embedding": [1.0]}, {"index": "1", "embedding": [1.0]}],
        [{"index": [0], "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}],
        b'[{"index": 0, "embedding": [NaN, 1.0]}, {"index": 1, "embedding": [1.0, 1.0]}]',
    ],
)
def test_embeddings_that_are_not_what_was_asked_for_are_unscored(
    server: FakeOpenAI, key: str, data: list[dict[str, Any]] | bytes
) -> None:
    """Bytes are sent as they are: Python's JSON reader (the client's) takes a NaN."""
    raw = orjson.dumps(data) if isinstance(data, list) else data
    server.embed = lambda body, n: Reply(body=b'{"object": "list", "data": ' + raw + b"}")
    [verdict] = score_remote(SimilarityRubric("close", endpoint(server)), [target("a", "b")], None)
    assert verdict.unscored is not None
    assert verdict.unscored.startswith("the endpoint's answer is not the embeddings asked for")


def test_a_zero_vector_is_unscored(server: FakeOpenAI, key: str) -> None:
    server.embed = lambda body, n: Reply(
        body={"data": [{"index": i, "embedding": [0.0, 0.0]} for i in range(2)]}
    )
    [verdict] = score_remote(SimilarityRubric("close", endpoint(server)), [target("a", "b")], None)
    assert verdict.unscored is not None
    assert "zero vector" in verdict.unscored


# The judgments kept in the results store


def test_a_second_run_reuses_the_stored_judgments_and_asks_nothing(
    server: FakeOpenAI, key: str, stores: Callable[[], StoredJudgments]
) -> None:
    cache = stores()
    assert score_remote(judge(server), [], cache) == []
    targets = [target("Sorry"), target("Meh")]
    first = score_remote(judge(server), targets, cache)
    assert len(server.requests()) == 2
    assert len(cache) == 2
    again = score_remote(judge(server), targets, stores())
    assert len(server.requests()) == 2
    assert [replace(v, cached=False, tokens=30) for v in again] == first
    assert all(v.cached and v.tokens == 0 for v in again)


def test_refresh_asks_again_and_keeps_the_new_answer(
    server: FakeOpenAI, key: str, stores: Callable[[], StoredJudgments]
) -> None:
    cache = stores()
    score_remote(judge(server), [target("Sorry")], cache)
    server.chat = lambda body, n: judge_answer('{"score": 2, "reason": "changed"}')
    [fresh] = score_remote(judge(server), [target("Sorry")], cache, refresh=True)
    assert (fresh.score, fresh.cached) == (2.0, False)
    assert len(server.requests()) == 2
    [reused] = score_remote(judge(server), [target("Sorry")], cache)
    assert (reused.score, reused.reason, reused.cached) == (2.0, "changed", True)
    assert len(server.requests()) == 2


@pytest.mark.parametrize(
    "change",
    ["rubric text", "model", "base_url", "scale", "seed", "version", "prompt version", "input"],
)
def test_anything_that_decides_the_score_misses_the_cache(
    server: FakeOpenAI,
    key: str,
    stores: Callable[[], StoredJudgments],
    monkeypatch: pytest.MonkeyPatch,
    change: str,
) -> None:
    cache = stores()
    rubric, item = judge(server), target("Sorry")
    score_remote(rubric, [item], cache)
    if change == "rubric text":
        rubric = replace(rubric, text="Is it polite?")
    elif change == "model":
        rubric = replace(rubric, endpoint=replace(rubric.endpoint, model="judge-2"))
    elif change == "base_url":
        rubric = replace(rubric, endpoint=replace(rubric.endpoint, base_url=server.url + "/../v1"))
    elif change == "scale":
        rubric = replace(rubric, high=10)
    elif change == "seed":
        rubric = replace(rubric, seed=1)
    elif change == "version":
        rubric = replace(rubric, version="2")
    elif change == "prompt version":
        monkeypatch.setattr(judge_prompt, "PROMPT_VERSION", "test-next")
    else:
        item = replace(item, expected="We apologise.")
    [verdict] = score_remote(rubric, [item], cache)
    assert not verdict.cached
    assert len(server.requests()) == 2


def test_name_threshold_and_timeouts_do_not_decide_the_score_and_hit_the_cache(
    server: FakeOpenAI, key: str, stores: Callable[[], StoredJudgments]
) -> None:
    cache = stores()
    score_remote(judge(server), [target("Sorry")], cache)
    other = replace(judge(server, timeout=9, retries=0, concurrency=1), name="sorry", threshold=5.5)
    [verdict] = score_remote(other, [target("Sorry")], cache)
    assert (verdict.rubric, verdict.score, verdict.passed, verdict.cached) == (
        "sorry",
        5.0,
        False,
        True,
    )
    assert len(server.requests()) == 1


def test_unscored_verdicts_are_not_kept_and_a_later_run_asks_again(
    server: FakeOpenAI, key: str, stores: Callable[[], StoredJudgments]
) -> None:
    cache = stores()
    server.chat = lambda body, n: Reply(500)
    [first] = score_remote(judge(server, retries=0), [target("Sorry")], cache)
    assert first.score is None
    assert len(cache) == 0
    server.chat = lambda body, n: judge_answer('{"score": 5, "reason": "ok"}')
    [second] = score_remote(judge(server, retries=0), [target("Sorry")], cache)
    assert (second.score, second.cached) == (5.0, False)
    assert len(cache) == 1


def test_similarity_judgments_are_kept_and_reused_with_the_new_threshold(
    server: FakeOpenAI, key: str, stores: Callable[[], StoredJudgments]
) -> None:
    cache = stores()
    rubric = SimilarityRubric("close", endpoint(server), threshold=0.1)
    [first] = score_remote(rubric, [target("abc", "abd")], cache)
    [again] = score_remote(replace(rubric, threshold=0.99), [target("abc", "abd")], cache)
    assert len(server.requests()) == 1
    assert again.score == first.score
    assert (first.passed, again.passed, again.cached) == (True, False, True)
    assert again.reason == first.reason == f"cosine similarity {first.score:.3f}"


def test_the_key_hashes_the_canonical_request() -> None:
    rubric = JudgeRubric("r", "Kind?", Endpoint("http://h/v1/", "m"))
    request = judge_request(rubric, target("Hi"))
    assert (
        judge_request(replace(rubric, endpoint=Endpoint("http://h/v1", "m")), target("Hi"))
        == request
    )
    assert key_of(request) == key_of(dict(reversed(request.items())))
    assert len(key_of(request)) == 64


def test_the_store_satisfies_the_cache_protocol(stores: Callable[[], StoredJudgments]) -> None:
    cache: JudgmentCache = stores()
    verdict = RubricVerdict("r", 3.0, False, "meh", tokens=12)
    cache.put("k", verdict)
    cache.put("u", RubricVerdict("r", None, None, "down", unscored="down"))
    assert cache.get("k") == replace(verdict, cached=True, tokens=0)
    assert cache.get("u") is None
    assert cache.get("missing") is None


# The key to the endpoint


def test_a_missing_key_variable_is_an_input_error_before_anything_is_sent(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_VAR, raising=False)
    with pytest.raises(InputError) as raised:
        check_keys([judge(server)], source="tools.yaml")
    assert str(raised.value) == (
        "tools.yaml: rubrics.apology.api_key_env: rubric 'apology' reads its endpoint's key "
        f"from the environment variable {KEY_VAR}, which is not set"
    )
    monkeypatch.setenv(KEY_VAR, "")
    with pytest.raises(InputError, match=KEY_VAR):
        score_remote(judge(server), [target("Sorry")], None)
    assert server.requests() == []


def test_a_local_server_needs_no_key(server: FakeOpenAI) -> None:
    rubric = replace(judge(server), endpoint=replace(endpoint(server), api_key_env=None))
    check_keys([rubric])
    [verdict] = score_remote(rubric, [target("Sorry")], None)
    assert verdict.score == 5.0
    assert server.requests()[0].authorization == "Bearer no-key"


def test_the_key_never_reaches_verdicts_or_the_store_even_when_echoed(
    server: FakeOpenAI, key: str, tmp_path: Path
) -> None:
    """A hostile or careless server echoes the Authorization header in its answers."""

    def echo(body: dict[str, Any], n: int) -> Reply:
        said = server.requests()[-1].authorization or ""
        if n % 3 == 1:
            return Reply(400, {"error": {"message": f"bad header {said}"}})
        if n % 3 == 2:
            return judge_answer(orjson.dumps({"score": 4, "reason": f"you sent {said}"}).decode())
        return judge_answer(f"not json {said}")

    server.chat = echo
    path = tmp_path / "results.db"
    store = open_store(path)
    verdicts = score_remote(
        judge(server), [target(f"S{i}") for i in range(9)], StoredJudgments(store.db)
    )
    assert server.requests()[0].authorization == f"Bearer {key}"
    assert {v.score for v in verdicts} == {None, 4.0}
    text = repr(verdicts)
    assert key not in text
    assert "***" in text
    store.close()
    for file in tmp_path.iterdir():
        assert key.encode() not in file.read_bytes(), file.name


# What importing costs


def test_openai_is_imported_only_when_a_remote_rubric_asks() -> None:
    code = (
        "import sys, toolscore, toolscore.rubrics.remote, toolscore.rubrics.cache, "
        "toolscore.store.judgments; print('openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
