"""The named call rates on the HTML report: a row each beside the other rates, its numbers
those of the report JSON (a stored run's page too); a report JSON written before them shows
no such table, and a malformed one is refused in one line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from html_pages import Page, number, run, score_args, write_inputs
from toolscore.cli.app import cli

KEYS = ("unknown_tool_rate", "missing_argument_rate", "unexpected_argument_rate")


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, Path, Path]:
    """`score --json --html --db` of the hostile inputs (one call names a tool the spec
    lacks): the report, the page, the store."""
    paths = write_inputs(tmp_path)
    db, report, page = tmp_path / "results.db", tmp_path / "report.json", tmp_path / "r.html"
    result = run(*score_args(paths), "--json", str(report), "--html", str(page), "--db", str(db))
    assert result.exit_code == 0, result.output
    return report, page, db


def rows(path: Path) -> dict[str, dict[str, str | None]]:
    page = Page(path.read_text())
    return {
        a["data-metric"] or "": a for a in page.with_attr("data-metric") if a["data-metric"] in KEYS
    }


def test_the_page_shows_the_three_rates_of_the_report_json(
    scored: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    report, page, db = scored
    summary = orjson.loads(report.read_bytes())["summary"]
    assert summary["unknown_tool_rate"]["passed"] == 1  # the call to the tool named PWN
    shown = rows(page)
    assert list(shown) == list(KEYS)
    for key in KEYS:
        node, got = summary[key], shown[key]
        assert number(got["data-value"]) == node["value"]
        assert number(got["data-n"]) == node["n"]
        assert number(got["data-passed"]) == node["passed"]
        assert [number(got["data-lo"]), number(got["data-hi"])] == node["ci95"]
    html = page.read_text()
    assert "Call error rates" in html
    assert f"{summary['unknown_tool_rate']['passed']} / {summary['unknown_tool_rate']['n']}" in html
    stored = tmp_path / "stored.html"
    assert run("report", "1", "--db", str(db), "--html", str(stored)).exit_code == 0
    assert rows(stored) == shown


def test_a_report_json_without_the_rates_shows_no_table_of_them(
    scored: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    report, _, _ = scored
    data = orjson.loads(report.read_bytes())
    for key in KEYS:
        del data["summary"][key]
    older = tmp_path / "older.json"
    older.write_bytes(orjson.dumps(data))
    page = tmp_path / "older.html"
    assert run("report", str(older), "--html", str(page)).exit_code == 0
    assert rows(page) == {}
    assert "Call error rates" not in page.read_text()


def test_a_malformed_rate_is_one_line_and_exit_2(
    scored: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    report, _, _ = scored
    data = orjson.loads(report.read_bytes())
    data["summary"]["missing_argument_rate"] = 0.5
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(data))
    result = CliRunner().invoke(cli, ["report", str(bad), "--html", str(tmp_path / "o.html")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert "summary.missing_argument_rate" in lines[0]
    assert not (tmp_path / "o.html").exists()
