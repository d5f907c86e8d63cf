"""Model outputs made from BFCL's possible answers: the first answer, and systematic changes
to it, in BFCL's decoded form (`[{name: {argument: value}}]`).

Each perturbation returns None where it does not apply (nothing to reverse, no integer to
turn into a float, ...), so that only cases it really changes are counted. The changed
argument names are returned too, for classifying disagreements.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bfcl_env import doc_params

Output = list[dict[str, Any]]
Changed = tuple[Output, list[str]] | None
"""A perturbed output and the argument names it changed, or None when it does not apply."""

DICT_TYPES = ("dict", "object")
LIST_TYPES = ("array", "tuple", "list")


def _omit(value: Any) -> bool:
    return type(value) is str and value == ""


def _pick(alts: Any, last: bool) -> Any:
    """One alternative of a BFCL list; `""` (may be omitted) is returned as it is."""
    if not isinstance(alts, list) or not alts:
        return alts
    return alts[-1] if last else alts[0]


def _value(value: Any, prop: Any, last: bool) -> Any:
    """A concrete value from one BFCL alternative (dicts hold per-key lists again)."""
    declared = prop.get("type") if isinstance(prop, Mapping) else None
    if declared in DICT_TYPES and isinstance(value, dict):
        return _answer_dict(value, last)
    items = prop.get("items") if isinstance(prop, Mapping) else None
    item_type = items.get("type") if isinstance(items, Mapping) else None
    if declared in LIST_TYPES and item_type in DICT_TYPES and isinstance(value, list):
        return [_answer_dict(item, last) if isinstance(item, dict) else item for item in value]
    return value


def _answer_dict(value: Mapping[str, Any], last: bool) -> dict[str, Any]:
    chosen = {}
    for key, alts in value.items():
        picked = _pick(alts, last) if isinstance(alts, list) else alts
        if not _omit(picked):
            chosen[key] = picked
    return chosen


def answer(entry: Mapping[str, Any], truth: list[Any], last: bool = False) -> Output:
    """BFCL's first (or last) possible answer as a model output."""
    output = []
    for call in truth:
        for name, args in call.items():
            props, _ = doc_params(entry, name)
            chosen = {}
            for arg, alts in args.items():
                picked = _pick(alts, last)
                if not _omit(picked):
                    chosen[arg] = _value(picked, props.get(arg), last)
            output.append({name: chosen})
    return output


def _map_values(output: Output, change: Callable[[Any], Any]) -> Changed:
    """Apply `change` to every argument value, list item and dict value; None if no change."""
    changed_args: list[str] = []
    result = []
    for call in output:
        name, args = next(iter(call.items()))
        new_args = {}
        for arg, value in args.items():
            new = _deep(value, change)
            if repr(new) != repr(value):
                changed_args.append(arg)
            new_args[arg] = new
        result.append({name: new_args})
    return (result, changed_args) if changed_args else None


def _deep(value: Any, change: Callable[[Any], Any]) -> Any:
    if isinstance(value, list):
        return [_deep(item, change) for item in value]
    if isinstance(value, dict):
        return {key: _deep(item, change) for key, item in value.items()}
    return change(value)


def upper_case(output: Output) -> Changed:
    """Every string upper-cased (where that changes it)."""
    return _map_values(output, lambda v: v.upper() if isinstance(v, str) else v)


def ints_as_floats(output: Output) -> Changed:
    """Every integer written as a float (`5` -> `5.0`)."""
    return _map_values(
        output, lambda v: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
    )


def floats_as_ints(output: Output) -> Changed:
    """Every integral float written as an integer (`2.0` -> `2`)."""
    return _map_values(output, lambda v: int(v) if isinstance(v, float) and v.is_integer() else v)


def reversed_calls(output: Output) -> Changed:
    """The calls in reverse order (parallel cases whose order this changes)."""
    if len(output) < 2 or output[::-1] == output:
        return None
    return output[::-1], []


def with_defaults(entry: Mapping[str, Any], output: Output) -> Changed:
    """Every optional argument left out given explicitly at its documented default."""
    added: list[str] = []
    result = copy.deepcopy(output)
    for call in result:
        name, args = next(iter(call.items()))
        props, required = doc_params(entry, name)
        for arg, prop in props.items():
            if arg not in args and arg not in required and "default" in prop:
                args[arg] = prop["default"]
                added.append(arg)
    return (result, added) if added else None


def omitted(entry: Mapping[str, Any], truth: list[Any], output: Output) -> Changed:
    """Every argument BFCL marks as omittable (`""`) left out."""
    removed: list[str] = []
    result = copy.deepcopy(output)
    for call, expected in zip(result, truth, strict=True):
        args = next(iter(call.values()))
        for arg, alts in next(iter(expected.values())).items():
            if isinstance(alts, list) and any(_omit(a) for a in alts) and arg in args:
                del args[arg]
                removed.append(arg)
    return (result, removed) if removed else None


def extra_call(output: Output) -> Changed:
    """The first call made twice."""
    return ([*output, copy.deepcopy(output[0])], []) if output else None


def missing_call(output: Output) -> Changed:
    """The last call left out."""
    return (output[:-1], []) if output else None


def as_python(output: Output) -> str:
    """An output as BFCL's prompting form writes it: `[f(a=1), g(b='x')]`."""
    calls = []
    for call in output:
        name, args = next(iter(call.items()))
        calls.append(f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})")
    return f"[{', '.join(calls)}]"


@dataclass(frozen=True)
class Perturbation:
    """A named way to make a model output from a case's possible answer."""

    name: str
    make: Callable[[Mapping[str, Any], list[Any]], Changed]
    prompting: bool = False
    """True when the output is handed over as Python call text (the prompting form)."""


def _first(entry: Mapping[str, Any], truth: list[Any]) -> Changed:
    return answer(entry, truth), []


def _last(entry: Mapping[str, Any], truth: list[Any]) -> Changed:
    first, last = answer(entry, truth), answer(entry, truth, last=True)
    return (last, []) if last != first else None


def _on_first(
    change: Callable[[Output], Changed],
) -> Callable[[Mapping[str, Any], list[Any]], Changed]:
    return lambda entry, truth: change(answer(entry, truth))


PERTURBATIONS = (
    Perturbation("first possible answer", _first),
    Perturbation("first possible answer, prompting form", _first, prompting=True),
    Perturbation("last possible answer", _last),
    Perturbation("parallel calls reversed", _on_first(reversed_calls)),
    Perturbation(
        "optional args at their documented defaults",
        lambda entry, truth: with_defaults(entry, answer(entry, truth)),
    ),
    Perturbation(
        "omittable args omitted", lambda entry, truth: omitted(entry, truth, answer(entry, truth))
    ),
    Perturbation("strings upper-cased", _on_first(upper_case)),
    Perturbation("integers as floats", _on_first(ints_as_floats)),
    Perturbation("integral floats as integers", _on_first(floats_as_ints)),
    Perturbation("one extra call", _on_first(extra_call)),
    Perturbation("one call missing", _on_first(missing_call)),
)
"""Perturbations of a tool case's first possible answer."""


def _a_call(entry: Mapping[str, Any], truth: list[Any]) -> Changed:
    if not entry["function"]:
        return None
    return [{entry["function"][0]["name"]: {}}], []


ABSTENTION_PERTURBATIONS = (
    Perturbation("no call", lambda entry, truth: ([], [])),
    Perturbation("no call, prompting form (prose)", lambda entry, truth: ([], []), prompting=True),
    Perturbation("a call made", _a_call),
)
"""Outputs for an abstention case."""
