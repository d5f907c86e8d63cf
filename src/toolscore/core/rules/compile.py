"""The factory: a spec node (a kind name or a mapping of options) becomes its rule, or a
`RuleError` naming the argument and, for a typo, the nearest valid name."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from toolscore.core.model import MISSING
from toolscore.core.rules.base import Rule, RuleError
from toolscore.core.rules.enums import EnumRule
from toolscore.core.rules.numbers import BooleanRule, IntegerRule, NumberRule
from toolscore.core.rules.strings import NORMALIZATIONS, NormalizedRule, OneOfRule, PatternRule
from toolscore.core.rules.structures import IgnoredRule, ListRule, ObjectRule
from toolscore.core.rules.text import CasefoldRule, ExactRule, TextRule
from toolscore.core.rules.times import DateRule, DatetimeRule, parse_timezone
from toolscore.core.values import enum_key, show, suggest

COMMON_OPTIONS = ("kind", "default", "reason")
"""The keys every rule mapping may hold, whatever its kind."""
KIND_OPTIONS: dict[str, tuple[str, ...]] = {
    "exact": (),
    "casefold": (),
    "normalized": NORMALIZATIONS,
    "pattern": ("regex",),
    "one_of": ("values",),
    "number": ("tol", "rel_tol", "coerce"),
    "integer": ("coerce",),
    "boolean": ("coerce",),
    "enum": ("values", "aliases"),
    "date": ("formats",),
    "datetime": ("tol", "naive_tz"),
    "text": ("rubric",),
    "ignored": (),
    "list": ("items", "order"),
    "object": ("args",),
}
"""Each kind and the options of its own; any other option is an error."""
KINDS: tuple[str, ...] = tuple(KIND_OPTIONS)


def _tolerance(node: Mapping[str, Any], key: str, path: tuple[str | int, ...]) -> float:
    value = node.get(key, 0)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise RuleError(path, f"{key} must be a number, got {show(value)}")
    if not math.isfinite(value) or value < 0:
        raise RuleError(path, f"{key} must be a finite number >= 0, got {show(value)}")
    return float(value)


def _flag(node: Mapping[str, Any], key: str, path: tuple[str | int, ...]) -> bool:
    value = node.get(key, False)
    if not isinstance(value, bool):
        raise RuleError(path, f"{key} must be true or false, got {show(value)}")
    return value


def compile_rule(node: Any, path: tuple[str | int, ...] = ()) -> Rule:
    """Build the rule for one spec node: a kind name or a mapping with `kind` and options.

    Raises RuleError naming the argument path and, for typos, the nearest valid name.
    """
    if isinstance(node, str):
        node = {"kind": node}
    if not isinstance(node, Mapping):
        raise RuleError(path, f"expected a kind name or a mapping, got {show(node)}")
    kind = node.get("kind")
    if not isinstance(kind, str):
        raise RuleError(path, "missing 'kind'" if kind is None else "kind must be a string")
    if kind not in KIND_OPTIONS:
        raise RuleError(path, f"unknown kind {kind!r}{suggest(kind, KINDS)}")
    allowed = COMMON_OPTIONS + KIND_OPTIONS[kind]
    for option in node:
        if option == "rubric" and kind != "text":
            raise RuleError(
                path, f"a rubric scores only a 'text' argument, not one of kind {kind!r}"
            )
        if option not in allowed:
            hint = suggest(str(option), list(allowed))
            raise RuleError(path, f"unknown option {option!r} for kind {kind!r}{hint}")
    reason = node.get("reason")
    if reason is not None and not (isinstance(reason, str) and reason.strip()):
        raise RuleError(path, "reason must be a non-empty string")
    rule = _build(kind, node, path)
    default = node.get("default", MISSING)
    if default is MISSING and reason is None:
        return rule  # as built: most rules have neither (and a spec has thousands of rules)
    return replace(rule, default=default, reason=reason)


def _build(kind: str, node: Mapping[str, Any], path: tuple[str | int, ...]) -> Rule:
    if kind == "exact":
        return ExactRule()
    if kind == "casefold":
        return CasefoldRule()
    if kind == "normalized":
        return _build_normalized(node, path)
    if kind == "pattern":
        return _build_pattern(node, path)
    if kind == "one_of":
        return _build_one_of(node, path)
    if kind == "number":
        return NumberRule(
            tol=_tolerance(node, "tol", path),
            rel_tol=_tolerance(node, "rel_tol", path),
            coerce=_flag(node, "coerce", path),
        )
    if kind == "integer":
        return IntegerRule(coerce=_flag(node, "coerce", path))
    if kind == "boolean":
        return BooleanRule(coerce=_flag(node, "coerce", path))
    if kind == "enum":
        return _build_enum(node, path)
    if kind == "date":
        formats = node.get("formats", [])
        if not isinstance(formats, list) or not all(isinstance(f, str) for f in formats):
            raise RuleError(path, "formats must be a list of strptime format strings")
        return DateRule(formats=tuple(formats))
    if kind == "datetime":
        naive_tz = node.get("naive_tz")
        if naive_tz is not None:
            if not isinstance(naive_tz, str):
                raise RuleError(path, "naive_tz must be a string such as 'UTC' or '+02:00'")
            try:
                parse_timezone(naive_tz)
            except ValueError as error:
                raise RuleError(path, f"naive_tz: {error}") from None
        return DatetimeRule(tol=_tolerance(node, "tol", path), naive_tz=naive_tz)
    if kind == "text":
        rubric = node.get("rubric")
        if rubric is not None and not isinstance(rubric, str | Mapping):
            raise RuleError(path, "rubric must be a rubric's name or a rubric mapping")
        return TextRule(rubric=rubric)
    if kind == "ignored":
        return IgnoredRule()
    if kind == "list":
        order = node.get("order", "ordered")
        if order not in ("ordered", "unordered"):
            raise RuleError(
                path,
                "order must be 'ordered' or 'unordered'"
                + suggest(str(order), ["ordered", "unordered"]),
            )
        items = compile_rule(node.get("items", "exact"), (*path, "items"))
        return ListRule(items=items, ordered=order == "ordered")
    args = node.get("args", {})
    if not isinstance(args, Mapping):
        raise RuleError(path, "args must be a mapping of argument names to rules")
    return ObjectRule(args=compile_args(args, path))


def _build_enum(node: Mapping[str, Any], path: tuple[str | int, ...]) -> EnumRule:
    values = node.get("values")
    if not isinstance(values, list) or not values:
        raise RuleError(path, "enum needs 'values': a non-empty list")
    keys = [enum_key(v) for v in values]
    if None in keys:
        raise RuleError(path, "enum values must be strings, numbers, booleans or null")
    if len(set(keys)) != len(keys):
        raise RuleError(path, "enum values must be unique")
    aliases = node.get("aliases", {})
    if not isinstance(aliases, Mapping):
        raise RuleError(path, "aliases must be a mapping of alias to value")
    for alias, target in aliases.items():
        if enum_key(target) not in keys:
            raise RuleError(
                path,
                f"alias {alias!r} points to {show(target)}, which is not in values"
                f"{suggest(str(target), [str(v) for v in values])}",
            )
        if enum_key(alias) in keys:
            raise RuleError(path, f"alias {alias!r} is also a value")
    return EnumRule(values=tuple(values), aliases=dict(aliases))


def _build_normalized(node: Mapping[str, Any], path: tuple[str | int, ...]) -> NormalizedRule:
    chosen = {name: _flag(node, name, path) for name in NORMALIZATIONS}
    if not any(chosen.values()):
        raise RuleError(
            path,
            "normalized needs at least one normalisation set to true, each explicit: "
            + ", ".join(NORMALIZATIONS),
        )
    return NormalizedRule(
        nfkc=chosen["nfkc"],
        casefold=chosen["casefold"],
        strip_punctuation=chosen["strip_punctuation"],
        collapse_whitespace=chosen["collapse_whitespace"],
        strip=chosen["strip"],
    )


def _build_pattern(node: Mapping[str, Any], path: tuple[str | int, ...]) -> PatternRule:
    regex = node.get("regex")
    if not isinstance(regex, str) or not regex:
        raise RuleError(path, "pattern needs 'regex': a non-empty regular expression string")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a FutureWarning (a nested set) is refused too
            compiled = re.compile(regex)
    except (re.error, FutureWarning, RecursionError, OverflowError) as error:
        raise RuleError(
            path, f"regex {regex!r} is not a valid regular expression: {error}"
        ) from None
    return PatternRule(regex=compiled)


def _build_one_of(node: Mapping[str, Any], path: tuple[str | int, ...]) -> OneOfRule:
    values = node.get("values")
    if not isinstance(values, list) or not values:
        raise RuleError(path, "one_of needs 'values': a non-empty list")
    keys = [None if v is None else enum_key(v) for v in values]
    if None in keys:
        raise RuleError(
            path,
            "one_of values must be strings, numbers or booleans "
            "(null is not a member: a plan's null wants null, as under every kind)",
        )
    if any(type(v) is float and not math.isfinite(v) for v in values):
        raise RuleError(path, "one_of values must be finite numbers")
    if len(set(keys)) != len(keys):
        raise RuleError(path, "one_of values must be unique")
    return OneOfRule(values=tuple(values))


def compile_args(node: Mapping[str, Any], path: tuple[str | int, ...] = ()) -> dict[str, Rule]:
    """Compile a mapping of argument names to rules (a tool's `args` or an object's)."""
    compiled: dict[str, Rule] = {}
    for name, sub in node.items():
        if not isinstance(name, str):
            raise RuleError(path, f"argument names must be strings, got {show(name)}")
        compiled[name] = compile_rule(sub, (*path, name))
    return compiled
