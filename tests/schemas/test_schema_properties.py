"""Property tests: documents generated from the loaders' tables (rules of every kind with
good and bad options, nested in lists and objects; relaxations; outputs lines' structure)
are accepted by the schema exactly when the loader accepts them."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from schema_goldens import Golden, load_problem
from spec_strategies import SETTINGS, spec_dicts
from toolscore.core.rules.compile import KIND_OPTIONS, KINDS
from toolscore.core.rules.strings import NORMALIZATIONS
from toolscore.inputs.formats import FORMATS, TRANSCRIPT_KEYS
from toolscore.schemas import generate
from toolscore.specs.loading import RELAXATIONS

SPEC = jsonschema.Draft202012Validator(generate("spec"))
OUTPUTS = jsonschema.Draft202012Validator(generate("outputs"))
WRONG = st.sampled_from(["x", 3, -1, 2.5, True, [], ["x"], {"x": 1}, None])
"""Values of every JSON type, wrong for most options."""
WORDS = st.sampled_from(["a", "b", "EUR", "", "Paris"])
TOLERANCE = st.sampled_from([0, 0.005, 1, 2.5, -0.5, -1]) | st.floats(0, 1e6)


def _strings(unique: bool) -> st.SearchStrategy[list[str]]:
    return st.lists(WORDS, max_size=3, unique=unique)


def _good_option(draw: st.DrawFn, kind: str, option: str, depth: int) -> Any:
    """A value for `option` of `kind` of the right JSON type (it may still break a bound the
    schema states: a negative tolerance, an empty list, a repeated value)."""
    if option in NORMALIZATIONS or option == "coerce":
        return draw(st.booleans())
    if option == "reason":
        return draw(st.sampled_from([None, "why it is safe", "", "  "]))
    if option in ("tol", "rel_tol"):
        return draw(TOLERANCE)
    if option == "regex":
        return draw(st.sampled_from(["a+", "[0-9]{3}", ""]))
    if option == "values":
        return draw(_strings(unique=draw(st.booleans())) | st.just(["a", None]))
    if option == "formats":
        return draw(st.lists(st.sampled_from(["%d/%m/%Y", "%Y"]), max_size=2))
    if option == "naive_tz":
        return draw(st.sampled_from([None, "UTC", "+02:00", "Europe/Paris"]))
    if option == "order":
        return draw(st.sampled_from(["ordered", "unordered", "sorted"]))
    if option == "items":
        return draw(rules(depth + 1))
    if option == "args":
        return draw(st.dictionaries(st.sampled_from(["x", "y"]), rules(depth + 1), max_size=2))
    if option in ("rubric", "aliases"):
        return None if option == "rubric" else {}
    raise AssertionError(f"no values for {kind}.{option}: add them here")


@st.composite
def rules(draw: st.DrawFn, depth: int = 0) -> Any:
    """A rule node: a kind name, or a mapping of some of its kind's options, with at times a
    value of the wrong type, an unknown option or an unknown kind."""
    kinds = [k for k in KINDS if depth < 2 or k not in ("list", "object")]
    kind = draw(st.sampled_from([*kinds, "numbr"]))
    if draw(st.integers(0, 4)) == 0:
        return kind
    node: dict[str, Any] = {"kind": kind}
    for option in ("reason", *KIND_OPTIONS.get(kind, ())):
        if draw(st.integers(0, 2)):
            node[option] = _good_option(draw, kind, option, depth)
    fault = draw(st.integers(0, 6))
    if fault == 0:
        # (not `rubric`: a name the spec's rubrics lack is beyond a schema of the file alone)
        options = [o for o in KIND_OPTIONS.get(kind, ()) if o != "rubric"]
        option = draw(st.sampled_from([*options, "reason", "kind"]))
        # (nor a `naive_tz` string: which zones exist is the zone database's to say)
        wrong = WRONG.filter(lambda v: not isinstance(v, str)) if option == "naive_tz" else WRONG
        node[option] = draw(wrong)
    elif fault == 1:
        node[draw(st.sampled_from(["tol", "rubric", "bogus"]))] = 1
    elif fault == 2:
        node.pop("kind")
    # An alias of a value (after the faults, which may change the values: an alias of
    # something not among them is beyond a schema).
    values = node.get("values")
    first = values[0] if isinstance(values, list) and values else None
    unset = node.get("aliases", {}) == {}
    if kind == "enum" and first is not None and unset and draw(st.booleans()):
        node["aliases"] = {"zz_alias": first}
    return node


def _loads(document: Any) -> bool:
    return load_problem(Golden("spec", "generated", document)) is None


@SETTINGS
@given(rule=rules())
def test_a_generated_rule_is_valid_to_the_schema_iff_it_loads(rule: Any) -> None:
    document = {"tools": {"t": {"args": {"a": rule}}}}
    assert SPEC.is_valid(document) == _loads(document)


@SETTINGS
@given(rule=rules() | st.none(), wrapped=st.booleans())
def test_a_generated_x_compare_is_valid_to_the_schema_iff_it_loads(
    rule: Any, wrapped: bool
) -> None:
    """In a tool list, on a property whose `enum` an `x-compare: enum` may take."""
    parameters = {"type": "object", "properties": {"a": {"enum": ["a"], "x-compare": rule}}}
    definition = {"name": "t", "parameters": parameters}
    document = [{"type": "function", "function": definition} if wrapped else definition]
    assert SPEC.is_valid(document) == _loads(document)


@SETTINGS
@given(spec=spec_dicts())
def test_every_valid_generated_spec_validates(spec: dict[str, Any]) -> None:
    assert _loads(spec)
    assert SPEC.is_valid(spec)


@st.composite
def relaxations(draw: st.DrawFn) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if draw(st.integers(0, 5)):
        entry["allow"] = draw(st.sampled_from([*RELAXATIONS, "extra_call", 3]))
    if draw(st.integers(0, 3)):
        entry["tools"] = draw(st.sampled_from([["t"], [], "t", [3]]))
    if draw(st.integers(0, 5)):
        entry["reason"] = draw(st.sampled_from(["read-only", "", " ", None, 2]))
    if draw(st.integers(0, 8)) == 0:
        entry["why"] = "x"
    return entry


@SETTINGS
@given(entries=st.lists(relaxations(), max_size=2))
def test_generated_relaxations_are_valid_to_the_schema_iff_they_load(
    entries: list[dict[str, Any]],
) -> None:
    document = {"tools": {"t": {}}, "relax": entries}
    assert SPEC.is_valid(document) == _loads(document)


REPLIES = [
    {"object": "chat.completion", "choices": []},
    {"object": "chat.completion", "choices": {}},
    {"object": "response", "output": []},
    {"type": "message", "role": "assistant", "model": "m", "content": []},
    {"type": "message", "role": "user", "model": "m", "content": []},
    {"type": "ai", "content": "hi"},
    {"type": "ai", "role": "assistant", "content": "hi"},
    {"candidates": []},
    {"prompt_feedback": {"block_reason": "SAFETY"}},
    {"candidates": None, "promptFeedback": None},
]
"""Response objects of every shape, and near misses that are none."""
CALLS = st.sampled_from([[], None, [{"name": "t", "args": {}}], "x"])


@st.composite
def output_lines(draw: st.DrawFn) -> dict[str, Any]:
    """An outputs line's structure: its id, calls, a transcript key, a format, turns, a
    trial, a text response, each present or not, of a good or a bad shape."""
    line: dict[str, Any] = {}
    if draw(st.integers(0, 8)):
        line["id"] = draw(st.sampled_from(["c1", "", 3]))
    if draw(st.booleans()):
        line["calls"] = draw(CALLS)
    if draw(st.integers(0, 2)) == 0:
        line[draw(st.sampled_from(TRANSCRIPT_KEYS))] = draw(st.sampled_from([[], None, "x"]))
    if draw(st.integers(0, 3)) == 0:
        line["format"] = draw(st.sampled_from([*FORMATS, "anthropc"]))
    if draw(st.integers(0, 3)) == 0:
        turn = draw(st.sampled_from([{"calls": []}, {"calls": None, "response": "ok"}, {}]))
        line["turns"] = draw(st.sampled_from([[turn], [], None]))
    if draw(st.integers(0, 3)) == 0:
        line["trial"] = draw(st.sampled_from([0, 7, "a", "", 1.5, True, None]))
    if draw(st.integers(0, 2)) == 0:
        line["response"] = draw(st.sampled_from(["done", None, *REPLIES, {"text": "hi"}, 3]))
    if draw(st.integers(0, 4)) == 0:
        line.update(draw(st.sampled_from(REPLIES)))
    if draw(st.integers(0, 4)) == 0:
        line["usage"] = {}
    if draw(st.integers(0, 4)) == 0:
        line["choice"] = draw(st.sampled_from([0, None, -1]))
    return line


@SETTINGS
@given(line=output_lines())
def test_a_generated_outputs_line_is_valid_to_the_schema_iff_it_reads(
    line: dict[str, Any],
) -> None:
    reads = load_problem(Golden("outputs", "generated", line)) is None
    assert OUTPUTS.is_valid(line) == reads


CASES = jsonschema.Draft202012Validator(generate("cases"))
CASE_SPEC = {"tools": {"refund": {"args": {"order_id": "exact"}}}}
CALL = {"name": "refund", "args": {}}
CASE_VALUES: dict[str, list[Any]] = {
    "id": ["c1", "", 3],
    "plans": [[], [[CALL]], [[{**CALL, "bogus": 1}]], [{}], "x", None],
    "turns": [[{"plans": []}], [{"plans": [[CALL]], "goal_state": "plan"}], [], [{}], [[]]],
    "prompt": ["hi", {"messages": []}],
    "tags": [["refunds"], "refunds", [1]],
    "score_turns": ["final", "all", "last"],
    "max_calls": [1, 0, "2", None],
    "variant_of": ["g", ""],
    "variant": ["french", ""],
    "forbid": [[{"name": "refund", "args": {"order_id": "zz"}}], [{"name": "refund", "x": 1}], {}],
    "response_rubrics": [[], [{"rubrik": "r"}], "polite"],
    "required_outputs": [["done"], [" "], "done", None],
    "state_checks": [
        [{"name": "n", "path": "/a", "equals": 1}],
        [{"name": "n", "table": "orders", "count": 1}],
        [{"name": "n", "path": "/a"}],
        [],
        None,
    ],
    "description": ["kept, never scored"],
}
"""Good and bad values of each case key (none a refusal beyond a schema: no tool the spec
lacks, no label, no rubric name)."""


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    """A case of some keys of `CASE_VALUES`, each good or bad."""
    keys = draw(st.lists(st.sampled_from(sorted(CASE_VALUES)), max_size=5, unique=True))
    case = {key: draw(st.sampled_from(CASE_VALUES[key])) for key in keys}
    if draw(st.integers(0, 5)):
        case.setdefault("id", "c1")
    if draw(st.integers(0, 3)) and "turns" not in case:
        case.setdefault("plans", [])
    return case


@SETTINGS
@given(case=cases())
def test_a_generated_case_is_valid_to_the_schema_iff_it_loads(case: dict[str, Any]) -> None:
    loads = load_problem(Golden("cases", "generated", case, CASE_SPEC)) is None
    assert CASES.is_valid(case) == loads
