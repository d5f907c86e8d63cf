"""The fast paths for many overlapping calls (issue 12) against the straightforward ones.

`plans.narrowed` strikes candidates by looking produced calls up by a keyed argument, and
`arguments.mismatch_counts` counts mismatches an argument at a time; on random cases with
many calls drawn from small pools of tricky values, each must give exactly what trying every
pair gives: the same pairing, the same counts, the same verdicts and mismatches.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolscore.core import arguments, diagnosis, plans
from toolscore.core.arguments import (
    accepted_keys,
    call_matches,
    matches,
    mismatch_count,
)
from toolscore.core.counts import mismatch_counts
from toolscore.core.diagnosis import best_plan
from toolscore.core.model import OMITTED, AnyOf, Call, Ref
from toolscore.core.plans import cover, narrowed, plan_passes
from toolscore.core.rules import CasefoldRule, ExactRule, LowercaseRule, Rule
from toolscore.specs.loading import SpecSet, parse_specs

SETTINGS = settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])

SCALARS = [
    "a",
    "A",
    "b",
    "ß",
    "SS",
    "ss",
    "\u00e9",  # é composed
    "e\u0301",  # é decomposed: equal to it under casefold (NFC), not under exact
    "1",
    1,
    1.0,
    2,
    True,
    False,
    None,
    0.0,
    -0.0,
    math.nan,
    math.inf,
]
"""Values that tell rules apart: case, Unicode normal forms, `1`/`1.0`/`true`, NaN, null."""

VALUES = st.sampled_from(SCALARS) | st.lists(st.sampled_from(SCALARS[:4]), max_size=2)
"""What an argument may hold: mostly scalars, a few arrays (values no key stands for)."""


def spec_set(relax: bool) -> SpecSet:
    """Two tools with arguments of most kinds; relaxed, `notify` may be repeated freely and
    `refund` may be given unknown arguments."""
    spec: dict[str, Any] = {
        "version": "t",
        "tools": {
            "refund": {
                "args": {
                    "order": "exact",
                    "code": {"kind": "casefold", "reason": "labels are case-blind"},
                    "unit": {
                        "kind": "enum",
                        "values": ["EUR", "USD"],
                        "aliases": {"euro": "EUR"},
                        "default": "EUR",
                    },
                    "amount": {"kind": "number", "tol": 0.5},
                    "ref": {"kind": "exact", "default": None},
                    "tags": {"kind": "list", "items": "exact", "order": "unordered"},
                    "meta": {"kind": "object", "args": {"k": "exact"}},
                    "note": "text",
                }
            },
            "notify": {"args": {"who": "exact"}},
        },
    }
    if relax:
        spec["relax"] = [
            {"allow": "extra_calls", "tools": ["notify"], "reason": "harmless"},
            {"allow": "unknown_args", "tools": ["refund"], "reason": "tolerant API"},
        ]
    specs, problems = parse_specs(spec)
    assert specs is not None, problems
    return specs


ARGS = {
    "refund": {
        "order": VALUES,
        "code": VALUES,
        "unit": st.sampled_from(["EUR", "USD", "euro", "eur", None, 1]),
        "amount": st.sampled_from([1, 1.2, 2, "1", None]),
        "ref": VALUES,
        "tags": st.lists(st.sampled_from(["a", "b", 1]), max_size=2) | st.just("a"),
        "meta": st.fixed_dictionaries({"k": st.sampled_from(["a", "A", 1])}) | st.just([]),
        "note": st.just("free text"),
        "extra": st.just("unknown"),
    },
    "notify": {"who": VALUES},
}


def expected_values(draw: st.DrawFn, values: st.SearchStrategy[Any]) -> Any:
    """A plan's value: plain, `$any` of a few (leaving it out among them, at times), or a
    `$ref` (not compared by the call matcher)."""
    shape = draw(st.integers(0, 9))
    if shape < 3:
        options = draw(st.lists(values | st.just(OMITTED), min_size=1, max_size=3))
        return AnyOf(options)
    if shape == 3:
        return Ref("x", "/id")
    return draw(values)


@st.composite
def calls(draw: st.DrawFn, expected: bool, min_size: int, max_size: int) -> list[Call]:
    """Mostly refunds, each argument left out at times; produced ones are sometimes unparsed."""
    made = []
    for _ in range(draw(st.integers(min_size, max_size))):
        name = draw(st.sampled_from(["refund", "refund", "refund", "notify"]))
        if not expected and draw(st.integers(0, 14)) == 0:
            made.append(Call(name, None, raw_args="{", args_error="bad JSON"))
            continue
        args = {}
        for key, values in ARGS[name].items():
            if key == "extra" and expected:
                continue
            if draw(st.integers(0, 3)):
                args[key] = expected_values(draw, values) if expected else draw(values)
        made.append(Call(name, args))
    return made


CASES = st.tuples(calls(True, 0, 12), calls(False, 0, 14), st.booleans())


@contextmanager
def fast_paths(on: bool) -> Iterator[None]:
    """Take the fast paths on every problem (`on`), or never."""
    saved = plans.NARROW_FROM, diagnosis.COUNT_TABLE_FROM
    plans.NARROW_FROM = diagnosis.COUNT_TABLE_FROM = 0 if on else 10**9
    try:
        yield
    finally:
        plans.NARROW_FROM, diagnosis.COUNT_TABLE_FROM = saved


KEYED: list[Rule] = [ExactRule(), LowercaseRule(), CasefoldRule()]


@SETTINGS
@given(
    st.sampled_from(KEYED),
    st.sampled_from(SCALARS) | st.text(max_size=3),
    st.sampled_from(SCALARS) | st.text(max_size=3),
)
def test_keys_agree_with_the_rules(rule: Rule, expected: Any, produced: Any) -> None:
    """Two values with keys are equal under the rule exactly when their keys are."""
    assert rule.keyed
    e, p = rule.key(expected), rule.key(produced)
    if e is not None and p is not None:
        assert (e == p) is matches(rule, expected, produced)
        assert hash(e) is not None


@pytest.mark.parametrize(
    ("rule", "value"),
    [(ExactRule(), math.nan), (ExactRule(), [1]), (ExactRule(), {"a": 1}), (CasefoldRule(), 1)],
)
def test_values_a_key_cannot_stand_for(rule: Rule, value: Any) -> None:
    """NaN equals nothing, containers are walked, and casefold keys only strings."""
    assert rule.key(value) is None
    assert accepted_keys(rule, AnyOf(["a", value])) is None


@SETTINGS
@given(CASES)
def test_narrowing_strikes_only_pairs_that_do_not_fit(case: Any) -> None:
    plan, produced, relax = case
    specs = spec_set(relax)
    by_name: dict[str, list[int]] = {}
    for j, call in enumerate(produced):
        by_name.setdefault(call.name, []).append(j)
    every = [by_name.get(e.name, []) for e in plan]
    for rules in (specs.rules, specs.lowercase_rules):
        with fast_paths(True):
            kept = narrowed(rules, plan, produced, every)
        for i, (before, after) in enumerate(zip(every, kept, strict=True)):
            assert after == [j for j in before if j in after]  # a subsequence, order kept
            for j in set(before) - set(after):
                assert not call_matches(rules[plan[i].name], plan[i], produced[j])


@SETTINGS
@given(CASES)
def test_narrowed_cover_finds_the_pairing_every_pair_finds(case: Any) -> None:
    plan, produced, relax = case
    specs = spec_set(relax)
    for rules in (specs.rules, specs.lowercase_rules):

        def fits(i: int, j: int, rules: Any = rules) -> bool:
            return call_matches(rules[plan[i].name], plan[i], produced[j])

        with fast_paths(True):
            found = plan_passes(rules, specs.extra_ok, plan, produced)
        assert found == cover(plan, produced, specs.extra_ok, fits)


@SETTINGS
@given(CASES)
def test_counts_table_is_the_count_of_every_pair(case: Any) -> None:
    plan, produced, relax = case
    specs = spec_set(relax)
    for rules in (specs.rules, specs.lowercase_rules):
        for name, rule in rules.items():
            rows = [e for e in plan if e.name == name]
            cols = [p for p in produced if p.name == name]
            table = mismatch_counts(rule, rows, cols)
            assert table.shape == (len(rows), len(cols))
            assert table.tolist() == [[mismatch_count(rule, e, p) for p in cols] for e in rows]


@SETTINGS
@given(CASES)
def test_verdicts_are_those_of_the_straightforward_paths(case: Any) -> None:
    """Pairing, verdict and every mismatch (message included), both rule sets."""
    plan, produced, relax = case
    specs = spec_set(relax)
    plan = [e for e in plan if not any(type(v) is Ref for v in (e.args or {}).values())]
    for rules, diagnose in ((specs.rules, True), (specs.lowercase_rules, False)):
        verdicts = []
        for on in (True, False):
            with fast_paths(on):
                verdicts.append(best_plan(rules, specs.extra_ok, [plan], produced, diagnose))
        assert verdicts[0] == verdicts[1]


def overlap(n: int, wrong: int | None) -> tuple[list[Call], list[Call]]:
    """bench/generate.py's overlap case: plan call k takes order k or k+1, produced in reverse
    order; `wrong` gives one produced call a wrong amount."""
    plan = [
        Call("refund", {"order": AnyOf([f"o{k}", f"o{k + 1}"]), "amount": 12}) for k in range(n)
    ]
    produced = [Call("refund", {"order": f"o{k}", "amount": 12}) for k in reversed(range(n))]
    if wrong is not None:
        produced[wrong] = Call("refund", {"order": produced[wrong].args["order"], "amount": 13})  # type: ignore[index]
    return plan, produced


@pytest.mark.parametrize("wrong", [None, 25])
def test_overlapping_calls_are_tried_against_their_two_candidates_only(
    monkeypatch: pytest.MonkeyPatch, wrong: int | None
) -> None:
    """With 1,000 overlapping calls the matcher judges about two pairs per plan call, not a
    million: the index is what keeps hostile sizes fast."""
    specs = spec_set(False)
    plan, produced = overlap(1000, wrong)
    judged = 0
    real = arguments.call_matches

    def counting(rule: Any, expected: Call, call: Call) -> bool:
        nonlocal judged
        judged += 1
        return real(rule, expected, call)

    monkeypatch.setattr(plans, "call_matches", counting)
    found = plan_passes(specs.rules, specs.extra_ok, plan, produced)
    assert (found is None) is (wrong is not None)
    if found is not None:
        assert found == tuple((k, 999 - k) for k in range(1000))
    assert len(plan) // 2 <= judged <= 2 * len(plan)  # counted, so the spy was called


def test_overlap_diagnosis_is_the_straightforward_one() -> None:
    specs = spec_set(False)
    plan, produced = overlap(30, 12)
    verdicts = []
    for on in (True, False):
        with fast_paths(on):
            verdicts.append(best_plan(specs.rules, specs.extra_ok, [plan], produced))
    assert verdicts[0] == verdicts[1]
    assert not verdicts[0].passed
    assert verdicts[0].mismatches


def recursive_matching(
    candidates: list[list[int]], n_right: int, fits: list[list[bool]], order: list[int]
) -> list[int | None]:
    """Kuhn's augmenting paths as first written, recursively: the oracle `max_matching`
    (which keeps a stack instead, for long paths) must agree with, step for step."""
    left_of: list[int | None] = [None] * n_right
    right_of: list[int | None] = [None] * len(candidates)

    def augment(left: int, seen: list[bool]) -> bool:
        for right in candidates[left]:
            if seen[right] or not fits[left][right]:
                continue
            seen[right] = True
            owner = left_of[right]
            if owner is None or augment(owner, seen):
                left_of[right] = left
                right_of[left] = right
                return True
        return False

    for left in order:
        if right_of[left] is None:
            augment(left, [False] * n_right)
    return right_of


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[list[int]], int, list[list[bool]], list[int]]:
    n_left, n_right = draw(st.integers(0, 7)), draw(st.integers(0, 7))
    candidates = [
        draw(st.lists(st.integers(0, n_right - 1), unique=True)) if n_right else []
        for _ in range(n_left)
    ]
    fits = [[draw(st.integers(0, 3)) > 0 for _ in range(n_right)] for _ in range(n_left)]
    order = draw(st.permutations(range(n_left)))
    return candidates, n_right, fits, order


@settings(SETTINGS, max_examples=500)
@given(graphs())
def test_matching_without_recursion_is_the_recursive_one(graph: Any) -> None:
    candidates, n_right, fits, order = graph
    found = arguments.max_matching(candidates, n_right, lambda i, j: fits[i][j], order=order)
    assert found == recursive_matching(candidates, n_right, fits, order)


@SETTINGS
@given(CASES)
def test_pairs_counted_right_are_described_as_such(case: Any) -> None:
    """The diagnosis skips describing a chosen pair it counted no mismatch for: what it
    returns for each pair is what describing it finds, fast paths on or off."""
    plan, produced, relax = case
    specs = spec_set(relax)
    for on in (True, False):
        with fast_paths(on):
            found = diagnosis._best_pairing(specs.rules, plan, produced)
        assert found is not None
        pairs, described, _ = found
        assert described == [
            arguments.call_mismatches(specs.rules[plan[i].name], plan[i], produced[j])
            for i, j in pairs
        ]


@contextmanager
def by_tool(on: bool) -> Iterator[None]:
    """Solve every diagnosis one tool at a time (`on`), or never."""
    saved = diagnosis.BY_TOOL_FROM
    diagnosis.BY_TOOL_FROM = 0 if on else 10**9
    try:
        yield
    finally:
        diagnosis.BY_TOOL_FROM = saved


def pairing_cost(specs: SpecSet, plan: list[Call], produced: list[Call], on: bool) -> Any:
    """The pairs and total mismatches of the diagnosis pairing, one tool at a time or not."""
    with by_tool(on):
        found = diagnosis._best_pairing(specs.rules, plan, produced)
    assert found is not None
    pairs, described, _ = found
    assert described == [
        arguments.call_mismatches(specs.rules[plan[i].name], plan[i], produced[j]) for i, j in pairs
    ]
    return pairs, sum(
        mismatch_count(specs.rules[plan[i].name], plan[i], produced[j]) for i, j in pairs
    )


@SETTINGS
@given(CASES)
def test_pairing_by_tool_is_as_good_as_the_whole_plans(case: Any) -> None:
    """One assignment per tool finds as many pairs and as few mismatches as one for the whole
    plan, and describes each chosen pair as describing it finds."""
    plan, produced, relax = case
    specs = spec_set(relax)
    by_tool_pairs, by_tool_cost = pairing_cost(specs, plan, produced, True)
    whole_pairs, whole_cost = pairing_cost(specs, plan, produced, False)
    assert len(by_tool_pairs) == len(whole_pairs)
    assert by_tool_cost == whole_cost


@SETTINGS
@given(CASES, st.randoms(use_true_random=False))
def test_pairing_by_tool_does_not_depend_on_the_order_of_the_calls(case: Any, rng: Any) -> None:
    """Ties between equally good pairings break by content: shuffled calls get the same
    mismatches, paired with the same calls."""
    plan, produced, relax = case
    specs = spec_set(relax)
    shuffled = list(range(len(produced)))
    rng.shuffle(shuffled)
    found = []
    for order in (list(range(len(produced))), shuffled):
        calls = [produced[j] for j in order]
        pairs, _ = pairing_cost(specs, plan, calls, True)
        found.append(sorted((i, repr(calls[j])) for i, j in pairs))
    assert found[0] == found[1]


def test_thousands_of_overlapping_calls_are_counted_in_one_array() -> None:
    """Issue 25's reproducer, smaller: past `BY_TOOL_FROM` pairs, the counts of one tool are
    one array of 8 bytes a pair (not a dict of about 300), and the one wrong call is the one
    the diagnosis names."""
    specs = spec_set(False)
    n = 300
    assert n * n >= diagnosis.BY_TOOL_FROM
    plan, produced = overlap(n, 25)
    table = mismatch_counts(specs.rules["refund"], plan, produced)
    assert table.nbytes == 8 * n * n
    verdict = best_plan(specs.rules, specs.extra_ok, [plan], produced)
    assert not verdict.passed
    assert [(m.call, m.pointer) for m in verdict.mismatches] == [(25, "/amount")]


@pytest.mark.parametrize("on", [True, False])
def test_a_call_holding_nan_and_one_holding_null_do_not_tie(on: bool) -> None:
    """orjson writes NaN as null; the content order must still tell the two calls apart, or
    which of them the diagnosis pairs would depend on their positions."""
    specs = spec_set(False)
    plan = [Call("refund", {"order": "a"})]
    nan = Call("refund", {"order": "b", "amount": math.nan})
    null = Call("refund", {"order": "b", "amount": None})
    chosen = []
    for calls in ([nan, null], [null, nan]):
        pairs, _ = pairing_cost(specs, plan, calls, on)
        chosen.append([repr(calls[j].args) for _, j in pairs])
    assert chosen[0] == chosen[1]
