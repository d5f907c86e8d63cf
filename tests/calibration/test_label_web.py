"""The labelling page's server: the token and Host checks, labels saved and refused, verdicts
kept out of the page until the case is labelled, resuming, several labellers, and case
content (model output) rendered inert."""

from __future__ import annotations

import re
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from label_pages import (
    ACCEPTED_NOTE,
    ATTRIBUTE,
    BASE,
    CASES,
    EXACT_REASON,
    MISMATCH_NOTE,
    PORT,
    PWN,
    SCRIPT,
    TOKEN,
    client_for,
    post_label,
    weather_view,
)
from toolscore.calibration.batches import BatchCase, Batches
from toolscore.calibration.page import case_page, visible
from toolscore.calibration.web import TOKEN_HEADER, create_app
from toolscore.cli.app import cli, example_dir
from toolscore.store import open_store


def stored(db: Path, labeller: str | None = None) -> list[tuple[str, str, str, str]]:
    with open_store(db, create=False) as store:
        return [
            (label.case_id, label.labeller, label.label, label.note)
            for label in Batches.of(store).labels(1, labeller)
        ]


# --- the token and the Host header ------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/case/1", "/done", "/next", "/static/label.js", "/nope"])
def test_every_request_without_the_token_is_refused(db: Path, path: str) -> None:
    with TestClient(create_app(db, 1, "alice", TOKEN), base_url=BASE) as client:
        assert client.get(path).status_code == 403
        assert client.get(f"{path}?token=wrong").status_code == 403
        client.cookies.set(f"toolscore-label-{PORT}", "wrong")
        refused = client.get(path)
        assert refused.status_code == 403
        assert "token" in refused.text
        assert client.get(f"{path}?token={TOKEN}").status_code in (200, 404)


def test_the_first_request_sets_a_strict_httponly_cookie(db: Path) -> None:
    with TestClient(create_app(db, 1, "alice", TOKEN), base_url=BASE) as client:
        first = client.get(f"/case/1?token={TOKEN}")
        assert first.status_code == 200
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"toolscore-label-{PORT}={TOKEN};")
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        assert first.headers["content-security-policy"].startswith("default-src 'self'")
        assert "frame-ancestors 'none'" in first.headers["content-security-policy"]
        assert first.headers["x-frame-options"] == "DENY"
        # Later requests are let in by the cookie alone, assets included.
        later = client.get("/case/2")
        assert later.status_code == 200
        assert "set-cookie" not in later.headers
        assert client.get("/static/label.js").status_code == 200
        assert client.get("/static/label.css").status_code == 200


@pytest.mark.parametrize(
    "host", ["evil.example", f"evil.example:{PORT}", "127.0.0.1:9999", f"127.0.0.2:{PORT}", ""]
)
def test_a_foreign_host_header_is_refused(db: Path, host: str) -> None:
    with TestClient(create_app(db, 1, "alice", TOKEN), base_url=BASE) as client:
        refused = client.get(f"/case/1?token={TOKEN}", headers={"host": host})
        assert refused.status_code == 403
        assert "answers only to" in refused.text
        allowed = client.get(f"/case/1?token={TOKEN}", headers={"host": f"localhost:{PORT}"})
        assert allowed.status_code == 200


def test_a_label_needs_the_token_in_its_header(db: Path) -> None:
    with client_for(db) as client:
        body = {"position": 1, "label": "correct"}
        assert client.post("/api/label", json=body).status_code == 403  # the cookie is not enough
        assert client.post(f"/api/label?token={TOKEN}", json=body).status_code == 403
        wrong = client.post("/api/label", json=body, headers={TOKEN_HEADER: "wrong"})
        assert wrong.status_code == 403
        other_origin = client.post(
            "/api/label", json=body, headers={TOKEN_HEADER: TOKEN, "origin": "http://evil.example"}
        )
        assert other_origin.status_code == 403
        assert stored(db) == []
        assert post_label(client, **body).status_code == 200
    assert stored(db) == [("weather", "alice", "correct", "")]


# --- saving labels ----------------------------------------------------------------------------


def test_a_label_is_saved_at_once_and_can_be_changed(db: Path) -> None:
    with client_for(db) as client:
        saved = post_label(client, position=2, label="incorrect", note="wrong order")
        assert saved.status_code == 200
        answer = saved.json()
        assert answer["case_id"] == "refund"
        assert answer["label"] == "incorrect"
        assert (answer["position"], answer["labelled"], answer["size"]) == (2, 1, 5)
        assert stored(db, "alice") == [("refund", "alice", "incorrect", "wrong order")]
        by_id = post_label(client, case_id="refund", label="unsure", note="not sure now")
        assert by_id.status_code == 200
        assert by_id.json()["labelled"] == 1
    assert stored(db, "alice") == [("refund", "alice", "unsure", "not sure now")]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"case_id": "nope", "label": "correct"}, "'nope' is not in batch 1"),
        ({"position": 9, "label": "correct"}, "no case at 9"),
        ({"position": 0, "label": "correct"}, "no case at 0"),
        ({"position": "1", "label": "correct"}, "position: must be a whole number"),
        ({"position": True, "label": "correct"}, "position: must be a whole number"),
        ({"position": 1, "case_id": "refund", "label": "correct"}, "not the case at position 1"),
        ({"label": "correct"}, "name the case"),
        ({"position": 1, "label": "maybe"}, "label: must be one of correct, incorrect, unsure"),
        ({"position": 1}, "label: must be one of"),
        ({"position": 1, "label": "correct", "note": 3}, "note: must be a string"),
        ({"position": 1, "label": "correct", "note": "x" * 4001}, "note: at most 4000"),
        ([1, 2], "the body must be a JSON object"),
    ],
)
def test_a_bad_label_is_refused_and_nothing_is_stored(db: Path, body: Any, message: str) -> None:
    with client_for(db) as client:
        refused = client.post("/api/label", json=body, headers={TOKEN_HEADER: TOKEN})
        assert refused.status_code == 400
        assert message in refused.json()["error"]
    assert stored(db) == []


def test_a_body_that_is_not_json_is_refused(db: Path) -> None:
    with client_for(db) as client:
        headers = {TOKEN_HEADER: TOKEN, "content-type": "application/json"}
        refused = client.post("/api/label", content=b"label=correct", headers=headers)
        assert refused.status_code == 400
        huge = client.post("/api/label", content=b" " * 70_000, headers=headers)
        assert huge.status_code == 413
    assert stored(db) == []


# --- what the page shows, and when ------------------------------------------------------------


def test_verdicts_are_not_in_the_page_until_the_case_is_labelled(db: Path) -> None:
    verdict_text = [
        EXACT_REASON.replace("'", "&#39;"),
        ACCEPTED_NOTE.replace("'", "&#39;"),
        "get_weather.city [casefold]",
        'id="verdicts"',
        "state-accepted",
        "passed",
    ]
    with client_for(db) as client:
        before = client.get("/case/1").text
        assert "Paris" in before
        assert "paris" in before
        assert "state-differs" in before  # the differing arguments are marked, neutrally
        assert "verdicts appear here once you label" in before
        for text in verdict_text:
            assert text not in before, text
        refund = client.get("/case/2").text
        assert MISMATCH_NOTE.replace("'", "&#39;") not in refund
        assert "state-rejected" not in refund
        assert "value_mismatch" not in refund

        assert post_label(client, position=1, label="incorrect").status_code == 200
        after = client.get("/case/1").text
        for text in verdict_text:
            assert text in after, text
        assert "disagrees" in after  # the rule scorer passed a case labelled incorrect
        assert 'aria-pressed="true"' in after
        assert "You labelled this case" in after
        # Labelling one case reveals that case only.
        assert MISMATCH_NOTE.replace("'", "&#39;") not in client.get("/case/2").text


def test_the_page_shows_progress_navigation_and_every_kind_of_row(db: Path) -> None:
    with client_for(db) as client:
        post_label(client, position=1, label="correct")
        page = client.get("/case/3").text
        assert "1 / 5 labelled" in page
        assert '<progress id="progress-bar" value="1" max="5">' in page
        assert 'href="/case/2"' in page
        assert 'href="/case/4"' in page
        assert 'href="/next?after=3"' in page
        assert "missing call" in page
        assert "extra call" in page
        assert "not valid JSON: Expecting value" in page
        assert "{&#34;q&#34;: " in page  # the raw arguments, as text
        assert "any one of" in page  # a `$any` alternative
        assert "Plan 1" in page  # the other plan (plans count from 0): make no call
        assert "make no call" in page
        assert "The case has no prompt." in page
        abstention = client.get("/case/4").text
        assert "The plan is to make <b>no call</b>." in abstention
        other_plan = client.get("/case/2").text
        assert "what an earlier call returned:" in other_plan
        assert "look#/order_id" in other_plan
        missing = client.get("/case/99")
        assert missing.status_code == 404
        assert "No case at position 99" in missing.text


def test_case_content_is_escaped(db: Path) -> None:
    with client_for(db) as client:
        for revealed in (False, True):
            page = client.get("/case/5").text
            assert SCRIPT not in page
            assert ATTRIBUTE not in page
            assert "<img" not in page
            assert "onerror=alert(1)&gt;" in page
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
            assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
            assert page.count("<script") == 1  # the page's own script, by its source
            assert re.search(r'<script src="/static/label\.js" defer></script>', page)
            assert "abc\u202edef" not in page
            assert "abc\\u202edef" in page  # a direction override is shown, not obeyed
            assert revealed == ('id="verdicts"' in page)
            post_label(client, position=5, label="incorrect", note=PWN)
        assert stored(db)[0][3] == PWN  # the note is stored as given
        assert "&lt;img src=x" in client.get("/case/5").text


def test_calls_made_in_another_order_are_pointed_out() -> None:
    view = weather_view()
    view["plans"] = [[{"name": "get_order", "args": {"order_id": f"order-{n}"}} for n in (1, 2)]]
    view["produced"] = [
        {"name": "get_order", "args": {"order_id": f"order-{n}"}, "raw_args": None, "error": None}
        for n in (2, 1)
    ]
    view["differences"] = []
    case = BatchCase(1, "swapped", "get_order [call order]", dict(CASES[0][2]), view)
    view["pairs"] = [[1, 0], [0, 1]]
    page = case_page(case, None)
    assert page.reordered
    assert [(row.plan_call, row.call) for row in page.rows] == [(0, 1), (1, 0)]
    assert all(arg.state == "same" for row in page.rows for arg in row.args)
    view["pairs"] = [[0, 0], [1, 1]]
    assert not case_page(case, None).reordered


def test_visible_writes_invisible_characters_as_code_points() -> None:
    assert visible("plain text\n\tnext") == "plain text\n\tnext"
    assert visible("a\u202eb\u200bc") == "a\u27e8U+202E\u27e9b\u27e8U+200B\u27e9c"
    assert visible("Zürich") == "Zürich"


# --- resuming, and several labellers ----------------------------------------------------------


def test_home_resumes_at_the_first_unlabelled_case(db: Path) -> None:
    with client_for(db) as client:
        assert client.get("/", follow_redirects=False).headers["location"] == "/case/1"
        for position in (1, 2):
            post_label(client, position=position, label="correct")
        resumed = client.get("/")
        assert resumed.url.path == "/case/3"
        assert "2 / 5 labelled" in resumed.text
        post_label(client, position=4, label="unsure")
        post_label(client, position=5, label="unsure")
        assert client.get("/next?after=4").url.path == "/case/3"  # wraps round
        assert client.get("/next?after=1").url.path == "/case/3"
        post_label(client, position=3, label="incorrect")
        done = client.get("/")
        assert done.url.path == "/done"
        assert "All 5 cases labelled" in done.text
        assert f"toolscore calibrate 1 --db {db}" in done.text
        assert client.get("/next?after=2").url.path == "/done"


def test_labellers_are_kept_apart(db: Path) -> None:
    with client_for(db, "alice") as alice, client_for(db, "bob") as bob:
        assert post_label(alice, position=1, label="correct", note="fine").status_code == 200
        assert post_label(alice, position=2, label="incorrect").status_code == 200
        # Bob does not see Alice's label before giving his own (it could anchor him).
        before = bob.get("/case/1").text
        assert "alice" not in before
        assert "0 / 5 labelled" in before
        assert bob.get("/").url.path == "/case/1"
        assert post_label(bob, position=1, label="unsure").status_code == 200
        after = bob.get("/case/1").text
        assert "Other labellers" in after
        assert "alice" in after
        assert "fine" in after
        assert bob.get("/").url.path == "/case/2"
        assert alice.get("/").url.path == "/case/3"
        assert "bob" in alice.get("/done").text
    assert stored(db, "alice") == [
        ("weather", "alice", "correct", "fine"),
        ("refund", "alice", "incorrect", ""),
    ]
    assert stored(db, "bob") == [("weather", "bob", "unsure", "")]


def test_every_case_of_a_real_batch_renders(tmp_path: Path) -> None:
    example = tmp_path / "support"
    shutil.copytree(example_dir(), example)
    db = tmp_path / "results.db"
    runner = CliRunner()
    scored = runner.invoke(
        cli,
        ["score", "--specs", str(example / "tools.yaml"), "--cases", str(example / "cases.jsonl"),
         "--outputs", str(example / "outputs.jsonl"), "--save", "--db", str(db)],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    sampled = runner.invoke(cli, ["disagreements", "1", "--db", str(db)])
    assert sampled.exit_code == 0, sampled.output
    with open_store(db, create=False) as store:
        size = Batches.of(store).info(1).size
    assert size > 0
    with client_for(db, batch=1) as client:
        for position in range(1, size + 1):
            before = client.get(f"/case/{position}")
            assert before.status_code == 200
            assert 'id="verdicts"' not in before.text
            assert post_label(client, position=position, label="correct").status_code == 200
            after = client.get(f"/case/{position}")
            assert 'id="verdicts"' in after.text
        assert client.get("/").url.path == "/done"


# --- the command ------------------------------------------------------------------------------


def test_the_command_refuses_a_missing_store_or_batch(tmp_path: Path, db: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["label", "1", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 2
    assert "no results store here" in missing.output
    unknown = runner.invoke(cli, ["label", "7", "--db", str(db)])
    assert unknown.exit_code == 2
    assert "no batch 7" in unknown.output
    nameless = runner.invoke(cli, ["label", "1", "--db", str(db), "--labeller", "  "])
    assert nameless.exit_code == 2
    assert "--labeller: must be a non-empty name" in nameless.output
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        busy = runner.invoke(cli, ["label", "1", "--db", str(db), "--port", port])
    assert busy.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in busy.output


@pytest.mark.parametrize("position", ["999999999999999999999999", "9223372036854775808", "0", "7"])
def test_a_case_outside_the_batch_is_not_found_whatever_its_number(db: Path, position: str) -> None:
    # Issue 11, item 7: a position beyond 64 bits was passed to SQLite (500, OverflowError).
    with client_for(db) as client:
        page = client.get(f"/case/{position}")
        assert page.status_code == 404
        assert position in page.text
        label = post_label(client, position=int(position), label="correct")
        assert label.status_code == 400
        assert label.json()["error"].startswith("position: ")
