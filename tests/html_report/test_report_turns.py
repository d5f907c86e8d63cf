"""A run with conversation cases writes its HTML report with the conversations turn by
turn: the summary's turn accuracy with its clustered interval and the first failing turns,
and in the case browser each turn's verdict, plan, calls, rows of the plan beside the calls
and mismatches, the first failing turn marked; an agent's hostile text in a later turn
stays inert."""

from __future__ import annotations

from importlib import resources
from typing import Any

import orjson
import pytest

from html_pages import PWN, Page, number, run, score_args, write_conversations
from toolscore.html_report.html import case_record, slimmed, turn_blocks, turns_view


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """The page and the report JSON of the conversations above."""
    folder = tmp_path_factory.mktemp("turns")
    paths = write_conversations(folder)
    report, page = folder / "report.json", folder / "r.html"
    result = run(*score_args(paths), "--json", str(report), "--html", str(page))
    assert result.exit_code == 0, result.output
    return page.read_text(), orjson.loads(report.read_bytes())


def records(html: str) -> dict[str, dict[str, Any]]:
    return {record["id"]: record for record in Page(html).data("case-data")}


def test_hostile_text_of_a_later_turn_stays_inert(scored: tuple[str, dict[str, Any]]) -> None:
    html, _ = scored
    assert PWN not in html
    assert "\\u003cimg src=x" in html  # it is in the case data, escaped as JSON
    talk = records(html)["talk"]
    second = talk["turns"][1]
    rows = [talk["layout"]["rows"][k] for k in second["rows"]]
    assert [row["call"] for row in rows] == [1]
    (order_id,) = [arg for arg in rows[0]["args"] if arg["key"] == "order_id"]
    assert orjson.loads(order_id["produced"]["texts"][0]) == PWN


def test_each_turn_has_its_verdict_plan_calls_and_rows(
    scored: tuple[str, dict[str, Any]],
) -> None:
    html, report = scored
    entries = {case["id"]: case for case in report["cases"]}
    talk = records(html)["talk"]
    assert [t["index"] for t in talk["turns"]] == [0, 1, 2]
    assert [t["passed"] for t in talk["turns"]] == [True, False, True]
    assert [t["first"] for t in talk["turns"]] == [False, True, False]
    assert [t["calls"] for t in talk["turns"]] == [[0, 1], [1, 2], [2, 2]]
    assert [t["plan"] for t in talk["turns"]] == [t["plan"] for t in entries["talk"]["turns"]]
    layout = talk["layout"]["rows"]
    assert [[layout[k]["plan_call"] for k in t["rows"]] for t in talk["turns"]] == [[0], [1], []]
    assert [t["plan_offset"] for t in talk["turns"]] == [0, 1, 2]
    assert [m["code"] for m in talk["turns"][1]["mismatches"]] == ["value_mismatch"]
    assert talk["turns"][0]["mismatches"] == []
    assert talk["first_failed_turn"] == 1


def test_a_missing_call_is_in_its_turn_and_calls_beyond_the_last_turn_in_none(
    scored: tuple[str, dict[str, Any]],
) -> None:
    found = records(scored[0])
    silent = found["silent"]
    rows = silent["layout"]["rows"]
    first = [rows[k] for k in silent["turns"][0]["rows"]]
    assert [(row["kind"], row["plan_call"], row["call"]) for row in first] == [("missing", 0, None)]
    assert [rows[k]["call"] for k in silent["turns"][1]["rows"]] == [0]
    assert silent["turns"][0]["first"] is True
    beyond = found["beyond"]
    inside = {k for t in beyond["turns"] for k in t["rows"]}
    left = [row for k, row in enumerate(beyond["layout"]["rows"]) if k not in inside]
    assert [(row["kind"], row["call"]) for row in left] == [("extra", 1)]
    assert beyond["first_failed_turn"] == 1  # the extra turn, at its own index
    assert "turns" not in found["plain"]


def test_the_summary_shows_turn_accuracy_and_the_first_failing_turns(
    scored: tuple[str, dict[str, Any]],
) -> None:
    html, report = scored
    summary = report["summary"]
    page = Page(html)
    (section,) = page.with_attr("data-conversations")
    assert number(section["data-conversations"]) == summary["conversations"] == 3
    assert number(section["data-failed"]) == 3
    assert number(section["data-passed"]) == 0
    rate = summary["turn_accuracy"]
    (row,) = [a for a in page.with_attr("data-metric") if a["data-metric"] == "turn_accuracy"]
    assert number(row["data-value"]) == rate["value"]
    assert (number(row["data-passed"]), number(row["data-n"])) == (rate["passed"], rate["n"])
    assert [number(row["data-lo"]), number(row["data-hi"])] == rate["ci95"]
    (clustered,) = [
        a for a in page.with_attr("data-metric") if a["data-metric"] == "turn_accuracy_clustered"
    ]
    assert [number(clustered["data-lo"]), number(clustered["data-hi"])] == rate["clustered"]["ci95"]
    assert number(clustered["data-se"]) == rate["clustered"]["se"]
    bars = [
        (a["data-first-failed"], number(a["data-count"]))
        for a in page.with_attr("data-first-failed")
    ]
    assert bars == [("turn 0", 1), ("turn 1", 2)]  # in turn order, not by count
    assert {f"turn {k}": v for k, v in summary["first_failed_turn"].items()} == dict(bars)
    assert any(a.get("id") == "f-turn" for a in page.with_attr("id"))


def test_a_run_without_conversations_has_no_turn_section() -> None:
    assert turns_view({"cases": 1, "passed": 1}) is None


def test_the_first_failing_turns_past_the_cap_are_added_up() -> None:
    summary = {
        "conversations": 60,
        "first_failed_turn": {str(k): 1 for k in range(60)},
        "turn_accuracy": {"value": 0.5, "n": 2, "passed": 1, "ci95": [0.1, 0.9],
                          "clustered": {"by": "case", "se": 0.1, "ci95": [0.3, 0.7]}},
    }  # fmt: skip
    view = turns_view(summary)
    assert view is not None
    labels = [bar.label for bar in view["first_failed"].bars]
    assert labels[:3] == ["turn 0", "turn 1", "turn 2"]
    assert labels[-1] == "a later turn"
    assert view["first_failed"].bars[-1].count == 10
    assert view["failed"] == 60


def test_a_report_json_alone_still_shows_each_turn_without_rows() -> None:
    entry = {
        "id": "c", "passed": False, "kind": "tool", "plan": None, "first_failed_turn": 0,
        "mismatches": [{"code": "missing_turn", "call": None, "plan_call": None, "path": "",
                        "message": PWN}],
        "turns": [{"index": 0, "passed": False, "plan": None, "calls": [0, 0],
                   "mismatches": [{"code": "missing_turn", "call": None, "plan_call": None,
                                   "path": "", "message": PWN}],
                   "state": {"passed": False, "checks": [{"name": "refunded", "passed": False}]},
                   "checks": [{"name": "said-sorry", "passed": True, "reason": PWN}]}],
    }  # fmt: skip
    record = case_record(entry, None)
    (turn,) = record["turns"]
    assert turn["first"] is True
    assert "rows" not in turn
    assert turn["state"]["checks"][0]["name"] == "refunded"
    assert turn["checks"][0]["reason"] == PWN
    small = slimmed(record, 10**6)
    assert small["turns"][0]["mismatches"][0]["code"] == "missing_turn"
    assert small["first_failed_turn"] == 0


def test_a_turn_entry_that_is_not_an_object_is_skipped() -> None:
    entry = {"id": "c", "turns": ["junk", {"index": 0, "passed": True, "calls": "x"}]}
    layout = {"rows": [{"call": 0, "plan_call": 0}]}
    (turn,) = turn_blocks(entry, layout, {"turn_plan_calls": [[0, 1], [0, 1]]})
    assert turn["rows"] == []  # a malformed calls range is empty, not a crash


def test_the_browser_script_renders_turns_from_text_nodes_only() -> None:
    script = (resources.files("toolscore.html_report") / "static" / "report.js").read_text()
    assert "function turnBlocks" in script
    assert "first failed turn" in script
    assert "State after turn" in script
    for unsafe in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert unsafe not in script
