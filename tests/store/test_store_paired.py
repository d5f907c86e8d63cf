"""`toolscore compare A B` through the store: paired statistics on the shared cases, pass-rate
moves per tool and argument, in the terminal and in `--json`."""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner, Result

from toolscore import __version__, load_specs, read_cases, read_outputs, score
from toolscore.cli.app import example_dir
from toolscore.cli.store import register
from toolscore.store import RunMeta, Store, compare, open_store
from toolscore.store.rescore import rescore

OLD_UNIT = "values: [EUR, USD], aliases: {euro: EUR, dollar: USD}, default: EUR"
NEW_UNIT = "values: [EURO, USD], aliases: {euro: EURO, dollar: USD}, default: EURO"


def invoke(*args: str) -> Result:
    group = click.Group()
    register(group)
    return CliRunner().invoke(group, list(args), terminal_width=200)


def save(store: Store, folder: Path, specs_name: str = "tools.yaml") -> int:
    specs_path = folder / specs_name
    cases, outputs = folder / "cases.jsonl", folder / "outputs.jsonl"
    specs = load_specs(specs_path)
    meta = RunMeta.from_files(specs, specs_path, cases, outputs, None, __version__)
    with store.begin_run(meta) as writer:
        run = score(specs, read_cases(cases, specs), read_outputs(outputs))
        for result in run:
            writer.add(result)
        return writer.finish(run.summary())


@pytest.fixture
def example(tmp_path: Path) -> Path:
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    text = (target / "tools.yaml").read_text()
    assert OLD_UNIT in text
    (target / "tools-euro.yaml").write_text(text.replace(OLD_UNIT, NEW_UNIT))
    return target


def test_compare_tests_the_renamed_unit_on_the_paired_cases(tmp_path: Path, example: Path) -> None:
    """Renaming EUR breaks 3 of the example's 6 cases and fixes none: accuracy 4/6 -> 1/6,
    McNemar n01 = 0, n10 = 3, p = 2 * 0.5**3."""
    db = tmp_path / "results.db"
    with open_store(db) as store:
        first = save(store, example)
        second = rescore(store, first, example / "tools-euro.yaml")
    assert (first, second) == (1, 2)

    shown = invoke("compare", "1", "2", "--db", str(db))
    assert shown.exit_code == 0, shown.output
    text = shown.stdout
    assert "Paired on the 6 cases in both runs (bootstrap seed 0, 10000 resamples)" in text
    assert (
        "accuracy: A is better than B by 50.0 points: B - A = -50.0 pts over 6 shared cases" in text
    )
    assert "McNemar exact p = 0.25 (n01=0, n10=3)" in text
    assert "3 cases flipped: 3 pass -> fail, 0 fail -> pass" in text  # flips are still listed
    assert "Arguments whose pass rate moved most" in text
    assert "refund.unit │ 100.0% of 4 │ 0.0% of 4 │ -100.0 pt" in text

    data = orjson.loads(invoke("compare", "1", "2", "--db", str(db), "--json").stdout)
    assert data["shared_cases"] == 6
    assert data["flipped"] == 3
    paired = {test["metric"]: test for test in data["paired"]}
    assert list(paired) == [
        "accuracy",
        "abstention accuracy",
        "exact baseline accuracy",
        "lowercase baseline accuracy",
    ]
    accuracy = paired["accuracy"]
    assert (accuracy["n"], accuracy["a"], accuracy["b"], accuracy["difference"]) == (
        6,
        0.6667,
        0.1667,
        -0.5,
    )
    assert accuracy["mcnemar"] == {"n01": 0, "n10": 3, "p_value": pytest.approx(0.25)}
    assert (accuracy["seed"], accuracy["resamples"], accuracy["confidence"]) == (0, 10000, 0.95)
    assert accuracy["method"] == "bootstrap"
    low, high = accuracy["interval"]
    assert low <= -0.5 <= high < 0
    assert accuracy["detectable"] is True
    assert accuracy["sentence"].startswith("accuracy: A is better than B by 50.0 points")
    assert paired["abstention accuracy"]["n"] == 1  # "thanks" only: no interval on one case
    assert paired["abstention accuracy"]["interval"] is None
    lowercase = paired["lowercase baseline accuracy"]["mcnemar"]
    assert (lowercase["n01"], lowercase["n10"]) == (0, 4)

    assert data["per_argument"][0] == {
        "argument": "refund.unit",
        "a": {"passed": 4, "failed": 0, "rate": 1.0},
        "b": {"passed": 0, "failed": 4, "rate": 0.0},
        "difference": -1.0,
    }
    assert data["per_tool"][0]["tool"] == "refund"
    assert data["per_tool"][0]["difference"] == -0.75
    unmoved = [move for move in data["per_argument"] if move["argument"] != "refund.unit"]
    assert unmoved
    assert all(move["difference"] == 0 for move in unmoved)

    again = orjson.loads(invoke("compare", "1", "2", "--db", str(db), "--json").stdout)
    assert again["paired"] == data["paired"]  # a fixed seed: the same intervals
    reseeded = invoke(
        "compare", "1", "2", "--db", str(db), "--json", "--seed", "5", "--resamples", "500"
    )
    assert reseeded.exit_code == 0, reseeded.output
    options = orjson.loads(reseeded.stdout)["paired"][0]
    assert (options["seed"], options["resamples"]) == (5, 500)


def test_runs_of_reordered_cases_are_paired_by_id(tmp_path: Path, example: Path) -> None:
    with open_store(tmp_path / "results.db") as store:
        first = save(store, example)
        cases = example / "cases.jsonl"
        kept = [line for line in cases.read_text().splitlines() if '"thanks"' not in line]
        extra = '{"id": "new-case", "prompt": "hi", "plans": []}'
        cases.write_text("\n".join([*reversed(kept), extra]) + "\n")
        outputs = example / "outputs.jsonl"
        outputs.write_text(outputs.read_text().replace("ORDER-77", "order-77"))
        second = save(store, example)
        comparison = compare(store, first, second)
    assert comparison.shared == 5
    accuracy = comparison.paired[0]
    assert (accuracy.metric, accuracy.n, accuracy.n01, accuracy.n10) == ("accuracy", 5, 1, 0)
    # A passed 4 of the 6 (the failing "thanks" is not shared); B fixes wrong-case-id.
    assert accuracy.a == pytest.approx(4 / 5)
    assert accuracy.b == 1.0
    # "thanks" is gone and "new-case" only in B: no abstention case is in both runs.
    assert [test.metric for test in comparison.paired] == [
        "accuracy",
        "exact baseline accuracy",
        "lowercase baseline accuracy",
    ]


def test_runs_with_no_shared_case_say_so(tmp_path: Path, example: Path) -> None:
    """No case in both runs: the comparison still shows both runs' metrics, and states that
    there is no paired comparison (exit status 0, `paired` empty)."""
    db = tmp_path / "results.db"
    with open_store(db) as store:
        save(store, example)
        for name in ("cases.jsonl", "outputs.jsonl"):
            path = example / name
            path.write_text(path.read_text().replace('"id": "', '"id": "other-'))
        save(store, example)
    shown = invoke("compare", "1", "2", "--db", str(db))
    assert shown.exit_code == 0, shown.output
    assert "No case is in both runs: no paired comparison." in shown.stdout
    assert "6 cases only in A, 6 only in B" in shown.stdout
    data = orjson.loads(invoke("compare", "1", "2", "--db", str(db), "--json").stdout)
    assert (data["shared_cases"], data["paired"]) == (0, [])
    assert data["per_tool"]
    assert all(move["difference"] == 0 for move in data["per_tool"])
