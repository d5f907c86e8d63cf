"""Properties of the planted answers, over generated specs and plans (issue 28): a harmless
variant is harmless where the spec says so, so the lowercase scorer (whose forgiveness is a
superset of the rules') never fails it, nor do the rules; a bad answer always differs from
the plan it was made from as exact JSON, so the exact baseline always fails it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from spec_strategies import SETTINGS, build_specs, plans_and_calls, spec_dicts
from toolscore.audit.planted import entries, plan_answers, planted_answers
from toolscore.core.diagnosis import best_plan
from toolscore.scoring.case import exact_baseline
from toolscore.scoring.check import as_case, as_trajectory, check


@SETTINGS
@given(data=st.data(), seed=st.integers(0, 5))
def test_harmless_variants_pass_the_lowercase_scorer_and_bad_answers_fail_exact_json(
    data: st.DataObject, seed: int
) -> None:
    spec = data.draw(spec_dicts())
    specs = build_specs(spec)
    plans, _ = data.draw(plans_and_calls(spec, noise=False))
    case = as_case(plans, specs, "prop")
    for plan, answer in plan_answers(case):
        own = check(specs, case, list(entries(answer.calls)), case_id="prop")
        assert own.passed, own.mismatches  # the gold check: a plan's own calls pass its case
        for planted in planted_answers(specs, case, plan, answer, seed):
            calls = as_trajectory(list(planted.calls), "prop").calls
            if planted.family == "harmless":
                lowercase = best_plan(
                    specs.lowercase_rules,
                    specs.extra_ok,
                    case.plans,
                    calls,
                    diagnose=False,
                    linked=case.linked,
                )
                assert lowercase.passed, planted
                assert check(specs, case, list(planted.calls), case_id="prop").passed, planted
            else:
                assert not exact_baseline((answer.calls,), calls), planted


FIXED_SPEC = {
    "tools": {
        "refund": {
            "args": {
                "order_id": "exact",
                "customer_id": {"kind": "casefold", "reason": "audited: ids under casefold"},
                "unit": {
                    "kind": "enum",
                    "values": ["EUR", "USD", "GBP"],
                    "aliases": {"euro": "EUR", "dollar": "USD", "€": "EUR"},
                    "default": "EUR",
                },
                "amount": {"kind": "number", "tol": 0.005, "rel_tol": 0.01},
                "day": {"kind": "date", "formats": ["%d/%m/%Y"]},
            }
        },
        "get_order": {"args": {"order_id": "exact"}},
    }
}
"""A spec with a target for every argument kind, so that each is planted on every example
(the generated specs above rarely hold a string under `exact` or an alias)."""

IDS = st.text("abcXYZ019-ß", min_size=1, max_size=8)


@SETTINGS
@given(
    order=IDS,
    customer=IDS,
    unit=st.sampled_from(["EUR", "USD", "GBP", "euro", "€"]),
    amount=st.integers(-(10**6), 10**6) | st.floats(-1e9, 1e9, allow_nan=False),
    day=st.dates().map(lambda d: d.isoformat()),
    lookups=st.integers(0, 2),
    seed=st.integers(0, 9),
)
def test_on_a_spec_with_every_target_each_kind_is_planted_and_behaves(
    order: str, customer: str, unit: str, amount: float, day: str, lookups: int, seed: int
) -> None:
    specs = build_specs(FIXED_SPEC)
    refund = {"order_id": order, "customer_id": customer, "unit": unit, "amount": amount}
    plan = [{"name": "refund", "args": {**refund, "day": day}}]
    plan += [{"name": "get_order", "args": {"order_id": f"{order}-{n}"}} for n in range(lookups)]
    case = as_case([plan], specs, "prop")
    ((index, answer),) = plan_answers(case)
    kinds = set()
    for planted in planted_answers(specs, case, index, answer, seed):
        kinds.add(planted.kind)
        calls = as_trajectory(list(planted.calls), "prop").calls
        result = check(specs, case, list(planted.calls), case_id="prop")
        if planted.family == "harmless":
            lowercase = best_plan(specs.lowercase_rules, specs.extra_ok, case.plans, calls)
            assert lowercase.passed, planted
            assert result.passed, planted
        else:
            assert not exact_baseline((answer.calls,), calls), planted
            # the only forgiving rule of this spec: casefold on customer_id
            forgiven = planted.kind == "wrong_id_case" and planted.argument == "customer_id"
            assert result.passed == forgiven, planted
    assert {"wrong_id_char", "dropped_argument", "extra_argument", "wrong_enum"} <= kinds
    assert {"number_outside_tol", "wrong_date", "missing_call", "extra_write_call"} <= kinds
    assert {"number_inside_tol", "arguments_as_string"} <= kinds
    assert ("alias" in kinds) == (unit != "GBP")  # GBP has no alias
