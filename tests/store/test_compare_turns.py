"""`compare A B` pairs conversations turn by turn: the turn accuracy's B - A with its
interval over cases (`cluster_test`), McNemar's counts of turns, and the cases whose first
failing turn changed, in the terminal, `--json` and `--html`; a case whose turns do not
pair is counted and left out, never guessed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import orjson
import pytest
from click.testing import CliRunner, Result

from toolscore import __version__, load_specs, read_cases, read_outputs, score
from toolscore.cli.store import register
from toolscore.store import RunMeta, Store, compare, compare_turns, open_store

SPEC = {"version": "t", "tools": {"get_order": {"args": {"order_id": "exact"}}}}
RIGHT: dict[str, Any] = {"name": "get_order", "args": {"order_id": "o-1"}}
WRONG: dict[str, Any] = {"name": "get_order", "args": {"order_id": "o-2"}}
HOSTILE = "[bold red]x[/] \x1b[2J"
"""A case id with rich markup and an escape sequence: the terminal shows it as text."""


def conversation(case_id: str, turns: int) -> dict[str, Any]:
    return {"id": case_id, "turns": [{"plans": [[RIGHT]]} for _ in range(turns)]}


def output(case_id: str, *verdicts: bool) -> dict[str, Any]:
    return {"id": case_id, "turns": [{"calls": [RIGHT if ok else WRONG]} for ok in verdicts]}


RUN_A = (
    [conversation("flip", 2), conversation("moved", 3), conversation("same", 2),
     conversation("grow", 2), conversation(HOSTILE, 1), conversation("better", 1),
     {"id": "plain", "plans": [[RIGHT]]}],
    [output("flip", True, False), output("moved", False, True, True), output("same", True, True),
     output("grow", True, True), output(HOSTILE, True), output("better", False),
     {"id": "plain", "calls": [RIGHT]}],
)  # fmt: skip
RUN_B = (
    [conversation("flip", 2), conversation("moved", 3), conversation("same", 2),
     conversation("grow", 3), conversation(HOSTILE, 1), conversation("better", 1),
     {"id": "plain", "plans": [[RIGHT]]}],
    [output("flip", True, True), output("moved", True, False, True), output("same", True, True),
     output("grow", True, True, True), output(HOSTILE, False), output("better", True),
     {"id": "plain", "calls": [WRONG]}],
)  # fmt: skip
"""flip: turn 1 fails in A only; moved: A fails at turn 0, B at turn 1; grow: 2 turns in A,
3 in B (not paired); the hostile id passes in A and fails at turn 0 in B; better fails its
one turn in A only."""


def save(store: Store, folder: Path, run: tuple[list[Any], list[Any]]) -> int:
    folder.mkdir()
    (folder / "tools.json").write_text(json.dumps(SPEC))
    for name, rows in zip(("cases", "outputs"), run, strict=True):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    specs_path, cases, outputs = (
        folder / "tools.json", folder / "cases.jsonl", folder / "outputs.jsonl"
    )  # fmt: skip
    specs = load_specs(specs_path)
    meta = RunMeta.from_files(specs, specs_path, cases, outputs, None, __version__)
    with store.begin_run(meta) as writer:
        scored = score(specs, read_cases(cases, specs), read_outputs(outputs))
        for result in scored:
            writer.add(result)
        return writer.finish(scored.summary())


def invoke(*args: str) -> Result:
    group = click.Group()
    register(group)
    return CliRunner().invoke(group, list(args), terminal_width=200)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "results.db"
    with open_store(path) as store:
        save(store, tmp_path / "a", RUN_A)
        save(store, tmp_path / "b", RUN_B)
    return path


def test_the_turn_accuracy_is_paired_turn_by_turn_over_cases(db: Path) -> None:
    with open_store(db) as store:
        turns = compare(store, 1, 2).turns
    assert turns is not None
    # flip (2 turns), moved (3), same (2), hostile (1), better (1): 9 paired turns; grow is
    # left out.
    assert (turns.cases, turns.unpaired) == (5, 1)
    test = turns.test
    assert test is not None
    assert test.n == 9
    assert (test.a, test.b) == (6 / 9, 7 / 9)  # A: 1+2+2+1+0, B: 2+2+2+0+1
    assert (test.n01, test.n10) == (3, 2)  # flip t1, moved t0, better; moved t1, hostile t0
    assert test.unit == "turn"
    assert test.low is not None
    assert test.high is not None
    assert test.low <= test.difference <= test.high
    assert [(c.case_id, c.a, c.b) for c in turns.changes] == [
        ("flip", 1, None), ("moved", 0, 1), (HOSTILE, None, 0), ("better", 0, None)
    ]  # fmt: skip
    assert turns.changed == 4


def test_the_list_of_changed_first_turns_is_capped_and_counted(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compare_turns, "MAX_FIRST_TURN_CHANGES", 1)
    with open_store(db) as store:
        turns = compare_turns.compare_turns(store, store.run(1), store.run(2))
    assert [c.case_id for c in turns.changes] == ["flip"]
    assert turns.changed == 4


def test_compare_json_terminal_and_page_show_the_turns(db: Path, tmp_path: Path) -> None:
    data = orjson.loads(invoke("compare", "1", "2", "--db", str(db), "--json").stdout)
    block = data["turns"]
    assert block["cases"] == 5
    assert block["unpaired_cases"] == 1
    assert block["first_failed_turn_changed"] == 4
    assert block["first_failed_turn_changes"][:2] == [
        {"case": "flip", "a": 1, "b": None}, {"case": "moved", "a": 0, "b": 1}
    ]  # fmt: skip
    paired = block["paired"]
    assert (paired["metric"], paired["n"], paired["difference"]) == ("turn accuracy", 9, 0.1111)
    assert (paired["mcnemar"]["n01"], paired["mcnemar"]["n10"]) == (3, 2)
    assert "over 9 shared turns" in paired["sentence"]
    rows = {m["metric"]: m for m in data["metrics"]}
    assert rows["turn accuracy"]["a_n"] == 11  # the unpaired case counts in each run's own

    shown = invoke("compare", "1", "2", "--db", str(db))
    assert shown.exit_code == 0, shown.output
    text = shown.stdout
    assert "Turns paired on the 5 conversations in both runs" in text
    assert "turn accuracy: no detectable difference: B - A = +11.1 pts over 9 shared turns" in text
    assert "1 shared cases are conversations in one run only" in text
    assert "First failing turn changed in 4 conversations:" in text
    assert "  flip: turn 1 -> passed" in text
    assert "  moved: turn 0 -> turn 1" in text
    assert "\x1b[2J" not in text
    assert "[bold red]x[/]" in text  # markup shown as text

    page = tmp_path / "compare.html"
    assert invoke("compare", "1", "2", "--db", str(db), "--html", str(page)).exit_code == 0
    html = page.read_text()
    assert 'id="turns-paired" data-cases="5" data-unpaired="1" data-changed="4"' in html
    assert 'data-turns-paired="turn accuracy" data-n="9"' in html
    assert '<tr data-first-turn-case="flip" data-a="1" data-b="null">' in html
    assert "<code>[bold red]x[/]" in html


def test_runs_without_conversations_have_no_turn_block(tmp_path: Path) -> None:
    plain = ([{"id": "p", "plans": [[RIGHT]]}], [{"id": "p", "calls": [RIGHT]}])
    path = tmp_path / "results.db"
    with open_store(path) as store:
        save(store, tmp_path / "a", plain)
        save(store, tmp_path / "b", plain)
        comparison = compare(store, 1, 2)
    assert comparison.turns is None
    assert "turns" not in comparison.to_json()
