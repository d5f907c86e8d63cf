"""The labelling server bounds its connections: a flood of half-sent requests is refused past
the connection limit and closed at the request timeout, after which a real request is served;
a client that drops or stalls mid-body leaves one log line, not a traceback (issue 25)."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from label_pages import TOKEN
from toolscore.calibration.serving import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_TIMEOUT,
    ServingLimits,
    bounded_protocol,
)
from toolscore.calibration.web import TOKEN_HEADER, create_app
from toolscore.cli import label

TIMEOUT = 0.5
LIMIT = 4
WAIT = 10.0
"""Seconds any one socket read may take before the test fails (a bound, not a timing)."""
FORMATS_MD = (Path(__file__).parents[2] / "docs" / "formats.md").read_text()


class Served:
    """The labelling app served by uvicorn under `ServingLimits(TIMEOUT, LIMIT)` on a thread."""

    def __init__(self, db: Path) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        config = uvicorn.Config(
            create_app(db, 1, "alice", TOKEN),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",
            http=bounded_protocol(ServingLimits(TIMEOUT, LIMIT)),
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.listener]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + WAIT
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)

    def connect(self, sent: bytes = b"") -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=WAIT)
        if sent:
            sock.sendall(sent)
        return sock

    def request(self, head: str, body: bytes = b"") -> bytes:
        """Send one whole request and read the whole answer (the server closes after it)."""
        with self.connect(head.encode() + body) as sock:
            return read_all(sock)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(WAIT)
        self.listener.close()


CLOSED = b""
REFUSED = b"(reset)"


def read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection (fails past WAIT per read):
    CLOSED for nothing, REFUSED when the server reset it (closing a connection with unread
    bytes in the system's buffer does that)."""
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        return REFUSED
    return b"".join(chunks) or CLOSED


@pytest.fixture
def served(db: Path) -> Iterator[Served]:
    running = Served(db)
    try:
        yield running
    finally:
        running.stop()


def token_get(port: int) -> str:
    return (
        f"GET /done?token={TOKEN} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )


def label_head(port: int, length: int) -> str:
    return (
        f"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{TOKEN_HEADER}: {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )


def test_half_open_connections_are_refused_past_the_limit_and_closed_at_the_timeout(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    # The reproducer: many sockets that each send only a request line and then wait.
    flood = [served.connect(b"GET / HTTP/1.1\r\n") for _ in range(3 * LIMIT)]
    try:
        with served.connect() as late:  # sends nothing, so it can read the refusal
            refusal = read_all(late)
        answers = [read_all(sock) for sock in flood]  # each ends: refused or timed out
    finally:
        for sock in flood:
            sock.close()
    assert refusal.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert refusal.endswith(b"503: 4 connections are already open to this server (the limit)"
                            b"; try again shortly\n")  # fmt: skip
    assert sum(answer is CLOSED for answer in answers) == LIMIT  # the first LIMIT: timed out
    assert b"200 OK" in served.request(token_get(served.port)).split(b"\r\n", 1)[0]
    messages = [record.getMessage() for record in caplog.records]
    assert sum("refusing more until some close" in m for m in messages) == 1
    timed_out = [m for m in messages if "its request headers did not arrive within 0.5 s" in m]
    assert len(timed_out) == LIMIT


def test_a_request_without_the_token_is_refused_and_its_connection_closed(
    served: Served,
) -> None:
    with served.connect(
        f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode()
    ) as sock:
        answer = read_all(sock)  # keep-alive asked for, by not saying `Connection: close`
    assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"\r\nconnection: close\r\n" in answer.lower()


def test_a_client_that_disconnects_mid_body_leaves_one_line(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    with served.connect(label_head(served.port, 100).encode() + b'{"position": 1'):
        pass  # closed with 86 bytes of the body still owed
    assert b"200 OK" in served.request(token_get(served.port))  # and the server goes on
    assert_one_dropped_line(caplog, "it closed the connection before sending the whole body")


def test_a_body_that_stalls_is_closed_at_the_timeout(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    with served.connect(label_head(served.port, 100).encode() + b'{"position": 1') as sock:
        assert read_all(sock) == b""
    assert_one_dropped_line(
        caplog, "its request body did not arrive within 0.5 s (--request-timeout)"
    )


def assert_one_dropped_line(caplog: pytest.LogCaptureFixture, reason: str) -> None:
    deadline = time.monotonic() + WAIT
    while not any("nothing saved" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
        time.sleep(0.01)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    prefix = r"toolscore label: POST /api/label from 127\.0\.0\.1:\d+: "
    assert re.fullmatch(prefix + re.escape(f"{reason}; nothing saved"), lines[0])
    assert all(r.exc_info is None for r in caplog.records)


def test_the_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="positive"):
        ServingLimits(timeout=0)
    with pytest.raises(ValueError, match="at least 1"):
        ServingLimits(max_connections=0)


def test_the_command_and_formats_md_state_the_defaults() -> None:
    assert (label.DEFAULT_TIMEOUT, label.DEFAULT_MAX_CONNECTIONS) == (
        DEFAULT_TIMEOUT,
        DEFAULT_MAX_CONNECTIONS,
    )
    assert f"`--request-timeout SECONDS` ({DEFAULT_TIMEOUT:g} s by default)" in FORMATS_MD
    assert f"`--max-connections N` ({DEFAULT_MAX_CONNECTIONS} by default)" in FORMATS_MD
