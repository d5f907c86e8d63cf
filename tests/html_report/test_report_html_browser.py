"""The HTML report in a real browser, opened from disk with every network request aborted:
it renders, its filters and search work, a case opens beside its plan with the differing
argument marked, nothing leaves the page, and agent text (a prompt, a tool name, an argument
value, a case id) and a calibration labeller's name stay inert.

Chromium comes from the system, as for the labelling page (`test_label_browser.chromium`):
without it the test skips on a developer's machine and fails under CI. Firefox is not tried.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Route, expect

from html_pages import (
    CONVERSATION_CASES,
    PWN,
    run,
    score_args,
    scored_page,
    write_conversations,
    write_inputs,
)
from label_pages import CHROMIUM_FLAGS, WAIT_MS, chromium
from toolscore.html_report.embed import Caps, select_cases
from toolscore.html_report.html import Provenance, report_html
from toolscore.html_report.page import write_page
from toolscore.html_report.sources import ReportFile, details_from_files
from toolscore.specs.loading import load_specs


@pytest.fixture
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    executable = chromium()
    flags = CHROMIUM_FLAGS + (["--no-sandbox"] if os.geteuid() == 0 else [])
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=flags)
        try:
            yield launched
        finally:
            launched.close()


def hostile_page(folder: Path) -> tuple[Path, dict[str, Any]]:
    """The report page of the hostile inputs, with a calibration block whose labeller name
    is a payload; and the report JSON it was made from."""
    paths = write_inputs(folder)
    report_path = folder / "report.json"
    assert run(*score_args(paths), "--json", str(report_path)).exit_code == 0
    caps = Caps()
    report = ReportFile(str(report_path))
    selection = select_cases(report.cases(), caps)
    report.close()
    chosen = {case["id"]: case for case in selection.cases(caps)}
    specs = load_specs(paths["specs"])
    details = details_from_files(specs, str(paths["cases"]), str(paths["outputs"]), chosen)
    head = dict(report.head)
    head["calibration"] = {
        "labellers": [PWN, "bob"],
        "metrics": [{"name": "scorer-bug rate", "value": 0.1, "n": 10, "ci95": [0.02, 0.4],
                     "note": PWN}],
    }  # fmt: skip
    page_path = folder / "report.html"
    write_page(str(page_path), report_html(head, selection, caps, details, Provenance(label=PWN)))
    return page_path, orjson.loads(report_path.read_bytes())


class Watched:
    """A page whose every request is recorded and, unless it reads a file, aborted; and the
    dialogs, script errors and console errors it shows."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.route("**/*", self._route)
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("dialog", self._dialog)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _route(self, route: Route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            route.abort()

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(message.text)


def rows(page: Page) -> int:
    return page.locator("#case-rows tr").count()


def test_the_report_works_offline_and_agent_text_stays_inert(
    browser: Browser, tmp_path: Path
) -> None:
    page_path, report = hostile_page(tmp_path)
    cases = report["cases"]
    watched = Watched(browser.new_page(viewport={"width": 1280, "height": 900}))
    page = watched.page
    page.goto(page_path.as_uri())
    expect(page.locator("h1")).to_contain_text("toolscore report")
    expect(page.locator("#run-label")).to_have_text(PWN)
    expect(page.locator("#case-rows tr")).to_have_count(len(cases))
    expect(page.locator("#shown")).to_contain_text(f"{len(cases)} of the {len(cases)} cases")

    check_filters(page, cases)
    check_a_case_opens_beside_its_plan(page)
    expect(page.locator("#calibration .labeller").first).to_have_text(PWN)
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    page.emulate_media(media="print")
    expect(page.locator("#filters")).to_be_hidden()
    expect(page.locator("#metrics")).to_be_visible()

    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0
    assert page.locator("#case-detail script").count() == 0
    assert watched.dialogs == []
    assert watched.errors == []
    assert watched.requests == [page_path.as_uri()]
    page.close()


def check_filters(page: Page, cases: list[dict[str, Any]]) -> None:
    """Each filter, and the search by id, leaves the rows it should."""
    failing = [c for c in cases if not c["passed"]]
    page.select_option("#f-verdict", "failed")
    expect(page.locator("#case-rows tr")).to_have_count(len(failing))
    page.select_option("#f-tool", PWN)
    expect(page.locator("#case-rows tr")).to_have_count(1)
    expect(page.locator("#case-rows tr code.case-id")).to_have_text("evil-tool")
    page.click("#f-reset")
    expect(page.locator("#case-rows tr")).to_have_count(len(cases))
    value_mismatch = [
        c for c in cases if any(m["code"] == "value_mismatch" for m in c["mismatches"])
    ]
    page.select_option("#f-code", "value_mismatch")
    expect(page.locator("#case-rows tr")).to_have_count(len(value_mismatch))
    page.select_option("#f-code", "")
    page.select_option("#f-tag", "beta")
    expect(page.locator("#case-rows tr")).to_have_count(3)
    page.select_option("#f-tag", "")
    page.select_option("#f-kind", "abstention")
    expect(page.locator("#case-rows tr")).to_have_count(1)
    page.select_option("#f-kind", "")
    page.select_option("#f-arg", "refund.order_id")
    assert 0 < rows(page) < len(cases)
    page.select_option("#f-arg", "")
    page.select_option("#f-disagree", "exact")
    disagree_exact = [c for c in cases if c["baselines"]["exact"] != c["passed"]]
    expect(page.locator("#case-rows tr")).to_have_count(len(disagree_exact))
    page.select_option("#f-disagree", "")

    page.fill("#f-search", "evil")
    expect(page.locator("#case-rows tr")).to_have_count(2)
    page.fill("#f-search", "<img")
    expect(page.locator("#case-rows tr")).to_have_count(1)
    expect(page.locator("#case-rows tr code.case-id")).to_have_text(PWN)


def check_a_case_opens_beside_its_plan(page: Page) -> None:
    """A failing case opens with its plan beside the calls, the differing argument marked
    rejected and the others same; payloads show as text."""
    page.fill("#f-search", "evil-prompt")
    page.click("#case-rows tr")

    detail = page.locator("#case-detail")
    expect(detail).to_be_visible()
    expect(detail.locator(".text")).to_have_text(PWN)  # the prompt, as text
    order_id = detail.locator('tr.arg[data-arg="order_id"]')
    expect(order_id).to_have_class("arg state-rejected")
    expect(order_id.locator("td").nth(0)).to_contain_text('"o-1"')
    expect(order_id.locator("td").nth(1)).to_contain_text("onerror")
    expect(detail.locator('tr.arg[data-arg="amount"]')).to_have_class("arg state-same")
    # Each argument's rule, as the labelling page shows it (the page's one copy, by tool).
    expect(detail.locator("tr.spec code")).to_have_text(
        ["order_id: exact", "amount: number tol=0.01; accepts differences up to 0.01 (cents)"]
    )
    # Calls and plans count from 0, as in the report JSON and the terminal's mismatch lines.
    expect(detail.locator("ul.mismatches li")).to_contain_text(
        "value_mismatch call 0 /order_id [exact]: "
    )
    expect(detail.locator("thead th").nth(1)).to_have_text("expected (plan 0)")
    expect(detail.locator("tr.name span.index")).to_have_text(["plan call 0", "call 0"])
    # Its partial credit and efficiency, as the report JSON has them.
    expect(detail.locator("p.partial")).to_have_text(
        "partial credit: f1 0.00, 0 of 1 plan calls matched by 1 produced "
        "(precision 0.00, recall 0.00)"
    )
    expect(detail.locator("p.efficiency")).to_have_text(
        "efficiency: 1 extra call(s), 0 excused by a relaxation, 0 repeated"
    )

    page.fill("#f-search", "evil-tool")
    page.click("#case-rows tr")
    expect(detail.locator("code.tool").filter(has_text="onerror")).to_have_count(1)
    page.fill("#f-search", "<img")
    page.click("#case-rows tr")
    expect(detail.locator("h3 code.case-id")).to_have_text(PWN)


def test_the_compare_page_renders_offline(browser: Browser, tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    db = str(tmp_path / "results.db")
    run(*score_args(paths), "--db", db)
    paths["outputs"].write_text(paths["outputs"].read_text().replace('"O-3"', '"o-3"'))
    run(*score_args(paths), "--db", db)
    page_path = tmp_path / "compare.html"
    assert run("compare", "1", "2", "--db", db, "--html", str(page_path)).exit_code == 0
    watched = Watched(browser.new_page())
    page = watched.page
    page.goto(page_path.as_uri())
    expect(page.locator("#paired tr[data-paired]")).to_have_count(4)
    expect(page.locator("#flips tr[data-flip] code").first).to_have_text(PWN)
    assert page.evaluate("window.__pwned") is None
    assert watched.dialogs == []
    assert watched.errors == []
    assert watched.requests == [page_path.as_uri()]
    page.close()


def test_a_replayed_case_shows_its_state_diff_and_replayed_calls(
    browser: Browser, tmp_path: Path
) -> None:
    example = Path(__file__).parents[2] / "src" / "toolscore" / "examples" / "support" / "env"
    page_path = tmp_path / "report.html"
    result = run(
        "score", "--specs", str(example / "tools.yaml"), "--cases", str(example / "cases.jsonl"),
        "--outputs", str(example / "outputs.jsonl"), "--env", "--html", str(page_path),
    )  # fmt: skip
    assert page_path.exists(), result.output
    watched = Watched(browser.new_page())
    page = watched.page
    page.goto(page_path.as_uri())
    expect(page.locator("#outcomes")).to_be_visible()
    page.fill("#f-search", "refund-twice")
    page.click("#case-rows tr")
    detail = page.locator("#case-detail")
    expect(detail).to_contain_text("state failed")
    expect(detail.locator("h5").filter(has_text="Replayed calls")).to_have_count(1)
    expect(detail.locator("ol.replayed li")).to_have_count(2)
    expect(detail.locator("ol.replayed li span.index")).to_have_text(["call 0", "call 1"])
    expect(detail.locator(".diff").first).to_be_visible()
    assert watched.errors == []
    assert watched.requests == [page_path.as_uri()]
    page.close()


def test_a_run_without_env_shows_required_outputs_not_a_failed_state(
    browser: Browser, tmp_path: Path
) -> None:
    (tmp_path / "spec.yaml").write_text("tools:\n  lookup:\n    args: {account: exact}\n")
    plan = [{"id": "look", "name": "lookup", "args": {"account": "a"}}]
    case = {"id": "wrong", "plans": [plan], "required_outputs": [{"$ref": "look#/balance"}]}
    call = {"name": "lookup", "args": {"account": "a"}, "result": {"balance": 1205.0}}
    output = {"id": "wrong", "calls": [call], "response": "It is 1250.0 <b>EUR</b>"}
    (tmp_path / "cases.jsonl").write_bytes(orjson.dumps(case) + b"\n")
    (tmp_path / "outputs.jsonl").write_bytes(orjson.dumps(output) + b"\n")
    page_path = tmp_path / "report.html"
    run(
        "score", "--specs", str(tmp_path / "spec.yaml"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--html", str(page_path),
    )  # fmt: skip
    watched = Watched(browser.new_page())
    page = watched.page
    page.goto(page_path.as_uri())
    page.click("#case-rows tr")
    detail = page.locator("#case-detail")
    expect(detail.locator("h4").filter(has_text="Required outputs")).to_have_count(1)
    held = '{"$ref": "look#/balance"} (held 1205.0)'
    expect(detail).to_contain_text(f"missing in the response: {held}")
    expect(detail).not_to_contain_text("state failed")
    assert watched.errors == []
    page.close()


def test_rubric_entries_open_inert_and_the_rubric_filter_works(
    browser: Browser, tmp_path: Path
) -> None:
    """A case's rubric entries show their argument and reason (agent text) as text; the
    rubric filter keeps the cases with a failed, an unscored or only passing rubrics."""
    _, _, report = scored_page(tmp_path)
    page_path = tmp_path / "report.html"
    entries = {case["id"]: case.get("rubrics", []) for case in report["cases"]}
    failed = [i for i, es in entries.items() if any(e["passed"] is False for e in es)]
    unscored = [i for i, es in entries.items() if any(e["unscored"] for e in es)]
    assert (sorted(failed), sorted(unscored)) == (
        ["absent", "bad"],
        ["absent", "bad", "no-rubric", "unscored"],
    )
    watched = Watched(browser.new_page(viewport={"width": 1280, "height": 900}))
    page = watched.page
    page.goto(page_path.as_uri())
    expect(page.locator("#rubrics-rubric tr[data-rubric-rubric]")).to_have_count(2)
    expect(page.locator("#rubrics-argument code").filter(has_text="onerror")).to_have_count(1)
    for wanted, ids in (
        ("failed", failed),
        ("unscored", unscored),
        ("failed-or-unscored", sorted(set(failed) | set(unscored))),
        ("passed", ["ok"]),
    ):
        page.select_option("#f-rubric", wanted)
        expect(page.locator("#case-rows tr")).to_have_count(len(ids))
        shown = page.locator("#case-rows code.case-id").all_inner_texts()
        assert sorted(shown) == sorted(ids), wanted
    page.select_option("#f-rubric", "failed")
    page.fill("#f-search", "bad")
    page.click("#case-rows tr")
    detail = page.locator("#case-detail")
    rows = detail.locator("table.rubric-entries tr.rubric-entry")
    expect(rows).to_have_count(2)  # names_order failed; short unscored (no memo sent)
    failing = detail.locator("tr.rubric-entry.failed")
    expect(failing).to_have_count(1)
    expect(failing.locator("td").nth(0)).to_have_text("names_order")
    expect(failing.locator("td").nth(1).locator("code")).to_have_text(f"refund.{PWN}")
    expect(failing.locator("td").nth(1).locator("span.index")).to_have_text("plan call 0, call 0")
    expect(failing.locator("td.reason")).to_contain_text('<img src=x onerror="window.__pwned=1"')
    expect(failing.locator("td").nth(2)).to_have_text("0")
    expect(failing.locator("td").nth(5)).to_have_text("fresh")
    page.click("#f-reset")
    page.fill("#f-search", "absent")
    page.click("#case-rows tr")
    expect(rows).to_have_count(2)
    expect(detail.locator("tr.rubric-entry.unscored td.reason")).to_have_text(
        "the produced call does not send this argument"
    )
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0
    assert page.locator("#case-detail script").count() == 0
    assert watched.dialogs == []
    assert watched.errors == []
    assert watched.requests == [page_path.as_uri()]
    page.close()


def test_a_conversation_opens_turn_by_turn(browser: Browser, tmp_path: Path) -> None:
    """A conversation opens turn by turn, its first failing turn marked, the hostile value
    of a later turn's call shown as text; the first-failing-turn filter keeps its cases."""
    paths = write_conversations(tmp_path)
    page_path = tmp_path / "r.html"
    assert run(*score_args(paths), "--html", str(page_path)).exit_code == 0
    watched = Watched(browser.new_page(viewport={"width": 1280, "height": 900}))
    page = watched.page
    page.goto(page_path.as_uri())
    expect(page.locator("#first-failed-turn g.bar")).to_have_count(2)
    page.select_option("#f-turn", "1")
    expect(page.locator("#case-rows tr code.case-id")).to_have_text(["talk", "beyond"])
    page.select_option("#f-turn", "")
    expect(page.locator("#case-rows tr")).to_have_count(len(CONVERSATION_CASES))
    page.fill("#f-search", "talk")
    page.click("#case-rows tr")
    detail = page.locator("#case-detail")
    turns = detail.locator("section.turn")
    expect(turns).to_have_count(3)
    expect(turns.nth(1)).to_have_class("turn failed first-failed")
    expect(turns.nth(1).locator(".badge.first")).to_have_text("first failed turn")
    expect(turns.nth(1).locator("p.hint").first).to_have_text("plan 0; call 1")
    expect(turns.nth(1).locator("tr.name span.index")).to_have_text(["plan call 0", "call 1"])
    expect(turns.nth(1).locator('tr.arg[data-arg="order_id"] td').nth(1)).to_contain_text("onerror")
    expect(turns.nth(1).locator("ul.mismatches li")).to_contain_text("value_mismatch call 1")
    expect(turns.nth(2).locator("p.expectation")).to_contain_text("make no call")
    page.fill("#f-search", "beyond")
    page.click("#case-rows tr")
    expect(detail.locator("section.turn.beyond tr.name")).to_contain_text("call 1")
    expect(detail.locator("section.turn.beyond .badge.first")).to_have_text("first failed turn: 1")
    page.screenshot(path=str(tmp_path / "turns.png"), full_page=True)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0
    assert watched.errors == []
    assert watched.dialogs == []
    page.close()
