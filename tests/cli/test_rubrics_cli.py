"""A judge rubric end to end through the command line, against the scripted OpenAI-compatible
server of tests/fake_openai.py: `score --db` keeps its judgments in the results store, a
second `score` and a `rescore` reuse them, `--refresh-rubrics` asks again, `rescore
--rubrics-only` changes nothing but rubric results, faults leave texts unscored, a missing
key stops the run before anything is sent, and the key is never written anywhere.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from fake_openai import FakeOpenAI, Reply, judge_answer, serving
from toolscore.cli.app import cli

KEY_VAR = "TOOLSCORE_TEST_CLI_JUDGE_KEY"
SECRET = "sk-test-cli-9d41c07be2a54f3e"
TOKENS = 40
"""Tokens the fake judge reports for each answer."""

SPEC = """\
version: "j1"
rubrics:
  apology:
    kind: judge
    version: 1
    text: "Does the note apologise to the customer?"
    base_url: {url}
    model: judge-1
    api_key_env: {key_var}
    scale: [1, 5]
    threshold: 4
    timeout: {timeout}
    retries: 0
  short: {{kind: length, max: 80}}
tools:
  refund:
    version: 1
    args:
      order_id: exact
      note: {{kind: text, rubric: apology}}
      memo: {{kind: text, rubric: short}}
"""

CASES: list[dict[str, Any]] = [
    {"id": "sorry", "prompt": "Refund o-1, it broke", "plans": [[
        {"name": "refund", "args": {"order_id": "o-1", "note": "We are sorry."}}]]},
    {"id": "curt", "prompt": "Refund o-2", "plans": [[
        {"name": "refund", "args": {"order_id": "o-2"}}]]},
    {"id": "wrong", "prompt": "Refund o-3", "plans": [[
        {"name": "refund", "args": {"order_id": "o-3"}}]]},
    {"id": "silent", "prompt": "Refund o-4", "plans": [[
        {"name": "refund", "args": {"order_id": "o-4"}}]]},
]  # fmt: skip

OUTPUTS: list[dict[str, Any]] = [
    {"id": "sorry", "calls": [{"name": "refund", "args": {
        "order_id": "o-1", "note": "Sorry, refunded o-1.", "memo": "ok"}}]},
    {"id": "curt", "calls": [{"name": "refund", "args": {
        "order_id": "o-2", "note": "Refunded.", "memo": "x" * 100}}]},
    {"id": "wrong", "calls": [{"name": "refund", "args": {
        "order_id": "O-3", "note": "So sorry about o-3."}}]},
    {"id": "silent", "calls": []},
]  # fmt: skip


def judge_by_apology(body: dict[str, Any], number: int) -> Reply:
    """5 when the produced note says sorry, else 2."""
    user = body["messages"][-1]["content"]
    produced = user.split("<produced>")[-1]
    if "sorry" in produced.casefold():
        return judge_answer('{"score": 5, "reason": "it apologises"}', TOKENS)
    return judge_answer('{"score": 2, "reason": "no apology"}', TOKENS)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    for fake in serving():
        fake.chat = judge_by_apology
        yield fake


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setenv(KEY_VAR, SECRET)
    # A run without --db keeps judgments in the default store: one of this test's own.
    monkeypatch.setenv("TOOLSCORE_DB", str(tmp_path / "default" / "results.db"))
    return SECRET


def write_inputs(
    directory: Path, url: str, text: str | None = None, timeout: float = 5, name: str = "tools"
) -> Path:
    """The spec file (judging at `url`, its rubric text replaced by `text` when given), the
    cases and the outputs; returns the spec file's path."""
    spec = SPEC.format(url=url, key_var=KEY_VAR, timeout=timeout)
    if text is not None:
        spec = spec.replace("Does the note apologise to the customer?", text)
    path = directory / f"{name}.yaml"
    path.write_text(spec)
    (directory / "cases.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in CASES))
    (directory / "outputs.jsonl").write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in OUTPUTS))
    return path


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def score(directory: Path, spec: Path, *extra: str) -> tuple[Result, dict[str, Any]]:
    """`toolscore score` with the report written to report.json; the result and the report."""
    report = directory / "report.json"
    report.unlink(missing_ok=True)
    result = invoke(
        "score", "--specs", str(spec),
        "--cases", str(directory / "cases.jsonl"), "--outputs", str(directory / "outputs.jsonl"),
        "--json", str(report), *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result, json.loads(report.read_text())


def shown(db: Path, run: str = "latest") -> dict[str, Any]:
    result = invoke("show", run, "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def judged(cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The `apology` entry of each case that has one, by case id."""
    return {
        case["id"]: entry
        for case in cases
        for entry in case.get("rubrics", ())
        if entry["rubric"] == "apology"
    }


def call_fields(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cases without their rubric results."""
    return [{k: v for k, v in case.items() if k != "rubrics"} for case in cases]


def chats(server: FakeOpenAI) -> int:
    return len(server.requests("/chat/completions"))


def test_score_with_db_judges_reports_and_keeps_the_judgments(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    spec = write_inputs(tmp_path, server.url)
    db = tmp_path / "results.db"
    _, report = score(tmp_path, spec, "--db", str(db))
    entries = judged(report["cases"])
    # sorry, curt and wrong are paired (wrong fails on its order id, its note is still
    # judged); silent made no call: unscored, with the reason, and never sent.
    assert {k: (e["score"], e["passed"], e["cached"]) for k, e in entries.items()} == {
        "sorry": (5.0, True, False),
        "curt": (2.0, False, False),
        "wrong": (5.0, True, False),
        "silent": (None, None, False),
    }
    assert entries["sorry"]["reason"] == "it apologises"
    assert entries["silent"]["unscored"] == "the plan call has no produced call paired with it"
    assert chats(server) == 3
    block = report["summary"]["rubrics"]
    assert block["tokens"] == 3 * TOKENS
    apology = block["per_rubric"]["apology"]
    assert (apology["n"], apology["pass_rate"]["passed"], apology["unscored"]["count"]) == (3, 2, 1)
    assert block["per_argument"]["refund.memo"]["pass_rate"]["passed"] == 1  # short, too
    assert shown(db)["cases"] == report["cases"]


def test_a_second_score_asks_nothing_and_refresh_asks_again(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    spec = write_inputs(tmp_path, server.url)
    db = tmp_path / "results.db"
    _, first = score(tmp_path, spec, "--db", str(db))
    assert chats(server) == 3
    _, second = score(tmp_path, spec, "--db", str(db))
    assert chats(server) == 3  # nothing asked again
    again = judged(second["cases"])
    assert [again[k]["cached"] for k in ("sorry", "curt", "wrong")] == [True, True, True]
    assert {k: e["score"] for k, e in again.items()} == {
        k: e["score"] for k, e in judged(first["cases"]).items()
    }
    assert second["summary"]["rubrics"]["tokens"] == 0
    _, third = score(tmp_path, spec, "--db", str(db), "--refresh-rubrics")
    assert chats(server) == 6
    assert [judged(third["cases"])[k]["cached"] for k in ("sorry", "curt", "wrong")] == [
        False, False, False,
    ]  # fmt: skip
    assert third["summary"]["rubrics"]["tokens"] == 3 * TOKENS


def test_without_db_the_default_store_keeps_the_judgments(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    spec = write_inputs(tmp_path, server.url)
    score(tmp_path, spec)
    assert chats(server) == 3
    assert (tmp_path / "default" / "results.db").exists()
    _, report = score(tmp_path, spec)
    assert chats(server) == 3
    assert judged(report["cases"])["curt"]["cached"] is True
    assert invoke("runs", "--db", str(tmp_path / "default" / "results.db")).exit_code == 0


def test_deterministic_rubrics_alone_open_no_store(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    write_inputs(tmp_path, "http://127.0.0.1:9/v1")
    spec.write_text(spec.read_text().replace("{kind: text, rubric: apology}", "text"))
    score(tmp_path, spec)
    assert not (tmp_path / "default").exists()


def test_rescore_reuses_judgments_until_the_rubric_changes(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    spec = write_inputs(tmp_path, server.url)
    db = tmp_path / "results.db"
    score(tmp_path, spec, "--db", str(db))
    assert chats(server) == 3
    same = invoke("rescore", "1", "--specs", str(spec), "--db", str(db))
    assert same.exit_code == 0, same.output
    assert chats(server) == 3
    rescored = shown(db)
    assert rescored["run"]["rescored_from"] == 1
    entries = judged(rescored["cases"])
    assert [entries[k]["cached"] for k in ("sorry", "curt", "wrong")] == [True, True, True]
    assert entries["curt"]["score"] == 2.0
    assert rescored["summary"]["rubrics"]["per_rubric"]["apology"]["n"] == 3
    changed = write_inputs(tmp_path, server.url, text="Is the note kind?", name="kind")
    asked = invoke("rescore", "1", "--specs", str(changed), "--db", str(db))
    assert asked.exit_code == 0, asked.output
    assert chats(server) == 6
    assert (
        "Is the note kind?"
        in server.requests("/chat/completions")[-1].body["messages"][1]["content"]
    )
    assert not any(e["cached"] for e in judged(shown(db)["cases"]).values())
    refreshed = invoke(
        "rescore", "1", "--specs", str(changed), "--db", str(db), "--refresh-rubrics"
    )
    assert refreshed.exit_code == 0, refreshed.output
    assert chats(server) == 9


def test_rubrics_only_keeps_every_call_field_and_summary(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    spec = write_inputs(tmp_path, server.url)
    db = tmp_path / "results.db"
    score(tmp_path, spec, "--db", str(db), "--no-rubrics")
    assert chats(server) == 0
    before = shown(db, "1")
    assert all("rubrics" not in case for case in before["cases"])
    result = invoke("rescore", "1", "--rubrics-only", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert chats(server) == 3
    after = shown(db, "2")
    assert after["run"]["rescored_from"] == 1
    assert call_fields(after["cases"]) == call_fields(before["cases"])
    assert {k: v for k, v in after["summary"].items() if k != "rubrics"} == before["summary"]
    assert judged(after["cases"])["sorry"]["score"] == 5.0
    assert after["summary"]["rubrics"]["tokens"] == 3 * TOKENS
    # A new rubric text, through --specs: rubric results anew, calls still untouched.
    kind = write_inputs(tmp_path, server.url, text="Is the note kind?", name="kind")
    again = invoke("rescore", "2", "--rubrics-only", "--specs", str(kind), "--db", str(db))
    assert again.exit_code == 0, again.output
    assert chats(server) == 6
    third = shown(db, "3")
    assert call_fields(third["cases"]) == call_fields(before["cases"])
    assert third["run"]["specs_path"] == str(kind)


def test_rubrics_only_refuses_specs_that_change_more_than_rubrics(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    spec = write_inputs(tmp_path, server.url)
    db = tmp_path / "results.db"
    score(tmp_path, spec, "--db", str(db), "--no-rubrics")
    looser = tmp_path / "looser.yaml"
    looser.write_text(spec.read_text().replace("order_id: exact", "order_id: casefold"))
    result = invoke("rescore", "1", "--rubrics-only", "--specs", str(looser), "--db", str(db))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"toolscore: error: {looser}: --rubrics-only keeps run 1's call results, but these "
        "specs change more than rubrics (the rules of tool 'refund' differ); rescore without "
        "--rubrics-only"
    ]
    assert chats(server) == 0
    assert invoke("runs", "--db", str(db), "--json").stdout.count('"id"') == 1
    # A version label and a rubric's own keys are not call rules: accepted.
    relabelled = tmp_path / "relabelled.yaml"
    relabelled.write_text(spec.read_text().replace('"j1"', '"j2"').replace("max: 80", "max: 5"))
    ok = invoke("rescore", "1", "--rubrics-only", "--specs", str(relabelled), "--db", str(db))
    assert ok.exit_code == 0, ok.output


def test_rescore_needs_specs_unless_rubrics_only(tmp_path: Path, server: FakeOpenAI) -> None:
    spec = write_inputs(tmp_path, server.url)
    db = tmp_path / "results.db"
    score(tmp_path, spec, "--db", str(db), "--no-rubrics")
    result = invoke("rescore", "1", "--db", str(db))
    assert result.exit_code == 2
    assert "--specs" in result.output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nothing listens there


def test_an_unreachable_endpoint_leaves_texts_unscored_and_the_run_completes(
    tmp_path: Path,
) -> None:
    spec = write_inputs(tmp_path, f"http://127.0.0.1:{free_port()}/v1", timeout=2)
    db = tmp_path / "results.db"
    result, report = score(tmp_path, spec, "--db", str(db))
    entries = judged(report["cases"])
    for case_id in ("sorry", "curt", "wrong"):
        assert entries[case_id]["score"] is None
        assert entries[case_id]["unscored"]  # the reason
    apology = report["summary"]["rubrics"]["per_rubric"]["apology"]
    assert (apology["n"], apology["unscored"]["count"]) == (0, 4)
    assert "cannot reach http://127.0.0.1:" in entries["sorry"]["unscored"]
    assert report["summary"]["passed"] == 2  # sorry and curt: the calls' verdicts, untouched
    assert "saved as run 1" in result.output
    # Nothing unscored is kept: the next run asks again (and is unscored again).
    _, again = score(tmp_path, spec, "--db", str(db))
    assert judged(again["cases"])["curt"]["cached"] is False


def test_a_missing_key_fails_before_any_request(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write_inputs(tmp_path, server.url)
    db = tmp_path / "results.db"
    score(tmp_path, spec, "--db", str(db), "--no-rubrics")
    monkeypatch.delenv(KEY_VAR)
    expected = (
        f"toolscore: error: {spec}: rubrics.apology.api_key_env: rubric 'apology' reads its "
        f"endpoint's key from the environment variable {KEY_VAR}, which is not set"
    )
    report = tmp_path / "missing.json"
    result = invoke(
        "score", "--specs", str(spec), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--db", str(db), "--json", str(report),
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [expected]
    assert not report.exists()
    rescored = invoke("rescore", "1", "--specs", str(spec), "--db", str(db))
    assert rescored.exit_code == 2
    assert rescored.output.strip().splitlines() == [expected]
    assert server.seen == []
    assert invoke("runs", "--db", str(db), "--json").stdout.count('"id"') == 1


def test_the_key_is_never_written(tmp_path: Path, server: FakeOpenAI) -> None:
    spec = write_inputs(tmp_path, server.url)
    db = tmp_path / "results.db"
    scored, report = score(tmp_path, spec, "--db", str(db))
    rescored = invoke("rescore", "1", "--specs", str(spec), "--db", str(db), "--refresh-rubrics")
    listed = invoke("show", "latest", "--db", str(db))
    assert [seen.authorization for seen in server.seen] == [f"Bearer {SECRET}"] * 6
    for text in (scored.output, rescored.output, listed.output, json.dumps(report)):
        assert SECRET not in text
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("results.db*"))
    assert b"judgments" in stored  # the store's bytes, not an empty file
    assert SECRET.encode() not in stored


def test_call_verdicts_are_the_same_with_and_without_rubrics(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    spec = write_inputs(tmp_path, server.url)
    _, with_rubrics = score(tmp_path, spec)
    _, without = score(tmp_path, spec, "--no-rubrics")
    assert call_fields(with_rubrics["cases"]) == call_fields(without["cases"])
    assert "rubrics" not in without["summary"]
    assert {k: v for k, v in with_rubrics["summary"].items() if k != "rubrics"} == without[
        "summary"
    ]


def test_the_batch_interface_asks_remote_rubrics_in_the_late_pass_as_score_does(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """`write_report` given the batches' pending targets asks the judge once scoring is
    done, as `score` does: the same report, rubric entries and tokens included."""
    from toolscore.engines.batch import ALL_RUBRICS, BatchScorer, merge_outcomes, write_report  # noqa: PLC0415
    from toolscore.engines.partitions import joined_records  # noqa: PLC0415
    from toolscore.specs.loading import load_specs  # noqa: PLC0415

    spec = write_inputs(tmp_path, server.url)
    sources = (str(tmp_path / "cases.jsonl"), str(tmp_path / "outputs.jsonl"))
    specs = load_specs(spec)
    scorer = BatchScorer(specs, sources, rubrics=ALL_RUBRICS)
    records = list(joined_records(*sources, lambda ids: None))
    outcomes = [scorer.score_records(records[:2]), scorer.score_records(records[2:])]
    summary = merge_outcomes(scorer.new_summary(), outcomes)
    target = tmp_path / "batch.json"
    pending = [item for outcome in outcomes for item in outcome.pending]
    write_report(str(target), specs, summary, (o.report_lines for o in outcomes), pending=pending)
    assert chats(server) == 3
    _, report = score(tmp_path, spec, "--workers", "1")
    assert json.loads(target.read_text()) == report
