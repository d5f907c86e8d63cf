"""Calibration: the disagreement sampler, labels in and out, and agreement with Cohen's kappa."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest, norm

from toolscore.calibration.agreement import agreement
from toolscore.calibration.batches import BatchCase, Batches, Label
from toolscore.calibration.bugrate import StratumEstimate, bug_rate
from toolscore.calibration.calibrate import calibrate, consensus
from toolscore.calibration.page import case_page
from toolscore.calibration.sample import stratified_sample
from toolscore.calibration.view import stratum as stratum_of_view
from toolscore.cli.app import cli, example_dir
from toolscore.store import open_store

UNDEF_RULES = (
    "the rule scorer gave the same verdict on every labelled case, "
    "so kappa is undefined: chance agreement explains all of it"
)
KAPPA = orjson.loads((Path(__file__).parents[1] / "calibration" / "kappa.json").read_bytes())

SPEC = """\
version: "1"
tools:
  weather:
    args:
      city: {kind: casefold, reason: "city names are not identifiers"}
      unit: {kind: enum, values: [celsius, fahrenheit], aliases: {C: celsius}}
      note: text
"""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def weather_run(tmp_path: Path, folded: int, aliased: int) -> Path:
    """A saved run where `folded` cases differ only in the city's case (casefold forgives)
    and `aliased` only in an enum alias; every one a disagreement with exact JSON."""
    specs = tmp_path / "tools.yaml"
    specs.write_text(SPEC)
    cases, outputs = [], []
    for n in range(folded + aliased):
        expected = {"city": f"Paris{n}", "unit": "celsius"}
        produced = dict(expected)
        if n < folded:
            produced["city"] = f"paris{n}"
        else:
            produced["unit"] = "C"
        cases.append({"id": f"case-{n:03}", "plans": [[{"name": "weather", "args": expected}]]})
        outputs.append({"id": f"case-{n:03}", "calls": [{"name": "weather", "args": produced}]})
    for name, rows in (("cases.jsonl", cases), ("outputs.jsonl", outputs)):
        (tmp_path / name).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    db = tmp_path / "results.db"
    result = invoke(
        "score", "--specs", str(specs), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--save", "--db", str(db),
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # rules pass all; the exact baseline fails all
    return db


@pytest.fixture
def support_db(tmp_path: Path) -> Path:
    """The bundled support example scored and saved."""
    example = tmp_path / "support"
    shutil.copytree(example_dir(), example)
    db = tmp_path / "results.db"
    invoke(
        "score", "--specs", str(example / "tools.yaml"), "--cases", str(example / "cases.jsonl"),
        "--outputs", str(example / "outputs.jsonl"), "--save", "--db", str(db),
    )  # fmt: skip
    return db


# --- the sampler ------------------------------------------------------------------------------


def test_a_rare_stratum_is_not_drowned(tmp_path: Path) -> None:
    db = weather_run(tmp_path, folded=60, aliased=2)
    result = invoke("disagreements", "latest", "--n", "6", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    info = orjson.loads(result.output)
    assert info["disagreements"] == 62
    assert info["strata"] == {"weather.city [casefold]": 60, "weather.unit [enum]": 2}
    with open_store(db) as store:
        cases = Batches.of(store).cases(info["id"])
    strata = [case.stratum for case in cases]
    assert len(cases) == 6
    assert strata.count("weather.unit [enum]") == 2  # both rare cases, where uniform gives ~0.2


def test_the_sample_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    db = weather_run(tmp_path, folded=30, aliased=5)
    orders = []
    for seed in ("7", "7", "8"):
        result = invoke(
            "disagreements", "1", "--n", "10", "--seed", seed, "--db", str(db), "--json"
        )
        with open_store(db) as store:
            orders.append(Batches.of(store).case_ids(orjson.loads(result.output)["id"]))
    assert orders[0] == orders[1]
    assert orders[0] != orders[2]


@given(
    st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 500)), max_size=60),
    st.integers(1, 30),
    st.integers(0, 2**32),
    st.randoms(),
)
def test_sampler_properties(raw: list[tuple[str, int]], n: int, seed: int, shuffler: Any) -> None:
    population = list({str(item): (stratum, str(item)) for stratum, item in raw}.values())
    chosen = stratified_sample(population, n, seed)
    assert len(chosen) == min(n, len(population))
    assert len(set(chosen)) == len(chosen)
    shuffled = list(population)
    shuffler.shuffle(shuffled)
    assert stratified_sample(shuffled, n, seed) == chosen  # input order does not matter
    sizes: dict[str, int] = {}
    taken: dict[str, int] = {}
    stratum_of = {item: stratum for stratum, item in population}
    for stratum, _ in population:
        sizes[stratum] = sizes.get(stratum, 0) + 1
    for item in chosen:
        taken[stratum_of[item]] = taken.get(stratum_of[item], 0) + 1
    # equal allocation: a stratum short of its share only because it has no more cases
    most = max(taken.values(), default=0)
    for stratum, size in sizes.items():
        assert taken.get(stratum, 0) >= min(size, most - 1)


def test_the_batch_shows_plans_produced_calls_and_differences(support_db: Path) -> None:
    result = invoke("disagreements", "latest", "--vs", "lowercase", "--db", str(support_db))
    assert result.exit_code == 0, result.output
    with open_store(support_db) as store:
        (case,) = Batches.of(store).cases(1)
    assert case.case_id == "wrong-case-id"
    assert case.stratum == "refund.order_id [exact]"
    assert case.verdicts == {"rules": False, "exact": False, "lowercase": True}
    assert case.view["prompt"] == "Refund 30 EUR on order-77"
    assert case.view["pairs"] == [[0, 0]]
    (difference,) = case.view["differences"]
    assert difference["path"] == "/order_id"
    assert (difference["expected"], difference["produced"]) == ("order-77", "ORDER-77")
    assert difference["accepted"] is False
    assert difference["rule"] == "exact"


def test_every_exact_disagreement_of_the_example_and_its_stratum(support_db: Path) -> None:
    out = support_db.parent / "batch.jsonl"
    result = invoke("disagreements", "1", "--db", str(support_db), "--out", str(out))
    assert result.exit_code == 0, result.output
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    strata = {row["case_id"]: row["stratum"] for row in rows}
    assert strata == {
        "default-omitted": "refund.unit [omitted default]",
        "parallel-swapped": "get_order [call order]",
        "unit-alias": "refund.unit [enum]",
        "computed-amount": "refund.amount [number]",
    }
    assert [row["position"] for row in rows] == [1, 2, 3, 4]
    swapped = next(row for row in rows if row["case_id"] == "parallel-swapped")
    assert sorted(swapped["view"]["pairs"]) == [[0, 1], [1, 0]]
    assert swapped["view"]["differences"] == []


def test_no_disagreement_is_an_input_error(tmp_path: Path) -> None:
    db = weather_run(tmp_path, folded=3, aliased=0)
    result = invoke("disagreements", "1", "--vs", "lowercase", "--db", str(db))
    assert result.exit_code == 2
    assert "agree on every case" in result.stderr


def test_an_unknown_run_or_batch_is_one_line_and_status_2(support_db: Path) -> None:
    for args in (("disagreements", "9"), ("calibrate", "3"), ("labels", "export", "x")):
        result = invoke(*args, "--db", str(support_db))
        assert result.exit_code == 2, args
        assert result.stderr.count("\n") == 1


# --- labels in and out ------------------------------------------------------------------------

NOTES = ["plain", 'a "quoted", comma', "two\nlines", "ünïcode ✓", ""]


def labelled_batch(db: Path) -> list[str]:
    assert invoke("disagreements", "1", "--db", str(db)).exit_code == 0
    with open_store(db) as store:
        ids = Batches.of(store).case_ids(1)
        for who in ("ann", "bob"):
            for n, case_id in enumerate(ids):
                label = ("correct", "incorrect", "unsure")[(n + (who == "bob")) % 3]
                Batches.of(store).set_label(1, case_id, who, label, NOTES[n % len(NOTES)])
    return ids


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_labels_round_trip(support_db: Path, tmp_path: Path, fmt: str) -> None:
    labelled_batch(support_db)
    exported = tmp_path / f"labels.{fmt}"
    assert (
        invoke("labels", "export", "1", "--out", str(exported), "--db", str(support_db)).exit_code
        == 0
    )
    with open_store(support_db) as store:
        before = Batches.of(store).labels(1)
    other = tmp_path / "other.db"
    shutil.copy(support_db, other)
    with open_store(other) as store:
        store.db.execute("DELETE FROM labels")
    result = invoke("labels", "import", "1", str(exported), "--db", str(other))
    assert result.exit_code == 0, result.output
    assert f"stored {len(before)} labels" in result.output
    with open_store(other) as store:
        assert Batches.of(store).labels(1) == before


def test_csv_export_is_readable_by_a_spreadsheet(support_db: Path) -> None:
    labelled_batch(support_db)
    result = invoke("labels", "export", "1", "--format", "csv", "--db", str(support_db))
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert len(rows) == 8
    assert rows[0].keys() == {
        "batch",
        "position",
        "case_id",
        "labeller",
        "label",
        "note",
        "updated",
    }
    assert rows[2]["note"] == 'a "quoted", comma'  # by position, then labeller


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ('{"case_id": "unit-alias", "label": "correct"}\n{"case_id": "nope", "label": "correct"}\n',
         "l.jsonl", "l.jsonl:2: case_id: 'nope' is not in batch 1"),
        ('{"case_id": "unit-alias", "label": "maybe"}\n', "l.jsonl",
         "l.jsonl:1: label: 'maybe' is not one of correct, incorrect, unsure"),
        ('{"label": "correct"}\n', "l.jsonl", "l.jsonl:1: case_id: is required"),
        ('{"case_id": 3, "label": "correct"}\n', "l.jsonl", "l.jsonl:1: case_id: must be a string"),
        ("not json\n", "l.jsonl", "l.jsonl:1: not valid JSON"),
        ("id,verdict\nunit-alias,correct\n", "l.csv", "l.csv:1: needs a header line"),
        ("case_id,label\nunit-alias,correct\nnope,correct\n", "l.csv",
         "l.csv:3: case_id: 'nope' is not in batch 1"),
        ("case_id,label\nunit-alias,correct,extra\n", "l.csv", "l.csv:2: has more values"),
    ],
)  # fmt: skip
def test_a_bad_label_file_is_refused_whole(
    support_db: Path, tmp_path: Path, content: str, name: str, message: str
) -> None:
    assert invoke("disagreements", "1", "--db", str(support_db)).exit_code == 0
    path = tmp_path / name
    path.write_text(content)
    result = invoke(
        "labels", "import", "1", str(path), "--labeller", "ann", "--db", str(support_db)
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"toolscore: error: {tmp_path}/{message}")
    assert result.stderr.count("\n") == 1
    with open_store(support_db) as store:
        assert Batches.of(store).labels(1) == []  # nothing half-stored


def test_a_label_without_a_labeller_needs_the_option(support_db: Path, tmp_path: Path) -> None:
    assert invoke("disagreements", "1", "--db", str(support_db)).exit_code == 0
    path = tmp_path / "l.jsonl"
    path.write_text('{"case_id": "unit-alias", "label": "correct"}\n')
    result = invoke("labels", "import", "1", str(path), "--db", str(support_db))
    assert result.exit_code == 2
    assert "labeller: is required (or give --labeller NAME)" in result.stderr
    ok = invoke("labels", "import", "1", str(path), "--labeller", "cy", "--db", str(support_db))
    assert ok.exit_code == 0
    with open_store(support_db) as store:
        assert Batches.of(store).labels(1) == [
            Label("unit-alias", "cy", "correct", "", Batches.of(store).labels(1)[0].updated)
        ]


# --- agreement --------------------------------------------------------------------------------


@pytest.mark.parametrize("table", KAPPA["tables"], ids=lambda t: t["description"][:40])
def test_kappa_against_hand_computed_values(table: dict[str, Any]) -> None:
    pairs = [(a, b) for a, b, count in table["counts"] for _ in range(count)]
    found = agreement(pairs)
    assert (found.agreed, found.n) == (table["agreed"], table["n"])
    if table["kappa"] is None:
        assert found.kappa is None
        assert found.kappa_undefined == table["reason"]
    else:
        assert found.kappa == pytest.approx(table["kappa"], abs=1e-12)
        assert found.kappa_undefined is None


@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=1))
def test_kappa_is_symmetric_and_at_most_one(pairs: list[tuple[str, str]]) -> None:
    forward = agreement(pairs)
    backward = agreement([(b, a) for a, b in pairs])
    assert forward.kappa == backward.kappa or (
        forward.kappa is not None
        and backward.kappa is not None
        and forward.kappa == pytest.approx(backward.kappa)
    )
    if forward.kappa is not None:
        assert forward.kappa <= 1.0 + 1e-12
        assert (forward.kappa == pytest.approx(1.0)) == (forward.agreed == forward.n)


def test_consensus_is_the_majority_and_a_tie_is_unsure() -> None:
    assert consensus(["correct"]) == "correct"
    assert consensus(["correct", "incorrect", "correct"]) == "correct"
    assert consensus(["correct", "incorrect"]) == "unsure"


def test_calibrate_counts_kappa_confusion_and_bugs_by_rule(support_db: Path) -> None:
    assert invoke("disagreements", "1", "--db", str(support_db)).exit_code == 0
    with open_store(support_db) as store:
        labels = {
            "unit-alias": "correct",
            "parallel-swapped": "correct",
            "default-omitted": "unsure",
            "computed-amount": "incorrect",  # the rule scorer passed it: a scorer bug
        }
        for case_id, label in labels.items():
            Batches.of(store).set_label(
                1, case_id, "ann", label, "20 is not 19.99" * (label == "incorrect")
            )
    result = invoke("calibrate", "1", "--db", str(support_db), "--json")
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.output)
    assert report["labels"] == {"correct": 2, "incorrect": 1, "unsure": 1}
    # rules pass all four: agrees with the two corrects, not with the incorrect
    assert report["agreement"]["rules"] == {
        "n": 3,
        "agreed": 2,
        "rate": 2 / 3,
        "kappa": None,
        "kappa_undefined": UNDEF_RULES,
    }
    assert report["agreement"]["exact"]["agreed"] == 1
    assert report["confusion"]["rules"]["incorrect"] == {"passed": 1, "failed": 0}
    assert report["confusion"]["exact"]["correct"] == {"passed": 0, "failed": 2}
    assert report["scorer_bugs"] == 1
    (group,) = report["bug_groups"]
    assert group["rule"] == "refund.amount [number]"
    assert group["direction"] == "passed by the rules, incorrect for the person"
    (bug,) = group["bugs"]
    assert bug["case_id"] == "computed-amount"
    assert bug["notes"] == ["ann: 20 is not 19.99"]
    amount = next(e for e in bug["evidence"] if e["argument"] == "/amount")
    assert (amount["tool"], amount["rule"], amount["expected"]) == ("refund", "number", 20.0)
    text = invoke("calibrate", "1", "--db", str(support_db))
    assert "refund.amount [number]: 1 cases passed by the rules" in text.output
    assert "undefined" in text.output
    assert "0.00" not in text.output
    assert "kappa rules: the rule scorer gave the same verdict" in text.output


def test_calibrate_between_labellers_and_for_one(support_db: Path) -> None:
    ids = labelled_batch(support_db)
    with open_store(support_db) as store:
        both = calibrate(Batches.of(store), 1)
        ann = calibrate(Batches.of(store), 1, "ann")
    assert both.labellers == ["ann", "bob"]
    ((a, b, between),) = both.between
    assert (a, b, between.n, between.agreed) == ("ann", "bob", len(ids), 0)
    assert sum(ann.person_labels.values()) == len(ids)
    assert ann.per_labeller["ann"] == ann.scorers
    with open_store(support_db) as store, pytest.raises(Exception, match="no labels by 'zed'"):
        calibrate(Batches.of(store), 1, "zed")


def test_a_label_for_a_case_not_in_the_batch_is_refused(support_db: Path) -> None:
    assert invoke("disagreements", "1", "--db", str(support_db)).exit_code == 0
    with open_store(support_db) as store, pytest.raises(Exception, match="not in batch 1"):
        Batches.of(store).set_label(1, "wrong-case-id", "ann", "correct")


def test_batches_lists_progress(support_db: Path) -> None:
    labelled_batch(support_db)
    result = invoke("batches", "--db", str(support_db))
    assert "batch 1: run 1, rules vs exact, 4 cases" in result.output
    assert "ann 4/4, bob 4/4" in result.output


def test_the_view_keeps_markers_of_the_plan_only(tmp_path: Path) -> None:
    specs = tmp_path / "tools.yaml"
    specs.write_text(SPEC)
    unit = {"$any": ["celsius", {"$omitted": True}]}
    case = {"id": "any", "plans": [[{"name": "weather", "args": {"city": "Oslo", "unit": unit}}]]}
    made = {"city": "Oslo", "unit": "C", "note": {"$any": ["C"]}}  # `note` is free text
    output = {"id": "any", "calls": [{"name": "weather", "args": made}]}
    (tmp_path / "cases.jsonl").write_bytes(orjson.dumps(case) + b"\n")
    (tmp_path / "outputs.jsonl").write_bytes(orjson.dumps(output) + b"\n")
    db = tmp_path / "results.db"
    invoke(
        "score", "--specs", str(specs), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--save", "--db", str(db),
    )  # fmt: skip
    assert invoke("disagreements", "1", "--db", str(db)).exit_code == 0
    with open_store(db) as store:
        (batch_case,) = Batches.of(store).cases(1)
    view = batch_case.view
    assert view["plans"][0][0]["args"]["unit"] == unit
    assert view["produced"][0]["args"]["note"] == {"$any": ["C"]}  # the agent's own value
    difference = next(d for d in view["differences"] if d["path"] == "/unit")
    assert (difference["expected"], difference["produced"]) == (unit, "C")
    assert difference["accepted"] is True
    page = case_page(batch_case, None)
    shown = {
        arg.key: (arg.expected.kind, arg.produced.kind) for row in page.rows for arg in row.args
    }
    assert shown["unit"] == ("any", "json")
    assert shown["note"] == ("absent", "json")  # not shown as "any one of": it is not the plan


@pytest.mark.parametrize("vs", ["exact", "lowercase"])
def test_the_stratum_found_cheaply_is_the_one_the_full_view_gives(
    support_db: Path, vs: str
) -> None:
    assert invoke("disagreements", "1", "--vs", vs, "--db", str(support_db)).exit_code == 0
    with open_store(support_db) as store:
        cases = Batches.of(store).cases(1)
    assert cases
    for case in cases:
        stored = {"mismatches": case.view["mismatches"]}
        assert stratum_of_view(case.view, stored, []) == case.stratum


FORMULAS = ['=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "'=quoted", "'ok"]


def test_csv_export_neutralises_formulas_and_import_restores_them(
    support_db: Path, tmp_path: Path
) -> None:
    ids = labelled_batch(support_db)
    with open_store(support_db) as store:
        for n, note in enumerate(FORMULAS):
            Batches.of(store).set_label(1, ids[n % len(ids)], f"f{n}", "correct", note)
        before = Batches.of(store).labels(1)
    exported = tmp_path / "labels.csv"
    result = invoke("labels", "export", "1", "--out", str(exported), "--db", str(support_db))
    assert result.exit_code == 0, result.output
    text = exported.read_bytes().decode()
    notes = {row["labeller"]: row["note"] for row in csv.DictReader(io.StringIO(text, newline=""))}
    assert [notes[f"f{n}"] for n in range(len(FORMULAS))] == [
        "'=HYPERLINK(\"http://x\")", "'+1", "'-2+3", "'@SUM(A1)", "'\tx", "'\rx", "''=quoted",
        "'ok",
    ]  # fmt: skip
    for row in csv.reader(io.StringIO(text, newline="")):
        assert not any(cell[:1] in ("=", "+", "-", "@", "\t", "\r") for cell in row), row
    other = tmp_path / "other.db"
    shutil.copy(support_db, other)
    with open_store(other) as store:
        store.db.execute("DELETE FROM labels")
    assert invoke("labels", "import", "1", str(exported), "--db", str(other)).exit_code == 0
    with open_store(other) as store:
        assert Batches.of(store).labels(1) == before


# --- the scorer-bug rate and its estimate in the run ------------------------------------------


def label_weather(db: Path, wrong: set[int]) -> None:
    """Label every case of batch 1: `incorrect` the cases numbered in `wrong`, else correct."""
    with open_store(db) as store:
        for case_id in Batches.of(store).case_ids(1):
            label = "incorrect" if int(case_id.split("-")[1]) in wrong else "correct"
            Batches.of(store).set_label(1, case_id, "ann", label)


@pytest.mark.parametrize("in_run", [10, 50])
def test_kappa_undefined_and_the_bug_rate_on_a_disagreement_only_sample(
    tmp_path: Path, in_run: int
) -> None:
    # the rule scorer passes every case of the run; the person finds 2 of the 10 sampled wrong
    db = weather_run(tmp_path, folded=in_run, aliased=0)
    assert invoke("disagreements", "1", "--n", "10", "--db", str(db)).exit_code == 0
    with open_store(db) as store:
        sampled = sorted(int(c.split("-")[1]) for c in Batches.of(store).case_ids(1))
    label_weather(db, set(sampled[:2]))
    result = invoke("calibrate", "1", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.output)
    rules = report["agreement"]["rules"]
    assert (rules["n"], rules["agreed"], rules["kappa"]) == (10, 8, None)
    assert rules["kappa_undefined"] == UNDEF_RULES
    rate = report["scorer_bug_rate"]
    assert (rate["labelled"], rate["bugs"], rate["rate"]) == (10, 2, 0.2)
    # Wilson by hand, z = 1.96: center (0.2 + 0.19208) / 1.38415 = 0.28330, half 0.22654;
    # scipy.stats.binomtest(2, 10).proportion_ci(method="wilson") gives the same bounds
    assert rate["interval"] == pytest.approx([0.0566822, 0.5098375], abs=1e-6)
    # one stratum: a simple random sample of the run's disagreements, Wilson bounds times N
    assert rate["run_disagreements"] == in_run
    assert rate["estimated_bugs"] == pytest.approx(0.2 * in_run)
    assert rate["estimated_bugs_interval"] == pytest.approx(
        [0.0566822 * in_run, 0.5098375 * in_run], abs=1e-4
    )
    assert rate["method"].startswith("Wilson interval of the bug rate times")
    text = invoke("calibrate", "1", "--db", str(db)).output
    assert "Cohen's kappa" in text
    assert "undefined" in text
    assert "kappa rules: the rule scorer gave the same verdict on every labelled case" in text
    assert "scorer-bug rate: 2/10 labelled cases (20.0%, 95% CI 5.7% - 51.0%)" in text
    assert f"scaled to the run's {in_run} disagreements: about {0.2 * in_run:.1f}" in text


def test_the_wilson_interval_of_the_bug_rate_is_scipys() -> None:
    found = bug_rate([StratumEstimate("s", 40, 10, 2)])
    expected = binomtest(2, 10).proportion_ci(0.95, method="wilson")
    assert found.interval == pytest.approx((expected.low, expected.high), abs=1e-12)
    assert found.estimate_interval == pytest.approx((40 * expected.low, 40 * expected.high))


def test_the_stratified_estimate_and_its_normal_interval() -> None:
    found = bug_rate([StratumEstimate("a", 30, 5, 1), StratumEstimate("b", 6, 5, 2)])
    assert (found.labelled, found.bugs, found.rate) == (10, 3, 0.3)
    # 30 * 1/5 + 6 * 2/5 = 8.4; variance 30^2 * 0.2 * 0.8 / 5 + 6^2 * 0.4 * 0.6 / 5 = 30.528,
    # so 8.4 -/+ 1.96 * 5.5253 = -2.43 (clipped to 0) .. 19.23
    assert found.estimate == pytest.approx(8.4)
    half = norm.ppf(0.975) * 30.528**0.5
    assert found.estimate_interval == pytest.approx((0.0, 8.4 + half))
    assert 8.4 + half == pytest.approx(19.2292, abs=1e-4)
    assert found.method is not None
    assert found.method.startswith("stratified")
    # an unlabelled stratum is left out of the estimate and widens the upper bound
    partial = bug_rate([StratumEstimate("a", 30, 5, 1), StratumEstimate("c", 4, 0, 0)])
    assert partial.estimate == pytest.approx(6.0)
    assert partial.uncovered == 4
    upper = 6.0 + norm.ppf(0.975) * (900 * 0.16 / 5) ** 0.5 + 4
    assert partial.estimate_interval == pytest.approx((0.0, upper))
    # clipped at the run's total
    clipped = bug_rate([StratumEstimate("a", 10, 2, 1), StratumEstimate("b", 10, 2, 2)])
    assert clipped.estimate_interval is not None
    assert clipped.estimate_interval[1] == 20.0
    nothing = bug_rate([StratumEstimate("a", 10, 0, 0)])
    assert (nothing.rate, nothing.interval, nothing.estimate) == (None, None, None)


def test_kappa_where_it_is_defined_is_unchanged(support_db: Path) -> None:
    # a batch made by hand where the rule scorer passes 6 and fails 4 of 10 labelled cases:
    # person correct & rules pass 5, incorrect & pass 1, correct & fail 1, incorrect & fail 3
    # p_o = 0.8, p_e = 0.6 * 0.6 + 0.4 * 0.4 = 0.52, kappa = 0.28 / 0.48 = 0.58333
    rows = [(True, "correct")] * 5 + [(True, "incorrect")] + [(False, "correct")]
    rows += [(False, "incorrect")] * 3
    cases = [
        BatchCase(n, f"c{n}", "s", {"rules": passed, "exact": not passed, "lowercase": False}, {})
        for n, (passed, _) in enumerate(rows, 1)
    ]
    with open_store(support_db) as store:
        batch = Batches.of(store).create(1, "exact", 0, 10, 10, {"s": 10}, cases)
        for case, (_, label) in zip(cases, rows, strict=True):
            Batches.of(store).set_label(batch, case.case_id, "ann", label)
        found = calibrate(Batches.of(store), batch)
    rules = found.scorers["rules"]
    assert (rules.n, rules.agreed, rules.kappa_undefined) == (10, 8, None)
    assert rules.kappa == pytest.approx(0.28 / 0.48)
    assert found.scorers["lowercase"].kappa is None  # fails every case
    assert (found.bug_rate.bugs, found.bug_rate.labelled) == (2, 10)
