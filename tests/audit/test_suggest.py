"""`toolscore suggest` on stored runs: the golden labelled batch (tests/audit/golden/
labelled_batch.json) from which it must propose the alias the labels imply and nothing
else; casefold from the lowercase disagreements; a change the labels reject; `exact` from
audit's forgiven identifiers; the spec lines it writes load as a spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from toolscore.cli.app import cli

GOLDEN = json.loads((Path(__file__).parent / "golden" / "labelled_batch.json").read_text())


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _run(
    tmp_path: Path, spec: str, plan: dict[str, Any], cases: list[dict[str, Any]], tool: str
) -> Path:
    """Score `cases` (each `produced` overriding the plan's arguments) and store the run."""
    (tmp_path / "tools.yaml").write_text(spec)
    with (tmp_path / "cases.jsonl").open("w") as c, (tmp_path / "outputs.jsonl").open("w") as o:
        for case in cases:
            c.write(json.dumps({"id": case["id"], "plans": [[{"name": tool, "args": plan}]]}))
            calls = case.get("calls") or [{"name": tool, "args": {**plan, **case["produced"]}}]
            o.write(json.dumps({"id": case["id"], "calls": calls}))
            c.write("\n")
            o.write("\n")
    db = tmp_path / "r.db"
    CliRunner().invoke(
        cli,
        [
            "score", "--specs", str(tmp_path / "tools.yaml"), "--cases",
            str(tmp_path / "cases.jsonl"), "--outputs", str(tmp_path / "outputs.jsonl"),
            "--save", "--db", str(db),
        ],
    )  # fmt: skip
    return db


def _suggest(tmp_path: Path, db: Path, *more: str) -> dict[str, Any]:
    out = tmp_path / "s.json"
    _invoke("suggest", "1", "--db", str(db), "--json", str(out), *more)
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def test_the_labelled_batch_implies_the_alias_and_nothing_else(tmp_path: Path) -> None:
    db = _run(tmp_path, GOLDEN["spec"], GOLDEN["plan"], GOLDEN["cases"], "refund")
    _invoke("disagreements", "1", "--vs", "exact", "--agreements", "20", "--db", str(db))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"case_id": c["id"], "label": c["label"], "labeller": "ann"}) + "\n"
            for c in GOLDEN["cases"]
        )
    )
    _invoke("labels", "import", "1", str(labels), "--db", str(db))
    found = _suggest(tmp_path, db, "--batch", "1")
    assert found["batch"] == 1
    assert found["rejected"] == []
    got = [{k: s[k] for k in GOLDEN["suggestions"][0]} for s in found["suggestions"]]
    assert got == GOLDEN["suggestions"]
    (only,) = found["suggestions"]
    assert only["spec_diff"] == [
        "refund.unit: alias 'euros' added (means 'EUR'): past failures using 'euros' can pass"
    ]
    rule = yaml.safe_load(only["spec_lines"])["tools"]["refund"]["args"]["unit"]
    assert rule == {
        "kind": "enum",
        "values": ["EUR", "USD"],
        "aliases": {"euro": "EUR", "euros": "EUR"},
        "reason": None,  # left for the owner to fill
    }
    # without the labels, nothing implies the alias: no suggestion at all
    assert _suggest(tmp_path, db)["suggestions"] == []


SPEC = "tools:\n  t:\n    args:\n      name: exact\n      n: {kind: number}\n"


def test_case_only_failures_suggest_casefold_and_labels_can_reject_it(tmp_path: Path) -> None:
    plan = {"name": "Paris", "n": 1}
    cases = [{"id": "a", "produced": {"name": "PARIS"}}, {"id": "b", "produced": {"name": "paris"}}]
    db = _run(tmp_path, SPEC, plan, cases, "t")
    (casefold,) = _suggest(tmp_path, db)["suggestions"]
    assert casefold["change"] == "casefold"
    assert casefold["sources"] == ["lowercase"]
    assert casefold["flips"] == ["a", "b"]
    assert "kind: casefold" in casefold["spec_lines"]
    # a person who says both are wrong rejects it
    _invoke("disagreements", "1", "--vs", "lowercase", "--db", str(db))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"case_id": "a", "label": "incorrect", "labeller": "ann"}\n'
        '{"case_id": "b", "label": "incorrect", "labeller": "ann"}\n'
    )
    _invoke("labels", "import", "1", str(labels), "--db", str(db))
    found = _suggest(tmp_path, db, "--batch", "1")
    assert found["suggestions"] == []
    (rejected,) = found["rejected"]
    assert (rejected["change"], rejected["let_through"], rejected["agreed"]) == ("casefold", 2, 0)


def test_one_failure_not_of_letter_case_leaves_casefold_out(tmp_path: Path) -> None:
    plan = {"name": "Paris", "n": 1}
    cases = [{"id": "a", "produced": {"name": "PARIS"}}, {"id": "b", "produced": {"name": "Rome"}}]
    db = _run(tmp_path, SPEC, plan, cases, "t")
    assert _suggest(tmp_path, db)["suggestions"] == []


def test_a_casefold_identifier_that_audit_finds_forgiving_gets_exact(tmp_path: Path) -> None:
    spec = "tools:\n  t:\n    args:\n      user_id: {kind: casefold, reason: believed safe}\n"
    cases = [{"id": "a", "produced": {"user_id": "U-1"}}, {"id": "b", "produced": {}}]
    db = _run(tmp_path, spec, {"user_id": "u-1"}, cases, "t")
    (exact,) = _suggest(tmp_path, db)["suggestions"]
    assert (exact["change"], exact["sources"], exact["flips"]) == ("exact", ["audit"], ["a"])
    assert exact["pass_to_fail"] == 1
    assert _suggest(tmp_path, db, "--no-audit")["suggestions"] == []


def _labelled(tmp_path: Path, db: Path, labels: dict[str, str]) -> None:
    """Sample every case of run 1 into batch 1 and label them as `labels` says."""
    _invoke("disagreements", "1", "--vs", "exact", "--agreements", "20", "--db", str(db))
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "".join(
            json.dumps({"case_id": case, "label": label, "labeller": "ann"}) + "\n"
            for case, label in labels.items()
        )
    )
    _invoke("labels", "import", "1", str(path), "--db", str(db))


LENIENT = "      city: {kind: casefold, reason: display names}\n"
"""A lenient argument, so that the run has a case exact JSON fails and the rules pass (a
batch needs one disagreement)."""


def test_repeated_extra_lookups_the_person_accepts_suggest_a_relaxation(tmp_path: Path) -> None:
    spec = "tools:\n  get_order:\n    args:\n      id: exact\n" + LENIENT
    plan = {"id": "o", "city": "Paris"}
    again = [{"name": "get_order", "args": plan}] * 2
    cases: list[dict[str, Any]] = [
        {"id": "a", "calls": again},
        {"id": "b", "calls": again},
        {"id": "ok", "produced": {"city": "PARIS"}},
    ]
    db = _run(tmp_path, spec, plan, cases, "get_order")
    assert _suggest(tmp_path, db)["suggestions"] == []  # lowercase fails extra calls too
    _labelled(tmp_path, db, {"a": "correct", "b": "correct", "ok": "correct"})
    (relax,) = _suggest(tmp_path, db, "--batch", "1")["suggestions"]
    assert (relax["change"], relax["argument"], relax["flips"]) == ("relax", None, ["a", "b"])
    assert yaml.safe_load(relax["spec_lines"]) == {
        "relax": [{"allow": "extra_calls", "tools": ["get_order"], "reason": None}]
    }


@pytest.mark.parametrize(("gap", "tol"), [(0.003, 0.003), (0.0437, 0.05)])
def test_a_tolerance_covers_the_gaps_the_labels_accept(
    tmp_path: Path, gap: float, tol: float
) -> None:
    spec = "tools:\n  t:\n    args:\n      amount: {kind: number}\n" + LENIENT
    plan = {"amount": 10, "city": "Paris"}
    cases = [
        {"id": "a", "produced": {"amount": 10 + gap}},
        {"id": "far", "produced": {"amount": 12}},
        {"id": "ok", "produced": {"city": "PARIS"}},
    ]
    db = _run(tmp_path, spec, plan, cases, "t")
    _labelled(tmp_path, db, {"a": "correct", "far": "incorrect", "ok": "correct"})
    (widened,) = _suggest(tmp_path, db, "--batch", "1")["suggestions"]
    assert (widened["change"], widened["flips"], widened["agreed"]) == ("tol", ["a"], 1)
    rule = yaml.safe_load(widened["spec_lines"])["tools"]["t"]["args"]["amount"]
    assert rule["tol"] == tol
