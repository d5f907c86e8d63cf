"""Rubric results in the HTML report: the "Rubrics (apart from the call score)" tables carry
the report JSON's numbers, the cases carry their rubric entries for the case browser, and
agent text in a rubric entry (an argument name, a reason quoting a produced value) never
reaches the markup unescaped. The browser side is in test_report_html_browser.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from test_report_html import PWN, Page, number, run
from toolscore.html_report.html import MAX_TEXT, case_record, slimmed

SPEC = f"""\
version: "x"
rubrics:
  names_order: {{kind: mentions, argument: order_id}}
  short: {{kind: length, max: 12}}
tools:
  refund:
    args:
      order_id: exact
      '{PWN}': {{kind: text, rubric: names_order}}
      memo: {{kind: text, rubric: short}}
"""
"""An argument whose name is a payload; `names_order` quotes the produced order id (agent
text) in its reason when the note does not mention it."""

CASES = [
    {"id": case_id, "prompt": "p", "plans": [[{"name": "refund", "args": {"order_id": "o-1"}}]]}
    for case_id in ("ok", "bad", "unscored", "absent", "no-rubric")
]
OUTPUTS = [
    {"id": "ok", "calls": [{"name": "refund", "args": {"order_id": "o-1", PWN: "for o-1",
                                                      "memo": "fine"}}]},
    {"id": "bad", "calls": [{"name": "refund", "args": {"order_id": PWN, PWN: "refund"}}]},
    {"id": "unscored", "calls": [{"name": "refund", "args": {"order_id": "o-1", PWN: 5}}]},
    {"id": "absent", "calls": [{"name": "refund", "args": {"order_id": "o-1", "memo": "a" * 20}}]},
    {"id": "no-rubric", "calls": []},
]  # fmt: skip
# Rubric entries by case: ok (names_order passed, short passed); bad (names_order failed);
# unscored (names_order unscored: a number); absent (names_order unscored: not sent, short
# failed); no-rubric (no produced call: both unscored).


def write_rubric_inputs(folder: Path) -> dict[str, Path]:
    """The spec, cases and outputs above, in `folder`."""
    paths = {name: folder / f"{name}.jsonl" for name in ("cases", "outputs")}
    paths["specs"] = folder / "tools.yaml"
    paths["specs"].write_text(SPEC)
    for name, rows in (("cases", CASES), ("outputs", OUTPUTS)):
        paths[name].write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return paths


def scored_page(folder: Path, *extra: str) -> tuple[Page, str, dict[str, Any]]:
    """The page, its HTML and the report JSON of the inputs above."""
    paths = write_rubric_inputs(folder)
    page_path, report_path = folder / "report.html", folder / "report.json"
    result = run(
        "score", "--specs", str(paths["specs"]), "--cases", str(paths["cases"]),
        "--outputs", str(paths["outputs"]), "--json", str(report_path), "--html", str(page_path),
        *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    html = page_path.read_text()
    return Page(html), html, orjson.loads(report_path.read_bytes())


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
