"""Read BFCL's multi-turn result files: per entry, a list of turns, each a list of steps.

A step is what the model produced in one round: the prompting form (Python call text) or the
function-calling form (a list of `{name: arguments}`). As BFCL's evaluation does, a step that
does not decode (or decodes to no call) is skipped. Each turn t of an entry becomes one
outputs line, `<id>/turn-<t>`, holding the calls of turns 0..t in order (replay is
cumulative, as BFCL keeps its instances across turns); when turn t has no call, a last call
`bfcl_turn_without_calls(turn=t)` marks it, which the generated environment turns into a
state difference (BFCL fails a turn whose ground truth has calls and where the model made
none; a turn whose ground truth has none has no case, and its line matches nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolscore.bfcl.importer import read_records
from toolscore.bfcl.multiturn import EMPTY_TURN_TOOL, parse_call
from toolscore.bfcl.pycall import unwrap
from toolscore.errors import OutputError


def _step_calls(step: Any) -> list[dict[str, Any]] | None:
    """The calls of one step, or None when it does not decode (BFCL skips it)."""
    try:
        if isinstance(step, str):
            text = unwrap(step).strip()
            if text.startswith("[") and text.endswith("]"):
                text = text[1:-1]
            import ast  # noqa: PLC0415 - only the prompting form needs it

            tree = ast.parse(f"[{text}]", mode="eval").body
            assert isinstance(tree, ast.List)
            parts = [ast.get_source_segment(f"[{text}]", item) or "" for item in tree.elts]
            return [dict(zip(("name", "args"), parse_call(p), strict=True)) for p in parts]
        if isinstance(step, list):
            calls = []
            for item in step:
                if isinstance(item, str):
                    name, args = parse_call(item)
                    calls.append({"name": name, "args": args})
                elif isinstance(item, dict) and item:
                    calls.extend({"name": n, "args": a} for n, a in item.items())
                else:
                    return None
            return calls
    except (ValueError, SyntaxError):
        return None
    return None


def convert_multi_turn(data: dict[str, Any], source: str, line: int) -> list[dict[str, Any]]:
    """The outputs lines of one multi-turn result (one per turn)."""
    entry = data.get("id")
    result = data.get("result")
    if not isinstance(entry, str) or not entry:
        raise OutputError(source, "every result needs a string id", line=line, field="id")
    if not isinstance(result, list) or not all(isinstance(turn, list) for turn in result):
        raise OutputError(source, "not a list of turns", line=line, field="result")
    lines = []
    calls: list[dict[str, Any]] = []
    for turn, steps in enumerate(result):
        made = [call for step in steps for call in (_step_calls(step) or [])]
        calls.extend(made)
        marker = [] if made else [{"name": EMPTY_TURN_TOOL, "args": {"turn": turn}}]
        lines.append({"id": f"{entry}/turn-{turn}", "calls": [*calls, *marker]})
    return lines


def is_multi_turn_result(data: dict[str, Any]) -> bool:
    result = data.get("result")
    return (
        isinstance(result, list)
        and bool(result)
        and all(isinstance(turn, list) for turn in result)
        and any(isinstance(step, str | list) for turn in result for step in turn)
    )


def convert_multi_turn_results(path: str) -> Iterator[dict[str, Any]]:
    """Stream the outputs lines of a multi-turn result file."""
    for record in read_records(path):
        yield from convert_multi_turn(record.data, path, record.line)
