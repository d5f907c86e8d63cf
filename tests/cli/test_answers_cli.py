"""`score` without `--env` on required outputs that name call results: every report shows
the outputs verdict (report JSON, terminal, HTML data), and the agent's text stays escaped."""

from __future__ import annotations

from pathlib import Path

import orjson

from html_pages import Page, run

PLAN = [{"id": "look", "name": "lookup", "args": {"account": "a"}}]
CALL = {"name": "lookup", "args": {"account": "a"}, "result": {"balance": 1205.0}}
HELD = '{"$ref": "look#/balance"} (held 1205.0)'


def _write(folder: Path) -> list[str]:
    (folder / "spec.yaml").write_text("tools:\n  lookup:\n    args: {account: exact}\n")
    cases = [
        {"id": "right", "plans": [PLAN], "required_outputs": [{"$ref": "look#/balance"}]},
        {"id": "wrong", "plans": [PLAN], "required_outputs": ["EUR", {"$ref": "look#/balance"}]},
    ]
    outputs = [
        {"id": "right", "calls": [CALL], "response": "Your balance is 1,205.00 EUR"},
        {"id": "wrong", "calls": [CALL], "response": "It is 1250.0 <b>EUR</b>\x1b[31m"},
    ]
    for name, lines in (("cases", cases), ("outputs", outputs)):
        (folder / f"{name}.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return [
        "score", "--specs", str(folder / "spec.yaml"), "--cases", str(folder / "cases.jsonl"),
        "--outputs", str(folder / "outputs.jsonl"), "--json", str(folder / "report.json"),
        "--html", str(folder / "report.html"),
    ]  # fmt: skip


def test_outputs_are_judged_and_shown_without_env(tmp_path: Path) -> None:
    result = run(*_write(tmp_path))
    assert result.exit_code == 0, result.output
    report = orjson.loads((tmp_path / "report.json").read_bytes())
    states = {case["id"]: case["state"] for case in report["cases"]}
    assert states["right"]["outputs_passed"] is True
    assert states["wrong"] == {
        "passed": None,
        "goal": None,
        "outputs_passed": False,
        "missing_outputs": [HELD],
    }
    assert report["summary"]["state"]["required_outputs"]["passed"] == 1
    assert report["summary"]["baselines"]["nothing"]["passed"] == 0
    assert "Outcomes (required outputs)" in result.output
    assert f"required output missing from the response: {HELD!r}" in result.output
    assert "\x1b[31m" not in result.output
    embedded = {c["id"]: c for c in Page((tmp_path / "report.html").read_text()).data("case-data")}
    assert embedded["wrong"]["state"]["missing_outputs"] == [HELD]


def test_replay_resolves_a_reference_through_the_call_verdict(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "support" / "env"
    plan = [{"id": "o", "name": "get_order", "args": {"order_id": "order-13"}}]
    case = {"id": "c", "plans": [plan], "required_outputs": [{"$ref": "o#/total"}]}
    call = {"name": "get_order", "args": {"order_id": "order-13"}}
    output = {"id": "c", "calls": [call], "response": "It came to 18.50 EUR."}
    (tmp_path / "cases.jsonl").write_bytes(orjson.dumps(case) + b"\n")
    (tmp_path / "outputs.jsonl").write_bytes(orjson.dumps(output) + b"\n")
    result = run(
        "replay", "--specs", str(example / "tools.yaml"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--case", "c",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert """'{"$ref": "o#/total"} (held 18.4)'""" in result.output
