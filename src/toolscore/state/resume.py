"""Replays of a documents environment that go on from where an earlier case's replay ended.

Cases often make an earlier case's calls and then some more: BFCL's multi-turn categories
become a case per turn, each holding the calls of all the turns so far, for the agent and for
the plan. When a case has the setup of a replay that ended before and begins with exactly its
calls, the replay goes on from that replay's state instead of starting again; the state is
taken over, not copied, so a replay is resumed once at most. Only where nothing else can see
that state: the environment compares what a `snapshot` function makes of the state, and that
function says its result shares nothing with the state; and no tool is given the case's
context (whose random source is the case's own). Replay being deterministic (what a plan's
goal state rests on as well), the outcomes and states are those of a replay from the start.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, NamedTuple

import orjson

from toolscore.core.dataflow import first_options
from toolscore.core.model import Call

KEPT = 16
"""How many ended replays of each kind a process keeps (the cases of several results of one
entry may come interleaved, turn by turn)."""


class Ended(NamedTuple):
    """A replay that ended, and what resuming it needs of its past."""

    env: Any
    calls: tuple[bytes, ...]
    """Each call made, as canonical JSON (name, arguments as made)."""
    replay: Any
    """The replay object (its state), taken over by the case that resumes it."""
    past: Any
    """What the replay's calls gave: outcomes, or a plan's results and errors."""


class Ends:
    """The replays that ended last in this process, by environment, setup and calls."""

    def __init__(self) -> None:
        self._ended: OrderedDict[Key, Ended] = OrderedDict()

    def take(self, env: Any, setup: bytes, calls: Sequence[bytes]) -> Ended | None:
        """The ended replay of the longest prefix of `calls` from `setup`, removed from the
        ones kept; None when there is none."""
        keys = _prefix_keys(env, setup, calls)
        for n in range(len(calls), 0, -1):
            found = self._ended.get(keys[n - 1])
            if found is not None and found.env is env and found.calls == tuple(calls[:n]):
                del self._ended[keys[n - 1]]
                return found
        return None

    def keep(self, setup: bytes, ended: Ended) -> None:
        """Keep a replay that ended, forgetting the oldest beyond KEPT."""
        if not ended.calls:
            return
        key = _prefix_keys(ended.env, setup, ended.calls)[-1]
        self._ended[key] = ended
        self._ended.move_to_end(key)
        while len(self._ended) > KEPT:
            _, oldest = self._ended.popitem(last=False)
            evicted = getattr(oldest.replay, "evicted", None)
            if evicted is not None:  # no case will resume it: its state may be reused
                evicted()


Key = tuple[int, bytes, int, int]
"""The environment's id, the setup, the number of calls, and a running hash of the calls."""


def _prefix_keys(env: Any, setup: bytes, calls: Sequence[bytes]) -> list[Key]:
    """A key for each prefix of `calls` (a running hash; `take` compares the calls too)."""
    keys = []
    running = 0
    for n, call in enumerate(calls, 1):
        running = hash((running, call))
        keys.append((id(env), setup, n, running))
    return keys


def resumable(env: Any) -> bool:
    """Whether replays in `env` may be resumed: its snapshot function says that what it
    returns shares nothing with the state (`function.shares_nothing = True`; else an earlier
    case's verdict could show a later case's changes), no tool takes the case's context, and
    no tool ends a replay (`terminal_tools`)."""
    if getattr(env.snapshot_function, "shares_nothing", False) is not True:
        return False
    if env.policy.terminal_tools:  # a replay that ended at one must not go on
        return False
    known = _GIVES_CONTEXT.get(id(env))
    if known is None or known[0] is not env:
        if len(_GIVES_CONTEXT) >= KEPT:
            _GIVES_CONTEXT.clear()
        gives = any(tool.takes_ctx for tool in env.tools.values())
        known = _GIVES_CONTEXT[id(env)] = (env, gives)
    return not known[1]


_GIVES_CONTEXT: dict[int, tuple[Any, bool]] = {}
"""Whether some tool of an environment takes the case's context, by the environment's id."""
AGENT = Ends()
"""The agents' replays that ended (their past: the call outcomes)."""
PLANS = Ends()
"""The plans' replays that ended (their past: each call's result, and the calls that failed)."""


def setup_key(node: Any) -> bytes | None:
    """A case's `setup` as canonical JSON; None when it is not JSON."""
    try:
        return orjson.dumps(node, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def call_key(name: str, args: Any, args_error: str | None = None) -> bytes | None:
    """A call as made, as canonical JSON; None when its arguments are not JSON."""
    try:
        return orjson.dumps([name, args, args_error], option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def agent_keys(calls: Sequence[Call]) -> list[bytes] | None:
    """The agent's calls as keys (None when one is not JSON)."""
    keys = []
    for call in calls:
        key = call_key(call.name, call.args, call.args_error if call.args is None else None)
        if key is None:
            return None
        keys.append(key)
    return keys


def plan_keys(plan: Sequence[Call]) -> list[bytes] | None:
    """A plan's calls as keys, as replay makes them (each `$any` its first alternative);
    None when a call is labelled (its result feeds another's arguments, which a resumed
    replay does not have) or when arguments are not JSON (a `$ref` left unresolved)."""
    keys = []
    for call in plan:
        key = call_key(call.name, first_options(call.args)) if call.label is None else None
        if key is None:
            return None
        keys.append(key)
    return keys
