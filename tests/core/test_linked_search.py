"""The data-flow search (issue 11, item 1): polynomial on interchangeable linked calls, and
the same verdicts as the exhaustive search it replaced (kept in `linked_oracle.py`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linked_oracle import old_links_kept, old_passes
from toolscore.core import dataflow, diagnosis, plans
from toolscore.core.arguments import matches
from toolscore.core.dataflow import SearchGaveUpError, link_problems, search_pairing
from toolscore.core.diagnosis import _links_kept
from toolscore.core.model import Call, Case
from toolscore.core.plans import link_fits, linked_plan_passes
from toolscore.errors import CaseError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case
from toolscore.specs.loading import SpecSet, parse_specs

TOOLS = {
    "get": {"args": {"order_id": "exact"}},
    "refund": {"args": {"order_id": "exact", "amount": "integer"}},
    "log": {"args": {"event": "exact"}},
}


def spec(relaxed: bool = False) -> SpecSet:
    data: dict[str, Any] = {"version": "t", "tools": TOOLS}
    if relaxed:
        data["relax"] = [{"allow": "extra_calls", "tools": ["get"], "reason": "read-only"}]
    found, problems = parse_specs(data)
    assert found is not None, problems
    return found


@st.composite
def linked_plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A small plan whose calls refer to earlier lookups by `$ref` or `after`, with values
    from tiny domains so that many pairings compete."""
    plan: list[dict[str, Any]] = []
    gets: list[int] = []
    for t in range(draw(st.integers(1, 5))):
        tool = draw(st.sampled_from(["get", "refund", "log"]))
        call: dict[str, Any] = {"id": f"c{t}", "name": tool}
        if tool == "get":
            source = draw(st.sampled_from([None, *gets]))
            order = {"$ref": f"c{source}#/next"} if source is not None else None
            call["args"] = {"order_id": order or draw(st.sampled_from(["o1", "o2"]))}
            gets.append(t)
        elif tool == "refund":
            source = draw(st.sampled_from([None, *gets]))
            order = {"$ref": f"c{source}#/id"} if source is not None else None
            call["args"] = {
                "order_id": order or draw(st.sampled_from(["X", "Y"])),
                "amount": draw(st.sampled_from([1, 2])),
            }
        else:
            call["args"] = {"event": draw(st.sampled_from(["a", "b"]))}
        earlier = draw(st.sampled_from([None, *range(len(plan))]))
        if earlier is not None:
            call["after"] = [f"c{earlier}"]
        plan.append(call)
    return plan


PRODUCED = st.sampled_from(
    [
        {"name": "get", "args": {"order_id": o}, "result": {"id": x, "next": n}}
        for o in ("o1", "o2")
        for x in ("X", "Y")
        for n in ("o1", "o2")
    ]
    + [{"name": "get", "args": {"order_id": "o1"}}]
    + [{"name": "refund", "args": {"order_id": x, "amount": a}} for x in ("X", "Y") for a in (1, 2)]
    + [{"name": "log", "args": {"event": e}} for e in ("a", "b")]
)


def build(
    plan: list[dict[str, Any]], produced: list[dict[str, Any]], specs: SpecSet
) -> tuple[Case, tuple[Call, ...]]:
    case = parse_case({"id": "p", "plans": [plan]}, specs)
    return case, parse_output({"id": "p", "calls": produced}).calls


def assert_valid(
    specs: SpecSet, plan: tuple[Call, ...], calls: tuple[Call, ...], pairs: Any, ordered: bool
) -> None:
    """A pairing the search returns keeps every link: each paired call's arguments, with its
    `$ref`s resolved, equal the plan's, and (when ordered) no call precedes its sources."""
    for (i, j), (args, problems) in link_problems(plan, calls, pairs).items():
        if ordered:
            assert problems == [], (i, j, problems)
        else:
            assert all(p.code == "order_violation" for p in problems), problems
        assert matches(specs.rules[plan[i].name], args, calls[j].args)


SEARCH = settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])


@SEARCH
@given(linked_plans(), st.lists(PRODUCED, max_size=6), st.booleans())
def test_the_verdict_equals_the_exhaustive_search(
    plan: list[dict[str, Any]], produced: list[dict[str, Any]], relaxed: bool
) -> None:
    specs = spec(relaxed)
    case, calls = build(plan, produced, specs)
    steps = case.plans[0]
    new = linked_plan_passes(specs.rules, specs.extra_ok, steps, calls)
    old = old_passes(specs.rules, specs.extra_ok, steps, calls)
    assert (new is None) == (old is None)
    if new is not None:
        assert_valid(specs, steps, calls, new, ordered=True)
        paired = {j for _, j in new}
        assert all(calls[j].name in specs.extra_ok for j in range(len(calls)) if j not in paired)
    kept = _links_kept(specs.rules, steps, calls)
    old_kept = old_links_kept(specs.rules, steps, calls, True) or old_links_kept(
        specs.rules, steps, calls, False
    )
    assert (kept is None) == (old_kept is None)
    if kept is not None:
        assert_valid(specs, steps, calls, kept, ordered=False)
    assert score_case(specs, case, parse_output({"id": "p", "calls": produced})).passed == (
        old is not None
    )


def lookup_and_refunds(
    n: int, missing: str, link: str = "ref"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The issue's reproducer: a lookup, n refunds linked to it, and one call never made."""
    refund: dict[str, Any] = (
        {"name": "refund", "args": {"order_id": {"$ref": "look#/id"}, "amount": 5}}
        if link == "ref"
        else {"name": "refund", "args": {"order_id": "X", "amount": 5}, "after": ["look"]}
    )
    plan = [{"id": "look", "name": "get", "args": {"order_id": "o1"}}] + [refund] * n
    if missing == "free":
        plan.append({"name": "log", "args": {"event": "a"}})
    elif missing == "linked":
        plan.append(refund)
    calls = [{"name": "get", "args": {"order_id": "o1"}, "result": {"id": "X"}}]
    calls += [{"name": "refund", "args": {"order_id": "X", "amount": 5}}] * n
    return {"id": "r", "plans": [plan]}, {"id": "r", "calls": calls}


@pytest.mark.parametrize("link", ["ref", "after"])
@pytest.mark.parametrize(
    ("missing", "codes"), [("free", ["missing_call"]), ("linked", ["missing_call"]), ("none", [])]
)
def test_fifty_interchangeable_linked_refunds_are_decided(
    link: str, missing: str, codes: list[str]
) -> None:
    """N=10 took 86 s with the old search; N=50 is timed by bench/linked.py."""
    specs = spec()
    case_data, output = lookup_and_refunds(50, missing, link)
    result = score_case(specs, parse_case(case_data, specs), parse_output(output))
    assert result.passed == (missing == "none")
    assert [m.code for m in result.mismatches] == codes


def twin_lookups(n: int, extra_log: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """n identical lookups, each with its own refund of what it returned: the plan cannot
    tell the lookups apart, the agent's lookups returned different ids."""
    plan: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for k in range(n):
        plan.append({"id": f"l{k}", "name": "get", "args": {"order_id": "o1"}})
        plan.append({"name": "refund", "args": {"order_id": {"$ref": f"l{k}#/id"}, "amount": 1}})
        calls.append({"name": "get", "args": {"order_id": "o1"}, "result": {"id": f"X{k}"}})
    calls += [
        {"name": "refund", "args": {"order_id": f"X{k}", "amount": 1}} for k in reversed(range(n))
    ]
    if extra_log:
        plan.append({"name": "log", "args": {"event": "a"}})
    return {"id": "t", "plans": [plan]}, {"id": "t", "calls": calls}


@pytest.mark.parametrize("extra_log", [False, True])
def test_twin_sources_are_one_group(extra_log: bool) -> None:
    """12 twin lookups are 12! pairings to a search that tells them apart."""
    specs = spec()
    case_data, output = twin_lookups(12, extra_log)
    result = score_case(specs, parse_case(case_data, specs), parse_output(output))
    assert result.passed is not extra_log
    assert [m.code for m in result.mismatches] == (["missing_call"] if extra_log else [])


def test_a_search_that_gives_up_raises_instead_of_running_on() -> None:
    specs = spec()
    case_data, output = twin_lookups(4, False)
    case = parse_case(case_data, specs)
    calls = parse_output(output).calls
    plan = case.plans[0]
    fits = link_fits(specs.rules, plan, calls)
    with pytest.raises(SearchGaveUpError, match="gave up after 3 checks"):
        search_pairing(plan, calls, fits, lambda assigned, check: None, budget=3)


def test_past_the_budget_a_right_pairing_still_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no budget to search, the verdict falls back on the diagnosis: a pairing by
    arguments that keeps every link passes, one that does not fails with its reasons."""
    monkeypatch.setattr(dataflow, "SEARCH_BUDGET", 0)
    specs = spec()
    case_data, output = twin_lookups(3, False)
    case = parse_case(case_data, specs)
    assert score_case(specs, case, parse_output(output)).passed
    output["calls"][-1]["args"]["order_id"] = "nope"
    failed = score_case(specs, case, parse_output(output))
    assert not failed.passed
    assert "value_mismatch" in [m.code for m in failed.mismatches]


def no_giving_up(monkeypatch: pytest.MonkeyPatch, budget: int) -> list[str]:
    """Give the search `budget` checks and record each time it gives up."""
    gave_up: list[str] = []

    def watched(*args: Any, **options: Any) -> Any:
        try:
            return search_pairing(*args, **options)
        except SearchGaveUpError as error:
            gave_up.append(str(error))
            raise

    monkeypatch.setattr(dataflow, "SEARCH_BUDGET", budget)
    monkeypatch.setattr(plans, "search_pairing", watched)
    monkeypatch.setattr(diagnosis, "search_pairing", watched)
    return gave_up


def test_twin_sources_are_searched_in_one_order_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve twin lookups; every order of them but the one that leaves X11 without its
    refund would be tried (11! of them) if twins were told apart."""
    gave_up = no_giving_up(monkeypatch, 5_000)
    specs = spec()
    case_data, output = twin_lookups(12, False)
    refunds = [c for c in output["calls"] if c["name"] == "refund"]
    refunds[0]["args"]["order_id"] = "X0"  # X11's refund is now a second refund of X0
    result = score_case(specs, parse_case(case_data, specs), parse_output(output))
    assert not result.passed
    assert gave_up == []
    assert {m.code for m in result.mismatches} == {"value_mismatch"}


def test_identical_produced_sources_are_tried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refund that needs a lookup's id and a log made before it, against 100 identical
    lookups whose id no refund carries: one of them is tried, not each in turn."""
    gave_up = no_giving_up(monkeypatch, 2_000)
    specs = spec()
    plan = [
        {"id": "a", "name": "get", "args": {"order_id": "o1"}},
        {"id": "b", "name": "log", "args": {"event": "a"}},
        {"name": "refund", "args": {"order_id": {"$ref": "a#/id"}, "amount": 1}, "after": ["b"]},
    ]
    calls = [{"name": "get", "args": {"order_id": "o1"}, "result": {"id": "X"}}] * 100
    calls += [{"name": "log", "args": {"event": "a"}}]
    calls += [{"name": "refund", "args": {"order_id": "Y", "amount": 1}}]
    case = parse_case({"id": "c", "plans": [plan]}, specs)
    result = score_case(specs, case, parse_output({"id": "c", "calls": calls}))
    assert not result.passed
    assert gave_up == []
    assert sorted(m.code for m in result.mismatches) == ["extra_call"] * 99 + ["value_mismatch"]


def chain(n: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """n lookups, each asking for the order the previous one named: n sources in a row."""
    plan = [{"id": "c0", "name": "get", "args": {"order_id": "o0"}}]
    plan += [
        {"id": f"c{k}", "name": "get", "args": {"order_id": {"$ref": f"c{k - 1}#/next"}}}
        for k in range(1, n)
    ]
    calls = [
        {"name": "get", "args": {"order_id": f"o{k}"}, "result": {"next": f"o{k + 1}"}}
        for k in range(n)
    ]
    return {"id": "chain", "plans": [plan]}, calls


def test_a_chain_of_thousands_of_links_is_no_deeper_for_python() -> None:
    """Loading (cycle check), ordering and searching walk with their own stacks: a chain of
    3,000 links used to raise RecursionError."""
    specs = spec()
    case_data, calls = chain(3_000)
    case = parse_case(case_data, specs)
    assert score_case(specs, case, parse_output({"id": "chain", "calls": calls})).passed
    cyclic = [*case_data["plans"][0]]
    cyclic[0] = {"id": "c0", "name": "get", "args": {"order_id": {"$ref": "c2999#/next"}}}
    with pytest.raises(CaseError, match="links form a cycle"):
        parse_case({"id": "loop", "plans": [cyclic]}, specs)


def test_a_reversed_chain_fails_on_order() -> None:
    specs = spec()
    case_data, calls = chain(200)
    case = parse_case(case_data, specs)
    result = score_case(specs, case, parse_output({"id": "chain", "calls": calls[::-1]}))
    assert not result.passed
    assert {m.code for m in result.mismatches} == {"order_violation"}
