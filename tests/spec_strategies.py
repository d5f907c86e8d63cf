"""Hypothesis strategies of specs, plans and calls, shared by the property tests of the
scorer and of rubrics."""

from __future__ import annotations

import copy
import re
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import orjson
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from toolscore.core.rules import KINDS
from toolscore.core.rules.strings import NORMALIZATIONS
from toolscore.core.values import enum_key, json_equal
from toolscore.specs.loading import SpecSet, parse_specs

Node = dict[str, Any]


"""A spec node (`{"kind": ..., ...}`) or a call as JSON (`{"name": ..., "args": ...}`)."""


SETTINGS = settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow])


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


NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True)


TOOL_NAMES = ("t0", "t1", "t2", "t3")


SCALAR_KINDS = tuple(kind for kind in KINDS if kind not in ("list", "object"))


ENUM_POOL = st.sampled_from(["a", "A", "ss", "ß", "SS", "é", "É"]) | st.sampled_from(
    ["b", 0, 1, 1.5, -2, True, False, None]
)


PATTERNS = ("ord_[0-9a-f]{4}", "[A-Z]{2,3}-[0-9]+", "x")
"""Regexes of `pattern` rules: simple ones that never backtrack (the time limit is tested in
tests/core/test_string_rules.py)."""


ONE_OF_POOL = st.sampled_from(["a", "A", "ß", "json", 0, 1, 1.5, True, False])


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
    elif kind == "normalized":
        chosen = draw(st.lists(st.sampled_from(NORMALIZATIONS), min_size=1, unique=True))
        node.update(dict.fromkeys(chosen, True))
        node["reason"] = "the service normalises these strings"
    elif kind == "pattern":
        node["regex"] = draw(st.sampled_from(PATTERNS))
    elif kind == "one_of":
        node["values"] = draw(st.lists(ONE_OF_POOL, min_size=1, max_size=4, unique_by=enum_key))
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


def valid_values(node: Node) -> SearchStrategy[Any]:
    """Values that `node`'s rule accepts (each equals itself under the rule)."""
    kind = node["kind"]
    coerce = bool(node.get("coerce"))
    if kind in ("exact", "text", "ignored"):
        return PLAIN_JSON
    if kind in ("casefold", "normalized"):
        return TEXT
    if kind == "pattern":
        return st.from_regex(node["regex"], fullmatch=True)
    if kind == "one_of":
        return st.sampled_from(node["values"])
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
    if kind == "normalized":
        return st.sampled_from(_normalized_equivalents(node, value))
    if kind == "pattern":
        return st.from_regex(node["regex"], fullmatch=True)
    if kind == "one_of":
        return st.sampled_from(node["values"])
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


def _normalized_equivalents(node: Node, value: str) -> list[str]:
    """`value` with differences only the options that are set forgive."""
    options = [value]
    if node.get("casefold"):
        options += [_ascii_case(value, True), _ascii_case(value, False)]
    if node.get("strip"):
        options.append(f"  {value}\t")
    if node.get("strip_punctuation"):
        options.append(f"{value}!")
    if node.get("nfkc"):
        options.append(value.replace("fi", "\ufb01"))
    return options


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
