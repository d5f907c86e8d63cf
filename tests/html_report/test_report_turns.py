"""A run with conversation cases writes its HTML report (a turn-by-turn view is a later
step): each conversation is shown as one plan, its turns' chosen plans in order, with every
produced call; an agent's hostile text in a later turn stays inert."""

from __future__ import annotations

from pathlib import Path

import orjson

from html_pages import PWN, SPEC, refund, run, score_args


def test_a_conversation_run_writes_its_page(tmp_path: Path) -> None:
    cases = [
        {"id": "talk", "turns": [{"plans": [[refund("o-1")]]}, {"plans": [[refund("o-2")]]}]},
        {"id": "plain", "plans": [[refund("o-3")]]},
    ]
    outputs = [
        {"id": "talk", "turns": [{"calls": [refund("o-1")]}, {"calls": [refund(PWN)]}]},
        {"id": "plain", "calls": [refund("o-3")]},
    ]
    paths = {name: tmp_path / f"{name}.x" for name in ("specs", "cases", "outputs")}
    paths["specs"].write_text(SPEC)
    paths["cases"].write_bytes(b"\n".join(map(orjson.dumps, cases)) + b"\n")
    paths["outputs"].write_bytes(b"\n".join(map(orjson.dumps, outputs)) + b"\n")
    report, page = tmp_path / "report.json", tmp_path / "r.html"
    result = run(*score_args(paths), "--json", str(report), "--html", str(page))
    assert result.exit_code == 0, result.output
    data = orjson.loads(report.read_bytes())
    assert data["cases"][0]["first_failed_turn"] == 1
    html = page.read_text()
    assert PWN not in html
    assert "talk" in html
    assert "o-2" in html  # turn 1's plan, after turn 0's
