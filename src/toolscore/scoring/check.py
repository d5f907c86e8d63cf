"""Score one case from plain Python data: the call under every integration (pytest, the
evaluator functions), so that a test or an evaluation harness never writes JSON Lines.

`check` only turns its arguments into what the file readers build (a `SpecSet`, a `Case`, a
`Trajectory`) through the same functions, `parse_specs`, `parse_case` and `parse_output`, and
scores them with `score_case`: a verdict from `check` is the verdict `score` gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolscore.core.diagnosis import mismatch_line
from toolscore.core.model import Case, CaseResult, Trajectory
from toolscore.errors import CaseError, OutputError, SpecError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.formats.responses import shape_of
from toolscore.inputs.formats.streams import stream_kind
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case
from toolscore.specs.loading import SpecSet, load_specs, parse_specs

DEFAULT_ID = "case"
"""The id a case gets when neither `case_id` nor its mapping names one."""

MESSAGE_KEYS = frozenset({"role", "type", "parts", "jsonrpc"})
"""Keys a transcript's message or item (or an MCP log's JSON-RPC message) has and a plain call
never has: a list whose entries carry one is read as a transcript (`messages`), its format
detected as in an outputs file."""

ASSERT_LINES = 50
"""Mismatch lines an assertion message lists before it only counts the rest."""


def check(specs: Any, plans: Any, produced: Any, *, case_id: str | None = None) -> CaseResult:
    """The verdict on one case: `produced` (calls, a transcript or an outputs line) scored
    against `plans` (one plan, a list of plans, or a case mapping) under `specs` (a `SpecSet`,
    a spec file's path, or spec data as `parse_specs` takes it).

    Raises `SpecError`, `CaseError` or `OutputError` when an argument cannot be used, like a
    broken line of the files `score` reads; what the agent put in a call never raises.
    """
    spec_set = as_specs(specs)
    case = as_case(plans, spec_set, case_id)
    return score_case(spec_set, case, as_trajectory(produced, case.id))


def as_specs(specs: Any) -> SpecSet:
    """A spec set from a `SpecSet`, a path to a spec file, or parsed spec data."""
    if isinstance(specs, SpecSet):
        return specs
    if isinstance(specs, str | Path):
        return load_specs(specs)
    if isinstance(specs, Mapping | list):
        spec_set, problems = parse_specs(specs, "<specs>")
        if problems:
            raise problems[0]
        assert spec_set is not None
        return spec_set
    raise SpecError("<specs>", f"expected a SpecSet, a path or spec data, got {_kind(specs)}")


def as_case(plans: Any, specs: SpecSet, case_id: str | None = None) -> Case:
    """A case from one plan (a list of call mappings), a list of plans, or a case mapping
    (`{"plans": ...}` and any other keys of a cases line); `case_id` names it when given."""
    if isinstance(plans, Case):
        return plans if case_id is None else plans._replace(id=case_id)
    if isinstance(plans, Mapping):
        data = dict(plans)
        data["id"] = case_id or data.get("id", DEFAULT_ID)
        return parse_case(data, specs, "<plans>")
    if not isinstance(plans, list | tuple):
        expected = "a plan, a list of plans or a case"
        raise CaseError("<plans>", f"expected {expected}, got {_kind(plans)}")
    entries = list(plans)
    if entries and all(isinstance(entry, Mapping) for entry in entries):
        entries = [entries]  # one plan: a list of calls
    elif not all(isinstance(entry, list | tuple) for entry in entries):
        raise CaseError(
            "<plans>",
            "give one plan (a list of calls) or a list of plans, not a mix of calls and plans",
        )
    data = {"id": case_id or DEFAULT_ID, "plans": [list(entry) for entry in entries]}
    return parse_case(data, specs, "<plans>")


def as_trajectory(produced: Any, case_id: str) -> Trajectory:
    """What the agent did, for the case `case_id`: a list of calls, a transcript (a list of
    messages or items in any format an outputs file accepts), a saved stream (a list of
    chunks or events), a response object, or an outputs line mapping. A response object's
    own `id` is the provider's, not a case's."""
    if isinstance(produced, Trajectory):
        return produced._replace(case_id=case_id)
    if isinstance(produced, Mapping):
        named = produced.get("id", case_id)
        if named != case_id and shape_of(produced) is None:
            raise OutputError(
                "<produced>", f"the output is for case {named!r}, not {case_id!r}", field="id"
            )
        return parse_output({**produced, "id": case_id}, "<produced>")
    if not isinstance(produced, list | tuple):
        raise OutputError(
            "<produced>",
            f"expected a list of calls, a transcript or an outputs line, got {_kind(produced)}",
        )
    entries = list(produced)
    if entries and stream_kind(entries) is not None:
        return parse_output({"id": case_id, "stream": entries}, "<produced>")
    if is_transcript(entries):
        return parse_output({"id": case_id, "messages": entries}, "<produced>")
    return parse_output({"id": case_id, "calls": entries}, "<produced>")


def is_transcript(entries: Sequence[Any]) -> bool:
    """True when a list holds messages or items (they have a role, a type, parts or
    `jsonrpc`), not calls; a call that is not even a mapping stays a call, and fails as one."""
    return any(isinstance(e, Mapping) and not MESSAGE_KEYS.isdisjoint(e) for e in entries)


def assert_tool_calls(
    produced: Any, plans: Any, *, specs: Any, case_id: str | None = None
) -> CaseResult:
    """Fail with an `AssertionError` listing every mismatch (as `score` prints them) unless
    `produced` passes `plans`; return the result otherwise. Needs no assertion rewriting."""
    __tracebackhide__ = True  # pytest shows the test's line, not this one
    result = check(specs, plans, produced, case_id=case_id)
    if not result.passed:
        raise AssertionError(failure_message(result))
    return result


def failure_message(result: CaseResult, limit: int = ASSERT_LINES) -> str:
    """Why a case failed: a heading naming the case (unless it has no id of its own) and the
    plan compared, then a line per mismatch in the wording of `toolscore score`."""

    plan = "no plan fits" if result.plan is None else f"closest plan {result.plan}"
    trial = "" if result.trial is None else f" trial {result.trial}"
    missing = ", no output" if result.missing_output else ""
    count = len(result.mismatches)
    subject = "tool calls" if result.id == DEFAULT_ID else f"tool calls of case {result.id!r}"
    heading = (
        f"{subject}{trial} do not match the plans "
        f"({plan}{missing}; {count} mismatch{'es' if count != 1 else ''}):"
    )
    lines = [f"  {mismatch_line(m)}" for m in result.mismatches[:limit]]
    if count > limit:
        lines.append(f"  ... and {count - limit} more (the result's mismatches list all)")
    return "\n".join([heading, *lines])


def _kind(value: Any) -> str:
    return type(value).__name__
