"""Value types shared by every part of toolscore: calls, plans, cases, trajectories, verdicts.

They are plain, immutable records with no I/O, so that readers, the matcher and the reports
can pass them around without caring where they came from. The ones made once per call or
case are named tuples: immutable and several times cheaper to build than frozen dataclasses,
which matters at millions of cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Final, Literal, NamedTuple

from toolscore.stats.intervals import rounded

MISMATCH_CODES: Final = (
    "missing_call",
    "extra_call",
    "unknown_tool",
    "wrong_tool",
    "missing_argument",
    "unexpected_argument",
    "type_mismatch",
    "value_mismatch",
    "arguments_unparseable",
    "order_violation",
    "unresolved_ref",
    "transcript_unread",
    "missing_output",
    "forbidden_call",
    "too_many_calls",
    "missing_turn",
    "extra_turn",
)
"""The closed set of mismatch codes (docs/formats.md); a test proves each is produced somewhere."""


class _Sentinel:
    """A marker value, one of its kind: it prints, and is pickled, as the name it has in this
    module (so that an unpickled copy is the same object)."""

    __slots__ = ()
    name: ClassVar[str]

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name


class _Missing(_Sentinel):
    """The absence of an argument, distinct from JSON `null`."""

    __slots__ = ()
    name = "MISSING"


MISSING: Final = _Missing()


class _Omitted(_Sentinel):
    """`{"$omitted": true}` among the alternatives of `$any`: leaving the argument out is
    acceptable too. Unlike a default, it does not say what an omission means."""

    __slots__ = ()
    name = "OMITTED"


OMITTED: Final = _Omitted()


class AnyOf(tuple[Any, ...]):
    """`{"$any": [...]}` in an expected value: any one alternative is acceptable."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"AnyOf{tuple(self)!r}"


@dataclass(frozen=True, slots=True)
class Ref:
    """`{"$ref": "LABEL#/pointer"}`: a value taken from the result of the call labelled LABEL."""

    label: str
    pointer: str

    def __str__(self) -> str:
        return f"{self.label}#{self.pointer}"


def pointer_of(path: tuple[str | int, ...]) -> str:
    """Return the JSON pointer (RFC 6901) for a sequence of keys and indexes."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


class Call(NamedTuple):
    """One tool call, expected (in a plan) or produced (by the agent).

    `args` is None when the produced arguments could not be parsed; `args_error` then says why
    and `raw_args` keeps what the agent sent. Expected calls may carry a `label` and `after`.
    """

    name: str
    args: Mapping[str, Any] | None
    raw_args: str | None = None
    args_error: str | None = None
    label: str | None = None
    after: tuple[str, ...] = ()
    call_id: str | None = None
    result: Any = MISSING
    result_error: bool = False
    """True when the tool reported an error as its result (kept and shown in the report)."""
    turn: int = 0
    """How many user messages came before this call in its transcript (0 for plain `calls`)."""


Plan = tuple[Call, ...]

NO_EXTRA: Final[Mapping[str, Any]] = MappingProxyType({})


class Forbid(NamedTuple):
    """A call the agent must never make (a `forbid` entry of the spec or of a case): one to
    `tool` whose arguments match `args`, a subset compared each under the tool's rule for it
    (no args: every call to the tool). `where` names the entry in messages."""

    tool: str
    args: Mapping[str, Any]
    reason: str | None
    where: str


class Turn(NamedTuple):
    """One user turn of a conversation case (`turns`): its prompt, its acceptable plans, and
    its outcome keys (`goal_state`, `state_checks`, `outputs`, `required_outputs`) kept in
    `extra`, read only when calls are replayed."""

    prompt: Any
    plans: tuple[Plan, ...]
    linked: bool = False
    """True when some plan links calls of this turn by `$ref` or `after`."""
    extra: Mapping[str, Any] = NO_EXTRA
    earlier_refs: tuple[tuple[int, int], ...] = ()
    """The (plan, call) positions of the plan calls with a `$ref` to a label of an earlier
    turn (resolved from the agent's own earlier calls before this turn is matched)."""


class Case(NamedTuple):
    """A prompt and the acceptable plans; no non-empty plan means the right answer is no call.

    A conversation case has `turns` instead, each with its own plans, and `plans` empty."""

    id: str
    plans: tuple[Plan, ...]
    prompt: Any = None
    tags: tuple[str, ...] = ()
    line: int | None = None
    extra: Mapping[str, Any] = NO_EXTRA
    linked: bool = False
    """True when some plan links calls by `$ref` or `after` (checked through data flow)."""
    forbid: tuple[Forbid, ...] = ()
    """The case's own forbidden calls (its `forbid`), beside the spec's."""
    max_calls: int | None = None
    """The most calls the agent may make (`max_calls`), None for no limit."""
    turns: tuple[Turn, ...] = ()
    """The turns of a conversation case, in order; () for a case of one prompt."""

    @property
    def kind(self) -> Literal["tool", "abstention"]:
        """`tool` when some plan (of some turn) has a call, else `abstention` (docs/formats.md,
        metrics)."""
        if any(self.plans) or (self.turns and any(any(turn.plans) for turn in self.turns)):
            return "tool"
        return "abstention"


class Trajectory(NamedTuple):
    """What the agent did for one case: its calls in order and its final response."""

    case_id: str
    calls: tuple[Call, ...]
    response: str | None = None
    missing: bool = False
    line: int | None = None
    format: str | None = None
    """The transcript format the calls were read from (None for a plain `calls` list)."""
    notes: tuple[str, ...] = ()
    """What the reader had to assume (detected format, calls linked by position, ...)."""
    final_turn: int = 0
    """The `turn` of the calls made after the last user message: the agent's answer."""
    unread: tuple[str, ...] = ()
    """Parts of the transcript the reader could not understand (`where: why`), skipped; a
    case with any cannot pass (`transcript_unread`)."""
    trial: int | str | None = None
    """The line's `trial` (one of several attempts at the case), None when it has none."""
    said: tuple[str, ...] = ()
    """Every assistant text of a transcript, in order (for `required_outputs_in: any`)."""
    trace: tuple[str, str | None] | None = None
    """The OpenTelemetry trace id and span id (hex; the span may be None) of a trace
    transcript, so that verdicts can be linked back to it (`score --emit-otel`)."""
    ignored: tuple[str, ...] = ()
    """The line's keys that no reader uses (`latency_ms`, `model`, ...), sorted: counted in
    the summary's `ignored_keys`, never read."""
    turn_responses: tuple[str | None, ...] = ()
    """The agent's last text in each user turn, one entry per user turn (a transcript's
    user messages, or a `turns` line's entries); () for a line without turns."""
    unread_turns: tuple[int, ...] = ()
    """For each part of `unread`, the `turn` it was met in (user messages before it)."""
    said_turns: tuple[int, ...] = ()
    """For each text of `said`, the `turn` it was said in (user messages before it); () when
    the reader does not know (a turn's `required_outputs_in: any` then looks in its response)."""


class Mismatch(NamedTuple):
    """One reason a case failed, machine-readable.

    `call` is the produced call's position in the trajectory, `plan_call` the expected call's
    position in the plan; either is None when that side has no call (missing or extra calls).
    """

    code: str
    path: tuple[str | int, ...] = ()
    rule: str | None = None
    expected: Any = MISSING
    produced: Any = MISSING
    message: str = ""
    call: int | None = None
    plan_call: int | None = None

    @property
    def pointer(self) -> str:
        """The JSON pointer of `path` within the call's arguments."""
        return pointer_of(self.path)

    def at(self, call: int | None, plan_call: int | None) -> Mismatch:
        """Return this mismatch located at the given produced and expected call positions."""
        # Built positionally: `_replace` costs several times more, once per mismatch.
        code, path, rule, expected, produced, message = self[:6]
        return Mismatch(code, path, rule, expected, produced, message, call, plan_call)


Pairs = tuple[tuple[int, int], ...]


class Partial(NamedTuple):
    """A case's partial credit against its best plan: matched plan calls, with precision
    matched / produced, recall matched / expected and their harmonic mean `f1`.

    `produced` leaves out the unpaired calls a relaxation allows as extra calls; `pairs`
    (plan call index, produced call index) is the pairing the figures count.
    """

    plan: int | None
    matched: int
    expected: int
    produced: int
    precision: float
    recall: float
    f1: float
    pairs: Pairs = ()

    def to_json(self) -> dict[str, Any]:
        """The `partial` block of a case in the report JSON."""
        return {
            "plan": self.plan,
            "matched": self.matched,
            "expected": self.expected,
            "produced": self.produced,
            "precision": rounded(self.precision),
            "recall": rounded(self.recall),
            "f1": rounded(self.f1),
        }


class Efficiency(NamedTuple):
    """The produced calls the best plan's pairing leaves unpaired (`extra`, of which a
    relaxation allows `excused`) and the calls that repeat an earlier call of the case."""

    extra: int
    excused: int
    repeated: int

    def to_json(self) -> dict[str, int]:
        """The `efficiency` block of a case in the report JSON."""
        return {"extra": self.extra, "excused": self.excused, "repeated": self.repeated}


class Retry(NamedTuple):
    """A produced call whose tool reported an error (`Call.result_error`), followed later by
    a call to the same tool: `call` and `retried_by` are their positions among the scored
    calls; `excused` when a `retries` relaxation covers the tool (the call then counts as
    neither extra nor a mismatch)."""

    call: int
    tool: str
    retried_by: int
    excused: bool

    def to_json(self) -> dict[str, Any]:
        """One entry of a case's `retries` in the report JSON."""
        return {
            "call": self.call,
            "tool": self.tool,
            "retried_by": self.retried_by,
            "excused": self.excused,
        }


class TurnResult(NamedTuple):
    """The verdict on one turn of a conversation case. `mismatches` and the produced side of
    `pairs` (plan call index, produced call index) number the calls of the whole conversation
    (`CaseResult.calls`), not of the turn; `plan` indexes the turn's plans."""

    turn: int
    """The turn's index among the case's turns (0 for the first)."""
    passed: bool
    plan: int | None
    mismatches: tuple[Mismatch, ...]
    pairs: Pairs = ()
    partial: Partial | None = None
    calls: tuple[int, int] = (0, 0)
    """The turn's produced calls: positions start (inclusive) to end (exclusive) among the
    conversation's calls."""
    state: Any = None
    """The turn's outcome verdict (`state.StateVerdict`) under `--env`, None when the turn
    has no outcome keys or calls were not replayed."""

    def to_json(self) -> dict[str, Any]:
        """One entry of a conversation case's `turns` in the report JSON (its mismatches are
        written by the report, which knows how)."""
        data: dict[str, Any] = {
            "index": self.turn,
            "passed": self.passed,
            "plan": self.plan,
            "calls": list(self.calls),
        }
        if self.partial is not None:
            data["partial"] = self.partial.to_json()
        if self.state is not None:
            data["state_passed"] = self.state.passed
            data["state"] = self.state.to_json()
            if self.state.checks:
                data["checks"] = [check.to_json() for check in self.state.checks]
        return data


class CaseResult(NamedTuple):
    """The verdict on one case, with the evidence that decided it.

    `pairs` lists (plan call index, produced call index) of the chosen pairing; `name_ok` says
    whether the produced tool names equal some plan's as a multiset; `baselines` holds the
    exact-JSON and lowercase verdicts computed in the same pass.
    """

    id: str
    passed: bool
    kind: Literal["tool", "abstention"]
    plan: int | None
    mismatches: tuple[Mismatch, ...]
    baselines: Mapping[str, bool]
    name_ok: bool
    pairs: tuple[tuple[int, int], ...] = ()
    produced_calls: int = 0
    missing_output: bool = False
    calls: tuple[Call, ...] = ()
    """The produced calls that were scored (the agent's final turn of a transcript)."""
    format: str | None = None
    notes: tuple[str, ...] = ()
    state: Any = None
    """The outcome verdict (`state.StateVerdict`) when the run replayed calls against a store."""
    unread: tuple[str, ...] = ()
    """The parts of the transcript that were not read (`Trajectory.unread`)."""
    trial: int | str | None = None
    """The trial this result scores (`Trajectory.trial`), None for a line without one."""
    trials: tuple[int, int] | None = None
    """For a trial: how many trials its case has and how many of them passed on calls."""
    trace: tuple[str, str | None] | None = None
    """The trace and span the scored calls were read from (`Trajectory.trace`)."""
    ignored: tuple[str, ...] = ()
    """The outputs line's keys that no reader uses (`Trajectory.ignored`)."""
    partial: Partial | None = None
    """How close the calls came to the best plan (`core.partial`); None where not scored."""
    efficiency: Efficiency | None = None
    """The calls that plan's pairing leaves unpaired, and the repeated ones (`core.partial`)."""
    retries: tuple[Retry, ...] = ()
    """The retried calls among the scored calls (`core.retries`), in call order."""
    turns: tuple[TurnResult, ...] = ()
    """The verdict on each turn of a conversation case, in order; () for other cases."""
    first_failed_turn: int | None = None
    """The index of the first turn that failed, for a conversation case that failed."""
    said: tuple[str, ...] = ()
    """What the agent said (its texts in order), kept only for a case with
    `response_rubrics`, which score it apart from the verdict; () otherwise."""
