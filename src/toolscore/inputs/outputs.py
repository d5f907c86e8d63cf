"""Read an outputs file (JSON Lines) into `Trajectory` values.

A line says what the agent did once: as `calls`, a transcript (`formats`), a provider's
response object (the line itself, or under `response`), a `stream` (`formats.replies`) or
each user turn's calls (`turns`, `output_turns`). A
line that says none of it yet holds keys no reader uses is an input error, with a hint of
what it resembles (`formats.hints`): scored as no call, a harness's saving mistake would be
a silent zero. Keys beside what the agent did that no reader uses are kept on the
trajectory (`ignored`) and counted in the summary.

The line's structure (an object with an `id`, `calls` a list) is the user's harness and is
checked as input; what is inside a call came from the agent and is never an error here: junk
becomes a call that will fail to match, with the reason kept (`arguments_unparseable`). So are
values JSON does not allow (NaN, numbers beyond a double, lone surrogates; see `lenient`) in a
call's arguments (the call fails), its result or the response (kept as text, with a note).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscore.core.model import MISSING, Call, Trajectory, pointer_of
from toolscore.errors import OutputError
from toolscore.inputs.calls import BothResultAndError, json_text, produced_call
from toolscore.inputs.formats import TRANSCRIPT_KEYS, has_transcript, read_transcript
from toolscore.inputs.jsonl import read_jsonl
from toolscore.inputs.lenient import LenientLine, first_junk, text_of
from toolscore.inputs.trials import read_trial

if TYPE_CHECKING:
    from toolscore.inputs.formats.responses import Shape

# The readers of the other lines (turns, response objects, streams, a provider's objects in
# `calls`) load every provider's module: they are imported where such a line is read, so that
# a file of plain `calls` lines never loads them.

_ARGS = operator.itemgetter(1)
"""A produced call's `args`: None or empty for every entry a provider's object can stand for
(it has no `name`, or its arguments under another key than `args`), in C."""

NOTED_JUNK = 5
"""How many values JSON does not allow a case's notes list one by one."""

_STRUCTURE = ("id", "trial", "calls", "turns", "format", "choice", "stream", *TRANSCRIPT_KEYS)
"""Top-level keys whose own value the harness wrote: a bad value there is an input error."""

PLAIN_KEYS = frozenset({"id", "calls", "response", "trial"})
"""The keys of the common line: one with only these (and a text `response`) is read at once."""
LINE_KEYS = PLAIN_KEYS | {"format", "choice", "stream", "turns", *TRANSCRIPT_KEYS}
"""Every key some reader of outputs lines uses; the others are counted in `ignored_keys`."""


def read_outputs(path: str | Path, choice: int | None = None) -> Iterator[Trajectory]:
    """Stream the trajectories of an outputs file (`choice`: as `parse_output`'s)."""
    source = str(path)
    for number, _raw, data in read_jsonl(path, OutputError, lenient=True):
        yield parse_output(data, source, number, choice)


def parse_output(
    data: Mapping[str, Any],
    source: str = "<outputs>",
    line: int | None = None,
    choice: int | None = None,
) -> Trajectory:
    """Build one `Trajectory` from an outputs line; only a broken line structure raises.

    `choice` says which choice (or Gemini candidate) of a response object with several to
    score, for lines that do not say it themselves (`score --choice`)."""
    if type(data) is LenientLine:
        return _lenient_output(data, source, line, choice)
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise OutputError(
            source, "every output needs the string id of its case", line=line, field="id"
        )
    trial = read_trial(data, source, line) if "trial" in data else None
    response = data.get("response")
    if PLAIN_KEYS.issuperset(data) and (response is None or type(response) is str):
        return _calls(data, case_id, source, line, trial)  # the common line
    unknown = data.keys() - LINE_KEYS
    made, shape = _made(data, unknown, source, line)
    if "choice" in data and shape is None and made != "stream":
        message = "picks one of a response object's choices, and this line holds none"
        raise OutputError(source, message, line=line, field="choice")
    if made == "calls":
        trajectory = _calls(data, case_id, source, line, trial)
    elif made == "turns":
        from toolscore.inputs.output_turns import read_turns  # noqa: PLC0415 - see the imports

        trajectory = read_turns(data, case_id, source, line, trial)
    elif made in TRANSCRIPT_KEYS:
        trajectory = read_transcript(data, source, line)
    elif made == "stream":
        from toolscore.inputs.formats.replies import read_stream_line  # noqa: PLC0415

        trajectory = read_stream_line(data, case_id, source, line, choice)
    else:
        assert shape is not None
        if made == "":  # the line is the object: its own fields are part of it
            unknown -= shape.fields
        node = data if made == "" else data["response"]
        from toolscore.inputs.formats.replies import read_reply  # noqa: PLC0415

        trajectory = read_reply(data, node, shape, made, source, line, choice)
    return trajectory._replace(trial=trial, ignored=tuple(sorted(unknown)))


def _made(
    data: Mapping[str, Any], unknown: set[str], source: str, line: int | None
) -> tuple[str, Shape | None]:
    """Where the line says what the agent did: `calls`, its transcript key, `stream`,
    `response` (a response object there) or "" (the line is a response object), with the
    response object's shape; an input error when the line says it twice, or not at all
    while holding keys no reader uses."""
    from toolscore.inputs.formats.hints import response_error, unknown_line  # noqa: PLC0415

    found = [key for key in ("calls", "stream", "turns") if data.get(key) is not None]
    if has_transcript(data):
        found.append(next(key for key in TRANSCRIPT_KEYS if data.get(key) is not None))
    shape = _reply_shape(data.get("response"))
    if shape is not None:
        found.append("response")
    merged = _reply_shape(data) if unknown else None  # an object has fields beside LINE_KEYS
    if merged is not None:
        found.append("")
        shape = merged
    if len(found) > 1:
        if found[0] == "calls" and found[1] in TRANSCRIPT_KEYS and len(found) == 2:
            return found[1], None  # the transcript reader says so, as it always has
        named = [f"the {merged.name} fields" if merged and not key else key for key in found]
        message = (
            f"a line says once what the agent did: this one has both {named[0]} and {named[1]}"
        )
        raise OutputError(source, message, line=line, field=found[1] or found[0])
    if found:
        return found[0], shape
    if unknown:
        raise unknown_line(data, unknown, source, line)
    response = data.get("response")
    if response is not None and not isinstance(response, str):
        raise response_error(response, source, line)
    return "calls", None


def _calls(
    data: Mapping[str, Any], case_id: str, source: str, line: int | None, trial: int | str | None
) -> Trajectory:
    """The trajectory of a line whose `calls` list the calls (null: none; absent: none only
    beside a text `response`, since a line with neither says nothing)."""
    calls_node = data.get("calls")
    if calls_node is None:
        if "calls" not in data and data.get("response") is None:
            message = (
                'says nothing of what the agent did: give its "calls" ([] for no call), '
                "its transcript or its response"
            )
            raise OutputError(source, message, line=line, field="calls")
        calls_node = []
    if not isinstance(calls_node, list):
        from toolscore.inputs.formats.hints import calls_error  # noqa: PLC0415 - see the imports

        raise calls_error(calls_node, source, line)
    try:
        calls = tuple(map(produced_call, calls_node))
    except BothResultAndError:
        index = next(
            i
            for i, n in enumerate(calls_node)
            if isinstance(n, dict) and "error" in n and "result" in n
        )
        message = "a call gives its tool's result or its error, not both"
        raise OutputError(source, message, line=line, field=f"calls[{index}].error") from None
    # A call without arguments (none, or unread) may be a provider's object: look closer.
    # (The first call alone is checked at once: most lines make one call.)
    if calls and not (calls[0].args and (len(calls) == 1 or all(map(_ARGS, calls)))):
        from toolscore.inputs.formats.hints import check_calls  # noqa: PLC0415 - see the imports

        check_calls(calls_node, source, line)
    response = data.get("response")
    if response is not None and not isinstance(response, str):
        response = json_text(response)
    return Trajectory(case_id, calls, response, line=line, trial=trial)


def _lenient_output(
    data: LenientLine, source: str, line: int | None, choice: int | None
) -> Trajectory:
    """A line read leniently: a bad value in the line's structure is an input error; in a
    call's arguments it fails that call, in a result or the response it is kept as text."""
    for path, junk in data.junk:
        if len(path) == 1 and path[0] in _STRUCTURE:
            raise OutputError(source, junk.reason, line=line, field=str(path[0]))
    plain = dict(data)
    response = plain.get("response")
    if response is not None and not isinstance(response, str) and _reply_shape(response) is None:
        plain["response"] = text_of(response)
    trajectory = parse_output(plain, source, line, choice)
    notes = [f"{pointer_of(path)}: {junk.reason}" for path, junk in data.junk[:NOTED_JUNK]]
    if len(data.junk) > NOTED_JUNK:
        notes.append(f"and {len(data.junk) - NOTED_JUNK} more values JSON does not allow")
    calls = tuple(map(_without_junk, trajectory.calls))
    return trajectory._replace(calls=calls, notes=(*trajectory.notes, *notes))


def _reply_shape(node: Any) -> Shape | None:
    """`replies.reply_shape`, imported for a line that needs it (see the imports)."""
    from toolscore.inputs.formats.replies import reply_shape  # noqa: PLC0415

    return reply_shape(node)


def _without_junk(call: Call) -> Call:
    """A call whose arguments hold a value JSON does not allow fails as unparseable; a result
    holding one is kept as its text (a `$ref` into it then finds nothing)."""
    if call.args is not None:
        found = first_junk(call.args)
        if found is not None:
            where = pointer_of(found.path)
            reason = f"{found.junk.reason} (at {where})" if where else found.junk.reason
            call = call._replace(args=None, raw_args=text_of(call.args), args_error=reason)
    if call.result is not MISSING and first_junk(call.result) is not None:
        call = call._replace(result=text_of(call.result))
    return call
