"""Stored JSON back to the values the terminal report renders: `CaseResult` and `Summary`.

`toolscore show` prints a stored run with the same renderer as `score`, which takes values,
not JSON; these rebuild what that renderer reads (nothing more: the produced calls and the
pairing of a stored case are not kept).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolscore.core.model import (
    MISSING,
    CaseResult,
    Efficiency,
    Mismatch,
    Partial,
    Retry,
    TurnResult,
)
from toolscore.inputs.missing import IdSample, JoinTally
from toolscore.inputs.trials import TrialsTally
from toolscore.scoring.forbidden import ForbiddenTally
from toolscore.scoring.rates import CallRates
from toolscore.scoring.summary import Summary
from toolscore.scoring.tallies import BaselineTally, ClusteredAccuracy, OutcomeTally, Tally
from toolscore.scoring.turn_tally import TURN_KEYS
from toolscore.state.checks import CheckResult
from toolscore.state.verdict import StateVerdict
from toolscore.stats.intervals import Rate

if TYPE_CHECKING:
    from toolscore.rubrics.summary import RubricTally


def pointer_path(pointer: str) -> tuple[str | int, ...]:
    """The keys of a JSON pointer (RFC 6901); every key comes back as a string."""
    if not pointer:
        return ()
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/"))


def result_from_json(case: Mapping[str, Any]) -> CaseResult:
    """A `CaseResult` carrying what the terminal report shows of a stored case.

    The produced calls and the pairing are not stored, and a state verdict comes back
    without its diff and per-call outcomes (the stored JSON has them for `--json`).
    """
    mismatches = _mismatches(case["mismatches"])
    verdict = _state(case.get("state"))
    return CaseResult(
        id=case["id"],
        passed=case["passed"],
        kind=case["kind"],
        plan=case["plan"],
        mismatches=mismatches,
        baselines=case["baselines"],
        name_ok=case["passed"],
        missing_output=case.get("missing_output", False),
        format=case.get("format"),
        notes=tuple(case.get("notes", ())),
        state=verdict,
        unread=tuple(case.get("unread", ())),
        trial=case.get("trial"),
        trials=_trials_counts(case.get("trials")),
        trace=_trace(case.get("trace")),
        partial=_partial(case.get("partial")),
        efficiency=_efficiency(case.get("efficiency")),
        retries=tuple(
            Retry(r["call"], r["tool"], r["retried_by"], r["excused"])
            for r in case.get("retries", ())
        ),
        turns=tuple(
            TurnResult(
                t["index"],
                t["passed"],
                t["plan"],
                _mismatches(t["mismatches"]),
                (),
                _partial(t.get("partial")),
                tuple(t["calls"]),
                _state(t.get("state")),
            )
            for t in case.get("turns", ())
        ),
        first_failed_turn=case.get("first_failed_turn"),
    )


def _state(state: Mapping[str, Any] | None) -> StateVerdict | None:
    """A stored state block as a verdict, without its diff and per-call outcomes."""
    if state is None:
        return None
    return StateVerdict(
        state["passed"],
        outputs_passed=state["outputs_passed"],
        missing_outputs=tuple(state["missing_outputs"]),
        goal=state["goal"],
        plan=state.get("plan"),
        error=state.get("error"),
        checks=tuple(
            CheckResult(c["name"], c["passed"], c.get("reason")) for c in state.get("checks", ())
        ),
    )


def _mismatches(nodes: list[Mapping[str, Any]]) -> tuple[Mismatch, ...]:
    return tuple(
        Mismatch(
            m["code"],
            pointer_path(m["path"]),
            m["rule"],
            m.get("expected", MISSING),
            m.get("produced", MISSING),
            m["message"],
            m["call"],
            m["plan_call"],
        )
        for m in nodes
    )


def _partial(node: Mapping[str, Any] | None) -> Partial | None:
    if node is None:
        return None
    fields = ("plan", "matched", "expected", "produced", "precision", "recall", "f1")
    return Partial(*(node[name] for name in fields))


def _efficiency(node: Mapping[str, Any] | None) -> Efficiency | None:
    return None if node is None else Efficiency(node["extra"], node["excused"], node["repeated"])


def _trace(node: Mapping[str, Any] | None) -> tuple[str, str | None] | None:
    return None if node is None else (node["trace_id"], node["span_id"])


def _trials_counts(node: Mapping[str, Any] | None) -> tuple[int, int] | None:
    return None if node is None else (node["n"], node["passed"])


def _rate(node: Mapping[str, Any]) -> Rate:
    return Rate(node["passed"], node["n"])


def _tally(node: Mapping[str, Any]) -> Tally:
    return Tally(
        node["passed"], node["failed"], node.get("extra", 0), Counter(dict(node["top_codes"]))
    )


def _baseline(node: Mapping[str, Any]) -> BaselineTally:
    tool_cases = None
    if "tool_cases_passed" in node:
        tool_cases = IdSample(node["tool_cases_passed"], list(node["tool_case_ids"]))
    return BaselineTally(
        node["passed"],
        node["only_rules_pass"],
        node["only_baseline_passes"],
        list(node["disagreement_ids"]),
        tool_cases,
    )


def summary_from_json(data: Mapping[str, Any]) -> Summary:
    """The `Summary` whose `to_dict()` is `data` (per-tool codes beyond the top three, which
    the JSON does not keep, are not restored)."""
    state = data.get("state")
    outcomes = None
    if state is not None:
        outcomes = OutcomeTally(
            state_n=state["state_accuracy"]["n"],
            state_ok=state["state_accuracy"]["passed"],
            outputs_n=state["required_outputs"]["n"],
            outputs_ok=state["required_outputs"]["passed"],
            calls_passed_state_failed=state["calls_passed_state_failed"],
            calls_failed_state_passed=state["calls_failed_state_passed"],
            checks={
                name: [rate["passed"], rate["n"]]
                for name, rate in data.get("state_checks", {}).items()
            },
        )
    return Summary(
        cases=data["cases"],
        passed=data["passed"],
        name=_rate(data["name_accuracy"]),
        arguments=_rate(data["argument_accuracy"]),
        abstention=_rate(data["abstention_accuracy"]),
        missed_calls=data["missed_calls"],
        missing_outputs=data["missing_outputs"],
        unmatched_outputs=data["unmatched_outputs"],
        unread_cases=data.get("unread_cases", 0),
        unread_parts=data.get("unread_parts", 0),
        ignored_keys=Counter(data.get("ignored_keys", {})),
        baselines={name: _baseline(node) for name, node in data["baselines"].items()},
        per_tool={name: _tally(node) for name, node in data["per_tool"].items()},
        per_argument={name: _tally(node) for name, node in data["per_argument"].items()},
        codes=Counter(data["codes"]),
        call_rates=CallRates.from_json(data),
        outcomes=outcomes,
        clustered=_clustered(data.get("accuracy_clustered")),
        rubrics=_rubrics(data.get("rubrics")),
        trials=TrialsTally.from_json(data["trials"]) if "trials" in data else None,
        join=JoinTally.from_json(data),
        forbidden=ForbiddenTally.from_json(data.get("forbidden_calls")),
        partial=data.get("partial"),
        efficiency=data.get("efficiency"),
        retries=data.get("retries"),
        turns={key: data[key] for key in TURN_KEYS} if "turn_accuracy" in data else None,
        variants=data.get("variants"),
    )


def _rubrics(node: Mapping[str, Any] | None) -> RubricTally | None:
    if node is None:
        return None
    from toolscore.rubrics.summary import RubricTally  # noqa: PLC0415 - runs with rubrics only

    return RubricTally.from_json(node)


def _clustered(node: Mapping[str, Any] | None) -> ClusteredAccuracy | None:
    if node is None:
        return None
    bounds = node["ci95"] or (None, None)
    return ClusteredAccuracy(node["field"], node["clusters"], node["se"], *bounds)
