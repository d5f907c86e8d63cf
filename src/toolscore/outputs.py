"""Read an outputs file (JSON Lines) into `Trajectory` values.

The line's structure (an object with an `id`, `calls` a list) is the user's harness and is
checked as input; what is inside a call came from the agent and is never an error here: junk
becomes a call that will fail to match, with the reason kept (`arguments_unparseable`). So are
values JSON does not allow (NaN, numbers beyond a double, lone surrogates; see `lenient`) in a
call's arguments (the call fails), its result or the response (kept as text, with a note).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from toolscore.calls import json_text, produced_call
from toolscore.errors import OutputError
from toolscore.formats import has_transcript, read_transcript
from toolscore.jsonl import read_jsonl
from toolscore.lenient import LenientLine, first_junk, text_of
from toolscore.model import MISSING, Call, Trajectory, pointer_of
from toolscore.trials import read_trial

NOTED_JUNK = 5
"""How many values JSON does not allow a case's notes list one by one."""

_STRUCTURE = (
    "id", "trial", "calls", "format", "messages", "items", "contents", "spans", "resourceSpans",
)  # fmt: skip
"""Top-level keys whose own value the harness wrote: a bad value there is an input error."""


def read_outputs(path: str | Path) -> Iterator[Trajectory]:
    """Stream the trajectories of an outputs file."""
    source = str(path)
    for number, _raw, data in read_jsonl(path, OutputError, lenient=True):
        yield parse_output(data, source, number)


def parse_output(
    data: Mapping[str, Any], source: str = "<outputs>", line: int | None = None
) -> Trajectory:
    """Build one `Trajectory` from an outputs line; only a broken line structure raises."""
    if type(data) is LenientLine:
        return _lenient_output(data, source, line)
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise OutputError(
            source, "every output needs the string id of its case", line=line, field="id"
        )
    trial = read_trial(data, source, line) if "trial" in data else None
    if has_transcript(data):  # an error too when `calls` is beside it
        read = read_transcript(data, source, line)
        return read if trial is None else read._replace(trial=trial)
    calls_node = data.get("calls")
    if calls_node is None:
        calls_node = []
    if not isinstance(calls_node, list):
        raise OutputError(source, "must be a list of calls", line=line, field="calls")
    response = data.get("response")
    if response is not None and not isinstance(response, str):
        response = json_text(response)
    calls = tuple(map(produced_call, calls_node))
    return Trajectory(case_id, calls, response, line=line, trial=trial)


def _lenient_output(data: LenientLine, source: str, line: int | None) -> Trajectory:
    """A line read leniently: a bad value in the line's structure is an input error; in a
    call's arguments it fails that call, in a result or the response it is kept as text."""
    for path, junk in data.junk:
        if len(path) == 1 and path[0] in _STRUCTURE:
            raise OutputError(source, junk.reason, line=line, field=str(path[0]))
    plain = dict(data)
    response = plain.get("response")
    if response is not None and not isinstance(response, str):
        plain["response"] = text_of(response)
    trajectory = parse_output(plain, source, line)
    notes = [f"{pointer_of(path)}: {junk.reason}" for path, junk in data.junk[:NOTED_JUNK]]
    if len(data.junk) > NOTED_JUNK:
        notes.append(f"and {len(data.junk) - NOTED_JUNK} more values JSON does not allow")
    calls = tuple(map(_without_junk, trajectory.calls))
    return trajectory._replace(calls=calls, notes=(*trajectory.notes, *notes))


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
