"""`disagreements --agreements K` and the rule scorer's accuracy on the whole run.

The run here has cases of four kinds: the city differs only in case (casefold forgives, exact
JSON does not: disagreements), the calls are as planned (all three scorers pass), the city is
wrong, or the unit is outside the enum (all three fail). The last three are the agreements.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest, norm

from toolscore.calibration import report_block
from toolscore.calibration.accuracy import NO_AGREEMENT_SAMPLE, Cell, run_accuracy
from toolscore.calibration.batches import AGREEMENT, DISAGREEMENT, BatchCase, Batches
from toolscore.calibration.calibrate import calibrate
from toolscore.calibration.sample import allocation, proportional_sample
from toolscore.cli.app import cli
from toolscore.store import open_store

SPEC = """\
version: "1"
tools:
  weather:
    args:
      city: {kind: casefold, reason: "city names are not identifiers"}
      unit: {kind: enum, values: [celsius, fahrenheit]}
"""
FOLDED, PLANNED, WRONG_CITY, WRONG_UNIT = (
    "weather.city [casefold]",
    "weather [as planned]",
    "weather.city [casefold]",
    "weather.unit [enum values=celsius|fahrenheit]",
)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def weather_run(tmp_path: Path, folded: int, planned: int, city: int, unit: int) -> Path:
    """A saved run of `folded` disagreements and `planned + city + unit` agreements."""
    specs = tmp_path / "tools.yaml"
    specs.write_text(SPEC)
    cases, outputs = [], []
    kinds = ["folded"] * folded + ["planned"] * planned + ["city"] * city + ["unit"] * unit
    for n, kind in enumerate(kinds):
        expected = {"city": f"Paris{n}", "unit": "celsius"}
        produced = dict(expected)
        if kind == "folded":
            produced["city"] = f"paris{n}"
        elif kind == "city":
            produced["city"] = f"Lyon{n}"
        elif kind == "unit":
            produced["unit"] = "kelvin"
        case_id = f"{kind}-{n:03}"
        cases.append({"id": case_id, "plans": [[{"name": "weather", "args": expected}]]})
        outputs.append({"id": case_id, "calls": [{"name": "weather", "args": produced}]})
    for name, rows in (("cases.jsonl", cases), ("outputs.jsonl", outputs)):
        (tmp_path / name).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    db = tmp_path / "results.db"
    result = invoke(
        "score", "--specs", str(specs), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--save", "--db", str(db),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return db


def sample(db: Path, *options: str) -> dict[str, object]:
    result = invoke("disagreements", "1", "--db", str(db), "--json", *options)
    assert result.exit_code == 0, result.output
    info: dict[str, object] = orjson.loads(result.output)
    return info


# --- sampling ---------------------------------------------------------------------------------


def test_allocation_is_proportional_with_one_per_stratum_where_k_allows() -> None:
    rng = random.Random(0)
    sizes = {"a": 50, "b": 30, "c": 20}
    assert allocation(sizes, 10, rng) == {"a": 5, "b": 3, "c": 2}  # exact shares
    # quotas 4 * (.5, .3, .2) = 2, 1.2, .8: one each, then a is furthest below its share
    assert allocation(sizes, 4, rng) == {"a": 2, "b": 1, "c": 1}
    # fewer than the strata: the largest shares (a 1.0, b 0.6 of 2) win
    assert allocation(sizes, 2, rng) == {"a": 1, "b": 1, "c": 0}
    # quotas 7 * (.8, .15, .05) = 5.6, 1.05, .35: c gets its one, then a 5 and b 1
    assert allocation({"a": 80, "b": 15, "c": 5}, 7, rng) == {"a": 5, "b": 1, "c": 1}
    assert allocation({"a": 2, "b": 1}, 10, rng) == {"a": 2, "b": 1}  # all there is
    assert allocation({"a": 5}, 0, rng) == {"a": 0}
    # quotas 9 * (.6, .1, .3) = 5.4, 0.9, 2.7: b its one (all it has), then a 5 and c 3
    assert allocation({"a": 6, "b": 1, "c": 3}, 9, rng) == {"a": 5, "b": 1, "c": 3}


@given(st.dictionaries(st.text(max_size=3), st.integers(0, 40), max_size=8), st.integers(0, 90))
def test_allocation_properties(sizes: dict[str, int], k: int) -> None:
    taken = allocation(sizes, k, random.Random(1))
    total = sum(sizes.values())
    assert sum(taken.values()) == min(k, total)
    assert all(0 <= taken.get(name, 0) <= size for name, size in sizes.items())
    filled = [name for name, size in sizes.items() if size]
    if k >= len(filled):  # one per non-empty stratum where k allows
        assert all(taken[name] >= 1 for name in filled)
    if total and k < total:  # within one of the share, but for the one-each floor
        for name in filled:
            share = k * sizes[name] / total
            assert taken[name] < share + 1 or taken[name] == 1


def test_proportional_sample_is_reproducible_and_ignores_input_order() -> None:
    population = [(f"s{n % 3}", f"id{n}") for n in range(60)]
    chosen = proportional_sample(population, 12, "agreements/4")
    assert len(set(chosen)) == 12
    assert proportional_sample(list(reversed(population)), 12, "agreements/4") == chosen
    assert proportional_sample(population, 12, "agreements/5") != chosen
    by_stratum = sorted(int(item[2:]) % 3 for item in chosen)
    assert by_stratum == [0] * 4 + [1] * 4 + [2] * 4


def test_agreements_are_sampled_by_stratum_and_recorded_with_the_runs_counts(
    tmp_path: Path,
) -> None:
    db = weather_run(tmp_path, folded=30, planned=40, city=20, unit=10)
    out = tmp_path / "batch.jsonl"
    info = sample(db, "--n", "5", "--agreements", "10", "--seed", "3", "--out", str(out))
    assert info["disagreements"] == 30
    assert info["strata"] == {FOLDED: 30}
    # the run's agreements per stratum: the weights of the estimate
    assert info["agreement_strata"] == {PLANNED: 40, WRONG_CITY: 20, WRONG_UNIT: 10}
    assert (info["agreements"], info["agreements_requested"], info["agreements_sampled"]) == (
        70,
        10,
        10,
    )
    assert info["size"] == 15
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    agreeing = [row for row in rows if row["population"] == AGREEMENT]
    assert len(agreeing) == 10
    assert all(row["case_id"].startswith("folded") for row in rows if row not in agreeing)
    for row in agreeing:  # rule scorer, exact JSON and lowercase give one verdict
        assert len(set(row["verdicts"].values())) == 1
        assert row["case_id"].split("-")[0] in ("planned", "city", "unit")
    # quotas 10 * (40, 20, 10) / 70 = 5.71, 2.86, 1.43: largest remainders give 6, 3, 1
    kinds = sorted(row["case_id"].split("-")[0] for row in agreeing)
    assert kinds == ["city"] * 3 + ["planned"] * 6 + ["unit"]
    strata = {row["case_id"].split("-")[0]: row["stratum"] for row in agreeing}
    assert strata == {"planned": PLANNED, "city": WRONG_CITY, "unit": WRONG_UNIT}
    # the two populations are mixed in the labelling order, which the seed fixes
    populations = [row["population"] for row in rows]
    assert populations != sorted(populations)
    again = sample(db, "--n", "5", "--agreements", "10", "--seed", "3")
    other = sample(db, "--n", "5", "--agreements", "10", "--seed", "4")
    with open_store(db) as store:
        first = Batches.of(store).case_ids(int(str(info["id"])))
        assert Batches.of(store).case_ids(int(str(again["id"]))) == first
        assert Batches.of(store).case_ids(int(str(other["id"]))) != first
    listed = invoke("batches", "--db", str(db)).output
    assert "batch 1: run 1, rules vs exact, 15 cases (10 agreements), seed 3" in listed
    shown = " ".join(
        invoke("disagreements", "1", "--db", str(db), "--agreements", "3").output.split()
    )
    assert "30 of 30 disagreements sampled · 3 of 70 agreements sampled" in shown
    assert "Agreements in the run, by deciding rule" in shown


def test_zero_agreements_is_the_disagreement_batch_of_before(tmp_path: Path) -> None:
    db = weather_run(tmp_path, folded=12, planned=5, city=0, unit=0)
    plain = sample(db, "--n", "6", "--seed", "2")
    zero = sample(db, "--n", "6", "--seed", "2", "--agreements", "0")
    assert zero["agreement_strata"] is None
    assert (zero["agreements_requested"], zero["agreements_sampled"]) == (0, 0)
    with open_store(db) as store:
        assert Batches.of(store).case_ids(2) == Batches.of(store).case_ids(1)
        assert {case.population for case in Batches.of(store).cases(2)} == {DISAGREEMENT}
    assert plain["strata"] == zero["strata"]
    result = invoke("calibrate", "2", "--db", str(db), "--json")
    assert orjson.loads(result.output)["run_accuracy"]["note"] == NO_AGREEMENT_SAMPLE


def test_more_agreements_than_the_run_has_takes_them_all(tmp_path: Path) -> None:
    db = weather_run(tmp_path, folded=3, planned=2, city=1, unit=0)
    info = sample(db, "--agreements", "50")
    assert info["agreement_strata"] == {PLANNED: 2, WRONG_CITY: 1}
    assert info["agreements_sampled"] == 3


def test_negative_agreements_is_one_line_and_status_2(tmp_path: Path) -> None:
    db = weather_run(tmp_path, folded=3, planned=2, city=0, unit=0)
    result = invoke("disagreements", "1", "--agreements", "-1", "--db", str(db))
    assert result.exit_code == 2
    assert result.stderr == "toolscore: error: --agreements: must be 0 or more, not -1\n"
    with open_store(db) as store:
        assert Batches.of(store).all_batches() == []


# --- the estimate -----------------------------------------------------------------------------


def wilson_at(p: float, n: float) -> tuple[float, float]:
    """The Wilson interval written out: (p + z²/2n ± z √(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    z = norm.ppf(0.975)
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return center - half, min(1.0, center + half)


def test_the_stratified_accuracy_against_hand_computed_values() -> None:
    cells = [Cell(DISAGREEMENT, "d", 40, 10, 6), Cell(AGREEMENT, "a", 160, 20, 19)]
    found = run_accuracy(cells, agreements_recorded=True)
    # right verdicts in the run: 40 * 6/10 + 160 * 19/20 = 24 + 152 = 176 of 200 = 0.88
    assert found.value == pytest.approx(0.88)
    # variance of that count, with the finite-population correction (1 - n/N):
    #   40^2 * (1 - 10/40) * 0.6 * 0.4 / 10 = 1600 * 0.75 * 0.024 = 28.8
    #   160^2 * (1 - 20/160) * 0.95 * 0.05 / 20 = 25600 * 0.875 * 0.002375 = 53.2
    # of the rate: 82.0 / 200^2 = 0.00205; effective sample size 0.88 * 0.12 / 0.00205 =
    # 51.512; Wilson there (z = 1.959964): center (0.88 + 0.037287) / 1.074574 = 0.853627,
    # half 1.823945 * sqrt(0.00205 + 0.00036192) = 0.089576, so 0.76405 .. 0.94320
    assert found.interval == pytest.approx(wilson_at(0.88, 0.1056 / 0.00205))
    assert found.interval == pytest.approx((0.76405, 0.94320), abs=1e-5)
    # (the plain normal interval, 0.88 -/+ 1.96 * sqrt(0.00205) = 0.79126 .. 0.96874, is
    # symmetric where the rate is near its bound of 1)
    assert (found.labelled, found.right, found.run_cases, found.uncovered) == (30, 25, 200, 0)
    assert found.method is not None
    assert found.method.startswith("stratified over (population, stratum)")
    assert found.note == ""


def test_one_stratum_in_the_run_gets_the_wilson_interval() -> None:
    # every case of the run disagrees (no agreement to sample): a simple random sample
    found = run_accuracy([Cell(DISAGREEMENT, "d", 40, 10, 6)], agreements_recorded=True)
    expected = binomtest(6, 10).proportion_ci(0.95, method="wilson")
    assert found.value == pytest.approx(0.6)
    assert found.interval == pytest.approx((expected.low, expected.high), abs=1e-9)
    assert found.method is not None
    assert found.method.startswith("Wilson")


def test_an_agreement_stratum_with_no_label_widens_the_interval() -> None:
    cells = [
        Cell(DISAGREEMENT, "d", 40, 10, 6),
        Cell(AGREEMENT, "a", 160, 20, 19),
        Cell(AGREEMENT, "b", 50, 0, 0),  # K was too small to reach it, say
    ]
    found = run_accuracy(cells, agreements_recorded=True)
    # estimated over the 200 covered cases (176 right: 0.88); the 50 others may all be right
    # (upper bound) or all wrong (lower bound): 0.76405 * 200 / 250 .. (0.94320 * 200 + 50) / 250
    assert found.value == pytest.approx(0.88)
    low, high = wilson_at(0.88, 0.1056 / 0.00205)
    assert found.interval == pytest.approx((low * 200 / 250, (high * 200 + 50) / 250))
    assert found.uncovered == 50
    assert "50 of the run's cases are in strata with no labelled case" in found.note


def test_when_every_label_agrees_the_interval_is_wilsons_at_the_labelled_cases() -> None:
    cells = [Cell(DISAGREEMENT, "d", 40, 10, 10), Cell(AGREEMENT, "a", 160, 20, 20)]
    found = run_accuracy(cells, agreements_recorded=True)
    # no spread within any stratum: the variance is 0, and a normal interval would be [1, 1];
    # Wilson at the 30 labelled cases: low = 30 / (30 + 1.96^2) = 0.88649
    assert found.value == 1.0
    assert found.interval == pytest.approx((30 / (30 + norm.ppf(0.975) ** 2), 1.0))
    assert found.interval == pytest.approx((0.88649, 1.0), abs=1e-5)
    assert "every labelled case of each stratum is right (or each wrong)" in found.note
    # right in one population, wrong in the other: 40 * 0 + 160 * 1 = 160 of 200 = 0.8
    mixed = run_accuracy(
        [Cell(DISAGREEMENT, "d", 40, 10, 0), Cell(AGREEMENT, "a", 160, 20, 20)], True
    )
    assert mixed.value == pytest.approx(0.8)
    assert mixed.interval == pytest.approx(wilson_at(0.8, 30))
    census = run_accuracy(
        [Cell(DISAGREEMENT, "d", 4, 4, 4), Cell(AGREEMENT, "a", 2, 2, 1)], agreements_recorded=True
    )
    assert census.value == pytest.approx(5 / 6)
    assert census.interval == (census.value, census.value)  # every case labelled: known
    assert census.method is not None
    assert census.method.startswith("every case of the run is labelled")


def test_no_estimate_without_labelled_agreements() -> None:
    cells = [Cell(DISAGREEMENT, "d", 40, 10, 6), Cell(AGREEMENT, "a", 160, 0, 0)]
    found = run_accuracy(cells, agreements_recorded=True)
    assert (found.value, found.interval) == (None, None)
    assert found.note == (
        "not available: no case of the agreement sample is labelled correct or incorrect yet"
    )
    old = run_accuracy([Cell(DISAGREEMENT, "d", 40, 10, 6)], agreements_recorded=False)
    assert (old.value, old.note) == (None, NO_AGREEMENT_SAMPLE)


def test_calibrate_weighs_both_populations_by_the_runs_strata(support_db: Path) -> None:
    # a hand-made batch of run 1: 10 disagreements (the rule scorer passed them; the person
    # says 6 correct), 20 agreements (it failed them; the person says 19 incorrect);
    # the run holds 40 disagreements and 160 agreements: 0.88, as computed above
    cases = [
        BatchCase(n, f"d{n}", "d", {"rules": True, "exact": False, "lowercase": True}, {})
        for n in range(1, 11)
    ] + [
        BatchCase(n, f"a{n}", "a", dict.fromkeys(("rules", "exact", "lowercase"), False), {},
                  AGREEMENT)
        for n in range(11, 31)
    ]  # fmt: skip
    labels = {f"d{n}": "correct" if n <= 6 else "incorrect" for n in range(1, 11)}
    labels |= {f"a{n}": "incorrect" if n <= 29 else "correct" for n in range(11, 31)}
    labels["a12"] = "unsure"  # left out
    labels["d1"] = "unsure"
    with open_store(support_db) as store:
        batch = Batches.of(store).create(
            1, "exact", 0, 10, 40, {"d": 40}, cases, 20, {"a": 160, "empty": 0}
        )
        for case_id, label in labels.items():
            Batches.of(store).set_label(batch, case_id, "ann", label)
        found = calibrate(Batches.of(store), batch)
    accuracy = found.accuracy
    # d: 9 labelled, 5 right; a: 19 labelled, 18 right
    assert [(c.stratum, c.in_run, c.labelled, c.right) for c in accuracy.cells] == [
        ("d", 40, 9, 5),
        ("a", 160, 19, 18),
    ]
    assert accuracy.value == pytest.approx((40 * 5 / 9 + 160 * 18 / 19) / 200)
    # the scorer-bug rate stays over the disagreement sample: 4 bugs of 9
    assert (found.bug_rate.labelled, found.bug_rate.bugs) == (9, 4)
    assert found.bug_count == 5  # the agreement the person calls correct is a bug too
    (bug,) = [b for g in found.groups for b in g.bugs if b.population == AGREEMENT]
    assert bug.case_id == "a30"


# --- the command line and the report's block --------------------------------------------------


@pytest.fixture
def support_db(tmp_path: Path) -> Path:
    from toolscore.cli.app import example_dir  # noqa: PLC0415

    example = tmp_path / "support"
    shutil.copytree(example_dir(), example)
    db = tmp_path / "results.db"
    invoke(
        "score", "--specs", str(example / "tools.yaml"), "--cases", str(example / "cases.jsonl"),
        "--outputs", str(example / "outputs.jsonl"), "--save", "--db", str(db),
    )  # fmt: skip
    return db


def label_all(db: Path, batch: int, wrong: set[str]) -> None:
    """The person agrees with the rule verdict except on the cases in `wrong`."""
    with open_store(db) as store:
        for case in Batches.of(store).cases(batch):
            right = case.verdicts["rules"] != (case.case_id in wrong)
            Batches.of(store).set_label(
                batch, case.case_id, "ann", "correct" if right else "incorrect"
            )


def test_calibrate_prints_the_estimate_and_the_report_block_holds_it(tmp_path: Path) -> None:
    db = weather_run(tmp_path, folded=30, planned=40, city=20, unit=10)
    assert report_block(db, 1) is None  # nothing labelled yet
    sample(db, "--n", "10", "--agreements", "10")
    with open_store(db) as store:
        ids = Batches.of(store).case_ids(1)
    wrong = {next(i for i in ids if i.startswith("folded")), next(i for i in ids if "city" in i)}
    label_all(db, 1, wrong)
    report = orjson.loads(invoke("calibrate", "1", "--db", str(db), "--json").output)
    accuracy = report["run_accuracy"]
    # folded: 30 in run, 10 labelled, 9 right; agreements: planned 40 (6 of 6 right),
    # city 20 (2 of 3 right), unit 10 (1 of 1 right): (27 + 40 + 13.333 + 10) / 100
    assert accuracy["value"] == pytest.approx((27 + 40 + 20 * 2 / 3 + 10) / 100)
    assert (accuracy["labelled"], accuracy["right"], accuracy["run_cases"]) == (20, 18, 100)
    assert accuracy["available"] is True
    low, high = accuracy["interval"]
    text = invoke("calibrate", "1", "--db", str(db)).output
    assert (
        f"rule scorer's accuracy on the run's 100 cases: about {100 * accuracy['value']:.1f}% "
        f"(95% CI {100 * low:.1f}% - {100 * high:.1f}%), from 20 labelled cases" in text
    )
    assert report["scorer_bug_rate"]["labelled"] == 10  # the disagreements only
    block = report_block(db, 1)
    assert block is not None
    assert block["labellers"] == ["ann"]
    names = [metric["name"] for metric in block["metrics"]]
    assert names == [
        "agreement with the rule scorer",
        "Cohen's kappa, person and rule scorer",
        "scorer-bug rate",
        "estimated scorer bugs in the run",
        "estimated rule-scorer accuracy on the run",
    ]
    for metric in block["metrics"]:
        assert set(metric) == {"name", "unit", "value", "n", "ci95", "note"}
    assert [metric["unit"] for metric in block["metrics"]] == [
        "share", "kappa", "share", "count", "share",
    ]  # fmt: skip
    agreed, kappa, rate, bugs, run = block["metrics"]
    assert (agreed["value"], agreed["n"]) == (0.9, 20)
    assert kappa["value"] == report["agreement"]["rules"]["kappa"]  # defined: both verdicts
    assert kappa["value"] is not None
    assert (rate["value"], rate["n"], rate["ci95"]) == (
        0.1,
        10,
        report["scorer_bug_rate"]["interval"],
    )
    assert bugs["value"] == pytest.approx(3.0)
    assert (run["value"], run["ci95"], run["n"]) == (accuracy["value"], [low, high], 20)
    with open_store(db, read_only=True) as store:
        assert report_block(store, "latest") == block


def test_the_report_block_says_why_an_old_batch_has_no_run_accuracy(support_db: Path) -> None:
    assert invoke("disagreements", "1", "--db", str(support_db)).exit_code == 0
    label_all(support_db, 1, set())
    block = report_block(str(support_db), 1)
    assert block is not None
    run = block["metrics"][4]
    assert (run["value"], run["ci95"], run["note"]) == (None, None, NO_AGREEMENT_SAMPLE)
    kappa = block["metrics"][1]
    assert kappa["value"] is None
    assert kappa["note"].startswith("the person and the rule scorer each gave one label")
    text = invoke("calibrate", "1", "--db", str(support_db)).output
    assert f"rule scorer's accuracy on the run: {NO_AGREEMENT_SAMPLE}" in text


def test_the_html_report_of_a_labelled_run_shows_its_calibration(tmp_path: Path) -> None:
    db = weather_run(tmp_path, folded=30, planned=40, city=20, unit=10)
    page = tmp_path / "run.html"
    assert invoke("report", "1", "--db", str(db), "--html", str(page)).exit_code == 0
    assert "Calibration (person" not in page.read_text()  # nothing labelled yet
    sample(db, "--n", "10", "--agreements", "10")
    label_all(db, 1, wrong=set())
    assert invoke("report", "1", "--db", str(db), "--html", str(page)).exit_code == 0
    html = page.read_text()
    block = report_block(db, 1)
    assert block is not None
    run = block["metrics"][-1]
    assert run["value"] is not None
    assert 'data-calibration="estimated rule-scorer accuracy on the run"' in html
    assert f'data-value="{orjson.dumps(run["value"]).decode()}"' in html
    assert '<b class="labeller">ann</b>' in html
