"""Property tests: invariants of the scorer that must hold for every spec, case and output.

Specs are generated first; each argument kind then knows which values are valid for it and
which rewrites its rule forgives, so that expected plans and produced calls can be generated
from the spec without re-implementing the scorer.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import orjson
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from toolscore.core.matching import best_plan, matches
from toolscore.core.model import Case, CaseResult, Trajectory
from toolscore.core.rules import KINDS, compile_rule, enum_key, json_equal
from toolscore.errors import OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case
from toolscore.scoring.stream import score
from toolscore.specs.loading import SpecSet, parse_specs

Node = dict[str, Any]
"""A spec node (`{"kind": ..., ...}`) or a call as JSON (`{"name": ..., "args": ...}`)."""

SETTINGS = settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow])
RULE_SETTINGS = settings(SETTINGS, max_examples=600)
"""Single rules are cheap to check, so they get more examples."""

# --- JSON values ----------------------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8"), max_size=8)
MARKER_FREE_KEYS = TEXT.filter(lambda key: key not in ("$any", "$ref", "$omitted"))
INTEGERS = st.integers(-(2**63), 2**64 - 1) | st.sampled_from([2**53 + 1, -(2**53) - 3, 2**64 - 1])
"""What orjson reads as a JSON integer, with the edges where a float would round."""
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
TRICKY_TEXT = (
    st.sampled_from(["1e5000", "-1e-400", "NaN", "Infinity", "0x10", "1_000", " 12 ", "2.0"])
    | st.sampled_from(["", " ", "true", "FALSE", "null", "ß", "{}", "[1]", '{"a": 1}'])
    | st.sampled_from(["2024-02-30", "2024-01-02", "2024-13-01T00:00:00Z", "2024-01-02T10:00"])
)
"""Strings near the edge of what number, boolean, date and datetime rules accept."""


def json_values(keys: SearchStrategy[str], text: SearchStrategy[str] = TEXT) -> SearchStrategy[Any]:
    """Arbitrary JSON (as orjson parses it) whose object keys come from `keys`."""
    scalars = st.none() | st.booleans() | INTEGERS | FLOATS | text

    def containers(inner: SearchStrategy[Any]) -> SearchStrategy[Any]:
        return st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4)

    return st.recursive(scalars, containers, max_leaves=12)


PLAIN_JSON = json_values(MARKER_FREE_KEYS)
"""JSON that `parse_case` leaves alone: no `$any` / `$ref` markers."""
ANY_JSON = json_values(TEXT, TEXT | TRICKY_TEXT)
"""JSON an agent might produce, markers and number-like strings included."""

# --- spec nodes -----------------------------------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True)
TOOL_NAMES = ("t0", "t1", "t2", "t3")
# Every kind the library has; a new one needs its branch in `valid_values` and `equivalents`.
SCALAR_KINDS = tuple(kind for kind in KINDS if kind not in ("list", "object"))
# Case variants and Unicode folds on purpose: the lowercase baseline must cope with them.
ENUM_POOL = st.sampled_from(["a", "A", "ss", "ß", "SS", "é", "É"]) | st.sampled_from(
    ["b", 0, 1, 1.5, -2, True, False, None]
)
ALIASES = st.sampled_from(["x", "X", "Ss", "a", "A", "ss", "ß"])
TOLERANCES = st.sampled_from([0.0, 0.005, 0.5, 1.0, 60.0])
ZONES = ("UTC", "Z", "+02:00", "-05:30", "Europe/Paris")
DATE_FORMATS = ("%d/%m/%Y", "%Y%m%d")
OFFSETS = st.integers(-14 * 60 + 1, 14 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m)))
INSTANTS = st.datetimes(
    min_value=datetime(1900, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.one_of(st.none(), OFFSETS),
)
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@st.composite
def arg_specs(draw: st.DrawFn, depth: int = 0) -> Node:
    """One argument's spec node, of any kind, with options and maybe a default."""
    kinds = SCALAR_KINDS + (("list", "object") if depth < 2 else ())
    kind = draw(st.sampled_from(kinds))
    node: Node = {"kind": kind}
    if kind == "casefold" and draw(st.booleans()):
        node["reason"] = "display names are case-insensitive"
    elif kind == "number":
        if draw(st.booleans()):
            node["tol"] = draw(TOLERANCES)
        if draw(st.booleans()):
            node["rel_tol"] = draw(st.sampled_from([0.0, 0.01, 0.1]))
        if draw(st.booleans()):
            node["coerce"] = draw(st.booleans())
    elif kind in ("integer", "boolean"):
        if draw(st.booleans()):
            node["coerce"] = draw(st.booleans())
    elif kind == "enum":
        values = draw(st.lists(ENUM_POOL, min_size=1, max_size=5, unique_by=enum_key))
        node["values"] = values
        keys = {enum_key(v) for v in values}
        aliases = draw(st.dictionaries(ALIASES, st.sampled_from(values), max_size=3))
        aliases = {a: t for a, t in aliases.items() if enum_key(a) not in keys}
        if aliases:
            node["aliases"] = aliases
    elif kind == "date":
        if draw(st.booleans()):
            formats = st.sampled_from(DATE_FORMATS)
            node["formats"] = draw(st.lists(formats, min_size=1, max_size=2, unique=True))
    elif kind == "datetime":
        if draw(st.booleans()):
            node["tol"] = draw(TOLERANCES)
        if draw(st.booleans()):
            node["naive_tz"] = draw(st.sampled_from(ZONES))
    # A text argument's rubric never changes a call verdict: test_rubric_properties.py.
    elif kind == "list":
        node["items"] = draw(arg_specs(depth + 1))
        if draw(st.booleans()):
            node["order"] = draw(st.sampled_from(["ordered", "unordered"]))
    elif kind == "object":
        node["args"] = draw(arg_maps(depth + 1))
    if draw(st.integers(0, 3)) == 0:
        # docs/formats.md: `null` is a valid default for every kind, whatever its rule accepts.
        node["default"] = draw(st.none() | valid_values(node))
    return node


def arg_maps(depth: int = 0) -> SearchStrategy[dict[str, Node]]:
    """A tool's (or a nested object's) arguments: names to spec nodes."""
    return st.dictionaries(NAMES, arg_specs(depth), max_size=4 if depth == 0 else 3)


@st.composite
def spec_dicts(draw: st.DrawFn, relax: bool = True) -> Node:
    """A native spec document with one to three tools and maybe an `extra_calls` relaxation."""
    names = draw(st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3, unique=True))
    tools = {name: {"version": 1, "args": draw(arg_maps())} for name in names}
    spec: Node = {"version": "prop", "tools": tools}
    if relax and draw(st.booleans()):
        relaxed = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        spec["relax"] = [{"allow": "extra_calls", "tools": relaxed, "reason": "read-only"}]
    return spec


def build_specs(spec: Node) -> SpecSet:
    """The spec set of a generated document, which must be valid."""
    specs, errors = parse_specs(spec, "prop")
    assert not errors, [str(e) for e in errors]
    assert specs is not None
    return specs


# --- values a rule accepts, and rewrites it forgives ----------------------------------------


def valid_values(node: Node) -> SearchStrategy[Any]:
    """Values that `node`'s rule accepts (each equals itself under the rule)."""
    kind = node["kind"]
    coerce = bool(node.get("coerce"))
    if kind in ("exact", "text", "ignored"):
        return PLAIN_JSON
    if kind == "casefold":
        return TEXT
    if kind == "number":
        numbers = INTEGERS | FLOATS
        return numbers | numbers.map(repr) if coerce else numbers
    if kind == "integer":
        integers = INTEGERS | st.integers(-(2**53), 2**53).map(float)
        return integers | INTEGERS.map(str) if coerce else integers
    if kind == "boolean":
        strings = st.sampled_from(["true", "false", "True", "FALSE"])
        return st.booleans() | strings if coerce else st.booleans()
    if kind == "enum":
        return st.sampled_from([*node["values"], *node.get("aliases", {})])
    if kind == "date":
        iso = st.dates().map(date.isoformat)
        formats = node.get("formats", [])
        if not formats:
            return iso
        dates = st.dates(min_value=date(1000, 1, 1))
        formatted = st.tuples(dates, st.sampled_from(formats)).map(lambda d: d[0].strftime(d[1]))
        return iso | formatted
    if kind == "datetime":
        return INSTANTS.map(datetime.isoformat)
    if kind == "list":
        return st.lists(valid_values(node["items"]), max_size=4)
    assert kind == "object"
    return object_values(node["args"])


@st.composite
def object_values(draw: st.DrawFn, args: dict[str, Node]) -> dict[str, Any]:
    """An object for `args`: each argument present (maybe null) or omitted."""
    value: dict[str, Any] = {}
    for name, sub in args.items():
        if draw(st.integers(0, 4)) == 0:
            continue
        null = null_is_valid(sub) and draw(st.integers(0, 9)) == 0
        value[name] = None if null else draw(valid_values(sub))
    return value


def null_is_valid(node: Node) -> bool:
    """True when an explicit null is valid for `node`: for every kind but an enum without it."""
    return node["kind"] != "enum" or None in node["values"]


def _ascii_case(text: str, upper: bool) -> str:
    return "".join((c.upper() if upper else c.lower()) if c.isascii() else c for c in text)


def equivalents(node: Node, value: Any) -> SearchStrategy[Any]:
    """Values that `node`'s rule holds equal to the valid `value` (docs/formats.md, kinds)."""
    kind = node["kind"]
    if kind in ("text", "ignored"):
        return PLAIN_JSON
    if kind == "enum":
        return st.sampled_from(_enum_equivalents(node, value))
    if value is None:
        return st.just(None)
    if kind == "exact":
        small_int = type(value) is int and abs(value) <= 2**53
        return st.sampled_from([value, float(value)] if small_int else [value])
    if kind == "casefold":
        return st.sampled_from([value, _ascii_case(value, True), _ascii_case(value, False)])
    if kind in ("number", "integer", "boolean"):
        return st.sampled_from(_scalar_equivalents(node, value))
    if kind == "date":
        return st.sampled_from(_date_equivalents(node, value))
    if kind == "datetime":
        return st.sampled_from(_datetime_equivalents(node, value))
    if kind == "list":
        items = st.tuples(*(equivalents(node["items"], v) for v in value)).map(list)
        return items.flatmap(st.permutations) if node.get("order") == "unordered" else items
    assert kind == "object"
    return object_equivalents(node["args"], value)


def _scalar_equivalents(node: Node, value: Any) -> list[Any]:
    if isinstance(value, str):
        return [value]
    kind, coerce = node["kind"], bool(node.get("coerce"))
    if kind == "boolean":
        return [value, *(["true" if value else "FALSE"] if coerce else [])]
    options = [value]
    if kind == "integer":
        value = int(value)
        options.append(value)
    if abs(value) <= 2**53:
        base = float(value)
        options.append(base)
        tol = node.get("tol", 0.0)
        if kind == "number" and tol:
            options += [base + tol / 2, base - tol / 2]
    if coerce:
        options.append(repr(value))
    return options


def _enum_equivalents(node: Node, value: Any) -> list[Any]:
    values, aliases = node["values"], node.get("aliases", {})
    key = enum_key(value)
    if key not in {enum_key(v) for v in values}:
        if value not in aliases:
            return [value]  # a null default the values do not list
        key = enum_key(aliases[value])
    return [
        *(v for v in values if enum_key(v) == key),
        *(a for a, t in aliases.items() if enum_key(t) == key),
    ]


def _date_equivalents(node: Node, value: str) -> list[str]:
    formats = node.get("formats", [])
    if ISO_DATE.fullmatch(value):
        parsed = date.fromisoformat(value)
    else:
        parsed = next(datetime.strptime(value, f).date() for f in formats if _parses(value, f))
    options = [value, parsed.isoformat()]
    if parsed.year >= 1000:
        options += [parsed.strftime(f) for f in formats]
    return options


def _parses(text: str, fmt: str) -> bool:
    try:
        datetime.strptime(text, fmt)
    except ValueError:
        return False
    return True


def _datetime_equivalents(node: Node, value: str) -> list[str]:
    instant = datetime.fromisoformat(value)
    options = [value]
    if instant.tzinfo is not None:
        for zone in (UTC, timezone(timedelta(hours=1)), timezone(timedelta(hours=-7))):
            options.append(instant.astimezone(zone).isoformat())
        if value.endswith("+00:00"):
            options.append(value.removesuffix("+00:00") + "Z")
    tol = node.get("tol", 0.0)
    if tol:
        options.append((instant + timedelta(seconds=tol / 2)).isoformat())
    return options


@st.composite
def object_equivalents(draw: st.DrawFn, args: dict[str, Node], value: dict[str, Any]) -> Any:
    """An object equal to `value` under `args`: values rewritten, defaults omitted or spelled."""
    result: dict[str, Any] = {}
    for name, sub in args.items():
        if sub["kind"] in ("text", "ignored"):
            if draw(st.booleans()):
                result[name] = draw(PLAIN_JSON)
        elif name in value:
            present = value[name]
            if "default" in sub and json_equal(present, sub["default"]) and draw(st.booleans()):
                continue
            result[name] = draw(equivalents(sub, present))
        elif "default" in sub and draw(st.booleans()):
            result[name] = draw(equivalents(sub, sub["default"]))
    return result


@st.composite
def rules_and_values(draw: st.DrawFn) -> tuple[Node, Any]:
    """A spec node and a value valid for it."""
    node = draw(arg_specs())
    return node, draw(valid_values(node))


@st.composite
def rules_values_and_others(draw: st.DrawFn, rewrites_only: bool) -> tuple[Node, Any, Any]:
    """A spec node, a value valid for it, and a rewrite its rule forgives (or any valid value)."""
    node, value = draw(rules_and_values())
    others = equivalents(node, value)
    return node, value, draw(others if rewrites_only else others | valid_values(node))


# --- plans and produced calls ---------------------------------------------------------------


@st.composite
def plain_calls(draw: st.DrawFn, spec: Node, min_size: int = 0) -> list[Node]:
    """Expected calls with valid arguments and no `$any` markers."""
    tools = spec["tools"]
    names = draw(st.lists(st.sampled_from(sorted(tools)), min_size=min_size, max_size=4))
    return [{"name": n, "args": draw(object_values(tools[n]["args"]))} for n in names]


def as_produced(call: Node, as_text: bool) -> Node:
    """An expected call as the agent would send it: args as an object or as JSON text."""
    args = call["args"]
    return {
        "name": call["name"],
        "args": orjson.dumps(args).decode() if as_text else copy.deepcopy(args),
    }


def is_any(value: Any) -> bool:
    """True for an `{"$any": [...]}` marker."""
    return isinstance(value, dict) and list(value) == ["$any"]


@st.composite
def plans_and_calls(draw: st.DrawFn, spec: Node, noise: bool = True) -> tuple[list[Any], list[Any]]:
    """Several plans (with `$any`) over small value pools, and calls made from one of them.

    Small pools make produced calls fit several expected calls; with `noise`, calls are also
    dropped, changed, duplicated, and extra, unknown or malformed calls are added.
    """
    tools = spec["tools"]
    names = sorted(tools)
    pools = {
        (tool, arg): draw(st.lists(valid_values(node), min_size=1, max_size=3))
        for tool in names
        for arg, node in tools[tool]["args"].items()
    }

    def pick_args(tool: str, markers: bool) -> dict[str, Any]:
        args: dict[str, Any] = {}
        for arg in tools[tool]["args"]:
            if draw(st.integers(0, 4)) == 0:
                continue
            pool = pools[tool, arg]
            if markers and len(pool) > 1 and draw(st.booleans()):
                chosen = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool)))
                args[arg] = {"$any": chosen}
            else:
                args[arg] = draw(st.sampled_from(pool))
        return args

    plans = [
        [
            {"name": tool, "args": pick_args(tool, markers=True)}
            for tool in draw(st.lists(st.sampled_from(names), max_size=4))
        ]
        for _ in range(draw(st.integers(1, 3)))
    ]
    actions = (
        ["keep", "equivalent", "mutate", "drop", "duplicate"] if noise else ["keep", "equivalent"]
    )
    calls: list[Any] = []
    for call in draw(st.sampled_from(plans)):
        name = call["name"]
        action = draw(st.sampled_from(actions))
        if action == "drop":
            continue
        args = {
            k: draw(st.sampled_from(v["$any"])) if is_any(v) else v for k, v in call["args"].items()
        }
        if action == "equivalent":
            args = draw(object_equivalents(tools[name]["args"], args))
        elif action == "mutate":
            args = pick_args(name, markers=False)
        calls.append(as_produced({"name": name, "args": args}, draw(st.booleans())))
        if action == "duplicate":
            calls.append(as_produced(calls[-1], as_text=False))
    for _ in range(draw(st.integers(0, 2)) if noise else 0):
        extra = draw(st.sampled_from(["known", "unknown", "malformed"]))
        tool = draw(st.sampled_from(names))
        if extra == "known":
            calls.append({"name": tool, "args": pick_args(tool, markers=False)})
        elif extra == "unknown":
            calls.append({"name": "no_such_tool", "args": {}})
        else:
            calls.append({"name": tool, "args": '{"broken": '})
    return plans, calls


def codes(result: CaseResult) -> Counter[str]:
    """The multiset of a result's mismatch codes."""
    return Counter(m.code for m in result.mismatches)


def output(calls: list[Any], case_id: str = "c") -> Trajectory:
    """The trajectory of an outputs line with these calls."""
    return parse_output({"id": case_id, "calls": calls})


# --- 1. a call always matches itself --------------------------------------------------------


@RULE_SETTINGS
@given(rules_and_values())
def test_a_valid_value_matches_itself(rule_and_value: tuple[Node, Any]) -> None:
    node, value = rule_and_value
    assert matches(compile_rule(node), value, value)


@RULE_SETTINGS
@given(rules_values_and_others(rewrites_only=True))
@example(({"kind": "number", "coerce": True}, 2**53 + 1, str(2**53 + 1)))
@example(({"kind": "enum", "values": ["a", None], "aliases": {"x": None}}, None, "x"))
def test_a_rewrite_the_rule_forgives_matches(case: tuple[Node, Any, Any]) -> None:
    node, value, rewritten = case
    assert matches(compile_rule(node), value, rewritten)


@SETTINGS
@given(st.data())
def test_a_plan_produced_verbatim_passes(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    calls = data.draw(plain_calls(spec), label="calls")
    case = parse_case({"id": "c", "plans": [calls]}, specs)
    as_text = data.draw(st.booleans(), label="args as JSON text")
    result = score_case(specs, case, output([as_produced(c, as_text) for c in calls]))
    assert result.passed, result.mismatches


# --- 2. shuffling produced calls never changes a verdict ------------------------------------


@SETTINGS
@given(st.data())
def test_shuffling_calls_never_changes_the_verdict(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    plans, calls = data.draw(plans_and_calls(spec), label="plans, calls")
    case = parse_case({"id": "c", "plans": plans}, specs)
    shuffled = data.draw(st.permutations(calls), label="shuffled")
    before = score_case(specs, case, output(calls))
    after = score_case(specs, case, output(shuffled))
    assert before.passed == after.passed
    assert codes(before) == codes(after)
    assert before.plan == after.plan
    assert before.name_ok == after.name_ok
    assert before.baselines["lowercase"] == after.baselines["lowercase"]


# --- 3. scoring is deterministic ------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_scoring_is_deterministic(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    cases: list[Case] = []
    outputs: list[Trajectory] = []
    for index in range(data.draw(st.integers(1, 4), label="cases")):
        plans, calls = data.draw(plans_and_calls(spec), label=f"case {index}")
        cases.append(parse_case({"id": f"c{index}", "plans": plans}, specs))
        if data.draw(st.integers(0, 4), label=f"output {index} missing") > 0:
            outputs.append(output(calls, f"c{index}"))
    if data.draw(st.booleans(), label="unmatched output"):
        outputs.append(output([], "not-a-case"))
    outputs = data.draw(st.permutations(outputs), label="output order")

    for case in cases:
        trajectory = next((t for t in outputs if t.case_id == case.id), output([], case.id))
        assert score_case(specs, case, trajectory) == score_case(specs, case, trajectory)

    first, second = score(specs, cases, outputs), score(specs, cases, outputs)
    assert list(first) == list(second)
    assert first.summary().to_dict() == second.summary().to_dict()
    assert first.unmatched_output_ids == second.unmatched_output_ids


# --- 4. arbitrary produced JSON is scored, never raised -------------------------------------


@st.composite
def junk_calls(draw: st.DrawFn, spec: Node) -> Any:
    """Anything an agent might put in `calls`, from junk to almost-valid calls of real tools."""
    tools = spec["tools"]
    tool = draw(st.sampled_from(sorted(tools)))
    args_node = tools[tool]["args"]
    shape = draw(st.sampled_from(["json", "raw args", "near miss"]))
    if shape == "json":
        return draw(ANY_JSON)
    if shape == "raw args":
        args = draw(
            ANY_JSON | TEXT | TRICKY_TEXT | ANY_JSON.map(lambda v: orjson.dumps(v).decode())
        )
        call: dict[str, Any] = {"name": tool, "args": args}
        if draw(st.booleans()):
            call["id"] = draw(ANY_JSON)
        if draw(st.booleans()):
            call["result"] = draw(ANY_JSON)
        return call
    args = draw(object_values(args_node))
    names = st.sampled_from([*args_node, "zz"])
    args.update(draw(st.dictionaries(names, ANY_JSON, max_size=3)))
    return {"name": tool, "args": args}


@SETTINGS
@given(st.data())
def test_any_produced_json_is_scored_without_raising(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    abstention = data.draw(st.booleans(), label="abstention case")
    plans = [] if abstention else [data.draw(plain_calls(spec, min_size=1), label="plan")]
    case = parse_case({"id": "c", "plans": plans}, specs)
    calls = data.draw(st.lists(junk_calls(spec), max_size=4), label="calls")
    trajectory = output(calls)
    result = score_case(specs, case, trajectory)
    assert isinstance(result, CaseResult)
    if abstention and calls:
        assert not result.passed, "an abstention case passed although calls were made"
    score(specs, [case], [trajectory]).summary().to_dict()


@SETTINGS
@given(ANY_JSON)
def test_only_a_calls_field_that_is_not_a_list_is_an_output_error(calls: Any) -> None:
    try:
        trajectory = parse_output({"id": "c", "calls": calls})
    except OutputError:
        assert not isinstance(calls, list)
        return
    assert calls is None or isinstance(calls, list)
    assert len(trajectory.calls) == (0 if calls is None else len(calls))


# --- 5. the lowercase baseline is never stricter than the rules -----------------------------


@RULE_SETTINGS
@given(rules_values_and_others(rewrites_only=False))
@example(({"kind": "enum", "values": ["b", "a", "A"], "aliases": {"x": "a"}}, "a", "x"))
@example(({"kind": "enum", "values": ["a", "ss"], "aliases": {"x": "ss", "X": "a"}}, "ss", "x"))
def test_lowercase_rule_accepts_what_the_rule_accepts(case: tuple[Node, Any, Any]) -> None:
    node, value, other = case
    rule = compile_rule(node)
    if matches(rule, value, other):
        assert matches(rule.lowercased(), value, other)


@SETTINGS
@given(st.data())
def test_lowercase_baseline_passes_whenever_the_rules_pass(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    noise = data.draw(st.booleans(), label="noise")
    plans, calls = data.draw(plans_and_calls(spec, noise), label="plans, calls")
    case = parse_case({"id": "c", "plans": plans}, specs)
    trajectory = output(calls)
    result = score_case(specs, case, trajectory)
    if result.passed:
        assert result.baselines["lowercase"]
        # score_case short-cuts the baseline when the rules pass; decide it on its own too.
        lowercase = best_plan(
            specs.lowercase_rules, specs.extra_ok, case.plans, trajectory.calls, diagnose=False
        )
        assert lowercase.passed


# --- 6. the exact baseline passes a verbatim copy of the first plan -------------------------


@SETTINGS
@given(st.data())
def test_exact_baseline_passes_the_first_plan_verbatim(data: st.DataObject) -> None:
    spec = data.draw(spec_dicts(), label="spec")
    specs = build_specs(spec)
    first = data.draw(plain_calls(spec), label="first plan")
    others = data.draw(st.lists(plain_calls(spec), max_size=2), label="other plans")
    case = parse_case({"id": "c", "plans": [first, *others]}, specs)
    as_text = data.draw(st.booleans(), label="args as JSON text")
    result = score_case(specs, case, output([as_produced(c, as_text) for c in first]))
    assert result.baselines["exact"]
    assert result.passed, result.mismatches
