"""Spec loading: both native formats, OpenAI tool lists, and a precise error for each mistake."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolscore.core.arguments import matches
from toolscore.core.rules import EnumRule, ListRule, NumberRule, ObjectRule
from toolscore.errors import SpecError
from toolscore.specs.loading import check_specs, load_specs, parse_specs, read_mapping

NATIVE: dict[str, Any] = {
    "version": "2026.11",
    "tools": {
        "refund": {
            "version": 3,
            "args": {
                "order_id": "exact",
                "amount": {"kind": "number", "tol": 0.005},
                "unit": {
                    "kind": "enum",
                    "values": ["EUR", "USD"],
                    "aliases": {"euro": "EUR"},
                    "default": "EUR",
                },
                "note": "text",
            },
        }
    },
    "relax": [{"allow": "extra_calls", "tools": ["refund"], "reason": "idempotent"}],
}


def problems_of(data: Any) -> list[str]:
    specs, problems = parse_specs(data, "spec.yaml")
    assert specs is None
    return [str(p) for p in problems]


def test_yaml_and_json_give_the_same_rules(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(NATIVE))
    (tmp_path / "s.json").write_text(json.dumps(NATIVE))
    from_yaml, from_json = load_specs(tmp_path / "s.yaml"), load_specs(tmp_path / "s.json")
    assert from_yaml.rules == from_json.rules
    assert from_yaml.version == "2026.11"
    assert from_yaml.tools["refund"].version == 3
    assert from_yaml.extra_ok == frozenset({"refund"})
    assert len(from_yaml.sha256) == 64
    assert from_yaml.sha256 != from_json.sha256
    amount = from_yaml.rules["refund"].args["amount"]
    assert isinstance(amount, NumberRule)
    assert repr(amount) == "<number tol=0.005>"


@pytest.mark.parametrize(
    ("args", "where", "says"),
    [
        ({"a": "exakt"}, "tools.t.args.a", "unknown kind 'exakt' (did you mean 'exact'?)"),
        ({"a": {"kind": "number", "tolerance": 1}}, "tools.t.args.a", "did you mean 'tol'?"),
        (
            {"a": {"kind": "number", "tol": -1}},
            "tools.t.args.a",
            "tol must be a finite number >= 0",
        ),
        ({"a": {"kind": "number", "rel_tol": "x"}}, "tools.t.args.a", "rel_tol must be a number"),
        (
            {"a": {"kind": "boolean", "coerce": "yes"}},
            "tools.t.args.a",
            "coerce must be true or false",
        ),
        ({"a": {"kind": "enum"}}, "tools.t.args.a", "enum needs 'values'"),
        (
            {"a": {"kind": "enum", "values": ["EUR"], "aliases": {"e": "EURO"}}},
            "tools.t.args.a",
            "alias 'e' points to 'EURO', which is not in values",
        ),
        (
            {"a": {"kind": "enum", "values": ["EUR"], "default": "USD"}},
            "tools.t.args.a",
            "default 'USD' is rejected by its own rule",
        ),
        (
            {"a": {"kind": "number", "default": "3"}},
            "tools.t.args.a",
            "default '3' is rejected by its own rule",
        ),
        (
            {"a": {"kind": "list", "items": {"kind": "integer", "default": 1.5}}},
            "tools.t.args.a.items",
            "rejected by its own rule",
        ),
        ({"a": {"kind": "list", "order": "sorted"}}, "tools.t.args.a", "order must be"),
        (
            {"a": {"kind": "object", "args": {"b": {"kind": "nope"}}}},
            "tools.t.args.a.b",
            "unknown kind 'nope'",
        ),
        (
            {"a": {"kind": "datetime", "naive_tz": "Mars/Base"}},
            "tools.t.args.a",
            "unknown time zone",
        ),
        ({"a": {"kind": "exact", "reason": ""}}, "tools.t.args.a", "reason must be a non-empty"),
        ({"a": {"tol": 1}}, "tools.t.args.a", "missing 'kind'"),
    ],
)
def test_bad_argument_rules_name_tool_and_path(args: dict[str, Any], where: str, says: str) -> None:
    (problem,) = problems_of({"tools": {"t": {"args": args}}})
    assert f"spec.yaml: {where}: " in problem
    assert says in problem


def test_a_default_of_null_is_valid_for_any_kind() -> None:
    specs, problems = parse_specs(
        {"tools": {"t": {"args": {"n": {"kind": "number", "default": None}}}}}, "s"
    )
    assert not problems
    assert specs is not None
    assert specs.rules["t"].args["n"].default is None


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"tools": {}}, "tools: must be a non-empty mapping"),
        ({"tool": {"t": {}}}, "tool: unknown key (did you mean 'tools'?)"),
        ({"tools": {"t": {"argz": {}}}}, "tools.t.argz: unknown key (did you mean 'args'?)"),
        (
            {"tools": {"t": {"args": {}}}, "relax": [{"allow": "extra_calls", "tools": ["t"]}]},
            "relax[0].reason: every relaxation needs a reason",
        ),
        (
            {
                "tools": {"t": {"args": {}}},
                "relax": [{"allow": "extra_call", "tools": ["t"], "reason": "r"}],
            },
            "did you mean 'extra_calls'?",
        ),
        (
            {
                "tools": {"t": {"args": {}}},
                "relax": [{"allow": "unknown_args", "tools": ["u"], "reason": "r"}],
            },
            "relax[0].tools: unknown tool 'u'",
        ),
        ("just text", "a spec is a mapping"),
    ],
)
def test_bad_spec_structure(data: Any, says: str) -> None:
    assert any(says in p for p in problems_of(data)), problems_of(data)


def test_unreadable_and_unparseable_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read"):
        load_specs(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tools:\n  t: {args: [\n")
    with pytest.raises(SpecError, match=r"bad.yaml:\d+: not valid YAML"):
        load_specs(bad)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"tools": ')
    with pytest.raises(SpecError, match="not valid JSON"):
        load_specs(bad_json)


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    spec = tmp_path / "evil.yaml"
    spec.write_text("tools: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_specs(spec)


OPENAI = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "x-compare": {"kind": "casefold", "reason": "r"}},
                    "unit": {
                        "type": "string",
                        "enum": ["celsius", "fahrenheit"],
                        "default": "celsius",
                    },
                    "days": {"type": "integer", "default": 1},
                    "precise": {"type": ["boolean", "null"]},
                    "temp": {"type": "number"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "where": {
                        "type": "object",
                        "properties": {
                            "lat": {"type": "number", "x-compare": {"kind": "number", "tol": 0.01}}
                        },
                    },
                    "trace": {"type": "string", "x-compare": "ignored"},
                },
            },
        },
    },
    {"name": "ping", "parameters": {"type": "object", "properties": {}}},
]


def test_openai_tool_list_derives_kinds_from_the_schema() -> None:
    specs, problems = parse_specs(OPENAI, "tools.json")
    assert not problems
    assert specs is not None
    args = specs.rules["get_weather"].args
    kinds = {name: rule.kind for name, rule in args.items()}
    assert kinds == {
        "city": "casefold", "unit": "enum", "days": "integer", "precise": "boolean",
        "temp": "number", "tags": "list", "where": "object", "trace": "ignored",
    }  # fmt: skip
    unit = args["unit"]
    assert isinstance(unit, EnumRule)
    assert unit.default == "celsius"
    assert args["days"].default == 1
    tags = args["tags"]
    assert isinstance(tags, ListRule)
    assert tags.ordered
    assert tags.items.kind == "exact"
    where = args["where"]
    assert isinstance(where, ObjectRule)
    assert matches(where, {"lat": 1.0}, {"lat": 1.005})
    assert not matches(where, {"lat": 1.0}, {"lat": 1.0, "lon": 2})
    assert "ping" in specs.rules
    assert specs.version is None


def test_openai_x_compare_errors_and_bad_schemas() -> None:
    bad_kind = [{"name": "f", "parameters": {"type": "object", "properties": {
        "a": {"type": "string", "x-compare": "fuzzy"}}}}]  # fmt: skip
    assert "spec.yaml: [0].parameters.properties.a.x-compare: unknown kind 'fuzzy'" in str(
        problems_of(bad_kind)
    )
    bad_schema = [{"name": "f", "parameters": {"type": "objekt"}}]
    assert any("not a valid JSON Schema" in p for p in problems_of(bad_schema))
    nameless = [{"type": "function", "function": {"parameters": {}}}]
    assert any("needs 'name'" in p for p in problems_of(nameless))


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ({"kind": "number", "tol": float("inf")}, "tol must be a finite number >= 0, got inf"),
        ({"kind": "number", "rel_tol": float("inf")}, "rel_tol must be a finite number >= 0"),
        ({"kind": "number", "tol": float("-inf")}, "tol must be a finite number >= 0"),
        ({"kind": "number", "tol": float("nan")}, "tol must be a finite number >= 0"),
        ({"kind": "datetime", "tol": float("inf")}, "tol must be a finite number >= 0"),
        ({"kind": "number", "tol": True}, "tol must be a number, got true"),
        (
            {"kind": "enum", "values": ["EUR", "USD"], "aliases": {"USD": "EUR"}},
            "alias 'USD' is also a value",
        ),
        ({"kind": "enum", "values": [1, 2], "aliases": {"2": 1, 1: 2}}, "alias 1 is also a value"),
        ({"kind": "enum", "values": ["a", "a"]}, "enum values must be unique"),
        ({"kind": "enum", "values": [["a"]]}, "enum values must be strings, numbers"),
        ({"kind": "exact", "reason": " \t\n"}, "reason must be a non-empty string"),
    ],
)
def test_rules_that_would_forgive_anything_or_mislead_are_refused(
    rule: dict[str, Any], says: str
) -> None:
    """An infinite tolerance accepts every number; an alias that is also a value lets `USD`
    mean `EUR`: both are refused when the spec loads, naming the argument."""
    (problem,) = problems_of({"tools": {"t": {"args": {"a": rule}}}})
    assert problem.startswith("spec.yaml: tools.t.args.a: "), problem
    assert says in problem


def test_an_infinite_tolerance_written_in_yaml_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text("tools:\n  pay:\n    args:\n      amount: {kind: number, tol: .inf}\n")
    with pytest.raises(SpecError, match=r"tools.pay.args.amount: tol must be a finite number"):
        load_specs(spec)


@pytest.mark.parametrize("reason", ["", "   ", "\t\n", None, 3])
def test_a_relaxation_needs_a_reason_that_says_something(reason: Any) -> None:
    relax = {"allow": "extra_calls", "tools": ["t"], "reason": reason}
    problems = problems_of({"tools": {"t": {"args": {}}}, "relax": [relax]})
    assert problems == ["spec.yaml: relax[0].reason: every relaxation needs a reason"]


def test_relaxations_apply_to_their_own_tools_and_kind() -> None:
    specs, problems = parse_specs(
        {
            "tools": {"a": {"args": {}}, "b": {"args": {}}, "c": {"args": {}}},
            "relax": [
                {"allow": "extra_calls", "tools": ["a"], "reason": "read-only"},
                {"allow": "unknown_args", "tools": ["b"], "reason": "ignores flags"},
            ],
        },
        "s",
    )
    assert not problems
    assert specs is not None
    assert specs.extra_ok == frozenset({"a"})
    allowing = {name for name, rule in specs.rules.items() if rule.allow_unknown}
    assert allowing == {"b"}
    assert not specs.tools["b"].args.allow_unknown  # the tool's own rule stays strict
    assert [r.to_json() for r in specs.relaxations] == [
        {"allow": "extra_calls", "tools": ["a"], "reason": "read-only"},
        {"allow": "unknown_args", "tools": ["b"], "reason": "ignores flags"},
    ]


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        (
            {"tools": {"t": {"args": {}}}, "relax": "all"},
            ["relax: must be a list of {allow, tools, reason} entries"],
        ),
        (
            {"tools": {"t": {"args": {}}}, "relax": ["extra_calls"]},
            ["relax[0]: must be a mapping with allow, tools and reason"],
        ),
        (
            {
                "tools": {"t": {"args": {}}},
                "relax": [{"allow": "extra_calls", "tools": ["t"], "reason": "r", "why": 1}],
            },
            ["relax[0].why: unknown key"],
        ),
        (
            {
                "tools": {"t": {"args": {}}},
                "relax": [{"allow": "extra_calls", "tools": [], "reason": "r"}],
            },
            ["relax[0].tools: must be a non-empty list of tool names"],
        ),
        (
            {
                "tools": {"t": {"args": {}}},
                "relax": [{"allow": "extra_calls", "tools": "t", "reason": "r"}],
            },
            ["relax[0].tools: must be a non-empty list of tool names"],
        ),
        (
            {
                "tools": {"t": {"args": {}}},
                "relax": [{"allow": "x", "tools": ["t", 1], "reason": " "}],
            },
            [
                "relax[0].allow: must be one of extra_calls, unknown_args, retries",
                "relax[0].reason: every relaxation needs a reason",
                "relax[0].tools: must be a non-empty list of tool names",
            ],
        ),
        (
            {
                "tools": {"t": {"args": {}}},
                "relax": [{"allow": "extra_calls", "tools": ["t", "u", "v"], "reason": "r"}],
            },
            ["relax[0].tools: unknown tool 'u'", "relax[0].tools: unknown tool 'v'"],
        ),
        (
            {"tools": {"t": "exact"}},
            ["tools.t: must be a mapping with 'args' (and optionally 'version')"],
        ),
        (
            {"tools": {"t": {"args": ["a"]}}},
            ["tools.t.args: must be a mapping of argument names to rules"],
        ),
        (
            {"tools": {"t": {"args": {}, "version": [3]}}},
            ["tools.t.version: must be a string or an integer"],
        ),
        ({"tools": {"t": {"args": {}}}, "version": ["x"]}, ["version: must be a string"]),
        (
            {"tools": {"t": {"args": {}}}, "environment": "db.sqlite"},
            ["environment: must be a mapping with database and tools"],
        ),
        ({"tools": []}, ["tools: must be a non-empty mapping of tool names to tool specs"]),
        ({"relax": []}, ["tools: must be a non-empty mapping of tool names to tool specs"]),
        (
            {"tools": {"t": {"args": {"a": "exakt", "b": {"kind": "number", "tol": "x"}}}}},
            [
                "tools.t.args.a: unknown kind 'exakt' (did you mean 'exact'?)",
                "tools.t.args.b: tol must be a number, got 'x'",
            ],
        ),
        (
            {
                "tools": {
                    "t": {
                        "args": {
                            "a": {
                                "kind": "object",
                                "args": {"b": {"kind": "list", "items": "nope"}},
                            }
                        }
                    }
                }
            },
            ["tools.t.args.a.b.items: unknown kind 'nope'"],
        ),
        (
            {
                "tools": {
                    "t": {
                        "args": {
                            "a": {
                                "kind": "object",
                                "args": {
                                    "b": {"kind": "exact", "default": 1},
                                    "c": {"kind": "integer", "default": "1"},
                                },
                            }
                        }
                    }
                }
            },
            [
                "tools.t.args.a.c: default '1' is rejected by its own rule: "
                "expected an integer, got string '1'"
            ],
        ),
        (
            {
                "tools": {
                    "t": {
                        "args": {
                            "a": {"kind": "object", "args": {"b": "exact"}, "default": {"c": 1}}
                        }
                    }
                }
            },
            [
                'tools.t.args.a: default {"c":1} is rejected by its own rule: '
                "/c: argument 'c' is not in the spec"
            ],
        ),
        ([], ["(top): the tool list is empty"]),
        (
            [{"function": {"parameters": {}}}],
            ["[0]: a tool definition needs 'name' (or 'function': {name, ...})"],
        ),
        (["f"], ["[0]: a tool definition needs 'name' (or 'function': {name, ...})"]),
        (
            [
                {
                    "name": "f",
                    "parameters": {"type": "object", "properties": {"a": {"x-compare": 3}}},
                }
            ],
            [
                "[0].parameters.properties.a.x-compare: x-compare must be a kind name or a kind "
                "object"
            ],
        ),
        (
            [
                {
                    "name": "f",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "a": {"type": "object", "properties": {"b": {"x-compare": [1]}}}
                        },
                    },
                }
            ],
            [
                "[0].parameters.properties.a.properties.b.x-compare: x-compare must be a kind "
                "name or a kind object"
            ],
        ),
        (
            [
                {
                    "name": "f",
                    "parameters": {
                        "properties": {
                            "a": {"type": "string", "x-compare": {"kind": "number", "tol": -1}}
                        }
                    },
                }
            ],
            ["[0].parameters.properties.a.x-compare: tol must be a finite number >= 0, got -1"],
        ),
    ],
)
def test_every_problem_of_a_spec_is_named_in_full(data: Any, problems: list[str]) -> None:
    found = problems_of(data)
    assert [p.removeprefix("spec.yaml: ") for p in found] == problems or all(
        f.removeprefix("spec.yaml: ").startswith(p) for f, p in zip(found, problems, strict=True)
    ), found


def test_check_specs_lists_every_problem_and_load_specs_raises_the_first(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": {"t": {"args": {"a": "exakt", "b": "fuzzy"}}}}))
    specs, problems = check_specs(path)
    assert specs is None
    assert [str(p) for p in problems] == [
        f"{path}: tools.t.args.a: unknown kind 'exakt' (did you mean 'exact'?)",
        f"{path}: tools.t.args.b: unknown kind 'fuzzy'",
    ]
    with pytest.raises(SpecError) as caught:
        load_specs(path)
    assert str(caught.value) == str(problems[0])
    good = tmp_path / "good.json"
    good.write_text(json.dumps(NATIVE))
    specs, problems = check_specs(good)
    assert problems == []
    assert specs is not None
    assert specs.source == str(good)


def test_describe_gives_version_hash_and_tool_versions(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**NATIVE, "version": 2026}))
    specs = load_specs(path)
    assert specs.describe() == {
        "version": "2026",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "tools": {"refund": 3},
    }
    assert specs.tools["refund"].description is None
    assert specs.environment is None


def test_openai_tools_keep_version_description_and_schema_details() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "description": "does f",
                "x-version": "7",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "mode": {"enum": ["a", "b"], "default": "a"},
                        "either": {"type": ["null", "integer"]},
                        "pick": {
                            "type": "string",
                            "enum": ["x", "y"],
                            "x-compare": {"kind": "enum", "aliases": {"ex": "x"}},
                        },
                        "box": {
                            "type": "object",
                            "x-compare": "object",
                            "properties": {"w": {"type": "number"}},
                        },
                        "row": {
                            "type": "array",
                            "x-compare": {"kind": "list", "order": "unordered"},
                            "items": {"type": "integer"},
                        },
                        "bag": {"type": "array"},
                        "odd": {"type": "null"},
                        "raw": True,
                        "dflt": {
                            "type": "string",
                            "x-compare": {"kind": "casefold", "default": "q"},
                            "default": "z",
                        },
                    },
                },
            },
        },
        {"name": "g"},
    ]
    specs, problems = parse_specs(tools, "tools.json")
    assert not problems
    assert specs is not None
    f = specs.tools["f"]
    assert (f.version, f.description) == ("7", "does f")
    args = f.args.args
    assert {name: rule.describe() for name, rule in args.items()} == {
        "mode": "enum values=a|b",
        "either": "integer",
        "pick": "enum values=x|y aliases=ex->x",
        "box": "object",
        "row": "list unordered of integer",
        "bag": "list of exact",
        "odd": "exact",
        "raw": "exact",
        "dflt": "casefold",
    }
    assert args["mode"].default == "a"
    assert args["dflt"].default == "q"  # x-compare's own default wins over the schema's
    box = args["box"]
    assert isinstance(box, ObjectRule)
    assert box.args["w"].describe() == "number"
    assert specs.tools["g"].args.args == {}
    assert specs.relaxations == ()


def test_read_mapping_reads_yaml_and_json_mappings_only(tmp_path: Path) -> None:
    (tmp_path / "env.yaml").write_text("database: store.sql\ntools: tools.py\n")
    assert read_mapping(tmp_path / "env.yaml") == {"database": "store.sql", "tools": "tools.py"}
    (tmp_path / "env.json").write_text('{"database": "x"}')
    assert read_mapping(tmp_path / "env.json") == {"database": "x"}
    (tmp_path / "list.yaml").write_text("- a\n")
    with pytest.raises(SpecError) as caught:
        read_mapping(tmp_path / "list.yaml")
    assert str(caught.value) == f"{tmp_path / 'list.yaml'}: must hold a mapping"
    with pytest.raises(SpecError, match="cannot read: No such file or directory"):
        read_mapping(tmp_path / "missing.yaml")
    (tmp_path / "bad.json").write_text("{\n\n  oops")
    with pytest.raises(SpecError) as caught:
        read_mapping(tmp_path / "bad.json")
    assert caught.value.line == 3
    assert "not valid JSON" in str(caught.value)


def test_openai_schema_details_reach_the_right_rules() -> None:
    properties = {
        "nums": {"type": "array", "items": {"type": "integer"}},
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        "word": {"type": "string", "enum": ["a", "b"], "x-compare": {"kind": "casefold"}},
        "blob": {"type": "array", "items": {"type": "string"}, "x-compare": "exact"},
        "pair": {"type": ["null", "array"], "items": {"type": "boolean"}},
        "only_null": {"type": ["null"]},
    }
    specs, problems = parse_specs([{"name": "f", "parameters": {"properties": properties}}])
    assert not problems
    assert specs is not None
    assert {name: rule.describe() for name, rule in specs.rules["f"].args.items()} == {
        "nums": "list of integer",
        "grid": "list of list of number",
        "word": "casefold",
        "blob": "exact",
        "pair": "list of boolean",
        "only_null": "exact",
    }
    assert specs.source == "<specs>"
    assert specs.sha256 == ""
    assert specs.environment is None


def test_an_error_inside_array_items_names_its_path() -> None:
    bad = {"a": {"type": "array", "items": {"type": "string", "x-compare": "fuzzy"}}}
    assert problems_of([{"name": "f", "parameters": {"properties": bad}}]) == [
        "spec.yaml: [0].parameters.properties.a.items.x-compare: unknown kind 'fuzzy'"
    ]
    nested = {"a": {"type": "array", "x-compare": "list", "items": {"x-compare": 1}}}
    assert problems_of([{"name": "f", "parameters": {"properties": nested}}]) == [
        "spec.yaml: [0].parameters.properties.a.items.x-compare: x-compare must be a kind name or "
        "a kind object"
    ]


def test_every_broken_entry_is_listed_not_only_the_first() -> None:
    relax = [
        {"allow": "extra_calls", "tools": ["t"]},
        "oops",
        {"allow": "extra_calls", "tools": [], "reason": "r"},
        {"allow": "nope", "tools": ["t"], "reason": "r"},
    ]
    assert problems_of({"tools": {"t": {"args": {}}}, "relax": relax}) == [
        "spec.yaml: relax[0].reason: every relaxation needs a reason",
        "spec.yaml: relax[1]: must be a mapping with allow, tools and reason",
        "spec.yaml: relax[2].tools: must be a non-empty list of tool names",
        "spec.yaml: relax[3].allow: must be one of extra_calls, unknown_args, retries",
    ]
    tools = {"a": "x", "b": {"args": {"c": "nope"}}, "d": {"args": [1]}}
    assert problems_of({"tools": tools}) == [
        "spec.yaml: tools.a: must be a mapping with 'args' (and optionally 'version')",
        "spec.yaml: tools.b.args.c: unknown kind 'nope'",
        "spec.yaml: tools.d.args: must be a mapping of argument names to rules",
    ]
    listed = [{"name": "f", "parameters": {"type": "objekt"}}, 3, {"name": "g", "parameters": {
        "properties": {"a": {"x-compare": 2}}}}]  # fmt: skip
    found = problems_of(listed)
    assert [p.split(": ")[1] for p in found] == [
        "[0].parameters",
        "[1]",
        "[2].parameters.properties.a.x-compare",
    ]
    assert problems_of("text") == [
        "spec.yaml: (top): a spec is a mapping with 'tools', or a list of tool definitions"
    ]


def test_native_tools_keep_their_description() -> None:
    specs, _ = parse_specs({"tools": {"t": {"args": {}, "description": "does t"}}})
    assert specs is not None
    assert specs.tools["t"].description == "does t"


def test_file_errors_name_the_file_and_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(SpecError) as caught:
        load_specs(missing)
    assert str(caught.value) == f"{missing}: cannot read: No such file or directory"
    bad = tmp_path / "bad.yaml"
    bad.write_text("tools:\n  t:\n    args: {a: [}\n")
    with pytest.raises(SpecError) as caught:
        load_specs(bad)
    assert caught.value.line == 3
    assert str(caught.value).startswith(f"{bad}:3: not valid YAML: ")
    assert "None" not in str(caught.value)
    tabs = tmp_path / "tabs.yaml"
    tabs.write_text("tools:\n\tt: {}\n")
    with pytest.raises(SpecError) as caught:
        load_specs(tabs)
    assert str(caught.value).startswith(f"{tabs}:2: not valid YAML: found character")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"tools":\n\n ]')
    with pytest.raises(SpecError) as caught:
        load_specs(bad_json)
    assert str(caught.value).startswith(f"{bad_json}:3: not valid JSON: ")


LISTED_PROBLEMS: list[Any] = [
    {"type": "function", "function": {"name": "pay", "parameters": {"properties": {
        "who": {"type": "object", "x-compare": {"kind": "object", "args": {
            "id": {"kind": "number", "tolerance": 1}}}},
        "note": {"type": "string", "x-compare": {"kind": "text", "rubric": {"kind": "sentiment"}}},
        "days": {"type": "integer", "default": "seven"}}}}},
    {"type": "function", "function": {"name": "pay", "parameters": {}}},
    {"name": "ask", "x-version": True},
]  # fmt: skip


def test_a_tools_list_names_each_problem_where_it_is_in_the_json() -> None:
    """A tools list has no `tools.NAME.args` keys: each problem is named by its place in the
    list, down to the `x-compare` that declares a rule (docs/formats.md 2.5)."""
    assert problems_of(LISTED_PROBLEMS) == [
        "spec.yaml: [0].function.parameters.properties.who.x-compare.args.id: unknown option "
        "'tolerance' for kind 'number' (did you mean 'tol'?)",
        "spec.yaml: [1].function.name: tool 'pay' is defined twice (first at [0])",
        "spec.yaml: [2].x-version: must be a string or an integer",
    ]
    listed = [{"name": "pay", "parameters": {"type": "object", "properties": {
        "note": {"type": "string", "x-compare": {"kind": "text", "rubric": {"kind": "sentiment"}}},
        "days": {"type": "array", "items": {"type": "integer", "default": "seven"}}}}}]  # fmt: skip
    assert problems_of(listed) == [
        "spec.yaml: [0].parameters.properties.days.items: default 'seven' is rejected by its own "
        "rule: expected an integer, got string 'seven'",
        "spec.yaml: [0].parameters.properties.note.x-compare.rubric.kind: unknown kind 'sentiment'",
    ]


def test_a_tools_list_says_where_each_rule_is_declared() -> None:
    listed = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {
        "a": {"type": "object", "properties": {"b": {"type": "string"}}},
        "c": {"type": "array", "x-compare": {"kind": "list", "items": {"kind": "object", "args": {
            "d": "casefold"}}}}}}}}]  # fmt: skip
    specs, problems = parse_specs(listed, "tools.json")
    assert specs is not None, problems
    assert specs.tool_list
    base = "[0].function.parameters"
    assert specs.rule_field("f") == base
    assert specs.rule_field("f", ("a", "b")) == f"{base}.properties.a.properties.b"
    items = ("c", "items", "d")
    assert specs.rule_field("f", items) == f"{base}.properties.c.x-compare.items.args.d"
    native, _ = parse_specs(NATIVE, "tools.yaml")
    assert native is not None
    assert not native.tool_list
    assert native.rule_field("refund", ("unit",)) == "tools.refund.args.unit"
