"""Rubric results in the HTML report: the "Rubrics (apart from the call score)" tables carry
the report JSON's numbers, the cases carry their rubric entries for the case browser, and
agent text in a rubric entry (an argument name, a reason quoting a produced value) never
reaches the markup unescaped. The browser side is in test_report_html_browser.py."""

from __future__ import annotations

from pathlib import Path

from html_pages import (
    PWN,
    number,
    scored_page,
)
from toolscore.html_report.html import MAX_TEXT, case_record, slimmed

# Rubric entries by case: ok (names_order passed, short passed); bad (names_order failed);
# unscored (names_order unscored: a number); absent (names_order unscored: not sent, short
# failed); no-rubric (no produced call: both unscored).


def test_the_rubric_tables_carry_the_report_json_s_numbers(tmp_path: Path) -> None:
    page, _, report = scored_page(tmp_path)
    block = report["summary"]["rubrics"]
    [section] = [attrs for tag, attrs in page.elements if attrs.get("id") == "rubrics"]
    assert number(section["data-tokens"]) == block["tokens"] == 0
    for kind, group in (("rubric", "per_rubric"), ("argument", "per_argument")):
        rows = page.with_attr(f"data-rubric-{kind}")
        assert [row[f"data-rubric-{kind}"] for row in rows] == sorted(block[group])
        for row in rows:
            stats = block[group][row[f"data-rubric-{kind}"]]
            rate = stats["pass_rate"]
            assert number(row["data-n"]) == stats["n"]
            assert number(row["data-mean-score"]) == stats["mean_score"]
            assert number(row["data-value"]) == rate["value"]
            assert number(row["data-passed"]) == rate["passed"]
            assert [number(row["data-lo"]), number(row["data-hi"])] == rate["ci95"]
            assert number(row["data-unscored"]) == stats["unscored"]["count"]
    # By hand: names_order passed 1 of 2 scored (ok passed, bad failed), 3 unscored.
    names_order = block["per_rubric"]["names_order"]
    assert (names_order["n"], names_order["pass_rate"]["passed"]) == (2, 1)
    assert names_order["unscored"]["count"] == 3


def test_the_cases_carry_their_rubric_entries_and_payloads_stay_escaped(tmp_path: Path) -> None:
    page, html, report = scored_page(tmp_path)
    embedded = {case["id"]: case for case in page.data("case-data")}
    for case in report["cases"]:
        assert embedded[case["id"]].get("rubrics") == case.get("rubrics")
    bad = embedded["bad"]["rubrics"][0]
    assert bad["argument"] == PWN
    assert "<img" in bad["reason"]  # the produced order id, quoted by the reason
    assert PWN not in html  # the summary tables escape it; the case data writes \u003c
    assert '<option value="failed-or-unscored">' in html


def test_a_run_without_rubrics_has_no_rubric_section_or_filter(tmp_path: Path) -> None:
    page, html, report = scored_page(tmp_path, "--no-rubrics")
    assert "rubrics" not in report["summary"]
    assert not [attrs for _, attrs in page.elements if attrs.get("id") in ("rubrics", "f-rubric")]
    assert "Rubrics (apart from the call score)" not in html.split("<script")[0]


def test_a_slimmed_case_keeps_its_rubric_entries_cut_short() -> None:
    entry = {"call": 0, "plan_call": 0, "tool": "t", "argument": "a", "rubric": "r",
             "score": None, "passed": None, "reason": "x" * 5000, "cached": False,
             "unscored": "y" * 5000}  # fmt: skip
    case = {"id": "c", "passed": True, "kind": "tool", "baselines": {}, "rubrics": [entry] * 3}
    kept = slimmed(case_record(case, None), 10**6)
    assert len(kept["rubrics"]) == 3
    assert len(kept["rubrics"][0]["reason"]) == MAX_TEXT
    assert len(kept["rubrics"][0]["unscored"]) == MAX_TEXT
