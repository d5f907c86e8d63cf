"""Reading a cases file: what a line promises (no `$` marker) must not change what is checked,
and a case that could never be scored fairly is refused with its line and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolscore import parse_case, parse_output, parse_specs, read_cases, score_case
from toolscore.core.model import OMITTED, AnyOf, Ref
from toolscore.errors import CaseError
from toolscore.inputs.jsonl import ByteCounter
from toolscore.specs.loading import SpecSet


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


def test_a_marker_key_written_with_an_escaped_dollar_is_still_a_marker(tmp_path: Path) -> None:
    plan = [{"name": "refund", "args": {"order_id": {"$any": ["o-1", "o-2"]}, "amount": 5}}]
    escaped = json.dumps({"id": "e", "plans": [plan]}).replace('"$any"', '"\\u0024any"')
    assert '"$' not in escaped
    path = tmp_path / "cases.jsonl"
    path.write_text(escaped + "\n", encoding="utf-8")
    (case,) = read_cases(path, SPECS)
    assert (case.plans[0][0].args or {})["order_id"] == AnyOf(["o-1", "o-2"])
    produced = {"id": "e", "calls": [{"name": "refund", "args": {"order_id": "o-2", "amount": 5}}]}
    assert score_case(SPECS, case, parse_output(produced)).passed


def test_a_plan_with_markers_but_no_labels_is_not_linked() -> None:
    plan = [{"name": "refund", "args": {"order_id": {"$any": ["o-1", {"$omitted": True}]}}}]
    case = parse_case({"id": "m", "plans": [plan, plan]}, SPECS)
    assert not case.linked
    assert (case.plans[0][0].args or {})["order_id"] == AnyOf(["o-1", OMITTED])
    labelled = [{"id": "a", **plan[0]}, {"name": "refund", "args": {"order_id": {"$ref": "a#/id"}}}]
    assert parse_case({"id": "l", "plans": [plan, labelled]}, SPECS).linked


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


def _nested() -> SpecSet:
    address = {"kind": "object", "args": {"city": "exact", "geo": {"kind": "object", "args": {
        "lat": "number"}}}}  # fmt: skip
    tools = {
        "look": {"args": {"q": "exact"}},
        "ship": {
            "args": {
                "to": address,
                "stops": {"kind": "list", "items": address},
                "tags": {"kind": "list", "items": "exact"},
                "raw": "exact",
            }
        },
    }
    specs, problems = parse_specs({"tools": tools}, "tools.yaml")
    assert specs is not None, problems
    return specs


NESTED = _nested()
LOOK = {"id": "l", "name": "look", "args": {"q": "x"}}


def _ship(args: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "plans": [[LOOK, {"name": "ship", "args": args}]]}


@pytest.mark.parametrize(
    ("args", "field", "says"),
    [
        (
            {"raw": {"$any": ["a"], "also": 1}},
            "raw",
            "$any must be the only key, with a non-empty list",
        ),
        ({"raw": {"$any": "ab"}}, "raw", "$any must be the only key, with a non-empty list"),
        ({"raw": {"$any": []}}, "raw", "$any must be the only key, with a non-empty list"),
        (
            {"to": {"city": {"$omitted": True}}},
            "to.city",
            '{"$omitted": true} stands only among the alternatives of $any',
        ),
        (
            {"raw": {"$ref": "l#/a", "also": 1}},
            "raw",
            '$ref must be the only key, a string "LABEL#/json/pointer"',
        ),
        ({"raw": {"$ref": 7}}, "raw", '$ref must be the only key, a string "LABEL#/json/pointer"'),
        (
            {"raw": {"$ref": "l/a"}},
            "raw",
            '$ref must be the only key, a string "LABEL#/json/pointer"',
        ),
        (
            {"raw": {"$ref": "m#/a"}},
            "raw",
            "$ref to unknown label 'm' (labels in this plan: ['l'])",
        ),
        (
            {"raw": {"$ref": "l#a"}},
            "raw",
            "'a' is not a JSON pointer (it must be empty or start with '/')",
        ),
        (
            {"raw": {"$ref": "l#/a~2"}},
            "raw",
            "'/a~2' is not a JSON pointer ('~' must be followed by 0 or 1)",
        ),
        (
            {"raw": {"k": {"$any": [1, 2]}}},
            "raw",
            "$any and $ref cannot stand inside a value compared as exact; put them where the "
            "spec has a rule (an argument, object key or list item)",
        ),
        (
            {"stops": [{"city": "P"}, {"city": "Q", "geo": {"lat": 1, "lon": 2}}], "raw": "$"},
            "stops[1].geo.lon",
            "not in the spec (keys: lat)",
        ),
        (
            {"to": {"$any": [{"city": "P"}, {"city": "P", "zip": "1"}]}},
            "to.zip",
            "not in the spec (keys: city, geo)",
        ),
        (
            {"to": {"city": {"$any": ["P", "Q"]}, "geo": {"lat": {"$ref": "l#/lat"}}, "x": 0}},
            "to.x",
            "not in the spec (keys: city, geo)",
        ),
        (
            {"to": {"city": "P", "geo": {"lat": 1, "alt": 2}}},
            "to.geo.alt",
            "not in the spec (keys: lat)",
        ),
        (
            {"stops": [{"$any": [{"city": "P", "bogus": 1}]}]},
            "stops[0].bogus",
            "not in the spec (keys: city, geo)",
        ),
        (
            {"stops": [{"city": {"$omitted": True}}]},
            "stops[0].city",
            '{"$omitted": true} stands only among the alternatives of $any',
        ),
        (
            {"to": {"$any": [{"city": "P", "geo": {"lat": {"$omitted": True}}}]}},
            "to.geo.lat",
            '{"$omitted": true} stands only among the alternatives of $any',
        ),
    ],
)
def test_marker_and_key_errors_name_the_path_inside_the_argument(
    tmp_path: Path, args: dict[str, Any], field: str, says: str
) -> None:
    path = _write(tmp_path, _ship(args))
    with pytest.raises(CaseError) as caught:
        list(read_cases(path, NESTED))
    assert str(caught.value) == f"{path}:1: plans[0][1].args.{field}: {says}"


def test_a_cycle_names_the_plan_and_its_labels(tmp_path: Path) -> None:
    cycle = [
        {"id": "a", "name": "look", "args": {"q": {"$ref": "b#/q"}}},
        {"id": "b", "name": "look", "args": {"q": "x"}, "after": ["a"]},
    ]
    path = _write(tmp_path, {"id": "c", "plans": [[LOOK], cycle]})
    with pytest.raises(CaseError) as caught:
        list(read_cases(path, NESTED))
    assert str(caught.value) == f"{path}:1: plans[1]: $ref/after links form a cycle: a -> b -> a"


def test_markers_where_the_spec_has_a_rule_are_read(tmp_path: Path) -> None:
    args = {
        "to": {"$any": [{"city": {"$any": ["P", "Q"]}}, {"city": {"$ref": "l#/city"}}]},
        "stops": [{"city": {"$ref": "l#/a#b"}, "geo": {"lat": {"$any": [1, {"$omitted": True}]}}}],
        "tags": ["a", {"$any": ["b", "c"]}],
        "raw": {"plain": {"nested": [1, {"k": "$ not a marker"}]}},
    }
    (case,) = read_cases(_write(tmp_path, _ship(args)), NESTED)
    read = case.plans[0][1].args
    assert read is not None
    assert read["to"] == AnyOf([{"city": AnyOf(["P", "Q"])}, {"city": Ref("l", "/city")}])
    assert read["stops"] == [{"city": Ref("l", "/a#b"), "geo": {"lat": AnyOf([1, OMITTED])}}]
    assert read["tags"] == ["a", AnyOf(["b", "c"])]
    assert read["raw"] == args["raw"]
    assert case.linked is True


def test_values_of_another_shape_than_their_rule_load_and_fail_when_scored(
    tmp_path: Path,
) -> None:
    line = _ship({"to": ["P"], "stops": {"city": "P"}, "tags": "a"})
    (case,) = read_cases(_write(tmp_path, line), NESTED)
    assert case.plans[0][1].args == line["plans"][0][1]["args"]


def test_plain_lines_keep_their_fields(tmp_path: Path) -> None:
    plain = {"id": "p", "plans": [[{"name": "login", "args": {"user": "u"}}]], "prompt": "hi"}
    bare = {"id": "q", "plans": [[{"name": "login"}], []]}
    tagged = {"id": "t", "plans": [], "tags": []}
    linked = {**AFTER, "tags": ["x"]}
    first, second, third, fourth = read_cases(_write(tmp_path, plain, bare, tagged, linked), SPECS)
    assert (first.prompt, first.tags, first.line, first.extra) == ("hi", (), 1, {})
    assert first.linked is False
    assert second.plans[0][0].args == {}
    assert (second.prompt, second.line, second.kind) == (None, 2, "tool")
    assert second.linked is False
    assert (third.line, third.extra, third.linked) == (3, {"tags": []}, False)
    assert (fourth.tags, fourth.linked) == (("x",), True)


def test_errors_of_a_case_read_alone_name_a_default_source() -> None:
    with pytest.raises(CaseError) as caught:
        parse_case({"id": "x", "plans": {}}, SPECS)
    assert str(caught.value).startswith("<cases>: plans: must be a list of plans")


def test_a_tool_name_that_is_not_a_string_is_named_in_the_error(tmp_path: Path) -> None:
    path = _write(tmp_path, {"id": "x", "plans": [[{"name": ["refund"], "args": {}}]]})
    with pytest.raises(CaseError, match=r"plans\[0\]\[0\].name: \['refund'\] is not a tool"):
        list(read_cases(path, SPECS))


def test_a_broken_line_is_a_case_error_and_bytes_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "plans": []}\n{"id": \n', encoding="utf-8")
    with pytest.raises(CaseError, match=r"cases.jsonl:2"):
        list(read_cases(path, SPECS))
    good = _write(tmp_path, {"id": "a", "plans": []}, {"id": "b", "plans": []})
    counter = ByteCounter()
    assert [c.id for c in read_cases(good, SPECS, counter)] == ["a", "b"]
    assert counter.done == good.stat().st_size
