"""What the response-object tests share: the SDK-written fixtures under
tests/formats/responses/, a spec and plan they pass, and functions that read and score lines."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli
from toolscore.core.model import Trajectory
from toolscore.errors import OutputError
from toolscore.inputs.outputs import parse_output
from toolscore.specs.loading import parse_specs

RESPONSES_DIR = Path(__file__).parent / "formats" / "responses"
FILES = sorted(path.name for path in RESPONSES_DIR.glob("*.json"))
SPEC = {
    "version": "responses",
    "tools": {
        "refund": {
            "args": {
                "order_id": "exact",
                "amount": {"kind": "number", "tol": 0.005},
                "unit": {"kind": "enum", "values": ["EUR", "USD"], "default": "EUR"},
            }
        },
        "get_order": {"args": {"order_id": "exact"}},
    },
}
REFUNDS = [
    {"name": "refund", "args": {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}},
    {"name": "refund", "args": {"order_id": "order-31", "amount": 5}},
]
SPECS, _ = parse_specs(SPEC, "tools.json")
assert SPECS is not None


@cache
def fixture(name: str) -> dict[str, Any]:
    """A fixture file's data, read once."""
    data = json.loads((RESPONSES_DIR / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def line_of(name: str, **changes: Any) -> dict[str, Any]:
    """A deep copy of a fixture's line, with `changes` made at its top."""
    return {**copy.deepcopy(fixture(name)["line"]), **changes}


def read(line: dict[str, Any], choice: int | None = None) -> Trajectory:
    """The line read as line 3 of out.jsonl."""
    return parse_output(line, "out.jsonl", 3, choice)


def refused(line: dict[str, Any], choice: int | None = None) -> OutputError:
    """The one-line input error reading the line gives."""
    with pytest.raises(OutputError) as failure:
        read(line, choice)
    assert failure.value.source == "out.jsonl"
    assert failure.value.line == 3
    assert "\n" not in str(failure.value)
    return failure.value


def run(*args: str) -> Result:
    """The command line, in this process."""
    return CliRunner().invoke(cli, list(args))


def write_run(tmp_path: Path, outputs: list[dict[str, Any]], cases: Any = None) -> list[str]:
    """The files of a run whose cases each expect the two refunds (or `cases`)."""
    (tmp_path / "tools.json").write_text(json.dumps(SPEC))
    rows = cases or [{"id": line["id"], "plans": [REFUNDS]} for line in outputs]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))
    return [
        "score", "--specs", str(tmp_path / "tools.json"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"),
    ]  # fmt: skip


def stream_of(name: str) -> list[Any]:
    """A copy of a stream fixture's events."""
    events = fixture(name)["line"]["stream"]
    assert isinstance(events, list)
    return copy.deepcopy(events)


def unread(events: list[Any]) -> tuple[str, ...]:
    """The unread parts of a line holding `events` as its stream."""
    return read({"id": "s", "stream": events}).unread
