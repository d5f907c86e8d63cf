"""How a case result and a summary are kept in the store, and how they come back.

A case result is stored as its report JSON (`report.json_report.case_to_json`): the fields
every case has go in columns, the rest (mismatches, notes, state, ...) in one `detail` blob,
so that a passing case costs a few bytes and a stored run reads back as exactly the JSON
`score --json` wrote. Only JSON is stored: nothing read back is ever executed.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from toolscore.core.model import CaseResult

COMPRESS_ABOVE = 1024
"""Detail blobs longer than this are zlib-compressed when that makes them smaller (below
it, setting up the compressor costs more time than the bytes saved are worth)."""
BASELINES = ("exact", "lowercase")
"""The baselines packed as bits 0 and 1 of the `baselines` column, in bit order (the ones
`compare` and `disagreements` pair with the rules)."""
NOTHING = "nothing"
NOTHING_BIT = 4
"""Bit 2: the do-nothing baseline's verdict, on a row that keeps it (`NOTHING_KEPT`)."""
NOTHING_KEPT = 8
"""Bit 3: the row keeps the do-nothing baseline too; rows saved before it existed have
neither bit, and read back with the two baselines they had."""
TOOLS_KEY = "mismatch_tools"
"""Kept in `detail` beside the mismatches, not part of the report: the tool of each one."""
_ZLIB_HEADER = 0x78


def pack_json(value: Any) -> bytes:
    """JSON bytes, zlib-compressed when long enough for that to pay (a JSON object starts
    with `{`, a zlib stream with 0x78, so the two cannot be confused when read back)."""
    raw = orjson.dumps(value)
    if len(raw) > COMPRESS_ABOVE:
        packed = zlib.compress(raw, 6)
        if len(packed) < len(raw):
            return packed
    return raw


def unpack_json(blob: bytes) -> Any:
    """The value `pack_json` stored."""
    if blob[0] == _ZLIB_HEADER:
        blob = zlib.decompress(blob)
    return orjson.loads(blob)


ResultRow = tuple[str, int, str, int | None, int | None, bytes | None]
"""(case id, passed, kind, plan, baselines bits, detail) as the `results` table keeps them."""


def baseline_bits(baselines: Mapping[str, Any]) -> int | None:
    """The exact and lowercase verdicts as bits 0 and 1 of the `baselines` column, and the
    do-nothing one as bit 2 with bit 3 set, or None for baselines of any other shape (those
    are kept in the detail)."""
    names = tuple(baselines)
    if names not in ((*BASELINES, NOTHING), BASELINES):
        return None
    verdicts = [baselines[name] for name in names]
    if any(type(verdict) is not bool for verdict in verdicts):
        return None
    bits: int = verdicts[0] + 2 * verdicts[1]
    if len(verdicts) > len(BASELINES):
        bits += NOTHING_KEPT + NOTHING_BIT * verdicts[2]
    return bits


def case_row(case: dict[str, Any], tools: Sequence[str | None] | None = None) -> ResultRow:
    """The row for one case's report JSON (consumed: the dict is taken apart).

    `tools` names the tool of each mismatch, for `compare`; it is kept in the detail.
    """
    case_id, passed, kind, plan = (
        case.pop("id"),
        case.pop("passed"),
        case.pop("kind"),
        case.pop("plan"),
    )
    baselines = case.pop("baselines")
    bits = baseline_bits(baselines)
    if bits is None:
        case["baselines"] = baselines
    mismatches = case.get("mismatches")
    if len(case) == 1 and mismatches == []:
        return case_id, int(passed), kind, plan, bits, None
    if tools is not None and mismatches:
        case[TOOLS_KEY] = list(tools)
    return case_id, int(passed), kind, plan, bits, pack_json(case)


TRIAL_KEYS = ("trial", "trials")
"""Keys of a trial's report JSON kept in its detail and shown next to its id."""

REPORTED_FIELDS = (
    "id", "passed", "kind", "plan", "mismatches", "baselines", "name_ok", "pairs",
    "produced_calls", "missing_output", "calls", "format", "notes", "state", "unread", "trial",
    "trials", "trace", "ignored", "partial", "efficiency", "retries", "turns",
    "first_failed_turn", "said",
)  # fmt: skip
"""The `CaseResult` fields `plain_row` knows how the report shows (a test pins them;
`ignored` is counted in the summary only, `said` is read by response rubrics only)."""


def plain_row(result: CaseResult) -> ResultRow | None:
    """The row of a result whose report JSON has nothing beyond the columns (no mismatch,
    note, state or tool error: most passing cases), built without the report JSON; None
    for any other result. Saving a run calls this once per case."""
    if (
        result.mismatches
        or result.trial is not None
        or result.missing_output
        or result.state is not None
        or result.format is not None
        or result.notes
        or result.unread
        or result.trace is not None
        or result.retries
        or result.turns
    ):
        return None
    for call in result.calls:
        if call.result_error:
            return None
    bits = baseline_bits(result.baselines)
    if bits is None:
        return None
    partial, efficiency = result.partial, result.efficiency
    if partial is None and efficiency is None:
        return result.id, int(result.passed), result.kind, result.plan, bits, None
    detail: dict[str, Any] = {"mismatches": []}  # what `case_row` keeps of the report JSON
    if partial is not None:
        detail["partial"] = partial.to_json()
    if efficiency is not None:
        detail["efficiency"] = efficiency.to_json()
    return result.id, int(result.passed), result.kind, result.plan, bits, pack_json(detail)


def case_json(
    case_id: str, passed: int, kind: str, plan: int | None, bits: int | None, detail: bytes | None
) -> tuple[dict[str, Any], list[str | None]]:
    """The report JSON of a stored case, key order included, and the tool of each mismatch."""
    rest: dict[str, Any] = {"mismatches": []} if detail is None else unpack_json(detail)
    if bits is None:
        baselines = rest["baselines"]
    else:
        names = (*BASELINES, NOTHING) if bits & NOTHING_KEPT else BASELINES
        baselines = {name: bool(bits >> i & 1) for i, name in enumerate(names)}
    data: dict[str, Any] = {"id": case_id}
    for key in TRIAL_KEYS:  # shown beside the id, as the report puts them
        if key in rest:
            data[key] = rest.pop(key)
    data |= {
        "passed": bool(passed),
        "kind": kind,
        "plan": plan,
        "baselines": baselines,
    }
    tools: list[str | None] = []
    for key, value in rest.items():
        if key == TOOLS_KEY:
            tools = value
        elif key != "baselines":
            data[key] = value
    if len(tools) != len(data["mismatches"]):
        tools = [None] * len(data["mismatches"])
    return data, tools


def mismatch_tools(result: CaseResult) -> list[str | None]:
    """The tool each mismatch of a result is about: the expected tool for a missing or wrong
    call, else the produced call's tool (None when the result does not say)."""
    tools: list[str | None] = []
    for m in result.mismatches:
        if m.code in ("missing_call", "wrong_tool") and isinstance(m.expected, str):
            tools.append(m.expected)
        elif m.call is not None and m.call < len(result.calls):
            tools.append(result.calls[m.call].name)
        elif isinstance(m.produced, str) and m.code in ("extra_call", "unknown_tool"):
            tools.append(m.produced)
        else:
            tools.append(None)
    return tools
