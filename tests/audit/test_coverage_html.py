"""The HTML report's coverage section (`toolscore report ... --coverage`): on a stored run and
on a report JSON given its spec, cases and outputs, the untested alias and the uncovered tool
are named; without `--coverage` the page has no such section."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from toolscore.cli.app import cli

GOLDEN = json.loads((Path(__file__).parent / "coverage_cases.json").read_text())[0]


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "tools.json").write_text(json.dumps(GOLDEN["spec"]))
    lines = "".join(json.dumps(c) + "\n" for c in GOLDEN["cases"])
    (tmp_path / "cases.jsonl").write_text(lines)
    outputs = "".join(json.dumps(o) + "\n" for o in GOLDEN["outputs"])
    (tmp_path / "outputs.jsonl").write_text(outputs)
    return ["--specs", str(tmp_path / "tools.json"), "--cases", str(tmp_path / "cases.jsonl"),
            "--outputs", str(tmp_path / "outputs.jsonl")]  # fmt: skip


def _section_names(page: str) -> tuple[list[str], list[str]]:
    untested = [part.split('"')[0] for part in page.split('data-untested="')[2:]]
    uncovered = [part.split('"')[0] for part in page.split('data-uncovered="')[2:]]
    return untested, uncovered


def test_a_stored_run_s_page_names_the_untested_and_uncovered(tmp_path: Path) -> None:
    db = str(tmp_path / "store.db")
    runner = CliRunner()
    scored = runner.invoke(cli, ["score", *_files(tmp_path), "--db", db])
    assert scored.exit_code in (0, 1), scored.output
    page = tmp_path / "page.html"
    result = runner.invoke(cli, ["report", "1", "--db", db, "--html", str(page), "--coverage"])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert '<section id="coverage"' in html
    untested, uncovered = _section_names(html)
    assert untested == GOLDEN["untested"]
    assert uncovered == GOLDEN["uncovered"]
    plain = tmp_path / "plain.html"
    assert runner.invoke(cli, ["report", "1", "--db", db, "--html", str(plain)]).exit_code == 0
    assert '<section id="coverage"' not in plain.read_text()


def test_a_report_json_s_page_needs_its_inputs_for_coverage(tmp_path: Path) -> None:
    runner = CliRunner()
    report = tmp_path / "report.json"
    files = _files(tmp_path)
    assert runner.invoke(cli, ["score", *files, "--json", str(report)]).exit_code in (0, 1)
    page = tmp_path / "page.html"
    refused = runner.invoke(cli, ["report", str(report), "--html", str(page), "--coverage"])
    assert refused.exit_code == 2
    assert "--coverage with a report JSON needs --specs" in refused.output
    result = runner.invoke(cli, ["report", str(report), *files, "--html", str(page), "--coverage"])
    assert result.exit_code == 0, result.output
    assert _section_names(page.read_text()) == (GOLDEN["untested"], GOLDEN["uncovered"])
