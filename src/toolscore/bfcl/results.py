"""BFCL result files (`{"id", "result"}` a line) -> toolscore outputs lines.

`result` comes in BFCL's two forms, told apart by its JSON type:

- function-calling form, a list of `{name: arguments}` (arguments an object, or the
  provider's JSON text, which toolscore parses and scores `arguments_unparseable` if broken);
  an item with several keys is several calls; an item that is not an object stays as it is
  and is scored as a call without a tool name; an empty list is no call;
- prompting form, the model's text, read by `pycall` (never evaluated).

The line's structure (an object with a string `id` and a `result`) is the harness's and is
checked as input; a multi-turn result (a list of turns) is refused. Everything inside
`result` came from the model and is scored, never an error.

Whatever the model wrote, the line written can be read by `toolscore score`: arguments
holding a value no toolscore file can hold (`jsonsafe.json_problem`: a lone surrogate, NaN
or an infinity, an integer no double holds, nesting deeper than 200 levels) make their call
malformed, with the arguments kept as text toolscore cannot read as arguments (so it scores
the call `arguments_unparseable`) and the reason as `error`; lone surrogates in
names, argument strings and responses are written as `\\udXXX` escapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from toolscore.bfcl.importer import read_records
from toolscore.bfcl.jsonsafe import (
    escape_surrogates,
    has_lone_surrogate,
    json_problem,
    json_text,
    loads,
    pointer,
)
from toolscore.bfcl.pycall import parse_calls
from toolscore.bfcl.strings import standardize_produced
from toolscore.errors import OutputError


def convert_result(
    data: Mapping[str, Any], source: str = "<results>", line: int | None = None,
    bfcl_strings: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """One outputs line (`{"id", "calls"[, "response"]}`) from one BFCL result line."""
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise OutputError(
            source, "every result needs the string id of its case", line=line, field="id"
        )
    if has_lone_surrogate(case_id):
        raise OutputError(
            source, "the id holds a lone surrogate, which no case id can", line=line, field="id"
        )
    if "result" not in data:
        raise OutputError(source, "no 'result'", line=line, field="result")
    result = data["result"]
    out: dict[str, Any] = {"id": case_id}
    if isinstance(result, str):
        read = parse_calls(result)
        out["calls"] = read.calls
        if read.response is not None:
            out["response"] = read.response  # surrogates escaped by parse_calls
    elif isinstance(result, list):
        if result and all(isinstance(item, list) for item in result):
            raise OutputError(
                source, "a list of turns: multi-turn results are not supported",
                line=line, field="result",
            )  # fmt: skip
        out["calls"] = [call for item in result for call in _fc_calls(item)]
    elif result is None:
        out["calls"] = []
    else:
        out["calls"] = list(_fc_calls(result))
    if bfcl_strings:
        out["calls"] = [_standardized(call) for call in out["calls"]]
    out["calls"] = [_writable(call) for call in out["calls"]]
    return out


def _writable(call: Any) -> Any:
    """A call as it can be written for toolscore to read back (see the module docstring)."""
    if not isinstance(call, dict):  # scored as a call without a name, whatever it holds
        return call if json_problem(call) is None else json_text(call)
    out = dict(call)
    name = out.get("name")
    if isinstance(name, str):
        out["name"] = escape_surrogates(name)
    args = out.get("args")
    if isinstance(args, str):
        out["args"] = escape_surrogates(args)
        return out
    problem = json_problem(args)
    if problem is not None:
        path, reason = problem
        where = f"argument {pointer(path)}" if path else "the arguments"
        out["args"] = _unreadable(args, reason)
        out["error"] = f"{where}: {reason}"
    return out


def _unreadable(args: Any, reason: str) -> str:
    """Arguments toolscore must not read, as text: their JSON text, or the reason in angle
    brackets where toolscore would read that text after all (nesting its reader reaches)."""
    text = json_text(args)
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    return f"<not shown: {reason}>"


def _fc_calls(item: Any) -> Iterator[Any]:
    """The calls of one function-calling item: `{name: arguments}`, one per key."""
    if not isinstance(item, dict) or not item:
        yield item
        return
    for name, args in item.items():
        yield {"name": name, "args": args}


def _standardized(call: Any) -> Any:
    """A call with its argument strings normalised as BFCL's checker does (`--bfcl-strings`)."""
    if not isinstance(call, dict) or "error" in call:
        return call
    args = call.get("args")
    if isinstance(args, str):
        try:
            args = loads(args)
        except (ValueError, RecursionError):  # not JSON: scored as unparseable, as it is
            return call
    if not isinstance(args, dict):
        return call
    return {**call, "args": {key: standardize_produced(v) for key, v in args.items()}}


def convert_results(path: str, bfcl_strings: bool = False) -> Iterator[dict[str, Any]]:
    """Stream the outputs lines of a BFCL result file (JSON Lines, or one JSON array)."""
    seen: set[str] = set()
    for record in read_records(path):
        line = convert_result(record.data, path, record.line, bfcl_strings)
        if line["id"] in seen:
            raise OutputError(path, f"duplicate id {line['id']!r}", line=record.line, field="id")
        seen.add(line["id"])
        yield line


def dumps(line: Mapping[str, Any]) -> str:
    """One outputs line (from `convert_result`, so every value is writable) as JSON text."""
    return json.dumps(line, ensure_ascii=False, allow_nan=False)
