"""BFCL possible answers -> toolscore expected calls and plans.

A BFCL ground truth lists calls `{name: {arg: [acceptable values]}}`; the list holds every
acceptable value of the argument, and `""` in it means the argument may be omitted. The
conversion:

- Several acceptable values -> `{"$any": [...]}`; one -> the value itself.
- Values of a dict argument are per-key lists again (BFCL's `dict_checker`): with an `object`
  rule they become per-key `$any`; with an `exact` rule the object is expanded into every
  combination as whole-object alternatives. Lists of dicts likewise, item by item.
- `""` (may be omitted) is not a default. An omitted argument with a spec default means that
  default, so when the documented default is one of the acceptable values nothing more is
  needed. Otherwise toolscore cannot put "omitted" inside `$any`, so the omission becomes an
  alternative plan: one plan with the argument, one without (for several omittable arguments,
  every combination, the first plan being BFCL's first possible answer). Inside a dict, an
  omittable key becomes whole-object alternatives with and without it, within `$any`.
- `""` on a `required` parameter is not an omission (BFCL rejects the omission before it
  looks at the answer); it stays the literal empty string when it is the only value.
- An argument the function doc lacks can only be omitted in BFCL (it rejects any value as an
  unexpected parameter): only its omission is kept when `""` allows it.

Values of another type than the doc's (BFCL's "variables", such as a name string for an
integer) are compared with `==` by BFCL; such an argument gets the `exact` rule (decided by
the importer with `fits`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from toolscore.bfcl.schema import DICT_TYPES, LIST_TYPES, Node, canonical
from toolscore.core.values import json_equal

OMIT: Final = ""
"""BFCL's marker for "this argument may be omitted"."""

MAX_PLANS = 1024
"""More alternative plans than this for one case (omittable arguments without a default,
multiplied over parallel calls) is refused rather than written."""

MAX_ALTERNATIVES = 1024
"""The same bound for the whole-object alternatives of one value."""


class AnswerError(ValueError):
    """A possible answer that cannot be converted; the message names the argument."""


class _Absent:
    """An option that leaves the argument (or key) out."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


def is_omit(value: Any) -> bool:
    """True for BFCL's `""` marker."""
    return type(value) is str and value == OMIT


def declared_type(prop: Any) -> str | None:
    """The `type` of a parameter schema from the case's own doc, if it has one."""
    if isinstance(prop, Mapping) and isinstance(prop.get("type"), str):
        return str(prop["type"])
    return None


def _item_type(prop: Any) -> str | None:
    return declared_type(prop.get("items")) if isinstance(prop, Mapping) else None


def fits(node: Node, value: Any, prop: Any) -> bool:
    """Whether a rule accepts one BFCL alternative of an argument as an expected value.

    `prop` is the argument's schema in the case's own doc: it says whether a dict value is a
    BFCL per-key answer (a dict argument, or a dict item of a list) or a plain value.
    """
    declared = declared_type(prop)
    if declared in DICT_TYPES and isinstance(value, dict):
        return node["kind"] == "exact" or _answer_dict_fits(node, value)
    if declared in LIST_TYPES and _item_type(prop) in DICT_TYPES and isinstance(value, list):
        if node["kind"] == "exact":
            return True
        if node["kind"] != "list":
            return False
        items = node["items"]
        return all(
            isinstance(v, dict) and (items["kind"] == "exact" or _answer_dict_fits(items, v))
            for v in value
        )
    return plain_fits(node, value)


def _answer_dict_fits(node: Node, value: Mapping[str, Any]) -> bool:
    if node["kind"] != "object":
        return False
    args = node["args"]
    for key, alts in value.items():
        if key not in args:
            return False
        options = alts if isinstance(alts, list) else [alts]
        if not all(is_omit(a) or plain_fits(args[key], a) for a in options):
            return False
    return True


def plain_fits(node: Node, value: Any) -> bool:
    """Whether a rule accepts a plain JSON value (null always: it compares as null)."""
    kind = node["kind"]
    if value is None or kind == "exact":
        return True
    if kind == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "number":
        return isinstance(value, int | float)
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind == "list":
        return isinstance(value, list) and all(plain_fits(node["items"], v) for v in value)
    if kind == "object":
        args = node["args"]
        return isinstance(value, dict) and all(
            k in args and plain_fits(args[k], v) for k, v in value.items()
        )
    return False


def alternatives(node: Node, value: Any, prop: Any) -> list[Any]:
    """One BFCL alternative as toolscore expected values (several when it is expanded)."""
    declared = declared_type(prop)
    if declared in DICT_TYPES and isinstance(value, dict):
        return _answer_dict(node, value)
    if declared in LIST_TYPES and _item_type(prop) in DICT_TYPES and isinstance(value, list):
        if node["kind"] == "list":
            return [[_one(_answer_dict(node["items"], item)) for item in value]]
        return [list(items) for items in _bounded([_answer_dict(node, v) for v in value])]
    _check_plain(value)
    return [value]


def _answer_dict(node: Node, value: Mapping[str, Any]) -> list[Any]:
    """A BFCL per-key answer: whole-object alternatives (with per-key `$any` under `object`)."""
    per_key: list[tuple[str, list[Any]]] = []
    for key, alts in value.items():
        options = alts if isinstance(alts, list) else [alts]
        values = _unique(a for a in options if not is_omit(a))
        for v in values:
            _check_plain(v)
        omittable = any(is_omit(a) for a in options) or not values
        if node["kind"] == "object" and values:  # a rule per key: one choice, `$any` inside
            present = _one(values)
            choices: list[Any] = [with_omission(options, present) if omittable else present]
        else:
            choices = list(values)
            if omittable:
                choices = _ordered_absence(options, choices)
        per_key.append((key, choices))
    combos = _bounded([choices for _, choices in per_key])
    return [
        {key: v for (key, _), v in zip(per_key, combo, strict=True) if v is not ABSENT}
        for combo in combos
    ]


def _ordered_absence(options: Sequence[Any], choices: list[Any]) -> list[Any]:
    """Choices with ABSENT added where BFCL's list first has `""` (first when it leads)."""
    if options and is_omit(options[0]):
        return [ABSENT, *choices]
    return [*choices, ABSENT]


def _one(values: Sequence[Any]) -> Any:
    return values[0] if len(values) == 1 else {"$any": list(values)}


def _unique(values: Iterator[Any] | Sequence[Any]) -> list[Any]:
    """The values without repeats (by JSON identity, `same`), in their first order."""
    seen: set[str] = set()
    unique = []
    for v in values:
        key = canonical(v)
        if key not in seen:
            seen.add(key)
            unique.append(v)
    return unique


def _bounded(choices: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Every combination of one choice from each list, refused before it is built when
    there would be more than MAX_ALTERNATIVES."""
    count = 1
    for options in choices:
        count *= len(options)
        if count > MAX_ALTERNATIVES:
            raise AnswerError(f"would need more than {MAX_ALTERNATIVES} whole-value alternatives")
    return list(itertools.product(*choices))


def _check_plain(value: Any) -> None:
    """A plain expected value may not hold a dict toolscore would read as a marker."""
    if isinstance(value, dict):
        if "$any" in value or "$ref" in value:
            raise AnswerError(
                "a value holds a '$any' or '$ref' key, which toolscore reads as a marker"
            )
        for v in value.values():
            _check_plain(v)
    elif isinstance(value, list):
        for v in value:
            _check_plain(v)


def argument_options(name: str, alts: Any, node: Node, prop: Any, required: bool) -> list[Any]:
    """The options for one argument of an expected call: an expected value, ABSENT, or both."""
    options = alts if isinstance(alts, list) else [alts]
    omittable = any(is_omit(a) for a in options) and not required
    values = [a for a in options if not is_omit(a)]
    if required and not values:
        values = [OMIT]  # a required argument: "" is the literal empty string
    if prop is None:  # the function doc has no such argument: BFCL only accepts its omission
        if omittable:
            return [ABSENT]
        if not values:
            raise AnswerError(f"argument {name!r}: no acceptable value")
    if not values:
        return [ABSENT]
    expected: list[Any] = []
    for v in values:
        expected.extend(alternatives(node, v, prop))
    present = _one(_unique(expected))
    if not omittable:
        return [present]
    if "default" in node and any(json_equal(v, node["default"]) for v in values):
        return [present]  # omitting it means the documented default, an acceptable value
    return [with_omission(options, present)]


def with_omission(options: Sequence[Any], present: Any) -> dict[str, Any]:
    """`present` (a value or a `$any`) with leaving the argument out as one more alternative,
    in BFCL's order (first when its list leads with `""`)."""
    marker = {"$omitted": True}
    alternatives = present["$any"] if _is_any(present) else [present]
    if options and is_omit(options[0]):
        return {"$any": [marker, *alternatives]}
    return {"$any": [*alternatives, marker]}


def _is_any(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == {"$any"}


def plans(calls: Sequence[tuple[str, list[tuple[str, list[Any]]]]]) -> list[list[dict[str, Any]]]:
    """Every plan: for each call, one choice per argument (ABSENT leaves it out)."""
    variants: list[list[dict[str, Any]]] = []
    for name, args in calls:
        combos = itertools.product(*(options for _, options in args))
        call_variants = []
        for combo in combos:
            chosen = {arg: v for (arg, _), v in zip(args, combo, strict=True) if v is not ABSENT}
            call_variants.append({"name": name, "args": chosen})
            if len(call_variants) > MAX_PLANS:
                break
        variants.append(call_variants)
    count = 1
    for call_variants in variants:
        count *= len(call_variants)
        if count > MAX_PLANS:
            raise AnswerError(
                f"would need more than {MAX_PLANS} alternative plans (omittable arguments "
                "without a documented default, over all calls)"
            )
    return [list(plan) for plan in itertools.product(*variants)]
