"""Requests to an OpenAI-compatible endpoint: bounded in time, retried with backoff, and
never leaking the key.

Every attempt is cut off after `Endpoint.timeout` seconds of wall-clock time (not only of
silence on the socket), a 408, 429, 5xx, timeout or connection failure is tried again up to
`Endpoint.retries` more times after an exponential, jittered pause (a `Retry-After` the server
sends is honoured up to BACKOFF_CAP), and the client's own retries are off so that these are
the only ones. A request is therefore over after at most
`(retries + 1) * timeout + retries * BACKOFF_CAP` seconds. Once a request has found the
endpoint unreachable through all its attempts, the requests not yet sent are not sent: they
fail at once with the same reason.

What an answer may be is bounded too (`bounded_http_client`): its body is read up to
`Endpoint.max_answer_bytes` and refused past it (uncompressed bodies are asked for, and a
compressed one is refused, so the bound holds for what is held in memory); a redirect is
followed only within the endpoint's origin (scheme, host and port). Both are refused at once,
without retrying. This module imports `openai` (the `judge` extra); only `rubrics.remote`
imports it, and only when a remote rubric runs.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx2
import openai

from toolscore.rubrics.base import Endpoint

BACKOFF_SECONDS = 0.5
"""The pause before the first retry; it doubles with each further one."""
BACKOFF_CAP = 20.0
"""The longest pause between two attempts, a server's `Retry-After` included."""
DETAIL_CHARS = 200
"""Characters of an error's text quoted in a reason."""
NO_KEY = "no-key"
"""What is sent as the key to an endpoint that needs none (the client insists on one)."""

T = TypeVar("T")


class EndpointError(Exception):
    """A request that failed for good; the message is the unscored reason (key removed)."""


class AnswerRefusedError(openai.OpenAIError):
    """An answer toolscore will not read: too large, compressed, or redirected to another
    origin. An `OpenAIError`, so that the client library passes it on as it is."""


def client(endpoint: Endpoint, key: str | None) -> openai.AsyncOpenAI:
    """An asynchronous client for `endpoint` with the client library's own retries off and
    its answers bounded (`bounded_http_client`)."""
    return openai.AsyncOpenAI(
        api_key=key or NO_KEY,
        base_url=endpoint.base_url,
        timeout=endpoint.timeout,
        max_retries=0,
        http_client=bounded_http_client(endpoint),
    )


def bounded_http_client(endpoint: Endpoint) -> httpx2.AsyncClient:
    """The client library's own HTTP client, with hooks that refuse a request leaving the
    endpoint's origin (a redirect elsewhere) and an answer over `endpoint.max_answer_bytes`."""
    origin = _origin(httpx2.URL(endpoint.base_url))
    most = endpoint.max_answer_bytes

    async def same_origin(request: httpx2.Request) -> None:
        if _origin(request.url) != origin:
            raise AnswerRefusedError(
                f"refused a redirect from {_shown(endpoint.base_url)} to another origin "
                f"({_shown(str(request.url.copy_with(query=None)))})"
            )
        request.headers["Accept-Encoding"] = "identity"

    async def bounded(response: httpx2.Response) -> None:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise AnswerRefusedError(
                f"refused a compressed answer (Content-Encoding: {_short(encoding)}) though an "
                "uncompressed one was asked for"
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > most:
            raise AnswerRefusedError(_too_large(most))
        response.stream = _BoundedStream(response.stream, most)

    return openai.DefaultAsyncHttpxClient(
        timeout=endpoint.timeout,
        event_hooks={"request": [same_origin], "response": [bounded]},
    )


class _BoundedStream(httpx2.AsyncByteStream):
    """An answer's body that raises AnswerRefusedError once more than `most` bytes came."""

    def __init__(self, stream: httpx2.SyncByteStream | httpx2.AsyncByteStream, most: int):
        self._stream = stream
        self._most = most

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert isinstance(self._stream, httpx2.AsyncByteStream)
        seen = 0
        async for chunk in self._stream:
            seen += len(chunk)
            if seen > self._most:
                raise AnswerRefusedError(_too_large(self._most))
            yield chunk

    async def aclose(self) -> None:
        assert isinstance(self._stream, httpx2.AsyncByteStream)
        await self._stream.aclose()


def _too_large(most: int) -> str:
    return f"refused an answer larger than {most:,} bytes (the endpoint's max_answer_bytes)"


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    """The scheme, host and port of `url`, the port made explicit for http and https."""
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


class Requester:
    """Sends requests to one endpoint with the timeout, retries and backoff described above,
    and remembers when it found the endpoint unreachable."""

    def __init__(self, endpoint: Endpoint, key: str | None, backoff: float = BACKOFF_SECONDS):
        self.endpoint = endpoint
        self.backoff = backoff
        self._key = key
        self.unreachable: str | None = None
        """The reason the endpoint was found unreachable, once it was."""

    async def send(self, request: Callable[[], Awaitable[T]]) -> T:
        """The answer to `request()`, tried as often as allowed; EndpointError when none came."""
        timeout = self.endpoint.timeout
        tries = max(0, self.endpoint.retries) + 1
        for attempt in range(1, tries + 1):
            if self.unreachable is not None:
                raise EndpointError(f"not sent (the endpoint was unreachable): {self.unreachable}")
            wait_at_least = 0.0
            try:
                return await asyncio.wait_for(request(), timeout)
            except (TimeoutError, openai.APITimeoutError):
                fault, again = f"no answer within {timeout:g} s", True
            except AnswerRefusedError as error:
                fault, again = str(error), False
            except openai.APIConnectionError as error:
                fault, again = (
                    f"cannot reach {_shown(self.endpoint.base_url)}: {_cause(error)}",
                    True,
                )
                if attempt == tries:
                    self.unreachable = self.redacted(fault)
            except openai.APIStatusError as error:
                status = error.status_code
                fault = f"HTTP {status} from the endpoint: {_body(error)}"
                again = status in (408, 429) or status >= 500
                wait_at_least = _retry_after(error)
            except Exception as error:
                # Whatever else the client raises comes from an answer it cannot read (a
                # body that is not JSON raises a plain ValueError): the endpoint's fault.
                detail = f"{type(error).__name__}: {_short(str(error))}"
                fault, again = f"unreadable answer from the endpoint ({detail})", False
            if not again:
                raise EndpointError(self.redacted(fault))
            if attempt < tries:
                await asyncio.sleep(self.pause(attempt, wait_at_least))
        tried = "1 attempt" if tries == 1 else f"{tries} attempts"
        raise EndpointError(self.redacted(f"{fault} ({tried})"))

    def pause(self, attempt: int, wait_at_least: float = 0.0) -> float:
        """Seconds to wait after failed attempt number `attempt` (1, 2, ...): the backoff
        doubled per attempt, jittered down by up to half, at least a server's Retry-After,
        never more than BACKOFF_CAP."""
        base = self.backoff * 2 ** (attempt - 1)
        jittered: float = base * random.uniform(0.5, 1.0)
        return min(BACKOFF_CAP, max(wait_at_least, jittered))

    def redacted(self, text: str) -> str:
        """`text` with the key (should a server echo it back) replaced by `***`."""
        if self._key and len(self._key) >= 4:
            return text.replace(self._key, "***")
        return text


def _shown(url: str) -> str:
    """`url` without any user and password written into it."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _cause(error: openai.APIConnectionError) -> str:
    cause = error.__cause__
    text = str(cause) if cause is not None and str(cause) else error.message
    return _short(text)


def _body(error: openai.APIStatusError) -> str:
    try:
        text = error.response.text
    except Exception:  # a body that cannot be decoded is only left out
        text = ""
    return _short(text.strip() or error.message)


def _retry_after(error: openai.APIStatusError) -> float:
    """The seconds a `Retry-After` header asks for (0 when absent or not a number)."""
    value = error.response.headers.get("retry-after", "")
    try:
        seconds = float(value)
    except ValueError:
        return 0.0
    return seconds if 0 <= seconds < float("inf") else 0.0


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"
