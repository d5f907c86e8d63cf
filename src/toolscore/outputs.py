"""Read an outputs file (JSON Lines) into `Trajectory` values.

The line's structure (an object with an `id`, `calls` a list) is the user's harness and is
checked as input; what is inside a call came from the agent and is never an error here: junk
becomes a call that will fail to match, with the reason kept (`arguments_unparseable`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from toolscore.errors import OutputError
from toolscore.formats import has_transcript, read_transcript
from toolscore.jsonl import read_jsonl
from toolscore.model import MISSING, Call, Trajectory
from toolscore.rules import json_type, show


def read_outputs(path: str | Path) -> Iterator[Trajectory]:
    """Stream the trajectories of an outputs file."""
    source = str(path)
    for number, _raw, data in read_jsonl(path, OutputError):
        yield parse_output(data, source, number)


def parse_output(
    data: Mapping[str, Any], source: str = "<outputs>", line: int | None = None
) -> Trajectory:
    """Build one `Trajectory` from an outputs line; only a broken line structure raises."""
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise OutputError(
            source, "every output needs the string id of its case", line=line, field="id"
        )
    if has_transcript(data):  # an error too when `calls` is beside it
        return read_transcript(data, source, line)
    calls_node = data.get("calls")
    if calls_node is None:
        calls_node = []
    if not isinstance(calls_node, list):
        raise OutputError(source, "must be a list of calls", line=line, field="calls")
    response = data.get("response")
    if response is not None and not isinstance(response, str):
        response = json_text(response)
    return Trajectory(case_id, tuple(map(produced_call, calls_node)), response, line=line)


def produced_call(node: Any) -> Call:
    """One call as the agent made it: arguments parsed if possible, else the reason why not."""
    if not isinstance(node, dict):
        return Call(f"<{json_type(node)}>", None, args_error="the call is not a JSON object")
    name = node.get("name")
    if not isinstance(name, str):
        return Call(f"<{json_type(name)}>", None, args_error="the call has no tool name")
    call_id = node.get("id")
    call_id = call_id if isinstance(call_id, str) else None
    result = node.get("result", MISSING)
    args = node.get("args")
    if type(args) is dict:
        return Call(name, args, None, None, None, (), call_id, result)  # the common case
    if args is None:
        return Call(name, {}, call_id=call_id, result=result)
    if isinstance(args, str):
        try:
            parsed = orjson.loads(args) if args.strip() else {}
        except orjson.JSONDecodeError as error:
            return Call(
                name, None, args, f"not valid JSON ({error.msg})", call_id=call_id, result=result
            )
        if type(parsed) is dict:
            return Call(name, parsed, args, call_id=call_id, result=result)
        return Call(
            name,
            None,
            args,
            f"JSON {json_type(parsed)}, not an object",
            call_id=call_id,
            result=result,
        )
    return Call(
        name,
        None,
        json_text(args),
        f"a {json_type(args)}, not an object",
        call_id=call_id,
        result=result,
    )


def json_text(value: Any) -> str:
    """`value` as JSON text, or its short rendering when no JSON writer can write it (nested
    deeper than orjson goes, an integer beyond 64 bits, a lone surrogate)."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return show(value)
