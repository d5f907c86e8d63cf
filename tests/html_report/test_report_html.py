"""The one-file HTML report: self-contained, its numbers those of the report JSON, its cases
capped failing first, agent text inert, and bad input one line with exit status 2.

The page is read back with the standard library's HTML parser: every element's attributes
(no `src`, no `href`), the numbers in `data-` attributes, and the case data the page's script
reads from `<script type="application/json" id="case-data">`.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from html_pages import PWN, Page, number, run, score_args, write_inputs
from imported_modules import found, imported
from toolscore.cli.app import cli
from toolscore.html_report.embed import Caps, select_cases
from toolscore.html_report.html import Provenance, report_html


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, Path, dict[str, Path]]:
    """`score --json --html --save` of the hostile inputs: the report, the page, the paths."""
    paths = write_inputs(tmp_path)
    paths["db"] = tmp_path / "results.db"
    report, page = tmp_path / "report.json", tmp_path / "report.html"
    result = run(*score_args(paths), "--json", str(report), "--html", str(page),
                 "--db", str(paths["db"]), "--label", PWN)  # fmt: skip
    assert result.exit_code == 0, result.output
    return report, page, paths


def test_the_page_loads_nothing_and_its_csp_allows_only_its_own_script(
    scored: tuple[Path, Path, dict[str, Path]],
) -> None:
    _, page_path, _ = scored
    html = page_path.read_text()
    page = Page(html)
    for tag, attrs in page.elements:
        for name in ("src", "href", "action", "srcset", "poster", "data", "formaction"):
            assert name not in attrs, (tag, attrs)
        if tag == "script":
            assert attrs.get("type") in (None, "application/json")
    assert not re.search(r"https?:", html.split('<script type="application/json"')[0])
    assert "url(" not in "".join(page.styles)
    assert "@import" not in "".join(page.styles)
    policy = page.policy
    assert "default-src 'none'" in policy
    code = [text for attrs, text in page.scripts if "type" not in attrs]
    assert len(code) == 1
    digest = base64.b64encode(hashlib.sha256(code[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert "unsafe" not in policy


def test_the_numbers_on_the_page_are_the_report_json_s(
    scored: tuple[Path, Path, dict[str, Path]],
) -> None:
    report_path, page_path, _ = scored
    summary = orjson.loads(report_path.read_bytes())["summary"]
    page = Page(page_path.read_text())
    metrics = {attrs["data-metric"]: attrs for attrs in page.with_attr("data-metric")}
    assert number(metrics["accuracy"]["data-value"]) == summary["accuracy"]
    assert number(metrics["accuracy"]["data-n"]) == summary["cases"]
    assert number(metrics["accuracy"]["data-passed"]) == summary["passed"]
    assert [number(metrics["accuracy"][k]) for k in ("data-lo", "data-hi")] == summary[
        "accuracy_ci95"
    ]
    for key in ("name_accuracy", "argument_accuracy", "abstention_accuracy"):
        node = summary[key]
        got = metrics[key]
        assert number(got["data-value"]) == node["value"]
        assert number(got["data-n"]) == node["n"]
        assert number(got["data-passed"]) == node["passed"]
        assert [number(got["data-lo"]), number(got["data-hi"])] == node["ci95"]
    scorers = {attrs["data-scorer"]: attrs for attrs in page.with_attr("data-scorer")}
    for name in ("exact", "lowercase"):
        node = summary["baselines"][name]
        assert number(scorers[name]["data-passed"]) == node["passed"]
        assert number(scorers[name]["data-accuracy"]) == node["accuracy"]
        assert number(scorers[name]["data-disagreements"]) == node["disagreements"]
        assert [number(scorers[name]["data-lo"]), number(scorers[name]["data-hi"])] == node[
            "accuracy_ci95"
        ]
    codes = {a["data-code"]: int(a["data-count"] or 0) for a in page.with_attr("data-code")}
    assert codes == summary["codes"]
    tools = {a["data-tool"]: a for a in page.with_attr("data-tool")}
    assert set(tools) == set(summary["per_tool"])
    for name, tally in summary["per_tool"].items():
        assert int(tools[name]["data-passed"] or 0) == tally["passed"]
        assert int(tools[name]["data-failed"] or 0) == tally["failed"]
    arguments = {a["data-argument"]: a for a in page.with_attr("data-argument")}
    assert set(arguments) == set(summary["per_argument"])
    cases = page.data("case-data")
    assert len(cases) == summary["cases"]
    assert sum(not c["passed"] for c in cases) == summary["cases"] - summary["passed"]


def test_a_stored_run_and_its_report_json_give_the_same_numbers(
    scored: tuple[Path, Path, dict[str, Path]], tmp_path: Path
) -> None:
    report_path, page_path, paths = scored
    stored_page = tmp_path / "stored.html"
    json_page = tmp_path / "json.html"
    assert run("report", "1", "--db", str(paths["db"]), "--html", str(stored_page)).exit_code == 0
    assert run("report", str(report_path), "--html", str(json_page)).exit_code == 0

    def numbers(path: Path) -> list[Any]:
        page = Page(path.read_text())
        return [
            sorted((k, v) for k, v in attrs.items() if k.startswith("data-"))
            for attrs in page.with_attr("data-metric") + page.with_attr("data-scorer")
        ]

    assert numbers(stored_page) == numbers(page_path) == numbers(json_page)


def test_cases_open_beside_their_plan_where_the_inputs_can_be_read(
    scored: tuple[Path, Path, dict[str, Path]], tmp_path: Path
) -> None:
    report_path, page_path, paths = scored
    stored_page = tmp_path / "stored.html"
    run("report", "1", "--db", str(paths["db"]), "--html", str(stored_page))
    for path in (page_path, stored_page):
        cases = {c["id"]: c for c in Page(path.read_text()).data("case-data")}
        evil = cases["evil-prompt"]
        assert evil["tags"] == ["hostile", "alpha"]
        assert evil["tools"] == ["refund"]
        assert evil["args"] == ["refund.amount", "refund.order_id"]
        (row,) = evil["layout"]["rows"]
        states = {arg["key"]: arg["state"] for arg in row["args"]}
        assert states == {"order_id": "rejected", "amount": "same"}
        assert cases["evil-tool"]["tools"] == sorted(["refund", PWN])
        assert cases["ok-0"]["layout"]["rows"][0]["args"][1]["state"] == "accepted"
    # A report JSON keeps no plans: the page says so and still lists every case.
    json_page = tmp_path / "json.html"
    run("report", str(report_path), "--html", str(json_page))
    text = json_page.read_text()
    assert 'id="details-note"' in text
    cases = Page(text).data("case-data")
    assert all("layout" not in c for c in cases)
    assert {c["id"] for c in cases} >= {"evil-prompt", PWN}


def test_agent_text_never_reaches_the_markup_unescaped(
    scored: tuple[Path, Path, dict[str, Path]],
) -> None:
    _, page_path, _ = scored
    html = page_path.read_text()
    assert "<img" not in html
    assert html.count("<script") == 3  # the cases, the spec's rules and the page's script
    for element in ("case-data", "spec-data"):
        opening = f'<script type="application/json" id="{element}">'
        data = html.split(opening)[1].split("</script>")[0]
        assert "<" not in data
        assert ">" not in data
        assert "&" not in data
    assert "&lt;img src=x" in html  # the run's label, escaped in the heading


def test_failing_and_disagreeing_cases_come_first_within_the_caps(tmp_path: Path) -> None:
    cases = []
    for i in range(300):
        passed = i % 3 != 0  # 100 failing
        exact = passed and i % 5 == 0  # passing and exact agreeing: a passing disagreement
        cases.append(
            {"id": f"c{i:03}", "passed": passed, "kind": "tool", "plan": 0,
             "baselines": {"exact": exact if passed else False, "lowercase": passed},
             "mismatches": [] if passed else [{"code": "value_mismatch", "call": 0,
             "plan_call": 0, "path": "/a", "rule": "exact", "message": "m"}]}
        )  # fmt: skip
    summary = summary_of(300, 200)
    report = tmp_path / "big.json"
    head = orjson.dumps({"toolscore": "0", "specs": {}, "relaxations": [], "summary": summary})
    lines = b",\n".join(orjson.dumps(c) for c in cases)
    report.write_bytes(head[:-1] + b',"cases":[\n' + lines + b"\n]}\n")
    chosen = select_cases(
        ReportCases(cases), Caps(max_cases=40, max_passing=10, max_bytes=10**9)
    ).cases(Caps(max_cases=40, max_passing=10))
    assert [c["id"] for c in chosen[:30]] == [f"c{i:03}" for i in range(0, 90, 3)]
    passing = chosen[30:]
    assert len(passing) == 10
    assert all(c["passed"] for c in passing)
    assert all(not c["baselines"]["exact"] for c in passing)  # exact disagrees: first
    # Through the command: the page says how many it holds of how many.
    page_path = tmp_path / "big.html"
    result = run("report", str(report), "--html", str(page_path), "--max-cases", "40",
                 "--max-passing", "10")  # fmt: skip
    assert result.exit_code == 0, result.output
    page = Page(page_path.read_text())
    (section,) = list(page.with_attr("data-embedded"))
    assert (section["data-total"], section["data-failed"], section["data-embedded"]) == (
        "300", "100", "40",
    )  # fmt: skip
    assert [c["id"] for c in page.data("case-data")] == [c["id"] for c in chosen]
    assert "holds <b>40</b> of the run's <b>300</b> cases" in page_path.read_text()


class ReportCases:
    """An iterable of cases that counts how many were taken."""

    def __init__(self, cases: list[dict[str, Any]]) -> None:
        self.cases = cases
        self.taken = 0

    def __iter__(self) -> Any:
        for case in self.cases:
            self.taken += 1
            yield case


def test_the_selection_stops_reading_once_every_bucket_is_full() -> None:
    cases = [
        {"id": str(i), "passed": i % 2 == 0, "baselines": {"exact": i % 4 == 0}}
        for i in range(10_000)
    ]  # failing, passing with exact disagreeing, and passing with it agreeing, in turn
    source = ReportCases(cases)
    chosen = select_cases(source, Caps(max_cases=10, max_passing=5))
    assert source.taken < 100
    assert not chosen.complete
    assert len(chosen.cases(Caps(max_cases=10, max_passing=5))) == 10


def test_the_byte_cap_stops_the_embedded_cases() -> None:
    cases = [
        {"id": f"c{i}", "passed": False, "kind": "tool", "baselines": {}, "mismatches": [],
         "notes": ["x" * 1000]}
        for i in range(100)
    ]  # fmt: skip
    caps = Caps(max_cases=100, max_passing=0, max_bytes=20_000)
    head = {"toolscore": "0", "specs": {}, "relaxations": [], "summary": summary_of(100, 0)}
    html = report_html(head, select_cases(cases, caps), caps, {}, Provenance())
    page = Page(html)
    embedded = page.data("case-data")
    assert 10 <= len(embedded) < 20
    (section,) = page.with_attr("data-embedded")
    assert section["data-embedded"] == str(len(embedded))
    assert section["data-total"] == "100"


def summary_of(cases: int, passed: int) -> dict[str, Any]:
    rate = {"value": None, "n": 0, "passed": 0, "ci95": None}
    return {
        "cases": cases, "passed": passed, "accuracy": passed / cases, "accuracy_ci95": None,
        "name_accuracy": rate, "argument_accuracy": rate, "abstention_accuracy": rate,
        "baselines": {}, "codes": {}, "per_tool": {}, "per_argument": {},
    }  # fmt: skip


def test_the_calibration_block_renders_as_a_table_with_names_escaped() -> None:
    head = {
        "toolscore": "0", "specs": {}, "relaxations": [], "summary": summary_of(1, 1),
        "calibration": {
            "labellers": ["alice", PWN],
            "metrics": [
                {"name": "scorer-bug rate", "unit": "share", "value": 0.125, "n": 40,
                 "ci95": [0.05, 0.26], "note": "of the disagreements"},
                {"name": "kappa", "unit": "kappa", "value": None, "n": 40, "ci95": None,
                 "note": PWN},
                {"name": "defined kappa", "unit": "kappa", "value": 0.6234, "n": 40,
                 "ci95": None, "note": ""},
                {"name": "bugs in the run", "unit": "count", "value": 1234.5, "n": 40,
                 "ci95": [800.0, 1700.25], "note": ""},
            ],
        },
    }  # fmt: skip
    caps = Caps()
    html = report_html(head, select_cases([], caps), caps, {}, Provenance())
    assert "<h2>Calibration (person's labels)</h2>" in html
    assert "<img" not in html
    assert "&lt;img src=x" in html
    rows = {a["data-calibration"]: a for a in Page(html).with_attr("data-calibration")}
    assert number(rows["scorer-bug rate"]["data-value"]) == 0.125
    assert number(rows["scorer-bug rate"]["data-n"]) == 40
    assert "12.5%" in html
    assert "5.0% \u2013 26.0%" in html
    assert "undefined" in html
    assert "0.62</td>" in html  # a kappa is no percentage
    assert "1,234.5</td>" in html  # nor is a count of cases
    assert "800.0 \u2013 1,700.2" in html
    without = report_html({**head, "calibration": None}, select_cases([], caps), caps, {},
                          Provenance())  # fmt: skip
    assert "Calibration (person" not in without


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "not an object"),
        (b'{"toolscore": "0"}', "no summary"),
        (b'{"summary": {"cases": 1, "passed": "1"}}', "summary.passed"),
        (b'{"summary": {"cases": 1, "passed": 1, "accuracy": 1}}', "summary.name_accuracy"),
    ],
)
def test_a_bad_report_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    source = tmp_path / "report.json"
    if content is not None:
        source.write_bytes(content)
    result = CliRunner().invoke(cli, ["report", str(source), "--html", str(tmp_path / "o.html")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert str(source) in lines[0]
    assert message in lines[0]
    assert not (tmp_path / "o.html").exists()


def test_an_unknown_run_is_one_line_and_exit_2(
    scored: tuple[Path, Path, dict[str, Path]], tmp_path: Path
) -> None:
    _, _, paths = scored
    out = tmp_path / "o.html"
    for args in (["7", "--db", str(paths["db"])], ["1", "--db", str(tmp_path / "none.db")]):
        result = CliRunner().invoke(cli, ["report", *args, "--html", str(out)])
        assert result.exit_code == 2
        lines = result.output.strip().splitlines()
        assert len(lines) == 1
        assert "toolscore: error:" in lines[0]
    assert not out.exists()


def test_score_html_with_json_on_stdout_writes_both(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    page = tmp_path / "p.html"
    result = CliRunner().invoke(cli, [*score_args(paths), "--json", "-", "--html", str(page)])
    assert result.exit_code == 0
    report = orjson.loads(result.stdout_bytes)
    assert len(report["cases"]) == 7
    assert Page(page.read_text()).data("case-data")[0]["id"] == "evil-prompt"
    assert list(tmp_path.glob(".*tmp")) == []


def test_jinja2_is_imported_by_score_only_with_html(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    plain = imported(tmp_path, *score_args(paths))
    assert found(plain, ("jinja2", "toolscore.html_report.html")) == []
    with_html = imported(tmp_path, *score_args(paths), "--html", str(tmp_path / "p.html"))
    assert "jinja2" in with_html
    assert (tmp_path / "p.html").exists()


def test_compare_html_shows_the_paired_numbers_of_compare_json(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    db = str(tmp_path / "results.db")
    run(*score_args(paths), "--db", db)
    outputs = paths["outputs"].read_text().replace('"O-3"', '"o-3"')
    paths["outputs"].write_text(outputs)
    run(*score_args(paths), "--db", db)
    page_path = tmp_path / "compare.html"
    result = run("compare", "1", "2", "--db", db, "--json", "--html", str(page_path))
    comparison = orjson.loads(result.stdout_bytes)
    page = Page(page_path.read_text())
    paired = {a["data-paired"]: a for a in page.with_attr("data-paired")}
    for test in comparison["paired"]:
        got = paired[test["metric"]]
        assert number(got["data-difference"]) == test["difference"]
        assert [number(got["data-lo"]), number(got["data-hi"])] == (
            test["interval"] or [None, None]
        )
        assert int(got["data-n01"] or -1) == test["mcnemar"]["n01"]
        assert int(got["data-n10"] or -1) == test["mcnemar"]["n10"]
        assert number(got["data-p"]) == test["mcnemar"]["p_value"]
    flips = [a["data-flip"] for a in page.with_attr("data-flip")]
    assert flips == [flip["id"] for flip in comparison["flips"]] == [PWN]
    assert "<img" not in page_path.read_text()


def test_a_replayed_run_shows_its_calls_against_state_and_each_case_s_diff(
    tmp_path: Path,
) -> None:
    example = Path(__file__).parents[2] / "src" / "toolscore" / "examples" / "support" / "env"
    report_path, page_path = tmp_path / "report.json", tmp_path / "report.html"
    result = run(
        "score", "--specs", str(example / "tools.yaml"), "--cases", str(example / "cases.jsonl"),
        "--outputs", str(example / "outputs.jsonl"), "--env", "--json", str(report_path),
        "--html", str(page_path), "--cluster-by", "tag",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    report = orjson.loads(report_path.read_bytes())
    state = report["summary"]["state"]
    page = Page(page_path.read_text())
    cells = {a["data-cell"]: int(a.get("data-count") or 0) for a in page.with_attr("data-cell")}
    assert cells["calls_only"] == state["calls_passed_state_failed"]
    assert cells["state_only"] == state["calls_failed_state_passed"]
    assert sum(cells.values()) == state["state_accuracy"]["n"]
    assert cells["both_passed"] + cells["state_only"] == state["state_accuracy"]["passed"]
    metrics = {a["data-metric"]: a for a in page.with_attr("data-metric")}
    assert number(metrics["state_accuracy"]["data-passed"]) == state["state_accuracy"]["passed"]
    assert number(metrics["required_outputs"]["data-n"]) == state["required_outputs"]["n"]
    (clustered,) = page.with_attr("data-clusters")
    expected = report["summary"]["accuracy_clustered"]
    assert number(clustered["data-clusters"]) == expected["clusters"]
    assert number(clustered["data-se"]) == expected["se"]
    cases = {c["id"]: c for c in page.data("case-data")}
    twice = cases["refund-twice"]
    assert twice["state"] == next(c for c in report["cases"] if c["id"] == "refund-twice")["state"]
    assert twice["tags"] == ["calls pass, state fails"]


def test_a_huge_case_is_embedded_without_its_values() -> None:
    huge = "x" * 1_000_000
    mismatch = {
        "code": "value_mismatch",
        "call": 0,
        "plan_call": 0,
        "path": "/a",
        "rule": "exact",
        "expected": "a",
        "produced": huge,
        "message": "m" * 10_000,
    }
    cases = [
        {"id": "big", "passed": False, "kind": "tool", "baselines": {}, "mismatches": [mismatch]},
        {"id": "small", "passed": False, "kind": "tool", "baselines": {}, "mismatches": []},
    ]  # fmt: skip
    caps = Caps()
    head = {"toolscore": "0", "specs": {}, "relaxations": [], "summary": summary_of(2, 0)}
    html = report_html(head, select_cases(cases, caps), caps, {}, Provenance())
    assert len(html) < 200_000
    big, small = Page(html).data("case-data")
    assert big["slimmed"] > 1_000_000
    assert big["mismatches"] == [
        {"code": "value_mismatch", "call": 0, "plan_call": 0, "path": "/a", "rule": "exact",
         "message": "m" * 500}
    ]  # fmt: skip
    assert small["id"] == "small"
    assert "slimmed" not in small


def test_a_report_json_with_its_inputs_opens_its_cases_beside_their_plans(
    scored: tuple[Path, Path, dict[str, Path]], tmp_path: Path
) -> None:
    report_path, page_path, paths = scored
    out = tmp_path / "with-inputs.html"
    result = run("report", str(report_path), "--html", str(out), "--specs", str(paths["specs"]),
                 "--cases", str(paths["cases"]), "--outputs", str(paths["outputs"]))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert Page(out.read_text()).data("case-data") == Page(page_path.read_text()).data("case-data")
    assert 'id="details-note"' not in out.read_text()
    lonely = CliRunner().invoke(
        cli, ["report", str(report_path), "--html", str(out), "--cases", str(paths["cases"])]
    )
    assert lonely.exit_code == 2
    assert "go together" in lonely.output


def test_score_html_into_a_missing_directory_fails_before_scoring(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    target = tmp_path / "nowhere" / "p.html"
    result = CliRunner().invoke(cli, [*score_args(paths), "--html", str(target)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"toolscore: error: {target}: cannot write: its directory does not exist"
    ]
