"""A run with conversation cases in the store: saved and shown back as scored (each case's
turns, the summary's turn figures), and `compare` gives the turn accuracy of both runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson
import pytest
from click.testing import CliRunner, Result

from toolscore import __version__, load_specs, read_cases, read_outputs, score
from toolscore.cli.store import register
from toolscore.report.json_report import case_to_json
from toolscore.store import RunMeta, Store, compare, open_store

SPEC = {"version": "t", "tools": {"get_order": {"args": {"order_id": "exact"}}}}
GET: dict[str, Any] = {"name": "get_order", "args": {"order_id": "o-1"}}
WRONG: dict[str, Any] = {"name": "get_order", "args": {"order_id": "o-2"}}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(tmp_path / "results.db") as opened:
        yield opened


def _folder(tmp_path: Path, second_turn: dict[str, Any]) -> Path:
    folder = tmp_path / f"run-{second_turn['args']}"
    folder.mkdir(exist_ok=True)
    (folder / "tools.json").write_text(json.dumps(SPEC))
    cases = [
        {"id": "talk", "turns": [{"plans": [[GET]]}, {"plans": [[GET]]}]},
        {"id": "plain", "plans": [[GET]]},
    ]
    outputs = [
        {"id": "talk", "turns": [{"calls": [GET]}, {"calls": [second_turn]}]},
        {"id": "plain", "calls": [GET]},
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))
    return folder


def _save(store: Store, folder: Path) -> tuple[int, list[dict[str, object]], dict[str, object]]:
    specs_path, cases, outputs = (
        folder / "tools.json",
        folder / "cases.jsonl",
        folder / "outputs.jsonl",
    )
    specs = load_specs(specs_path)
    meta = RunMeta.from_files(specs, specs_path, cases, outputs, None, __version__)
    with store.begin_run(meta) as writer:
        run = score(specs, read_cases(cases, specs), read_outputs(outputs))
        reported = []
        for result in run:
            writer.add(result)
            reported.append(case_to_json(result))
        summary = run.summary()
        return writer.finish(summary), reported, summary.to_dict()


def _invoke(*args: str) -> Result:
    group = click.Group()
    register(group)
    return CliRunner().invoke(group, list(args))


def test_a_stored_conversation_run_is_shown_as_scored(store: Store, tmp_path: Path) -> None:
    run_id, reported, summary = _save(store, _folder(tmp_path, WRONG))
    db = str(store.path)
    report = orjson.loads(_invoke("show", str(run_id), "--db", db, "--json").stdout)
    assert report["cases"] == reported
    assert report["summary"] == summary
    assert report["summary"]["turn_accuracy"]["passed"] == 1
    shown = _invoke("show", str(run_id), "--db", db)
    assert shown.exit_code == 0, shown.output
    assert "Turns (1 conversations)" in shown.stdout
    assert "first at turn 1" in shown.stdout
    assert "turn 1: value_mismatch" in shown.stdout


def test_compare_gives_the_turn_accuracy_of_both_runs(store: Store, tmp_path: Path) -> None:
    first, _, _ = _save(store, _folder(tmp_path, WRONG))
    second, _, _ = _save(store, _folder(tmp_path, GET))
    comparison = compare(store, first, second)
    (row,) = [metric for metric in comparison.metrics if metric.name == "turn accuracy"]
    assert (row.a, row.a_n, row.b, row.b_n) == (0.5, 2, 1.0, 2)
    assert [(f.case_id, f.before, f.after) for f in comparison.flips] == [("talk", False, True)]
