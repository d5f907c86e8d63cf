"""Rubrics as a spec declares them: the top-level `rubrics` map and `rubric` on `text`
arguments, checked completely when the spec loads (docs/formats.md, section 2).

A rubric is one check (`kind` and its options), several deterministic checks (`checks`: a
list of such), or a remote rubric (`judge`, `similarity`); any rubric may carry `version`.
A `text` argument names a rubric of the map (`rubric: NAME`) or holds one inline.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolscore.core.rules import ObjectRule
from toolscore.core.rules.structures import rubric_rules
from toolscore.core.values import show, suggest
from toolscore.rubrics.base import MAX_ANSWER_BYTES, Endpoint, JudgeRubric, SimilarityRubric
from toolscore.rubrics.checks import (
    REGEX_TIMEOUTS,
    Check,
    LengthCheck,
    LocalRubric,
    MentionsCheck,
    NotEmptyCheck,
    PhrasesCheck,
    RegexCheck,
)

Rubric = LocalRubric | JudgeRubric | SimilarityRubric
"""Any rubric a spec can declare."""

CHECK_KINDS: dict[str, tuple[str, ...]] = {
    "regex": ("pattern", "must_match", "max_timeouts"),
    "contains": ("phrases", "casefold"),
    "not_contains": ("phrases", "casefold"),
    "mentions": ("argument",),
    "length": ("min", "max"),
    "not_empty": (),
}
"""The deterministic kinds and their options."""
ENDPOINT_KEYS = (
    "base_url",
    "model",
    "api_key_env",
    "timeout",
    "retries",
    "concurrency",
    "max_answer_bytes",
)
"""The options every remote rubric takes: its endpoint and how it is asked."""
REMOTE_KINDS: dict[str, tuple[str, ...]] = {
    "judge": ("text", "scale", "threshold", "seed", *ENDPOINT_KEYS),
    "similarity": ("threshold", *ENDPOINT_KEYS),
}
"""The kinds that ask an OpenAI-compatible endpoint, and their options."""
KINDS = (*CHECK_KINDS, *REMOTE_KINDS)
MAX_ANSWER_LIMIT = 1024**3
"""The most `max_answer_bytes` may be set to (1 GiB)."""


class RubricSpecError(ValueError):
    """A rubric node that cannot become a rubric; `where` names the key within the node."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


@dataclass(frozen=True, slots=True)
class RubricUse:
    """A rubric on one `text` argument of a tool: `path` leads to the argument through
    nested objects; `argument` names it as reports do (`note`, `address.note`)."""

    tool: str
    path: tuple[str, ...]
    rubric: str
    argument: str = field(init=False)
    """The argument's path within the call, dotted."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "argument", ".".join(self.path))


def parse_rubric(name: str, node: Any) -> Rubric:
    """The rubric a spec node declares (in the `rubrics` map or inline, named `name`)."""
    if not isinstance(node, Mapping):
        raise RubricSpecError(
            "", f"a rubric is a mapping with 'kind' or 'checks', got {show(node)}"
        )
    version = node.get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, str | int)):
        raise RubricSpecError("version", "must be a string or an integer")
    label = None if version is None else str(version)
    if "checks" in node:
        _known_keys(node, ("checks", "version"), "")
        checks = node["checks"]
        if not isinstance(checks, list) or not checks:
            raise RubricSpecError("checks", "must be a non-empty list of checks")
        built = tuple(_check(item, f"checks[{i}]") for i, item in enumerate(checks))
        return LocalRubric(name, built, label)
    kind = node.get("kind")
    if isinstance(kind, str) and kind in REMOTE_KINDS:
        _known_keys(node, ("kind", "version", *REMOTE_KINDS[kind]), "")
        if kind == "judge":
            return _judge(name, node, label)
        return _similarity(name, node, label)
    return LocalRubric(name, (_check(node, "", allowed=("version",)),), label)


def _check(node: Any, where: str, allowed: tuple[str, ...] = ()) -> Check:
    if not isinstance(node, Mapping):
        raise RubricSpecError(where, f"a check is a mapping with 'kind', got {show(node)}")
    kind = node.get("kind")
    if not isinstance(kind, str):
        raise RubricSpecError(_at(where, "kind"), "missing" if kind is None else "must be a string")
    if kind not in CHECK_KINDS:
        kinds = list(CHECK_KINDS) if where.startswith("checks") else list(KINDS)
        raise RubricSpecError(_at(where, "kind"), f"unknown kind {kind!r}{suggest(kind, kinds)}")
    _known_keys(node, ("kind", *allowed, *CHECK_KINDS[kind]), where)
    if kind == "regex":
        return _regex(node, where)
    if kind in ("contains", "not_contains"):
        phrases = node.get("phrases")
        if (
            not isinstance(phrases, list)
            or not phrases
            or not all(isinstance(p, str) and p for p in phrases)
        ):
            raise RubricSpecError(
                _at(where, "phrases"), "must be a non-empty list of non-empty strings"
            )
        casefold = _flag(node, "casefold", False, where)
        return PhrasesCheck(tuple(phrases), casefold, present=kind == "contains")
    if kind == "mentions":
        argument = node.get("argument")
        if not isinstance(argument, str) or not argument:
            raise RubricSpecError(_at(where, "argument"), "must name another argument of the call")
        return MentionsCheck(argument)
    if kind == "length":
        low, high = _count(node, "min", where), _count(node, "max", where)
        if low is None and high is None:
            raise RubricSpecError(where, "length needs 'min', 'max' or both")
        if low is not None and high is not None and low > high:
            raise RubricSpecError(_at(where, "min"), f"min {low} is above max {high}")
        return LengthCheck(low, high)
    return NotEmptyCheck()


def _regex(node: Mapping[str, Any], where: str) -> RegexCheck:
    pattern = node.get("pattern")
    if not isinstance(pattern, str):
        raise RubricSpecError(_at(where, "pattern"), "must be a regular expression (a string)")
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise RubricSpecError(
            _at(where, "pattern"), f"not a valid regular expression: {error}"
        ) from None
    timeouts = _count(node, "max_timeouts", where)
    if timeouts == 0:
        raise RubricSpecError(_at(where, "max_timeouts"), "must be at least 1")
    return RegexCheck(
        compiled,
        _flag(node, "must_match", True, where),
        REGEX_TIMEOUTS if timeouts is None else timeouts,
    )


def _endpoint(node: Mapping[str, Any]) -> Endpoint:
    base_url, model = node.get("base_url"), node.get("model")
    if not isinstance(base_url, str) or not base_url.strip():
        raise RubricSpecError(
            "base_url", "must be the endpoint's URL (e.g. http://localhost:8000/v1)"
        )
    if not isinstance(model, str) or not model.strip():
        raise RubricSpecError("model", "must name the model to ask")
    key = node.get("api_key_env")
    if key is not None and (not isinstance(key, str) or not key):
        raise RubricSpecError("api_key_env", "must name an environment variable")
    timeout = _number(node, "timeout", 30.0, lambda v: 0 < v <= 3600, "above 0 and at most 3600")
    retries = _count(node, "retries", "", limit=20)
    concurrency = _count(node, "concurrency", "", limit=256)
    if concurrency == 0:
        raise RubricSpecError("concurrency", "must be at least 1")
    most = _count(node, "max_answer_bytes", "", limit=MAX_ANSWER_LIMIT)
    if most is not None and most < 1024:
        raise RubricSpecError("max_answer_bytes", f"must be at least 1024, got {most}")
    return Endpoint(
        base_url,
        model,
        key,
        timeout,
        3 if retries is None else retries,
        4 if concurrency is None else concurrency,
        MAX_ANSWER_BYTES if most is None else most,
    )


def _judge(name: str, node: Mapping[str, Any], version: str | None) -> JudgeRubric:
    text = node.get("text")
    if not isinstance(text, str) or not text.strip():
        raise RubricSpecError("text", "a judge needs the rubric it applies, as text")
    endpoint = _endpoint(node)
    scale = node.get("scale", [1, 5])
    if (
        not isinstance(scale, list)
        or len(scale) != 2
        or not all(type(v) is int for v in scale)
        or scale[0] >= scale[1]
    ):
        raise RubricSpecError("scale", "must be [low, high], two integers with low < high")
    low, high = scale
    threshold = _number(
        node, "threshold", float(high), lambda v: low <= v <= high, f"within {low}..{high}"
    )
    seed = node.get("seed", 0)
    if seed is not None and type(seed) is not int:
        raise RubricSpecError("seed", "must be an integer or null")
    return JudgeRubric(name, text, endpoint, low, high, threshold, seed, version)


def _similarity(name: str, node: Mapping[str, Any], version: str | None) -> SimilarityRubric:
    endpoint = _endpoint(node)
    threshold = _number(node, "threshold", 0.8, lambda v: -1 <= v <= 1, "within -1..1")
    return SimilarityRubric(name, endpoint, threshold, version)


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _known_keys(node: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in node:
        if key not in allowed:
            kind = node.get("kind")
            of = f" for kind {kind!r}" if isinstance(kind, str) else ""
            raise RubricSpecError(
                _at(where, str(key)), f"unknown key{of}{suggest(str(key), list(allowed))}"
            )


def _flag(node: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
    value = node.get(key, default)
    if not isinstance(value, bool):
        raise RubricSpecError(_at(where, key), f"must be true or false, got {show(value)}")
    return value


def _count(node: Mapping[str, Any], key: str, where: str, limit: int | None = None) -> int | None:
    value = node.get(key)
    if value is None:
        return None
    if type(value) is not int or value < 0 or (limit is not None and value > limit):
        most = "" if limit is None else f" and at most {limit}"
        raise RubricSpecError(_at(where, key), f"must be an integer >= 0{most}, got {show(value)}")
    return value


def _number(
    node: Mapping[str, Any], key: str, default: float, ok: Callable[[float], bool], words: str
) -> float:
    value = node.get(key, default)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not ok(value)
    ):
        raise RubricSpecError(key, f"must be a number {words}, got {show(value)}")
    return float(value)


# --- rubrics on arguments ----------------------------------------------------------------


def rubric_uses(
    tool: str,
    args: ObjectRule,
    rubrics: dict[str, Rubric],
    problem: Callable[[str, str], None],
) -> Iterator[RubricUse]:
    """The rubrics on `tool`'s text arguments, resolved against `rubrics` (inline rubrics
    are parsed and added to it, named `tool.argument`); each problem goes to `problem(where,
    message)`, `where` a path within the tool's `args`."""
    for path, rule in rubric_rules(args.args):
        where = ".".join(path) + ".rubric"
        if rule is None:
            problem(where, "a rubric scores a text argument of the call or of an object in it, "
                    "not the items of a list")  # fmt: skip
            continue
        node = rule.rubric
        if isinstance(node, str):
            if node not in rubrics:
                known = list(rubrics)
                hint = (
                    suggest(node, known) if known else " (declare it under the top-level 'rubrics')"
                )
                problem(where, f"unknown rubric {node!r}{hint}")
                continue
            name = node
        else:
            name = f"{tool}.{'.'.join(path)}"
            if name in rubrics:
                problem(where, f"an inline rubric is named {name!r}, as a rubric of 'rubrics' is")
                continue
            try:
                rubrics[name] = parse_rubric(name, node)
            except RubricSpecError as error:
                problem(_at(where, error.where) if error.where else where, error.message)
                continue
        mentioned = _mentioned(rubrics[name])
        for argument in mentioned:
            if argument not in args.args:
                problem(where, f"rubric {name!r} mentions {argument!r}, which {tool!r} has no "
                        f"argument of that name{suggest(argument, list(args.args))}")  # fmt: skip
            elif len(path) == 1 and argument == path[0]:
                problem(where, f"rubric {name!r} would have {argument!r} mention itself")
        yield RubricUse(tool, path, name)


def _mentioned(rubric: Rubric) -> list[str]:
    if not isinstance(rubric, LocalRubric):
        return []
    return [c.argument for c in rubric.checks if isinstance(c, MentionsCheck)]
