"""The results store: saving a run whole or not at all, reading it back exactly, the commands."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from toolscore import __version__, load_specs, read_cases, read_outputs, score
from toolscore.cli.app import example_dir
from toolscore.cli.store import register
from toolscore.core.model import (
    MISMATCH_CODES,
    MISSING,
    Call,
    CaseResult,
    Efficiency,
    Mismatch,
    Partial,
    Retry,
    TurnResult,
)
from toolscore.errors import InputError
from toolscore.report.json_report import case_to_json
from toolscore.scoring.summary import Summary
from toolscore.store import RunMeta, Store, compare, describe_previous, open_store
from toolscore.store.codec import REPORTED_FIELDS
from toolscore.store.restore import summary_from_json
from toolscore.store.writer import result_row

JSON_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
"""Text orjson can write (no lone surrogates), as in the scorer's property tests."""


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A writable copy of the bundled support-desk example."""
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    return target


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(tmp_path / "results.db") as opened:
        yield opened


def save(
    store: Store, folder: Path, label: str | None = None, specs_name: str = "tools.yaml"
) -> int:
    """Score a folder's cases and outputs under its specs and save the run, as `score` will."""
    specs_path = folder / specs_name
    cases, outputs = folder / "cases.jsonl", folder / "outputs.jsonl"
    specs = load_specs(specs_path)
    meta = RunMeta.from_files(specs, specs_path, cases, outputs, label, __version__)
    with store.begin_run(meta) as writer:
        run = score(specs, read_cases(cases, specs), read_outputs(outputs))
        for result in run:
            writer.add(result)
        return writer.finish(run.summary())


def report_cases(folder: Path) -> tuple[list[dict[str, Any]], Summary]:
    specs = load_specs(folder / "tools.yaml")
    run = score(
        specs, read_cases(folder / "cases.jsonl", specs), read_outputs(folder / "outputs.jsonl")
    )
    return [case_to_json(result) for result in run], run.summary()


def invoke(*args: str) -> Result:
    group = click.Group()
    register(group)
    return CliRunner().invoke(group, list(args))


# --- saving and reading back ----------------------------------------------------------------


def test_a_saved_run_reads_back_as_the_report_json(store: Store, example: Path) -> None:
    run_id = save(store, example, label="nightly")
    expected, summary = report_cases(example)
    assert orjson.dumps(list(store.cases(run_id))) == orjson.dumps(expected)
    assert store.summary(run_id) == summary.to_dict()
    info = store.run(run_id)
    specs = load_specs(example / "tools.yaml")
    assert (info.label, info.toolscore_version, info.specs_version) == (
        "nightly",
        __version__,
        "2026.11",
    )
    assert info.specs_sha256 == specs.sha256
    assert info.tool_versions == {"get_order": 1, "refund": 3}
    assert info.relaxations == []
    assert (info.cases, info.passed) == (6, 4)
    assert info.accuracy == pytest.approx(4 / 6)
    assert info.name_accuracy == 1.0
    assert info.abstention_accuracy == 0.0
    assert info.rescored_from is None
    assert store.case(run_id, "wrong-case-id") == expected[2]
    assert store.case(run_id, "no-such-case") is None
    assert [c["id"] for c in store.cases(run_id, failed_only=True)] == ["wrong-case-id", "thanks"]


def test_the_inputs_are_kept_once_per_content(store: Store, example: Path) -> None:
    save(store, example)
    save(store, example)
    assert store.db.execute("SELECT count(*) FROM contents").fetchone()[0] == 3
    stored = b"".join(raw for _, raw in store.content_lines(store.run(1).cases_sha256))
    assert stored == (example / "cases.jsonl").read_bytes()


def test_the_git_revision_is_recorded_when_there_is_one(store: Store, example: Path) -> None:
    run = store.run(save(store, example))
    assert run.git_revision is None or len(run.git_revision) == 40


def test_an_exception_or_ctrl_c_during_a_save_stores_nothing(store: Store, example: Path) -> None:
    specs = load_specs(example / "tools.yaml")
    cases, outputs = example / "cases.jsonl", example / "outputs.jsonl"
    meta = RunMeta.from_files(specs, example / "tools.yaml", cases, outputs, None, __version__)

    def interrupted(interruption: BaseException) -> None:
        with store.begin_run(meta) as writer:
            for result in score(specs, read_cases(cases, specs), read_outputs(outputs)):
                writer.add(result)
            raise interruption

    for interruption in (RuntimeError("scoring failed"), KeyboardInterrupt()):
        with pytest.raises(type(interruption)):
            interrupted(interruption)
    with store.begin_run(meta):
        pass  # left without finish(): nothing either
    assert store.runs() == []
    assert store.db.execute("SELECT count(*) FROM results").fetchone()[0] == 0
    assert store.db.execute("SELECT count(*) FROM contents").fetchone()[0] == 0
    assert save(store, example) == 1


def test_a_file_changed_after_hashing_is_not_stored_under_the_old_hash(
    store: Store, example: Path
) -> None:
    specs = load_specs(example / "tools.yaml")
    cases, outputs = example / "cases.jsonl", example / "outputs.jsonl"
    meta = RunMeta.from_files(specs, example / "tools.yaml", cases, outputs, None, __version__)
    outputs.write_text(outputs.read_text() + "\n")

    def save_changed() -> None:
        with store.begin_run(meta) as writer:
            run = score(specs, read_cases(cases, specs), read_outputs(outputs))
            for result in run:
                writer.add(result)
            writer.finish(run.summary())

    with pytest.raises(InputError, match="changed while it was being scored"):
        save_changed()
    assert store.runs() == []


def test_previous_scores_name_the_other_spec_versions(store: Store, example: Path) -> None:
    first = save(store, example)
    spec = example / "tools.yaml"
    changed = example / "tools-2.yaml"
    changed.write_text(
        spec.read_text().replace('"2026.11"', '"2026.12"').replace("tol: 0.005", "tol: 0.5")
    )
    second = save(store, example, specs_name="tools-2.yaml")
    run = store.run(first)
    previous = store.previous_scores(run.cases_sha256, run.outputs_sha256)
    assert [p.run_id for p in previous] == [first, second]
    assert previous[0][:3] == (first, run.specs_sha256, "2026.11")
    assert previous[0].accuracy == pytest.approx(4 / 6)
    lines = describe_previous(previous, load_specs(changed))
    assert len(lines) == 1
    assert f"run {first} (specs version 2026.11" in lines[0]
    assert "accuracy 66.7%" in lines[0]
    assert store.previous_scores("0" * 64, run.outputs_sha256) == []


def test_runs_are_found_by_id_latest_and_from_the_end(store: Store, example: Path) -> None:
    ids = [save(store, example, label=f"r{i}") for i in range(3)]
    assert [run.id for run in store.runs()] == ids
    assert [run.id for run in store.runs(limit=2)] == ids[1:]
    assert store.resolve("latest") == ids[-1]
    assert store.resolve("-2") == ids[1]
    assert store.resolve(str(ids[0])) == ids[0]
    for bad in ("99", "-9", "first"):
        with pytest.raises(InputError, match=r"results\.db"):
            store.resolve(bad)


def test_the_store_path_comes_from_the_argument_the_environment_or_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLSCORE_DB", raising=False)
    with open_store() as store:
        assert store.path == Path(".toolscore/results.db")
    assert (tmp_path / ".toolscore" / "results.db").is_file()
    monkeypatch.setenv("TOOLSCORE_DB", str(tmp_path / "env.db"))
    with open_store(None) as store:
        assert store.path == tmp_path / "env.db"
    with open_store(tmp_path / "given.db") as store:
        assert store.path == tmp_path / "given.db"


def test_what_is_not_a_store_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no results store here"):
        open_store(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()
    with pytest.raises(InputError, match="is a directory"):
        open_store(tmp_path)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database, just some bytes" * 100)
    with pytest.raises(InputError, match="not a toolscore results store"):
        open_store(junk)
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE users (name TEXT)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="not a toolscore results store"):
        open_store(other)


def test_a_stored_summary_comes_back_as_a_summary(store: Store, example: Path) -> None:
    run_id = save(store, example)
    stored = store.summary(run_id)
    assert summary_from_json(stored).to_dict() == stored


# --- the round trip, for any results ---------------------------------------------------------


def json_values() -> SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**64 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | JSON_TEXT
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JSON_TEXT, inner, max_size=3),
        max_leaves=8,
    )


def mismatches() -> SearchStrategy[Mismatch]:
    positions = st.none() | st.integers(0, 5)
    return st.builds(
        Mismatch,
        st.sampled_from(MISMATCH_CODES),
        st.lists(JSON_TEXT | st.integers(0, 9), max_size=3).map(tuple),
        st.none() | JSON_TEXT,
        st.just(MISSING) | json_values(),
        st.just(MISSING) | json_values(),
        JSON_TEXT,
        positions,
        positions,
    )


def calls() -> SearchStrategy[Call]:
    return st.builds(
        Call,
        JSON_TEXT,
        st.just({}),
        result=json_values(),
        result_error=st.booleans(),
        raw_args=st.none(),
        args_error=st.none(),
        label=st.none(),
        after=st.just(()),
        call_id=st.none(),
        turn=st.just(0),
    )


def case_results() -> SearchStrategy[CaseResult]:
    baselines = st.fixed_dictionaries(
        {"exact": st.booleans(), "lowercase": st.booleans()}
    ) | st.dictionaries(JSON_TEXT, st.booleans(), max_size=3)
    return st.builds(
        CaseResult,
        id=JSON_TEXT.filter(bool),
        passed=st.booleans(),
        kind=st.sampled_from(["tool", "abstention"]),
        plan=st.none() | st.integers(0, 3),
        mismatches=st.lists(mismatches(), max_size=4).map(tuple),
        baselines=baselines,
        name_ok=st.booleans(),
        missing_output=st.booleans(),
        calls=st.lists(calls(), max_size=3).map(tuple),
        format=st.none() | JSON_TEXT,
        notes=st.lists(JSON_TEXT, max_size=2).map(tuple),
        pairs=st.just(()),
        produced_calls=st.just(0),
        state=st.none(),
        unread=st.lists(JSON_TEXT, max_size=2).map(tuple),
        trial=st.none() | st.integers(-(2**63) + 1, 2**63 - 1) | JSON_TEXT.filter(bool),
        trials=st.none() | st.tuples(st.integers(1, 9), st.integers(0, 9)),
        partial=st.none() | partials(),
        efficiency=st.none() | st.builds(Efficiency, *[st.integers(0, 9)] * 3),
        retries=st.lists(
            st.builds(Retry, st.integers(0, 9), JSON_TEXT, st.integers(0, 9), st.booleans()),
            max_size=2,
        ).map(tuple),
        turns=st.lists(turn_results(), max_size=3).map(tuple),
        first_failed_turn=st.none() | st.integers(0, 5),
    )


def turn_results() -> SearchStrategy[TurnResult]:
    return st.builds(
        TurnResult,
        st.integers(0, 5),
        st.booleans(),
        st.none() | st.integers(0, 3),
        st.lists(mismatches(), max_size=2).map(tuple),
        st.just(()),
        st.none() | partials(),
        st.tuples(st.integers(0, 9), st.integers(0, 9)),
        st.none(),  # state: judged only under --env (tests/state/test_conversation_state.py)
    )


def partials() -> SearchStrategy[Partial]:
    counts, rates = st.integers(0, 9), st.floats(0, 1)
    return st.builds(
        Partial, st.none() | counts, counts, counts, counts, rates, rates, rates, st.just(())
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(case_results(), max_size=12))
def test_stored_results_round_trip_exactly(results: list[CaseResult]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name in ("tools.yaml", "cases.jsonl", "outputs.jsonl"):
            shutil.copy(example_dir() / name, root / name)
        specs = load_specs(root / "tools.yaml")
        meta = RunMeta.from_files(
            specs, root / "tools.yaml", root / "cases.jsonl", root / "outputs.jsonl", None, "0"
        )
        summary = Summary(cases=len(results), passed=sum(r.passed for r in results))
        with open_store(root / "results.db") as store:
            with store.begin_run(meta) as writer:
                for result in results:
                    writer.add(result)
                run_id = writer.finish(summary)
            loaded = list(store.cases(run_id))
            stored_summary = store.summary(run_id)
    expected = [orjson.loads(orjson.dumps(case_to_json(r))) for r in results]
    assert orjson.dumps(loaded) == orjson.dumps(expected)
    assert stored_summary == summary.to_dict()


# --- the commands ----------------------------------------------------------------------------


def test_runs_lists_the_runs_with_their_metrics(store: Store, example: Path) -> None:
    save(store, example, label="nightly")
    db = str(store.path)
    table = invoke("runs", "--db", db)
    assert table.exit_code == 0, table.output
    assert "nightly" in table.stdout
    assert "2026.11" in table.stdout
    assert "66.7%" in table.stdout
    listed = orjson.loads(invoke("runs", "--db", db, "--json").stdout)
    assert [(r["id"], r["label"], r["cases"]) for r in listed] == [(1, "nightly", 6)]


def test_show_prints_a_run_as_score_did(store: Store, example: Path) -> None:
    run_id = save(store, example)
    db = str(store.path)
    shown = invoke("show", str(run_id), "--db", db)
    assert shown.exit_code == 0, shown.output
    for text in ("Metrics", "66.7%", "4/6", "'ORDER-77' does not equal 'order-77' exactly"):
        assert text in shown.stdout
    report = orjson.loads(invoke("show", "latest", "--db", db, "--json").stdout)
    expected, summary = report_cases(example)
    assert report["cases"] == expected
    assert report["summary"] == summary.to_dict()
    assert report["specs"]["tools"] == {"get_order": 1, "refund": 3}
    one = invoke("show", "1", "--case", "wrong-case-id", "--db", db)
    assert "wrong-case-id (plan 0): FAILED" in one.stdout
    assert (
        orjson.loads(invoke("show", "1", "--case", "thanks", "--db", db, "--json").stdout)
        == (expected[4])
    )


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def test_command_errors_are_one_line_and_exit_2(
    store: Store, example: Path, tmp_path: Path
) -> None:
    save(store, example)
    db = str(store.path)
    assert "no run 7" in one_error_line(invoke("show", "7", "--db", db))
    assert "has no case 'nope'" in one_error_line(invoke("show", "1", "--case", "nope", "--db", db))
    missing = str(tmp_path / "none.db")
    assert "no results store here" in one_error_line(invoke("runs", "--db", missing))
    assert "no results store here" in one_error_line(invoke("compare", "1", "2", "--db", missing))
    bad_spec = tmp_path / "bad.yaml"
    bad_spec.write_text("tools: {refund: {args: {amount: numbr}}}\n")
    line = one_error_line(invoke("rescore", "1", "--specs", str(bad_spec), "--db", db))
    assert "bad.yaml" in line
    assert "did you mean 'number'" in line
    assert len(store.runs()) == 1


def test_the_store_knows_every_field_of_a_case_result() -> None:
    # A new CaseResult field may appear in the report JSON: `codec.plain_row`, which builds
    # rows without the report JSON, must then learn when it is there.
    assert CaseResult._fields == REPORTED_FIELDS


def test_results_made_into_rows_by_scoring_workers_are_stored_the_same(
    store: Store, example: Path
) -> None:
    specs_path, cases, outputs = (
        example / "tools.yaml",
        example / "cases.jsonl",
        example / "outputs.jsonl",
    )
    specs = load_specs(specs_path)
    meta = RunMeta.from_files(specs, specs_path, cases, outputs, None, __version__)
    with store.begin_run(meta) as writer:
        run = score(specs, read_cases(cases, specs), read_outputs(outputs))
        for result in run:
            writer.add_rows([result_row(result)])
        run_id = writer.finish(run.summary())
    expected, _ = report_cases(example)
    assert orjson.dumps(list(store.cases(run_id))) == orjson.dumps(expected)


def test_runs_of_different_case_files_are_compared_by_case_id(store: Store, example: Path) -> None:
    first = save(store, example)
    cases, outputs = example / "cases.jsonl", example / "outputs.jsonl"
    kept = [line for line in cases.read_text().splitlines() if '"thanks"' not in line]
    extra = '{"id": "new-case", "prompt": "hi", "plans": []}'
    cases.write_text("\n".join([*reversed(kept), extra]) + "\n")  # another order too
    outputs.write_text(outputs.read_text().replace("ORDER-77", "order-77"))
    second = save(store, example)
    comparison = compare(store, first, second)
    assert [(f.case_id, f.before, f.after) for f in comparison.flips] == [
        ("wrong-case-id", False, True)
    ]
    cause = comparison.flips[0].causes[0]  # from run a, where the case failed
    assert (cause.where, cause.kind, cause.code, cause.change) == (
        "refund.order_id",
        "exact",
        "value_mismatch",
        None,
    )
    assert (comparison.only_in_a, comparison.only_in_b) == (1, 1)
    assert comparison.spec_changes == []
