"""spec_diff: every kind of change, named with the direction it can move past verdicts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.specs.loading import SpecSet, parse_specs
from toolscore.store import Change, spec_diff

BASE: dict[str, Any] = {
    "version": "1",
    "tools": {
        "refund": {
            "version": 1,
            "args": {
                "order_id": "exact",
                "amount": {"kind": "number", "tol": 0.01},
                "unit": {
                    "kind": "enum",
                    "values": ["EUR", "USD"],
                    "aliases": {"euro": "EUR"},
                    "default": "EUR",
                },
                "tags": {"kind": "list", "items": "exact"},
                "address": {"kind": "object", "args": {"city": "exact"}},
                "note": "text",
            },
        },
        "get_order": {"version": 1, "args": {"order_id": "exact"}},
    },
    "relax": [{"allow": "extra_calls", "tools": ["get_order"], "reason": "read-only"}],
}


def specs(data: dict[str, Any]) -> SpecSet:
    found, problems = parse_specs(data)
    assert not problems, problems
    assert found is not None
    return found


def changed(edit: Any) -> list[Change]:
    """The rule changes (warnings aside) after applying `edit` to a copy of BASE."""
    new = copy.deepcopy(BASE)
    edit(new)
    return [c for c in spec_diff(specs(BASE), specs(new)) if not c.warning]


def args(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = data["tools"]["refund"]["args"]
    return result


def unit(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = args(data)["unit"]
    return result


def one(edit: Any) -> tuple[str, str, str]:
    found = changed(edit)
    assert len(found) == 1, found
    return found[0].code, found[0].where, found[0].verdicts


def test_identical_specs_and_reason_only_edits_have_no_changes() -> None:
    assert spec_diff(specs(BASE), specs(copy.deepcopy(BASE))) == []
    assert changed(lambda d: args(d)["amount"].update(reason="the ledger keeps cents")) == []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d["tools"].pop("get_order") and d.pop("relax"), None),
        (lambda d: d["tools"].update(ping={"args": {}}), ("tool_added", "ping", "none")),
        (lambda d: args(d).pop("order_id"), ("argument_removed", "refund.order_id", "can fail")),
        (
            lambda d: args(d).update(memo={"kind": "exact", "default": ""}),
            ("argument_added", "refund.memo", "can pass"),
        ),
        (lambda d: args(d).update(trace="ignored"), ("argument_added", "refund.trace", "can pass")),
        (lambda d: args(d).update(sku="exact"), ("argument_added", "refund.sku", "none")),
        (
            lambda d: args(d).update(order_id={"kind": "casefold", "reason": "case-blind"}),
            ("kind_changed", "refund.order_id", "can pass"),
        ),
        (
            lambda d: args(d).update(order_id="text"),
            ("kind_changed", "refund.order_id", "can pass"),
        ),
        (lambda d: args(d).update(note="exact"), ("kind_changed", "refund.note", "can fail")),
        (lambda d: args(d).update(amount="integer"), ("kind_changed", "refund.amount", "either")),
        (
            lambda d: args(d)["amount"].update(tol=0.5),
            ("option_changed", "refund.amount", "can pass"),
        ),
        (
            lambda d: args(d)["amount"].update(tol=0),
            ("option_changed", "refund.amount", "can fail"),
        ),
        (
            lambda d: args(d)["amount"].update(coerce=True),
            ("option_changed", "refund.amount", "can pass"),
        ),
        (
            lambda d: args(d)["tags"].update(order="unordered"),
            ("option_changed", "refund.tags", "can pass"),
        ),
        (
            lambda d: args(d)["tags"].update(items="casefold"),
            ("kind_changed", "refund.tags[]", "can pass"),
        ),
        (
            lambda d: args(d)["address"]["args"].update(city="casefold"),
            ("kind_changed", "refund.address.city", "can pass"),
        ),
        (
            lambda d: args(d)["address"]["args"].update(zip="text"),
            ("argument_added", "refund.address.zip", "can pass"),
        ),
        (lambda d: unit(d)["values"].append("GBP"), ("values_added", "refund.unit", "can pass")),
        (
            lambda d: unit(d)["aliases"].update(dollar="USD"),
            ("alias_added", "refund.unit", "can pass"),
        ),
        (
            lambda d: unit(d)["aliases"].update(euro="USD"),
            ("alias_retargeted", "refund.unit", "either"),
        ),
        (lambda d: unit(d).update(aliases={}), ("alias_dropped", "refund.unit", "can fail")),
        (lambda d: unit(d).update(default="USD"), ("default_changed", "refund.unit", "either")),
        (lambda d: unit(d).pop("default"), ("default_changed", "refund.unit", "can fail")),
        (
            lambda d: args(d)["amount"].update(default=0),
            ("default_changed", "refund.amount", "can pass"),
        ),
        (lambda d: d.pop("relax"), ("relaxation_removed", "get_order", "can fail")),
        (
            lambda d: d["relax"].append(
                {"allow": "unknown_args", "tools": ["refund"], "reason": "v2 fields"}
            ),
            ("relaxation_added", "refund", "can pass"),
        ),
    ],
)
def test_each_change_is_named_with_its_direction(
    edit: Any, expected: tuple[str, str, str] | None
) -> None:
    if expected is None:  # a tool removed (with the relaxation that named it)
        codes = [(c.code, c.where, c.verdicts) for c in changed(edit)]
        assert codes == [
            ("tool_removed", "get_order", "can fail"),
            ("relaxation_removed", "get_order", "can fail"),
        ]
        return
    assert one(edit) == expected


def test_a_dropped_value_names_its_aliases_as_the_passes_that_will_fail() -> None:
    def drop_eur(d: dict[str, Any]) -> None:
        unit(d).update(values=["USD", "GBP", "JPY"], aliases={}, default="USD")

    found = changed(drop_eur)
    dropped = next(c for c in found if c.code == "values_dropped")
    assert dropped.verdicts == "can fail"
    assert dropped.effect == "past passes using 'EUR' or 'euro' will fail"
    assert "alias_dropped" not in {c.code for c in found}  # said once, with the value


def test_an_alias_dropped_alone_says_its_passes_will_fail() -> None:
    found = changed(lambda d: unit(d).update(aliases={}))
    assert str(found[0]) == (
        "refund.unit: alias 'euro' dropped: values dropped: past passes using 'euro' will fail"
    )


def test_a_rename_kept_as_an_alias_changes_no_verdict() -> None:
    def rename(d: dict[str, Any]) -> None:
        unit(d).update(
            values=["EURO", "USD"], aliases={"euro": "EURO", "EUR": "EURO"}, default="EURO"
        )

    found = changed(rename)
    assert [(c.code, c.old, c.new, c.verdicts) for c in found] == [
        ("value_renamed", "EUR", "EURO", "none")
    ]
    assert "is now an alias of 'EURO'" in found[0].effect


def test_a_rename_whose_alias_was_dropped_reports_the_alias_too() -> None:
    def rename(d: dict[str, Any]) -> None:
        unit(d).update(values=["EURO", "USD"], aliases={}, default="EURO")

    found = changed(rename)
    assert [c.code for c in found] == ["value_renamed", "alias_dropped"]
    assert "aliases" not in found[0].description


def test_versions_are_checked_against_the_rules() -> None:
    new = copy.deepcopy(BASE)
    args(new)["amount"]["tol"] = 0.5
    warnings = [(c.code, c.tool) for c in spec_diff(specs(BASE), specs(new)) if c.warning]
    assert warnings == [("version_not_bumped", "refund"), ("spec_version_not_bumped", None)]
    new["tools"]["refund"]["version"] = 2
    new["version"] = "2"
    assert [c for c in spec_diff(specs(BASE), specs(new)) if c.warning] == []
    bumped_only = copy.deepcopy(BASE)
    bumped_only["tools"]["get_order"]["version"] = 2
    assert spec_diff(specs(BASE), specs(bumped_only)) == []


def test_changes_are_json_for_machines() -> None:
    found = changed(lambda d: args(d)["tags"].update(items="casefold"))
    assert found[0].to_json() == {
        "code": "kind_changed",
        "tool": "refund",
        "argument": "tags[]",
        "description": "kind exact -> casefold",
        "effect": "case differences are forgiven now: past failures can pass",
        "verdicts": "can pass",
        "old": "exact",
        "new": "casefold",
    }


def listed(days: str, unit: list[str], version: int | None = None) -> list[dict[str, Any]]:
    """A tools list of two tools (`pay` with `x-version`, when given)."""
    pay: dict[str, Any] = {"name": "pay", "parameters": {"type": "object", "properties": {
        "unit": {"type": "string", "enum": unit}}}}  # fmt: skip
    if version is not None:
        pay["x-version"] = version
    weather = {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "days": {"type": "integer" if days == "integer" else "number"}}}}  # fmt: skip
    return [{"type": "function", "function": weather}, {"type": "function", "function": pay}]


def test_a_tools_list_is_not_asked_for_a_version_it_cannot_hold(tmp_path: Path) -> None:
    """A tools list has no spec set version (docs/formats.md 2.5): spec-diff asks for each
    changed tool's `x-version`, and never for a `version` the format cannot hold."""
    old = specs_of(listed("integer", ["EUR", "USD"], 2))
    new = specs_of(listed("number", ["EUR"], 2))
    found = spec_diff(old, new)
    assert [(c.code, c.tool) for c in found] == [
        ("kind_changed", "get_weather"),
        ("values_dropped", "pay"),
        ("version_not_bumped", "get_weather"),
        ("version_not_bumped", "pay"),
    ]
    assert all("bump its `x-version`" in c.effect for c in found if c.warning)
    assert spec_diff(old, specs_of(listed("number", ["EUR"], 3)))[-1].tool == "get_weather"
    unversioned = specs_of({"tools": {"pay": {"version": 2, "args": {"unit": "exact"}}}})
    into_list = [c.code for c in spec_diff(unversioned, new) if c.warning]
    assert into_list == ["version_not_bumped"]  # and none for the spec set: a list has none
    from_list = [c.code for c in spec_diff(new, unversioned) if c.warning]
    assert from_list == ["version_not_bumped", "spec_version_not_bumped"]  # a native one can
    files = [tmp_path / "old.json", tmp_path / "new.json"]
    for path, data in zip(
        files, (listed("integer", ["EUR"]), listed("number", ["EUR"])), strict=True
    ):
        path.write_text(json.dumps(data))
    shown = CliRunner().invoke(cli, ["spec-diff", *map(str, files)])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "get_weather.days: kind integer -> number" in text
    assert "bump its `x-version` (a tools list's only version)" in text
    assert "spec set" not in text
    assert "bump `version`" not in text


def specs_of(data: Any) -> SpecSet:
    found, problems = parse_specs(data, "tools.json")
    assert not problems, problems
    assert found is not None
    return found
