"""A small OpenAI-compatible server for tests: scripted answers on 127.0.0.1, counted.

It serves `/v1/chat/completions` and `/v1/embeddings` from the standard library's threading
HTTP server. A test sets `chat` and `embed` to functions of (request body, request number)
giving a Reply: a status, a JSON (or raw) body, headers, a delay before answering, or a body
dripped out slowly. The server records every request (path, body, Authorization header) and
the most requests it ever had in flight at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson


@dataclass
class Reply:
    """What the server answers: `body` is JSON-encoded unless it is bytes already."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering."""
    drip: float = 0.0
    """Seconds to wait between single bytes of the body (headers are sent at once)."""
    chunked: bool = False
    """Send the body in 64 KiB chunks of `Transfer-Encoding: chunked`, with no length."""


@dataclass(frozen=True)
class Seen:
    """A request the server received."""

    path: str
    body: dict[str, Any]
    authorization: str | None


Script = Callable[[dict[str, Any], int], Reply]


def judge_answer(content: str | None, tokens: int = 30) -> Reply:
    """A chat completion whose message is `content`, with `tokens` in its usage."""
    return Reply(
        body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "judge",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": {
                "prompt_tokens": tokens - 10,
                "completion_tokens": 10,
                "total_tokens": tokens,
            },
        }
    )


def vector(text: str) -> list[float]:
    """The fake embedding of `text`: its letter counts a..z, plus one (never all zero)."""
    folded = text.casefold()
    return [float(folded.count(chr(c))) for c in range(ord("a"), ord("z") + 1)] + [1.0]


def embeddings(body: dict[str, Any], number: int) -> Reply:
    """Embeddings of every input by `vector`, with a token per input word in the usage."""
    texts = body["input"]
    used = sum(len(t.split()) for t in texts)
    return Reply(
        body={
            "object": "list",
            "model": body["model"],
            "data": [
                {"object": "embedding", "index": i, "embedding": vector(t)}
                for i, t in enumerate(texts)
            ],
            "usage": {"prompt_tokens": used, "total_tokens": used},
        }
    )


class FakeOpenAI:
    """The server (see the module's docstring); `url` is its base URL (ending in /v1)."""

    def __init__(self) -> None:
        self.chat: Script = lambda body, number: judge_answer('{"score": 5, "reason": "good"}')
        self.embed: Script = embeddings
        self.seen: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def requests(self, path: str = "") -> list[Seen]:
        """The requests received whose path ends with `path`."""
        with self._lock:
            return [seen for seen in self.seen if seen.path.endswith(path)]

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow answers still waiting are cut short, and their threads joined."""
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def answer(self, path: str, body: dict[str, Any], authorization: str | None) -> Reply:
        with self._lock:
            self.seen.append(Seen(path, body, authorization))
            number = sum(1 for seen in self.seen if seen.path == path)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if path.endswith("/chat/completions"):
            return self.chat(body, number)
        if path.endswith("/embeddings"):
            return self.embed(body, number)
        return Reply(404, {"error": {"message": f"no {path} here"}})

    def done(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            try:
                length = int(self.headers.get("Content-Length", "0"))
                body = orjson.loads(self.rfile.read(length))
                reply = fake.answer(self.path, body, self.headers.get("Authorization"))
                self._released = False
                try:
                    self._send(reply)
                finally:
                    self._release()
            except OSError:  # the client gave up (its timeout) and closed the connection
                pass

        def _release(self) -> None:
            """Leave the in-flight count once, before the answer's headers end: the client
            cannot have the whole answer (and start another request) before that."""
            if not self._released:
                self._released = True
                fake.done()

        def _send(self, reply: Reply) -> None:
            if reply.delay and fake.closing.wait(reply.delay):
                return
            raw = reply.body if isinstance(reply.body, bytes) else orjson.dumps(reply.body)
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            if reply.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(len(raw)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self._release()
            self.end_headers()
            if reply.chunked:
                for start in range(0, len(raw), 65536):
                    piece = raw[start : start + 65536]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
                return
            if not reply.drip:
                self.wfile.write(raw)
                return
            for byte in raw:
                if fake.closing.wait(reply.drip):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the tests read what the server saw from `FakeOpenAI.seen`."""

    return Handler


def serving() -> Iterator[FakeOpenAI]:
    """A started server, stopped afterwards (for a pytest fixture)."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
