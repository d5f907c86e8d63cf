"""Bounded connections for the labelling server: no client holds a connection open for long.

uvicorn's HTTP/1.1 protocol waits for a request's headers and body as long as the client
keeps the socket open, and accepts connections until the process runs out of files, before
any token is checked. `bounded_protocol` makes its h11 protocol refuse a connection past
`ServingLimits.max_connections` at once (a one-line 503), and close a connection whose
request headers, or whose request body, take longer than `ServingLimits.timeout` seconds.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_TIMEOUT = 10.0
"""Seconds a client has to send a request's headers (from the connection, or from the end of
the previous response on it), and again to send its body once the headers are in."""
DEFAULT_MAX_CONNECTIONS = 32
"""Connections open at once; one more is answered 503 and closed at once."""
DROPPED = "toolscore_dropped"
"""The key of a request's ASGI `state` under which the protocol says why it closed the
connection while the app was reading the body (the app logs it in its one line)."""

LOGGER = logging.getLogger("uvicorn.error")
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
)


@dataclass(frozen=True)
class ServingLimits:
    """How long a client may take over a request, and how many connections may be open."""

    timeout: float = DEFAULT_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ValueError("the request timeout must be a positive number of seconds")
        if self.max_connections < 1:
            raise ValueError("the connection limit must be at least 1")


def bounded_protocol(limits: ServingLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol under `limits` (pass it as `uvicorn.Config(http=...)`)."""

    class Bounded(_Bounded):
        timeout = limits.timeout
        max_connections = limits.max_connections
        burst = _Burst()

    return Bounded


@dataclass
class _Burst:
    """Whether the connection limit was reached and not yet left, shared by a server's
    connections: a flood of connections is logged once, when it reaches the limit."""

    refusing: bool = False


class _Bounded(H11Protocol):
    timeout: float
    max_connections: int
    burst: ClassVar[_Burst]

    _phase: str | None = None
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        if len(self.connections) > self.max_connections:
            if not self.burst.refusing:
                self.burst.refusing = True
                LOGGER.warning(
                    "toolscore label: %d connections are open (the limit, --max-connections):"
                    " refusing more until some close",
                    self.max_connections,
                )
            text = (
                f"503: {self.max_connections} connections are already open to this server "
                "(the limit); try again shortly\n"
            ).encode()
            self.transport.write(_BUSY % (len(text), text))
            self.transport.close()
            return
        self.burst.refusing = False
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def _arm(self) -> None:
        """Start the timer of what the connection waits for from the client, if anything."""
        if self.transport.is_closing():
            self._cancel()
            return
        state = self.conn.their_state
        phase = "headers" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        if phase == self._phase:
            return
        self._cancel()
        self._phase = phase
        if phase is not None:
            self._timer = self.loop.call_later(self.timeout, self._expired, phase)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._phase = None, None

    def _expired(self, phase: str) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        what = "request headers" if phase == "headers" else "request body"
        reason = f"its {what} did not arrive within {self.timeout:g} s (--request-timeout)"
        cycle: Any = self.cycle
        if phase == "body" and cycle is not None and not cycle.response_complete:
            cycle.scope["state"][DROPPED] = reason  # the app is reading it: it says so
        elif phase == "body" or self.conn.trailing_data[0]:  # silent: an idle connection
            LOGGER.warning("toolscore label: closed a connection from %s: %s", self._peer(), reason)
        self.transport.close()

    def _peer(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
