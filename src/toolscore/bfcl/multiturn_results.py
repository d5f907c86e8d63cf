"""Read BFCL's multi-turn result files: per entry, a list of turns, each a list of steps.

A step is what the model produced in one round: the prompting form (Python call text) or the
function-calling form (a list of `{name: arguments}`). As BFCL's evaluation does, a step that
does not decode (or decodes to no call) is skipped. Each entry becomes one outputs line,
`{"id", "turns": [{"calls"}, ...]}`, a turn per BFCL turn (replay is cumulative, as BFCL
keeps its instances across turns); a turn with no call holds the one call
`bfcl_turn_without_calls(turn=t)`, which the generated environment turns into a state
difference until the next call (BFCL fails a turn whose ground truth has calls and where
the model made none; a turn whose ground truth has none accepts the marker). With
`per_turn`, the older layout: a line per turn t, `<id>/turn-<t>`, holding the calls of turns
0..t, the marker last when turn t has no call.
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


def convert_multi_turn(
    data: dict[str, Any], source: str, line: int, *, per_turn: bool = False
) -> list[dict[str, Any]]:
    """The outputs lines of one multi-turn result: one with its turns, or one per turn."""
    entry = data.get("id")
    result = data.get("result")
    if not isinstance(entry, str) or not entry:
        raise OutputError(source, "every result needs a string id", line=line, field="id")
    if not isinstance(result, list) or not all(isinstance(turn, list) for turn in result):
        raise OutputError(source, "not a list of turns", line=line, field="result")
    made = [[call for step in steps for call in (_step_calls(step) or [])] for steps in result]
    marks = [[{"name": EMPTY_TURN_TOOL, "args": {"turn": t}}] for t in range(len(made))]
    if not per_turn and made:  # no turns at all: no line, as with per_turn
        turns = [{"calls": calls or mark} for calls, mark in zip(made, marks, strict=True)]
        return [{"id": entry, "turns": turns}]
    lines: list[dict[str, Any]] = []
    so_far: list[dict[str, Any]] = []
    for turn, (calls, mark) in enumerate(zip(made, marks, strict=True)):
        so_far.extend(calls)
        lines.append({"id": f"{entry}/turn-{turn}", "calls": [*so_far, *([] if calls else mark)]})
    return lines


def is_multi_turn_result(data: dict[str, Any]) -> bool:
    result = data.get("result")
    return (
        isinstance(result, list)
        and bool(result)
        and all(isinstance(turn, list) for turn in result)
        and any(isinstance(step, str | list) for turn in result for step in turn)
    )


def convert_multi_turn_results(path: str, per_turn: bool = False) -> Iterator[dict[str, Any]]:
    """Stream the outputs lines of a multi-turn result file (`per_turn`: a line per turn)."""
    for record in read_records(path):
        yield from convert_multi_turn(record.data, path, record.line, per_turn=per_turn)
