"""The labelling page and the HTML report show, beside each argument's values, the rule the
spec gives it (kind and options, default, what it accepts and why) and the relaxations in
force for the case's tools, so that a label measures the case and not the labeller's memory
of the spec. The rules are the spec's, not a verdict: they show before a case is labelled,
and whatever text they hold stays inert."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from html_pages import PWN, Page
from label_pages import client_for, make_batch
from toolscore.calibration.batches import BatchCase, Batches
from toolscore.calibration.web import SECURITY_HEADERS
from toolscore.cli.app import cli
from toolscore.store import open_store

SPEC = """
version: "t-1"
tools:
  get_weather:
    version: 1
    args:
      city: {kind: casefold, reason: "the weather service resolves city names case-insensitively"}
      unit: {kind: enum, values: [celsius, fahrenheit], default: celsius,
             aliases: {C: celsius, F: fahrenheit}}
      days: {kind: integer, default: 1}
  get_time:
    args:
      zone: {kind: exact, reason: "REASON"}
relax:
  - {allow: extra_calls, tools: [get_time], reason: "a read-only lookup, free to repeat"}
"""
UNIT = (
    'unit: enum values=celsius|fahrenheit aliases=C->celsius,F->fahrenheit, default "celsius"; '
    "accepts aliases C for celsius, F for fahrenheit"
)
CITY = (
    "city: casefold; accepts letter case and Unicode composition (the weather service "
    "resolves city names case-insensitively)"
)


def weather(**args: Any) -> dict[str, Any]:
    return {"name": "get_weather", "args": args}


def write(folder: Path, spec: str = SPEC) -> list[str]:
    """A spec and three cases: `alias` (the rules pass an alias, an omitted default and a
    relaxed lookup; exact JSON fails it), `extra-arg` (an argument the spec does not list)
    and `no-tool` (a call to a tool the spec does not have). The arguments of `score`."""
    cases = [
        {"id": "alias", "prompt": "Weather in Paris, in C", "plans": [[weather(city="Paris")]]},
        {"id": "extra-arg", "prompt": "Paris", "plans": [[weather(city="Paris")]]},
        {"id": "no-tool", "prompt": "Paris", "plans": [[weather(city="Paris")]]},
    ]
    outputs = [
        {"id": "alias", "calls": [weather(city="paris", unit="C"),
                                  {"name": "get_time", "args": {"zone": "CET"}}]},
        {"id": "extra-arg", "calls": [weather(city="Paris", when="now")]},
        {"id": "no-tool", "calls": [{"name": "launch", "args": {}}]},
    ]  # fmt: skip
    (folder / "tools.yaml").write_text(spec)
    (folder / "cases.jsonl").write_bytes(b"\n".join(map(orjson.dumps, cases)) + b"\n")
    (folder / "outputs.jsonl").write_bytes(b"\n".join(map(orjson.dumps, outputs)) + b"\n")
    return ["score", "--specs", str(folder / "tools.yaml"), "--cases", str(folder / "cases.jsonl"),
            "--outputs", str(folder / "outputs.jsonl")]  # fmt: skip


def batch_of(folder: Path, spec: str = SPEC) -> Path:
    """The store of a saved run of `write`'s files and its batch 1: every case, the one
    disagreement and the two agreements, written to `batch.jsonl` too."""
    db = folder / "results.db"
    runner = CliRunner()
    scored = runner.invoke(cli, [*write(folder, spec), "--db", str(db)])
    assert scored.exit_code == 0, scored.output
    sampled = runner.invoke(
        cli, ["disagreements", "1", "--db", str(db), "--agreements", "2",
              "--out", str(folder / "batch.jsonl")],
    )  # fmt: skip
    assert sampled.exit_code == 0, sampled.output
    return db


def positions(db: Path) -> dict[str, int]:
    with open_store(db, create=False) as store:
        return {case.case_id: case.position for case in Batches.of(store).cases(1)}


def text(page: str) -> str:
    """A page's text, tags left out and whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())


def spec_rows(page: str) -> list[str]:
    return [text(row) for row in re.findall(r'<tr class="spec">(.*?)</tr>', page, re.S)]


def test_the_labelling_page_shows_each_argument_s_rule_before_the_case_is_labelled(
    tmp_path: Path,
) -> None:
    # The reproducer: "unit DIFFERS: — vs "C"", with no sign that the default is celsius
    # and C an alias.
    db = batch_of(tmp_path)
    at = positions(db)
    with client_for(db) as client:
        alias = client.get(f"/case/{at['alias']}").text
        assert 'id="verdicts"' not in alias  # not labelled: no verdict, yet the rules show
        assert spec_rows(alias) == [
            f"the spec: {CITY}",
            f"the spec: {UNIT}",
            "the spec: zone: exact (REASON)",
        ]
        tools = text(re.findall(r'<ul class="spec-tools">(.*?)</ul>', alias, re.S)[0])
        assert "get_weather: no relaxation in force" in tools
        assert (
            "get_time: relaxations in force: allow extra_calls (a read-only lookup, free to repeat)"
            in tools
        )
        extra = client.get(f"/case/{at['extra-arg']}").text
        assert "the spec: when: not an argument of the tool's spec" in spec_rows(extra)
        unknown = client.get(f"/case/{at['no-tool']}").text
        assert "the spec: not a tool of the spec" in spec_rows(unknown)
    batch = [orjson.loads(line) for line in (tmp_path / "batch.jsonl").read_text().splitlines()]
    (kept,) = [line["view"]["rules"] for line in batch if line["case_id"] == "alias"]
    assert kept["get_weather"]["args"]["unit"] == [
        {"argument": "unit",
         "rule": "enum values=celsius|fahrenheit aliases=C->celsius,F->fahrenheit",
         "default": "celsius", "forgives": ["aliases C for celsius, F for fahrenheit"],
         "reason": None}
    ]  # fmt: skip
    assert kept["get_time"]["relaxations"] == [
        {"allow": "extra_calls", "reason": "a read-only lookup, free to repeat"}
    ]
    (unknown_view,) = [line["view"] for line in batch if line["case_id"] == "no-tool"]
    assert list(unknown_view["rules"]) == ["get_weather"]  # an unknown name is never a key


def test_a_batch_made_before_views_kept_rules_shows_its_run_s(tmp_path: Path) -> None:
    db = batch_of(tmp_path)
    with open_store(db) as store:
        old = [
            BatchCase(case.position, case.case_id, case.stratum, case.verdicts,
                      {k: v for k, v in case.view.items() if k != "rules"}, case.population)
            for case in Batches.of(store).cases(1)
        ]  # fmt: skip
        info = Batches.of(store).info(1)
        batch = Batches.of(store).create(
            run_id=info.run_id, baseline=info.baseline, seed=0, requested=len(old),
            disagreements=info.disagreements, strata=info.strata, cases=old,
        )  # fmt: skip
    with client_for(db, batch=batch) as client:
        page = client.get(f"/case/{positions(db)['alias']}").text
        assert f"the spec: {UNIT}" in spec_rows(page)
    lonely = tmp_path / "lonely.db"
    make_batch(lonely)  # views without rules, of a run the store does not hold
    with client_for(lonely) as client:
        page = client.get("/case/1").text
        assert "This batch keeps no rules of the spec" in page
        assert spec_rows(page) == []


def test_rules_on_the_page_are_inert_and_the_policy_is_unchanged(tmp_path: Path) -> None:
    spec = SPEC.replace('"REASON"', orjson.dumps(PWN).decode()).replace(
        "F: fahrenheit}}", 'F: fahrenheit, "<u id=x>": celsius}}'
    )
    db = batch_of(tmp_path, spec)
    with client_for(db) as client:
        response = client.get(f"/case/{positions(db)['alias']}")
        page = response.text
        for name, value in SECURITY_HEADERS.items():
            assert response.headers[name] == value
        assert "<img" not in page
        assert "<u id=x>" not in page
        assert "&lt;img src=x onerror=" in page
        assert "&lt;u id=x&gt; for celsius" in page
        assert page.count("<script") == 1


def test_the_html_report_s_case_panel_carries_the_same_rule_lines(tmp_path: Path) -> None:
    args = write(tmp_path)
    page_path = tmp_path / "report.html"
    result = CliRunner().invoke(cli, [*args, "--html", str(page_path)])
    assert result.exit_code == 0, result.output
    page = Page(page_path.read_text())
    cases = {case["id"]: case for case in page.data("case-data")}
    # One copy of each argument's rule lines for the page, by tool and argument; a case's
    # rows point at them (null) or carry lines that name no rule of the spec.
    assert page.data("spec-data") == {
        "get_weather": {"city": [CITY], "unit": [UNIT]},
        "get_time": {"zone": ["zone: exact (REASON)"]},
    }
    layout = cases["alias"]["layout"]
    assert "rules" not in layout
    assert [arg["spec"] for row in layout["rows"] for arg in row["args"]] == [None, None, None]
    assert any("allow extra_calls" in line for line in layout["tools"])
    (extra,) = cases["extra-arg"]["layout"]["rows"]
    assert [arg["spec"] for arg in extra["args"]] == [
        None, ["when: not an argument of the tool's spec"]
    ]  # fmt: skip
    (unknown,) = cases["no-tool"]["layout"]["rows"][1:]
    assert unknown["spec"] == ["not a tool of the spec"]
