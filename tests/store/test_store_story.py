"""The renamed enum value, end to end: a spec change that silently turns passes into failures,
flagged by spec-diff, measured by rescore, and traced case by case by compare."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner, Result

from toolscore import __version__, load_specs, read_cases, read_outputs, score
from toolscore.cli.app import cli, example_dir
from toolscore.cli.store import register
from toolscore.store import RunMeta, Store, compare, describe_previous, open_store, spec_diff
from toolscore.store.rescore import rescore

OLD_UNIT = "unit: {kind: enum, values: [EUR, USD], aliases: {euro: EUR, dollar: USD}, default: EUR}"
NEW_UNIT = (
    "unit: {kind: enum, values: [EURO, USD], aliases: {euro: EURO, dollar: USD}, default: EURO}"
)
FLIPPED = {"default-omitted", "unit-alias", "computed-amount"}
"""The example's passes whose expected unit is EUR: the cases file still says EUR."""


def invoke(*args: str) -> Result:
    group = click.Group()
    register(group)
    return CliRunner().invoke(group, list(args))


@pytest.fixture
def story(tmp_path: Path) -> Iterator[tuple[Store, Path, Path, int]]:
    """The example scored and saved, and a copy of its spec with EUR renamed to EURO."""
    example = tmp_path / "support"
    shutil.copytree(example_dir(), example)
    old_spec = example / "tools.yaml"
    text = old_spec.read_text()
    assert OLD_UNIT in text
    new_spec = tmp_path / "tools-euro.yaml"
    new_spec.write_text(text.replace(OLD_UNIT, NEW_UNIT))
    store = open_store(tmp_path / "results.db")
    specs = load_specs(old_spec)
    cases, outputs = example / "cases.jsonl", example / "outputs.jsonl"
    meta = RunMeta.from_files(specs, old_spec, cases, outputs, "agent v1", __version__)
    with store.begin_run(meta) as writer:
        run = score(
            specs, read_cases(cases, specs), read_outputs(outputs), (str(cases), str(outputs))
        )
        for result in run:
            writer.add(result)
        first = writer.finish(run.summary())
    yield store, old_spec, new_spec, first
    store.close()


def test_spec_diff_flags_the_rename_with_what_it_does(story: tuple[Store, Path, Path, int]) -> None:
    _, old_spec, new_spec, _ = story
    changes = spec_diff(load_specs(old_spec), load_specs(new_spec))
    rules = [c for c in changes if not c.warning]
    assert [(c.code, c.where, c.old, c.new, c.verdicts) for c in rules] == [
        ("value_renamed", "refund.unit", "EUR", "EURO", "can fail")
    ]
    assert "past passes using 'EUR' will fail" in rules[0].effect
    assert "aliases 'euro' and the default follow" in rules[0].description
    warnings = [(c.code, c.tool) for c in changes if c.warning]
    assert warnings == [("version_not_bumped", "refund"), ("spec_version_not_bumped", None)]

    shown = invoke("spec-diff", str(old_spec), str(new_spec))
    assert shown.exit_code == 0, shown.output
    assert "refund.unit: enum value 'EUR' renamed to 'EURO'" in shown.stdout
    assert "past passes using 'EUR' will fail" in shown.stdout
    assert "version is still 3" in shown.stdout
    data = orjson.loads(invoke("spec-diff", str(old_spec), str(new_spec), "--json").stdout)
    assert data["changes"][0]["code"] == "value_renamed"
    assert data["changes"][0]["argument"] == "unit"


def test_rescore_and_compare_trace_every_flipped_case_to_the_rule(
    story: tuple[Store, Path, Path, int],
) -> None:
    store, old_spec, new_spec, first = story
    example = old_spec.parent
    (example / "cases.jsonl").unlink()  # re-scoring reads the inputs the store kept
    (example / "outputs.jsonl").unlink()
    second = rescore(store, first, new_spec)

    old, new = store.run(first), store.run(second)
    assert new.rescored_from == first
    assert (new.cases_sha256, new.outputs_sha256) == (old.cases_sha256, old.outputs_sha256)
    assert new.specs_sha256 != old.specs_sha256
    assert old.accuracy == pytest.approx(4 / 6)  # the old number is kept beside the new one
    assert new.accuracy == pytest.approx(1 / 6)

    before = {c["id"]: c["passed"] for c in store.cases(first)}
    after = {c["id"]: c["passed"] for c in store.cases(second)}
    flipped = {case_id for case_id in before if before[case_id] != after[case_id]}
    assert flipped == FLIPPED

    comparison = compare(store, first, second)
    assert {flip.case_id for flip in comparison.flips} == FLIPPED
    for flip in comparison.flips:
        assert (flip.before, flip.after) == (True, False)
        assert [(c.where, c.kind, c.code) for c in flip.causes] == [
            ("refund.unit", "enum", "value_mismatch")
        ]
        change = flip.causes[0].change
        assert change is not None
        assert (change.code, change.where) == ("value_renamed", "refund.unit")
    assert [row[:5] for row in comparison.by_rule()] == [
        ("refund.unit", "enum", "value_mismatch", "pass -> fail", 3)
    ]
    accuracy = comparison.metrics[0]
    assert (accuracy.name, accuracy.a, accuracy.b) == ("accuracy", 0.6667, 0.1667)
    assert comparison.arguments == [("refund.unit", (4, 0), (0, 4))]

    previous = store.previous_scores(old.cases_sha256, old.outputs_sha256)
    assert [p.run_id for p in previous] == [first, second]
    told = describe_previous(previous, load_specs(new_spec))
    assert len(told) == 1
    assert f"run {first}" in told[0]
    assert "66.7%" in told[0]


def test_the_story_on_the_command_line(story: tuple[Store, Path, Path, int]) -> None:
    store, _, new_spec, first = story
    db = str(store.path)
    rescored = invoke("rescore", str(first), "--specs", str(new_spec), "--db", db)
    assert rescored.exit_code == 0, rescored.output
    assert "accuracy 66.7% under run 1" in rescored.stdout
    assert "16.7% under run 2" in rescored.stdout

    shown = invoke("compare", "1", "2", "--db", db)
    assert shown.exit_code == 0, shown.output
    assert "3 cases flipped: 3 pass -> fail, 0 fail -> pass" in shown.stdout
    for case_id in FLIPPED:
        assert f"{case_id}: pass -> fail" in shown.stdout
    assert "refund.unit [enum] value_mismatch" in shown.stdout
    assert "spec change: enum value 'EUR' renamed to 'EURO'" in shown.stdout

    data = orjson.loads(invoke("compare", "1", "latest", "--db", db, "--json").stdout)
    assert data["flipped"] == data["pass_to_fail"] == 3
    assert {flip["id"] for flip in data["flips"]} == FLIPPED
    cause = data["flips"][0]["causes"][0]
    assert (cause["tool"], cause["argument"], cause["kind"]) == ("refund", "unit", "enum")
    assert cause["spec_change"]["code"] == "value_renamed"

    diffed = invoke("spec-diff", "run:1", "run:2", "--db", db)
    assert "refund.unit: enum value 'EUR' renamed to 'EURO'" in diffed.stdout
    listed = orjson.loads(invoke("runs", "--db", db, "--json").stdout)
    assert [(r["id"], r["rescored_from"]) for r in listed] == [(1, None), (2, 1)]
    assert [r["label"] for r in listed] == ["agent v1", "agent v1 (rescore of run 1)"]
    shown = invoke("show", "2", "--db", db)
    assert "label 'agent v1 (rescore of run 1)'" in shown.stdout


def test_a_rescore_s_label_says_it_is_one(story: tuple[Store, Path, Path, int]) -> None:
    """The old run's label, marked; a rescore of a rescore names the run it re-scored (not a
    chain of marks); an unlabelled run's rescore is still named one; `--label` is as given."""
    store, _, new_spec, first = story
    second = rescore(store, first, new_spec)
    third = rescore(store, second, None)
    given = rescore(store, first, new_spec, "euro spec")
    labels = [store.run(run_id).label for run_id in (first, second, third, given)]
    assert labels == [
        "agent v1", "agent v1 (rescore of run 1)", "agent v1 (rescore of run 2)", "euro spec",
    ]  # fmt: skip
    store.db.execute("UPDATE runs SET label = NULL WHERE id = ?", (first,))
    store.db.commit()
    assert store.run(rescore(store, first, None)).label == "rescore of run 1"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_score_saves_and_tells_the_old_number(tmp_path: Path, workers: str) -> None:
    example = tmp_path / "support"
    shutil.copytree(example_dir(), example)
    new_spec = example / "tools-euro.yaml"
    new_spec.write_text((example / "tools.yaml").read_text().replace(OLD_UNIT, NEW_UNIT))
    db = str(tmp_path / "results.db")
    inputs = ["--cases", str(example / "cases.jsonl"), "--outputs", str(example / "outputs.jsonl")]
    runner = CliRunner()
    for spec in (example / "tools.yaml", new_spec):
        args = ["score", "--specs", str(spec), *inputs, "--db", db, "--workers", workers]
        scored = runner.invoke(cli, args)
        assert scored.exit_code == 0, scored.output
    assert "scored before under other specs: run 1" in scored.stdout
    assert "accuracy 66.7%" in scored.stdout
    compared = orjson.loads(runner.invoke(cli, ["compare", "1", "2", "--db", db, "--json"]).stdout)
    assert {flip["id"] for flip in compared["flips"]} == FLIPPED
    for flip in compared["flips"]:  # with workers, the tool is inferred from the spec
        cause = flip["causes"][0]
        assert (cause["tool"], cause["argument"], cause["kind"]) == ("refund", "unit", "enum")
