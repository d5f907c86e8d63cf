"""Time limits on replayed tool code and SQL: a call that runs past its limit is stopped.

A tool is the user's code and an agent's arguments drive it; it may loop forever, and so
may a case's `setup` SQL. Each call (and each setup statement) runs under `time_limit`:

- Python code is stopped by a signal. On the main thread, a one-shot interval timer
  (`signal.setitimer`) sends SIGALRM when the limit passes, and the handler raises
  `CallTimeout` in the tool's code. It is a BaseException, so a tool's `except Exception`
  does not swallow it; the handler sets the timer again for `TICK` seconds, in case a tool
  catches it anyway. Blocking system calls (`time.sleep`, a socket read) are interrupted
  too. Each call sets the timer, replacing the previous call's; it is cleared when the
  replay ends (`alarms_installed`), and a late alarm between calls is ignored.
- SQL runs inside SQLite's C code, where no signal handler runs: every replay connection has
  a progress handler (`watch`) that aborts the statement once the call's deadline has passed.
- Whatever stopped it, a call that ends after its deadline counts as timed out.

Why signals rather than running each replay in a child process that is killed on timeout:
replay stays in the scoring process (a case, its calls and its states cross no pipe; the
tools module keeps its state), `score --workers N` needs nothing more (each worker scores on
its own main thread), and the cost is one `setitimer` call per call and one handler swap per
replay, or per chunk of cases when scoring (bench/RESULTS.md). The price is what a process
boundary would also catch: off the main thread (or without `setitimer`) only SQL is stopped,
and a tool that catches BaseException in a loop, blocks in C code that never returns to
Python, or calls `os._exit` cannot be stopped from inside the process. While a replay runs
on the main thread, SIGALRM is toolscore's; a process whose timer is already running keeps
it, and only SQL is stopped then.

A base module (it imports nothing of toolscore): replay uses it, and so does the regex
rubric check, which must not bring the state package along; `toolscore.state.limits`
re-exports it.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from types import FrameType
from typing import Any

TICK = 0.002
"""Seconds between repeated alarms once a call is past its limit. Short, so that one soon
lands in the tool's own code even when the tool spends most of its time in SQLite (an alarm
that lands in a SQLite callback only marks the call)."""
PROGRESS_STEPS = 10_000
"""SQLite virtual-machine instructions between two deadline checks of a running statement."""
_STATE = os.path.join(os.path.dirname(__file__), "state")
_OWN_CODE = frozenset(
    {__file__, os.path.join(_STATE, "guard.py"), os.path.join(_STATE, "touched.py")}
)
"""Where the alarm handler does not raise: toolscore's bookkeeping around a call, and the
SQLite callbacks of `state.guard` and `state.touched` (an exception raised there would be
lost); the call is marked instead. Named by path, so that this base module imports no state
module."""


class CallTimeout(BaseException):
    """A call ran past its time limit (a BaseException: tool code should not catch it)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds

    def __str__(self) -> str:
        return f"did not return within {self.seconds:g} s (the time limit per call)"


def exit_call(error: SystemExit) -> str:
    """How tool code asked the process to end, as it would be written: `sys.exit(3)`."""
    return "sys.exit()" if error.code is None else f"sys.exit({error.code!r})"


class _Clock(threading.local):
    call: time_limit | None = None
    """The call being timed on this thread."""
    alarms: bool = False
    """Whether this thread's calls are stopped by SIGALRM (the main thread, inside
    `alarms_installed`)."""


_clock = _Clock()


def watch() -> int:
    """The progress handler of replay connections: nonzero aborts the running statement."""
    call = _clock.call
    if call is None:
        return 0
    if call.expired or time.monotonic() > call.at:
        call.expired = True
        return 1
    return 0


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    call = _clock.call
    if call is None or time.monotonic() < call.at - 0.001:
        return  # between calls (an earlier call's timer), or a SIGALRM we did not send
    call.expired = True
    signal.setitimer(signal.ITIMER_REAL, TICK)  # again soon, should the tool catch this one
    if frame is None or frame.f_code.co_filename not in _OWN_CODE:
        raise CallTimeout(call.seconds)


class alarms_installed:  # noqa: N801 -- used as a `with` statement, like a function
    """While in force on the main thread, calls are stopped by SIGALRM (see the module
    docstring); elsewhere, or when the process's timer is already in use, it does nothing.
    Nested uses install the handler once; the previous handler is restored at the end."""

    def __enter__(self) -> None:
        self.previous: Any = None
        self.installed = False
        if (
            _clock.alarms
            or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0] != 0
        ):
            return
        self.previous = signal.signal(signal.SIGALRM, _on_alarm)
        self.installed = _clock.alarms = True

    def __exit__(self, *_: object) -> None:
        if self.installed:
            _clock.alarms = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def alarms_in_force() -> bool:
    """Whether calls on this thread are stopped by SIGALRM now (inside `alarms_installed`
    on the main thread): what a caller checks before running code that only the alarm can
    stop (a regex search)."""
    return _clock.alarms


class time_limit:  # noqa: N801 -- used as a `with` statement, like a function
    """Run the body as one call limited to `seconds`; raise `CallTimeout` at the end when it
    was stopped, or ended past its deadline (whatever it raised is then replaced)."""

    __slots__ = ("at", "expired", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = 0.0
        self.expired = False
        """Set once the call is past its deadline (by the alarm or the progress handler)."""

    def __enter__(self) -> None:
        self.at = time.monotonic() + self.seconds
        _clock.call = self
        if _clock.alarms:  # replaces the previous call's timer: no need to disarm each one
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *_: object) -> None:
        _clock.call = None
        if self.expired or time.monotonic() > self.at:
            raise CallTimeout(self.seconds) from None
