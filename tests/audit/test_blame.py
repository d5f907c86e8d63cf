"""`toolscore blame` on golden data (tests/audit/blame_cases.json): a stored run re-scored
under a spec that changed two arguments; each flipped case is blamed on the change that
flipped it, found by re-scoring it under each single change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from toolscore.audit.blame import SINGLE, applied, steps
from toolscore.cli.app import cli
from toolscore.specs.loading import parse_specs
from toolscore.store.specdiff import spec_diff

GOLDEN = json.loads((Path(__file__).parent / "blame_cases.json").read_text())


def _run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Run 1 scored under the old spec, run 2 its rescore under the new one."""
    (tmp_path / "old.json").write_text(json.dumps(GOLDEN["old_spec"]))
    (tmp_path / "new.json").write_text(json.dumps(GOLDEN["new_spec"]))
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in GOLDEN["cases"]))
    (tmp_path / "outputs.jsonl").write_text(
        "".join(json.dumps(o) + "\n" for o in GOLDEN["outputs"])
    )
    db = str(tmp_path / "results.db")
    files = ["--cases", str(tmp_path / "cases.jsonl"), "--outputs", str(tmp_path / "outputs.jsonl")]
    CliRunner().invoke(cli, ["score", "--specs", str(tmp_path / "old.json"), *files, "--db", db])
    _run("rescore", "1", "--specs", str(tmp_path / "new.json"), "--db", db)
    return tmp_path


def test_each_flip_is_blamed_on_the_change_that_flipped_it(runs: Path) -> None:
    db = str(runs / "results.db")
    shown = _run("blame", "1", "2", "--db", db, "--json", str(runs / "blame.json"))
    data = json.loads((runs / "blame.json").read_text())
    found = [
        {
            "case": entry["case"],
            "before": entry["before"],
            "after": entry["after"],
            "found": entry["found"],
            "changes": [[c["tool"], c["argument"]] for c in entry["changes"]],
        }
        for entry in data
    ]
    assert found == GOLDEN["blame"]
    amount = data[0]["changes"][0]
    assert amount == {
        "tool": "refund",
        "argument": "amount",
        "old": "number",
        "new": "number tol=0.01",
        "codes": ["option_changed"],
        "description": "tol 0.0 -> 0.01",
        "old_version": 1,
        "new_version": 2,
    }
    assert "3 verdicts changed" in shown.output
    assert "refund.amount: number -> number tol=0.01" in shown.output


def test_one_case_alone_and_a_case_that_did_not_flip(runs: Path) -> None:
    db = str(runs / "results.db")
    alias = _run("blame", "1", "2", "alias", "--db", db, "--json", str(runs / "one.json"))
    assert [e["case"] for e in json.loads((runs / "one.json").read_text())] == ["alias"]
    assert (
        "refund.unit: enum values=EUR|USD -> enum values=EUR|USD aliases=euro->EUR" in alias.output
    )
    same = _run("blame", "1", "2", "same", "--db", db)
    assert "no verdict changed" in same.output
    unknown = CliRunner().invoke(cli, ["blame", "1", "2", "nope", "--db", db])
    assert unknown.exit_code == 2
    assert "has a case 'nope'" in unknown.output


def test_compare_links_to_blame(runs: Path) -> None:
    db = str(runs / "results.db")
    shown = _run("compare", "1", "2", "--db", db)
    assert "3 verdicts changed: toolscore blame 1 2" in shown.output
    data = json.loads(_run("compare", "1", "2", "--db", db, "--json").output)
    assert data["blame"] == "toolscore blame 1 2"


def test_a_step_applied_changes_that_argument_alone() -> None:
    old, _ = parse_specs(GOLDEN["old_spec"], "<old>")
    new, _ = parse_specs(GOLDEN["new_spec"], "<new>")
    assert old is not None
    assert new is not None
    found = steps(spec_diff(old, new))
    assert [(tool, path) for tool, path, _ in found] == [
        ("refund", ("amount",)),
        ("refund", ("unit",)),
    ]
    amount_only = applied(old, new, found[0])
    rules: dict[str, Any] = dict(amount_only.tools["refund"].args.args)
    assert rules["amount"].describe() == "number tol=0.01"
    assert rules["unit"].describe() == "enum values=EUR|USD"
    assert SINGLE == "single change"
