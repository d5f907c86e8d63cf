"""Partial credit, efficiency and forbidden calls on the HTML report: the summary's numbers
beside the other metrics, the per-tool partial table (a tool name an agent made up shown
inert), the critical failures box first when a call was forbidden, and each case's partial
credit in its entry; a report JSON written before them shows none of it, and a malformed
block is refused in one line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from html_pages import PWN, SPEC, Page, number, refund, run, score_args
from toolscore.cli.app import cli

FORBID = """
  wipe:
    args:
      scope: exact
forbid:
  - {tool: wipe, reason: "never asked for"}
"""


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, Path]:
    """`score --json --html` of four cases: one passing, one two-call plan half done with a
    repeated call, one calling a tool named with an HTML payload, one forbidden call."""
    cases = [
        {"id": "ok", "plans": [[refund("o-1")]]},
        {"id": "half", "plans": [[refund("o-2"), refund("o-3")]]},
        {"id": "made-up", "plans": [[refund("o-4")]]},
        {"id": "wiped", "plans": [[refund("o-5")]]},
    ]
    outputs = [
        {"id": "ok", "calls": [refund("o-1")]},
        {"id": "half", "calls": [refund("o-2"), refund("o-2")]},
        {"id": "made-up", "calls": [{"name": PWN, "args": {}}]},
        {"id": "wiped", "calls": [refund("o-5"), {"name": "wipe", "args": {"scope": "all"}}]},
    ]
    paths = {name: tmp_path / f"{name}.x" for name in ("specs", "cases", "outputs")}
    paths["specs"].write_text(SPEC.rstrip("\n") + FORBID)
    paths["cases"].write_bytes(b"\n".join(map(orjson.dumps, cases)) + b"\n")
    paths["outputs"].write_bytes(b"\n".join(map(orjson.dumps, outputs)) + b"\n")
    report, page = tmp_path / "report.json", tmp_path / "r.html"
    result = run(*score_args(paths), "--json", str(report), "--html", str(page))
    assert result.exit_code == 0, result.output
    return report, page


def test_the_page_shows_the_partial_credit_of_the_report_json(scored: tuple[Path, Path]) -> None:
    report, path = scored
    summary = orjson.loads(report.read_bytes())["summary"]
    page = Page(path.read_text())
    rows = {a["data-partial"]: a for a in page.with_attr("data-partial")}
    assert list(rows) == ["precision", "recall", "f1"]
    for key, row in rows.items():
        node = summary["partial"][key]
        assert number(row["data-micro"]) == node["micro"]
        assert number(row["data-macro"]) == node["macro"]
        assert [number(row["data-lo"]), number(row["data-hi"])] == node["macro_ci95"]
    efficiency = {a["data-efficiency"]: a for a in page.with_attr("data-efficiency")}
    for key in ("extra", "repeated", "calls_per_expected_call", "retries"):
        assert number(efficiency[key]["data-value"]) == summary["efficiency"][key]
    assert summary["efficiency"]["repeated"] == 1
    tools = {a["data-partial-tool"]: a for a in page.with_attr("data-partial-tool")}
    assert set(tools) == set(summary["partial"]["per_tool"]) == {"refund", "wipe", PWN}
    assert (
        number(tools["refund"]["data-matched"])
        == summary["partial"]["per_tool"]["refund"]["matched"]
    )


def test_a_made_up_tool_name_is_shown_as_text(scored: tuple[Path, Path]) -> None:
    html = scored[1].read_text()
    assert PWN not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html


def test_forbidden_calls_come_first_in_a_box_of_their_own(scored: tuple[Path, Path]) -> None:
    html = scored[1].read_text()
    box = html.index('id="critical-failures"')
    assert box < html.index('class="run"') < html.index('id="metrics"')
    page = Page(html)
    (found,) = page.with_attr("data-forbidden-calls")
    assert (found["data-forbidden-calls"], found["data-forbidden-cases"]) == ("1", "1")
    (tool,) = page.with_attr("data-forbidden-tool")
    assert (tool["data-forbidden-tool"], tool["data-count"]) == ("wipe", "1")
    assert "Critical failures: forbidden calls" in html


def test_each_case_entry_carries_its_partial_credit(scored: tuple[Path, Path]) -> None:
    page = Page(scored[1].read_text())
    cases = {case["id"]: case for case in page.data("case-data")}
    assert cases["half"]["partial"] == {
        "plan": 0, "matched": 1, "expected": 2, "produced": 2,
        "precision": 0.5, "recall": 0.5, "f1": 0.5,
    }  # fmt: skip
    assert cases["half"]["efficiency"] == {"extra": 1, "excused": 0, "repeated": 1}


def test_a_report_json_without_them_shows_none(scored: tuple[Path, Path], tmp_path: Path) -> None:
    data = orjson.loads(scored[0].read_bytes())
    for key in ("partial", "efficiency", "forbidden_calls"):
        del data["summary"][key]
    older = tmp_path / "older.json"
    older.write_bytes(orjson.dumps(data))
    page = tmp_path / "older.html"
    assert run("report", str(older), "--html", str(page)).exit_code == 0
    html = page.read_text()
    for marker in ('id="partial-credit"', 'id="efficiency"', 'id="critical-failures"'):
        assert marker not in html


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("partial", {"precision": 1}, "summary.partial.precision"),
        ("efficiency", {"extra": "<b>"}, "summary.efficiency"),
        ("forbidden_calls", {"calls": "1"}, "summary.forbidden_calls"),
    ],
)
def test_a_malformed_block_is_one_line_and_exit_2(
    scored: tuple[Path, Path], tmp_path: Path, key: str, value: object, field: str
) -> None:
    data = orjson.loads(scored[0].read_bytes())
    data["summary"][key] = value
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(data))
    result = CliRunner().invoke(cli, ["report", str(bad), "--html", str(tmp_path / "o.html")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert field in lines[0]
