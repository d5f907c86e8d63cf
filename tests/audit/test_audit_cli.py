"""`toolscore audit` on the command line: the bundled support-desk example, the JSON it
writes, and a bad input refused in one line with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from toolscore.cli.app import cli, example_dir


def test_audit_of_the_support_example_catches_every_bad_answer(tmp_path: Path) -> None:
    example = example_dir()
    out = tmp_path / "audit.json"
    result = CliRunner().invoke(
        cli,
        [
            "audit",
            "--specs",
            str(example / "tools.yaml"),
            "--cases",
            str(example / "cases.jsonl"),
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "bad answers: 46 planted, 46 caught, 0 forgiven" in result.output
    assert "harmless variants: 18 planted, 18 passed, 0 failed" in result.output
    data = json.loads(out.read_text())
    assert set(data) == {"bad", "harmless", "seed", "cases", "skipped"}
    assert data["cases"] == 6
    assert data["skipped"] == []
    fields = {"kind", "tool", "argument", "n", "caught", "forgiven", "forgiven_by", "examples"}
    assert all(set(row) == fields for row in data["bad"])
    harmless = {"kind", "tool", "argument", "n", "passed", "failed", "failed_by", "examples"}
    assert all(set(row) == harmless for row in data["harmless"])
    kinds = {row["kind"] for row in data["harmless"]}
    assert kinds == {
        "parallel_reordered",
        "omitted_default",
        "alias",
        "number_inside_tol",
        "arguments_as_string",
    }  # no casefold argument in the example: no casefold_case variant


def test_a_forgiving_spec_is_named_on_the_terminal(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        "tools:\n  refund:\n    args:\n"
        "      order_id: {kind: casefold, reason: ids are case-blind}\n"
    )
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "r1", "plans": [[{"name": "refund", "args": {"order_id": "order-77"}}]]}\n'
    )
    result = CliRunner().invoke(
        cli, ["audit", "--specs", str(spec), "--cases", str(cases), "--seed", "4"]
    )
    assert result.exit_code == 0, result.output
    assert "audit of 1 cases (seed 4)" in result.output
    assert (
        "wrong_id_case        refund.order_id                  1  caught 0, forgiven 1  "
        "forgiven by: refund.order_id [casefold] (1); e.g. 'r1'" in result.output
    )


def test_a_broken_cases_file_is_refused_in_one_line(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text("tools:\n  t:\n    args: {a: exact}\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "c", "plans": [[{"name": "nope"}]]}\n')
    result = CliRunner().invoke(cli, ["audit", "--specs", str(spec), "--cases", str(cases)])
    assert result.exit_code == 2
    assert result.output.startswith("toolscore: error: ")
    assert "cases.jsonl:1:" in result.output
