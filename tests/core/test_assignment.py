"""The pure-Python assignment solver against scipy's, and the diagnosis shortcuts against the
full assignment they stand in for (issue 12): same optimum, same pairing, ties included."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from toolscore.core import assignment
from toolscore.core.arguments import call_matches, call_mismatches, mismatch_count
from toolscore.core.assignment import assign, shortest_augmenting_path
from toolscore.core.call_order import canonical_order
from toolscore.core.diagnosis import (
    _best_pairing,
    _best_sorted_pairing,
    best_plan,
    diagnose_plan,
)
from toolscore.core.model import Call
from toolscore.core.plans import plan_passes
from toolscore.specs.loading import SpecSet, parse_specs

SETTINGS = settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])

ENTRIES = (
    st.integers(0, 3)
    | st.sampled_from([0.5, 2.25, 1e9])
    | st.floats(-5, 5, allow_nan=False)
    | st.just(math.inf)
)
"""Small integers, so that ties are common, some floats, and forbidden (infinite) entries."""


@st.composite
def matrices(draw: st.DrawFn) -> list[list[float]]:
    """Square, wide and tall matrices, up to 7 x 7."""
    rows, cols = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    row = st.lists(ENTRIES, min_size=cols, max_size=cols)
    return draw(st.lists(row, min_size=rows, max_size=rows))


def scipy_columns(cost: list[list[float]]) -> list[int] | None:
    """scipy's column for each row (-1 for a row left out), or None when it is infeasible."""
    try:
        rows, cols = linear_sum_assignment(np.array(cost, dtype=float))
    except ValueError:
        return None
    found = [-1] * len(cost)
    for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
        found[r] = c
    return found


def total(cost: list[list[float]], columns: list[int]) -> float:
    return sum(cost[r][c] for r, c in enumerate(columns) if c >= 0)


@SETTINGS
@given(matrices())
def test_solver_agrees_with_scipy(cost: list[list[float]]) -> None:
    expected = scipy_columns(cost)
    if expected is None:
        with pytest.raises(ValueError, match="infeasible"):
            shortest_augmenting_path(cost)
        return
    found = shortest_augmenting_path(cost)
    assert total(cost, found) == total(cost, expected)  # the same optimum
    # ... and the same assignment among equal optima, so that where scipy takes over from
    # the pure-Python solver (assignment.SCIPY_FROM) no diagnosis changes.
    assert found == expected


@pytest.mark.parametrize(
    ("cost", "columns"),
    [
        ([[0, 0], [0, 0]], [0, 1]),  # a constant matrix gives the identity
        ([[1, 1, 1]], [0]),  # a single row takes its first cheapest column
        ([[5, 1, 1], [1, 5, 5]], [1, 0]),
        ([[1], [0], [2]], [-1, 0, -1]),  # tall: every column is assigned, not every row
        ([[math.inf, 1], [math.inf, 2]], None),
    ],
)
def test_solver_known_answers(cost: list[list[float]], columns: list[int] | None) -> None:
    if columns is None:
        with pytest.raises(ValueError, match="infeasible"):
            shortest_augmenting_path(cost)
    else:
        assert shortest_augmenting_path(cost) == columns == scipy_columns(cost)


def test_invalid_entries_are_refused() -> None:
    with pytest.raises(ValueError, match="invalid"):
        shortest_augmenting_path([[0, math.nan]])
    with pytest.raises(ValueError, match="invalid"):
        shortest_augmenting_path([[-math.inf, 0]])


def test_large_problems_go_to_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    cost = [[(r * 7 + c * 3) % 5 for c in range(8)] for r in range(4)]
    monkeypatch.setattr(assignment, "SCIPY_FROM", 4 * 8)
    monkeypatch.delitem(sys.modules, "scipy.optimize", raising=False)
    assert assign(cost) == shortest_augmenting_path(cost)
    assert "scipy.optimize" in sys.modules  # scipy answered


# --- the diagnosis shortcuts ------------------------------------------------------------------

SPEC = {
    "version": "t",
    "tools": {
        "refund": {"args": {"order": "exact", "amount": "number", "unit": "casefold"}},
        "notify": {"args": {"who": "exact"}},
    },
    "relax": [{"allow": "extra_calls", "tools": ["notify"], "reason": "harmless"}],
}
ARGS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "refund": {
        "order": st.sampled_from(["a", "b", "c"]),
        "amount": st.sampled_from([1, 2]),
        "unit": st.sampled_from(["eur", "EUR", "usd"]),
    },
    "notify": {"who": st.sampled_from(["x", "y"])},
}


def spec_set() -> SpecSet:
    specs, problems = parse_specs(SPEC)
    assert specs is not None, problems
    return specs


@st.composite
def calls(draw: st.DrawFn, max_size: int = 4) -> list[Call]:
    """Calls to the two tools from small pools of values, so that calls often tie; some
    leave an argument out and a few could not be parsed."""
    made = []
    for _ in range(draw(st.integers(0, max_size))):
        name = draw(st.sampled_from(sorted(ARGS)))
        if draw(st.integers(0, 9)) == 0:
            made.append(Call(name, None, raw_args="{", args_error="bad JSON"))
            continue
        args = {k: draw(v) for k, v in ARGS[name].items() if draw(st.integers(0, 5))}
        made.append(Call(name, args))
    return made


def via_assignment(
    specs: SpecSet, plan: list[Call], produced: list[Call]
) -> tuple[Any, ...] | None:
    """The diagnosis pairing as it was always found: canonical order, then the assignment."""
    order = canonical_order(produced)
    rank = {j: r for r, j in enumerate(order)}
    same_tool = [
        (i, rank[j]) for i, e in enumerate(plan) for j, p in enumerate(produced) if e.name == p.name
    ]
    ordered = [produced[j] for j in order]
    found = _best_sorted_pairing(specs.rules, plan, ordered, sorted(same_tool), frozenset())
    if found is None:
        return None
    pairs, described, _ = found
    unsorted = sorted(zip([(i, order[j]) for i, j in pairs], described, strict=True))
    return tuple(p for p, _ in unsorted), [d for _, d in unsorted]


@settings(SETTINGS, max_examples=300)
@given(calls(), calls(5))
def test_shortcuts_choose_what_the_assignment_chooses(
    plan: list[Call], produced: list[Call]
) -> None:
    """Forced pairings, one plan call with several candidates: the same pairs and mismatches
    as the full assignment, whatever the ties."""
    plan = [call for call in plan if call.args is not None]
    specs = spec_set()
    found = _best_pairing(specs.rules, plan, produced)
    chosen = None if found is None else found[:2]
    assert chosen == via_assignment(specs, plan, produced)


@settings(SETTINGS, max_examples=300)
@given(calls(), calls(5))
def test_a_pair_s_mismatch_count_is_the_number_of_its_mismatches(
    plan: list[Call], produced: list[Call]
) -> None:
    """`mismatch_count`, which counts an argument at a time, against the describing walk."""
    specs = spec_set()
    for e in plan:
        if e.args is None:
            continue
        rule = specs.rules[e.name]
        for p in produced:
            assert mismatch_count(rule, e, p) == len(call_mismatches(rule, e, p))
            assert (mismatch_count(rule, e, p) == 0) == call_matches(rule, e, p)


@settings(SETTINGS, max_examples=300)
@given(calls(), calls(5), st.booleans())
def test_the_fits_a_verdict_reports_are_the_pairs_that_match(
    plan: list[Call], produced: list[Call], two_plans: bool
) -> None:
    """`PlanVerdict.fits`, where a failed verdict gives it, is exactly the set of same-tool
    pairs whose calls match under the rules: partial credit matches on it alone."""
    plan = [call for call in plan if call.args is not None]
    specs = spec_set()
    plans = [plan, plan[:1]] if two_plans else [plan]
    verdict = best_plan(specs.rules, specs.extra_ok, plans, produced)
    if verdict.fits is None:
        return
    assert not verdict.passed
    assert verdict.plan is not None
    chosen = plans[verdict.plan]
    assert verdict.fits == {
        (i, j)
        for i, e in enumerate(chosen)
        for j, p in enumerate(produced)
        if e.name == p.name and call_matches(specs.rules[e.name], e, p)
    }


@settings(SETTINGS, max_examples=300)
@given(calls(), calls(5))
def test_single_plan_verdict_is_the_general_one(plan: list[Call], produced: list[Call]) -> None:
    """`best_plan` on one plan (its forced path) against checking, then diagnosing."""
    plan = [call for call in plan if call.args is not None]
    specs = spec_set()
    for rules, diagnose in ((specs.rules, True), (specs.lowercase_rules, False)):
        verdict = best_plan(rules, specs.extra_ok, [plan], produced, diagnose=diagnose)
        pairs = plan_passes(rules, specs.extra_ok, plan, produced)
        if pairs is not None:
            assert (verdict.passed, verdict.plan, verdict.pairs) == (True, 0, pairs)
        elif diagnose:
            chosen, mismatches = diagnose_plan(rules, specs.extra_ok, plan, produced)
            assert not verdict.passed
            assert (verdict.pairs, verdict.mismatches) == (chosen, tuple(mismatches))
        else:
            assert not verdict.passed


def test_small_failing_cases_do_not_import_scipy() -> None:
    """Diagnosing a case with a real choice (two refunds, both wrong) solves it without scipy."""
    src = Path(__file__).resolve().parents[2] / "src"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(src)!r})
        from toolscore.inputs.cases import parse_case
        from toolscore.inputs.outputs import parse_output
        from toolscore.scoring.case import score_case
        from toolscore.specs.loading import parse_specs
        specs, _ = parse_specs({SPEC!r})
        refund = {{"name": "refund", "args": {{"order": "a", "amount": 1, "unit": "eur"}}}}
        other = {{"name": "refund", "args": {{"order": "b", "amount": 1, "unit": "eur"}}}}
        case = parse_case({{"id": "c", "plans": [[refund, other]]}}, specs)
        wrong = [{{"name": "refund", "args": {{"order": "c", "amount": 2, "unit": "eur"}}}}] * 2
        result = score_case(specs, case, parse_output({{"id": "c", "calls": wrong}}))
        assert not result.passed and len(result.pairs) == 2, result
        print(sorted(name for name in sys.modules if name.split(".")[0] in ("scipy", "numpy")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
