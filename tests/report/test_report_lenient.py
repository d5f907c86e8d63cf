"""Reports list the lenient rules in force beside the relaxations, each with its reason."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.report.json_report import report_header
from toolscore.report.lenient import lenient_rules
from toolscore.report.terminal import LENIENT_LINES, relaxations
from toolscore.specs.loading import SpecSet, parse_specs

EVERY_KIND = {
    "version": "1",
    "tools": {
        "book": {
            "args": {
                "city": {"kind": "casefold", "reason": "the service folds case"},
                "price": {"kind": "number", "tol": 0.005, "rel_tol": 0.01, "coerce": True},
                "nights": {"kind": "integer", "coerce": True},
                "refundable": {"kind": "boolean", "coerce": True},
                "unit": {"kind": "enum", "values": ["EUR", "USD"], "aliases": {"euro": "EUR"}},
                "day": {"kind": "date", "formats": ["%d/%m/%Y"]},
                "at": {"kind": "datetime", "tol": 60, "naive_tz": "UTC"},
                "tags": {"kind": "list", "order": "unordered", "items": "casefold"},
                "guest": {"kind": "object", "args": {"name": "casefold", "id": "exact"}},
                "note": "text",
                "trace": "ignored",
                # strict rules: never listed
                "order_id": "exact",
                "amount": {"kind": "number"},
                "count": "integer",
                "flag": "boolean",
                "plain_unit": {"kind": "enum", "values": ["a", "b"]},
                "plain_day": "date",
                "plain_at": "datetime",
                "ids": {"kind": "list", "items": "exact"},
            }
        }
    },
}


def specs_of(data: object) -> SpecSet:
    specs, problems = parse_specs(data)
    assert specs is not None, problems
    return specs


def test_every_lenient_option_is_listed_and_no_strict_rule_is() -> None:
    found = {rule.argument: rule for rule in lenient_rules(specs_of(EVERY_KIND))}
    assert list(found) == [
        "city", "price", "nights", "refundable", "unit", "day", "at", "tags", "tags[]",
        "guest.name", "note", "trace",
    ]  # fmt: skip
    assert found["city"].reason == "the service folds case"
    assert found["price"].forgives == (
        "differences up to 0.005",
        "relative differences up to 0.01",
        "numbers written as strings",
    )
    assert found["price"].rule == "number tol=0.005 rel_tol=0.01 coerce=true"
    assert found["unit"].forgives == ("aliases euro for EUR",)
    assert found["day"].forgives == ("dates written as %d/%m/%Y",)
    assert found["at"].forgives == (
        "instants up to 60.0 s apart",
        "times without an offset read as UTC",
    )
    assert found["tags"].forgives == ("the order of the items",)
    assert found["tags[]"].kind == "casefold"
    assert found["note"].forgives == ("any value: never compared by the call scorer",)
    assert {rule.tool for rule in found.values()} == {"book"}


def test_a_strict_spec_has_no_lenient_rules() -> None:
    strict = {"tools": {"t": {"args": {"a": "exact", "b": {"kind": "number"}}}}}
    specs = specs_of(strict)
    assert lenient_rules(specs) == []
    assert report_header(specs, "0")["lenient_rules"] == []
    assert "Lenient rules in force: none" in relaxations(specs).text


def test_the_report_header_adds_lenient_rules_and_keeps_its_fields() -> None:
    data = dict(EVERY_KIND, relax=[{"allow": "extra_calls", "tools": ["book"], "reason": "free"}])
    header = report_header(specs_of(data), "9.9")
    assert list(header) == ["toolscore", "build", "specs", "relaxations", "lenient_rules"]
    assert header["relaxations"] == [{"allow": "extra_calls", "tools": ["book"], "reason": "free"}]
    city = header["lenient_rules"][0]
    assert city == {
        "tool": "book",
        "argument": "city",
        "kind": "casefold",
        "rule": "casefold",
        "forgives": ["letter case and Unicode composition"],
        "reason": "the service folds case",
    }


def test_the_terminal_lists_them_with_reasons() -> None:
    lines = relaxations(specs_of(EVERY_KIND)).text.splitlines()
    assert lines[0] == "Relaxations in force: none"
    assert lines[1].startswith("Lenient rules in force")
    assert (
        "  book.city: casefold: letter case and Unicode composition - the service folds case"
        in lines
    )
    assert "  book.nights: integer: integers written as strings - (no reason given)" in lines
    assert len(lines) == 2 + len(lenient_rules(specs_of(EVERY_KIND)))


def test_the_terminal_counts_what_it_does_not_print() -> None:
    many = {f"a{n:02}": "casefold" for n in range(LENIENT_LINES + 3)}
    lines = relaxations(specs_of({"tools": {"t": {"args": many}}})).text.splitlines()
    assert [line.split(":")[0] for line in lines[2:-1]] == [
        f"  t.a{n:02}" for n in range(LENIENT_LINES)
    ]
    assert lines[-1] == (
        "  ... and 3 more, all listed under lenient_rules in the report JSON (--json)"
    )


def test_a_stand_in_without_tools_lists_only_relaxations() -> None:
    stand_in = SpecSet(tools={})
    assert relaxations(stand_in).text == "Relaxations in force: none"


WIDE = {"COLUMNS": "200"}


def tour(tmp_path: Path) -> list[str]:
    (tmp_path / "tools.yaml").write_text(
        "tools:\n  get_weather:\n    args:\n"
        "      city: {kind: casefold, reason: names are case-insensitive}\n"
        "      days: {kind: integer, default: 1}\n"
    )
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "a", "plans": [[{"name": "get_weather", "args": {"city": "Paris"}}]]}\n'
    )
    (tmp_path / "outputs.jsonl").write_text(
        '{"id": "a", "calls": [{"name": "get_weather", "args": {"city": "paris"}}]}\n'
    )
    return [
        "--specs", str(tmp_path / "tools.yaml"),
        "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"),
    ]  # fmt: skip


def test_score_and_a_stored_run_list_the_lenient_rules(tmp_path: Path) -> None:
    db = str(tmp_path / "store.db")
    report = tmp_path / "report.json"
    runner = CliRunner()
    scored = runner.invoke(
        cli, ["score", *tour(tmp_path), "--json", str(report), "--db", db], env=WIDE
    )
    assert scored.exit_code == 0, scored.output
    line = "get_weather.city: casefold: letter case and Unicode composition - names are"
    assert line in scored.output
    written = json.loads(report.read_text())["lenient_rules"]
    assert [entry["argument"] for entry in written] == ["city"]
    shown = runner.invoke(cli, ["show", "1", "--db", db], env=WIDE)
    assert shown.exit_code == 0, shown.output
    assert line in shown.output
    as_json = runner.invoke(cli, ["show", "1", "--db", db, "--json"])
    assert json.loads(as_json.output)["lenient_rules"] == written
