"""One produced call, read from what the agent wrote: the arguments parsed where they can be,
else the reason they cannot (never an input error: it is the agent's output).

Both the outputs reader and the transcript formats build calls here, so that a call reads the
same whichever shape it came in.
"""

from __future__ import annotations

from typing import Any

import orjson

from toolscore.core.model import MISSING, Call
from toolscore.core.values import json_type, show
from toolscore.inputs.lenient import Junk, loads

_new_call = tuple.__new__
"""Builds a `Call` from all of its fields without the named tuple's `__new__` (Python code
filling in defaults): twice as fast, for the call every outputs line makes."""


class BothResultAndError(ValueError):
    """A call entry gives both `result` and `error`: what the tool returned is ambiguous
    (the outputs reader turns this into an input error naming the entry)."""


def _type_name(value: Any) -> str:
    return value.kind if type(value) is Junk else json_type(value)


def produced_call(node: Any) -> Call:
    """One call as the agent made it: arguments parsed if possible, else the reason why not."""
    if not isinstance(node, dict):
        return Call(f"<{_type_name(node)}>", None, args_error="the call is not a JSON object")
    if "error" in node:  # the tool reported an error: that is the call's result
        if "result" in node:
            raise BothResultAndError
        made = produced_call({key: value for key, value in node.items() if key != "error"})
        return made._replace(result=node["error"], result_error=True)
    name = node.get("name")
    if not isinstance(name, str):
        return Call(f"<{_type_name(name)}>", None, args_error="the call has no tool name")
    call_id = node.get("id")
    call_id = call_id if isinstance(call_id, str) else None
    result = node.get("result", MISSING)
    args = node.get("args")
    if type(args) is dict:  # the common case, every field given, built in C
        return _new_call(Call, (name, args, None, None, None, (), call_id, result, False, 0))
    if args is None:
        return Call(name, {}, call_id=call_id, result=result)
    if isinstance(args, str):
        try:
            parsed = orjson.loads(args) if args.strip() else {}
        except orjson.JSONDecodeError as error:
            read = loads(args)  # a value JSON does not allow is named; else orjson's complaint
            why = read[1][0].junk.reason if read else error.msg
            return Call(name, None, args, f"not valid JSON ({why})", call_id=call_id, result=result)
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
    if type(args) is Junk:
        return Call(name, None, args.text, args.reason, call_id=call_id, result=result)
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
