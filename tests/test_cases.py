"""Reading a cases file: what a line promises (no `$` marker) must not change what is checked,
and a case that could never be scored fairly is refused with its line and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolscore import parse_output, parse_specs, read_cases, score_case
from toolscore.errors import CaseError
from toolscore.specs import SpecSet


def _specs() -> SpecSet:
    tools = {
        "login": {"args": {"user": "exact"}},
        "get_order": {"args": {"order_id": "exact"}},
        "refund": {"args": {"order_id": "exact", "amount": "number"}},
    }
    specs, problems = parse_specs({"tools": tools}, "tools.yaml")
    assert specs is not None, problems
    return specs


SPECS = _specs()
AFTER = {
    "id": "after",
    "plans": [
        [
            {"id": "in", "name": "login", "args": {"user": "u"}},
            {"name": "get_order", "args": {"order_id": "o-7"}, "after": ["in"]},
        ]
    ],
}


def _write(tmp_path: Path, *lines: dict[str, Any]) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_after_is_checked_on_a_line_without_dollar_markers(tmp_path: Path) -> None:
    path = _write(tmp_path, AFTER)
    assert b'"$' not in path.read_bytes()  # the reader skips the marker walk for this line
    (case,) = read_cases(path, SPECS)
    assert case.linked
    assert case.plans[0][1].after == ("in",)
    reversed_calls = [
        {"name": "get_order", "args": {"order_id": "o-7"}},
        {"name": "login", "args": {"user": "u"}},
    ]
    result = score_case(SPECS, case, parse_output({"id": "after", "calls": reversed_calls}))
    assert not result.passed
    assert [m.code for m in result.mismatches] == ["order_violation"]
    in_order = score_case(SPECS, case, parse_output({"id": "after", "calls": reversed_calls[::-1]}))
    assert in_order.passed


def test_a_label_alone_links_nothing(tmp_path: Path) -> None:
    labelled = {"id": "l", "plans": [[{"id": "a", "name": "login", "args": {"user": "u"}}]]}
    (case,) = read_cases(_write(tmp_path, labelled), SPECS)
    assert not case.linked
    assert case.plans[0][0].label == "a"


@pytest.mark.parametrize(
    ("plan", "field", "says"),
    [
        (
            [{"name": "refund", "args": {"order_id": "o-1", "amount": 1, "currency": "EUR"}}],
            "plans[0][0].args.currency",
            "tool 'refund' has no argument 'currency'",
        ),
        (
            [
                {"id": "a", "name": "login", "args": {"user": "u"}},
                {"id": "a", "name": "get_order", "args": {"order_id": "o-1"}},
            ],
            "plans[0][0].id",
            "a call label must be a string, unique within its plan",
        ),
        (
            [{"id": 7, "name": "login", "args": {"user": "u"}}],
            "plans[0][0].id",
            "a call label must be a string, unique within its plan",
        ),
        (
            [
                {"id": "a", "name": "login", "args": {"user": "u"}},
                {"name": "get_order", "args": {"order_id": "o-1"}, "after": ["b"]},
            ],
            "plans[0][1].after",
            "must list labels of calls in this plan ['a']",
        ),
        (
            [{"name": "get_order", "args": {"order_id": "o-1"}, "after": "a"}],
            "plans[0][0].after",
            "must list labels of calls in this plan []",
        ),
        (
            [{"name": "refund", "args": {"order_id": "o-1"}, "when": "now"}],
            "plans[0][0].when",
            "unknown key (a call has name, args, id, after)",
        ),
        (
            [{"name": "refnud", "args": {}}],
            "plans[0][0].name",
            "'refnud' is not a tool in the spec (tools: get_order, login, refund)",
        ),
        ([{"name": "refund", "args": [1]}], "plans[0][0].args", "must be an object"),
        (["refund"], "plans[0][0]", "a call must be an object with name and args"),
    ],
)
def test_an_unscorable_plan_is_refused_naming_line_and_field(
    tmp_path: Path, plan: list[Any], field: str, says: str
) -> None:
    good = {"id": "ok", "plans": [[{"name": "login", "args": {"user": "u"}}]]}
    path = _write(tmp_path, good, {"id": "bad", "plans": [plan]})
    with pytest.raises(CaseError) as caught:
        list(read_cases(path, SPECS))
    assert str(caught.value) == f"{path}:2: {field}: {says}"


@pytest.mark.parametrize(
    ("line", "field", "says"),
    [
        ({"plans": []}, "id", "every case needs a non-empty string id"),
        ({"id": "", "plans": []}, "id", "every case needs a non-empty string id"),
        ({"id": "x"}, "plans", "must be a list of plans"),
        ({"id": "x", "plans": [{}]}, "plans[0]", "a plan must be a list of calls"),
        ({"id": "x", "plans": [], "tags": "a"}, "tags", "must be a list of strings"),
        ({"id": "x", "plans": [], "tags": [1]}, "tags", "must be a list of strings"),
        ({"id": "x", "plans": [], "score_turns": "last"}, "score_turns", "must be 'final'"),
    ],
)
def test_a_broken_case_line_names_its_field(
    tmp_path: Path, line: dict[str, Any], field: str, says: str
) -> None:
    path = _write(tmp_path, line)
    with pytest.raises(CaseError) as caught:
        list(read_cases(path, SPECS))
    assert str(caught.value).startswith(f"{path}:1: {field}: {says}")


def test_extra_keys_are_kept_and_tags_read(tmp_path: Path) -> None:
    line = {"id": "x", "plans": [], "tags": ["a", "b"], "goal_state": "plan", "prompt": "hi"}
    (case,) = read_cases(_write(tmp_path, line), SPECS)
    assert case.tags == ("a", "b")
    assert case.prompt == "hi"
    assert case.extra == {"tags": ["a", "b"], "goal_state": "plan"}
    assert case.line == 1
    assert case.kind == "abstention"
