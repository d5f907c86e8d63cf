"""`compare A B` pairs the cases' partial credit: macro F1, precision and recall of both
runs over the shared cases with the bootstrap interval of B - A, in the terminal, `--json`
and `--html`; a run saved before partial credit is named, with no number (never 0)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner, Result

from toolscore import __version__, load_specs, read_cases, read_outputs, score
from toolscore.cli.app import example_dir
from toolscore.cli.store import register
from toolscore.store import RunMeta, Store, open_store
from toolscore.store.codec import pack_json, unpack_json
from toolscore.store.rescore import rescore

OLD_UNIT = "values: [EUR, USD], aliases: {euro: EUR, dollar: USD}, default: EUR"
NEW_UNIT = "values: [EURO, USD], aliases: {euro: EURO, dollar: USD}, default: EURO"


def invoke(*args: str) -> Result:
    group = click.Group()
    register(group)
    return CliRunner().invoke(group, list(args), terminal_width=200)


def save(store: Store, folder: Path) -> int:
    specs_path, cases, outputs = (
        folder / "tools.yaml", folder / "cases.jsonl", folder / "outputs.jsonl"
    )  # fmt: skip
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
    (target / "tools-euro.yaml").write_text(text.replace(OLD_UNIT, NEW_UNIT))
    return target


def _two_runs(tmp_path: Path, example: Path) -> Path:
    db = tmp_path / "results.db"
    with open_store(db) as store:
        first = save(store, example)
        rescore(store, first, example / "tools-euro.yaml")
    return db


def _strip_partial(db: Path, run_id: int) -> None:
    """Make run `run_id` look saved before partial credit: its cases lose `partial` and
    `efficiency`, and a passing case's detail is NULL again."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT seq, detail FROM results WHERE run_id = ?", (run_id,)
        ).fetchall()
        for seq, detail in rows:
            data = unpack_json(detail)
            data.pop("partial", None)
            data.pop("efficiency", None)
            kept = None if data == {"mismatches": []} else pack_json(data)
            connection.execute(
                "UPDATE results SET detail = ? WHERE run_id = ? AND seq = ?", (kept, run_id, seq)
            )


def test_compare_gives_the_paired_difference_of_macro_f1(tmp_path: Path, example: Path) -> None:
    """Renaming EUR breaks 3 of the 6 cases, each of one call: its F1 falls from 1 to 0.
    Macro F1 4/6 -> 1/6: B - A = -0.5, the same as the accuracy's."""
    db = _two_runs(tmp_path, example)
    data = orjson.loads(invoke("compare", "1", "2", "--db", str(db), "--json").stdout)
    assert data["partial_not_stored"] == []
    tests = {test["metric"]: test for test in data["partial_paired"]}
    assert list(tests) == ["macro F1", "macro precision", "macro recall"]
    f1 = tests["macro F1"]
    assert (f1["n"], f1["a"], f1["b"], f1["difference"]) == (6, 0.6667, 0.1667, -0.5)
    assert f1["method"] == "bootstrap"
    assert f1["interval"] == [-0.8333, -0.1667]
    assert f1["detectable"] is True
    assert tests["macro recall"]["a"] == 0.8333  # the abstention case that called: recall 1.0

    shown = invoke("show", "2", "--db", str(db)).stdout  # a stored run's failures, with F1
    assert "thanks: calls failed, f1 0.00, 1 call made where none was expected" in shown
    assert "Partial credit (6 cases)" in shown

    text = invoke("compare", "1", "2", "--db", str(db)).stdout
    assert "Partial credit paired on the shared cases" in text
    assert "│ macro F1        │ 6 │ 0.667 │ 0.167 │ -0.500 │ [-0.833, -0.167] │" in text
    assert "macro F1: A is better than B: B - A = -0.500 over 6 shared cases" in text


def test_a_run_saved_before_partial_credit_gets_no_f1_difference(
    tmp_path: Path, example: Path
) -> None:
    db = _two_runs(tmp_path, example)
    _strip_partial(db, 1)
    data = orjson.loads(invoke("compare", "1", "2", "--db", str(db), "--json").stdout)
    assert data["partial_paired"] == []
    assert data["partial_not_stored"] == [
        "F1 not stored for run 1 (saved before partial credit): no F1 difference"
    ]
    assert data["paired"][0]["metric"] == "accuracy"  # the rest unchanged
    shown = invoke("compare", "1", "2", "--db", str(db))
    assert shown.exit_code == 0, shown.output
    assert "F1 not stored for run 1" in shown.stdout
    assert "Partial credit paired" not in shown.stdout
    page = tmp_path / "compare.html"
    assert invoke("compare", "1", "2", "--db", str(db), "--html", str(page)).exit_code == 0
    html = page.read_text()
    assert "F1 not stored for run 1" in html
    assert "data-partial-paired" not in html


def test_runs_of_other_cases_files_pair_partial_credit_by_id(tmp_path: Path, example: Path) -> None:
    db = tmp_path / "results.db"
    subset = tmp_path / "subset"
    shutil.copytree(example, subset)
    lines = (example / "cases.jsonl").read_text().splitlines()
    (subset / "cases.jsonl").write_text("\n".join(reversed(lines[:3])) + "\n")
    with open_store(db) as store:
        save(store, example)
        save(store, subset)
    data = orjson.loads(invoke("compare", "1", "2", "--db", str(db), "--json").stdout)
    f1 = data["partial_paired"][0]
    assert (f1["metric"], f1["n"], f1["difference"]) == ("macro F1", 3, 0.0)
    assert f1["method"] == "none"  # every case's difference is 0: a zero-width interval
    assert f1["interval"] == [0.0, 0.0]


def test_the_compare_page_shows_the_f1_difference(tmp_path: Path, example: Path) -> None:
    db = _two_runs(tmp_path, example)
    page = tmp_path / "compare.html"
    assert invoke("compare", "1", "2", "--db", str(db), "--html", str(page)).exit_code == 0
    html = page.read_text()
    assert 'id="partial-paired"' in html
    assert 'data-partial-paired="macro F1" data-a="0.6667" data-b="0.1667"' in html
    assert "-0.500" in html
