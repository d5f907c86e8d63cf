"""What changed between two spec sets, and what each change can do to verdicts.

Rules change for good reasons, but each change moves verdicts in a known direction: a value
dropped from an enum turns past passes that used it into failures, a wider tolerance turns
failures into passes. `spec_diff` names each change with that consequence, so that a number
that moved after a spec change can be traced to the line that moved it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any, Literal

from toolscore.core.model import MISSING
from toolscore.core.rules import EnumRule, ListRule, ObjectRule, Rule
from toolscore.core.values import enum_key, json_equal
from toolscore.specs.loading import SpecSet
from toolscore.stats.records import fields_json

Verdicts = Literal["can fail", "can pass", "either", "none"]
"""Which way a change can move past verdicts: passes to failures, failures to passes, both."""

WARNINGS = ("version_not_bumped", "spec_version_not_bumped")
LIST_ITEMS = "[]"
"""The path segment that stands for every item of a list argument."""
NOT_COMPARED = ("text", "ignored")
_OPTION_FIELDS_SKIPPED = frozenset(
    {"default", "reason", "args", "items", "values", "aliases", "fold", "ignore_missing"}
    | {"allow_unknown", "compared_args"}
)


@dataclass(frozen=True)
class Change:
    """One difference between two spec sets, with what it can do to verdicts.

    `code` is a stable slug (`value_renamed`, `default_changed`, ...); `path` is the argument
    within the tool (object keys, and `[]` for list items), empty for a tool-level change.
    """

    code: str
    tool: str | None
    path: tuple[str, ...]
    description: str
    effect: str
    verdicts: Verdicts
    old: Any = None
    new: Any = None

    @property
    def argument(self) -> str | None:
        """The argument as `tool.argument` names it in reports: `address.city`, `tags[]`."""
        if not self.path:
            return None
        return "".join(p if p == LIST_ITEMS else f".{p}" for p in self.path).lstrip(".")

    @property
    def where(self) -> str:
        """`tool.argument`, the tool, or `(spec set)`."""
        if self.tool is None:
            return "(spec set)"
        return f"{self.tool}.{self.argument}" if self.path else self.tool

    @property
    def warning(self) -> bool:
        """True for a warning about versioning rather than a change of rules."""
        return self.code in WARNINGS

    def to_json(self) -> dict[str, Any]:
        """The change as `spec-diff --json` lists it."""
        return fields_json(
            self, "code", "tool", "argument", "description", "effect", "verdicts", "old", "new"
        )

    def __str__(self) -> str:
        return f"{self.where}: {self.description}: {self.effect}"


def spec_diff(old: SpecSet, new: SpecSet) -> list[Change]:
    """Every change from `old` to `new`: tools, arguments, kinds, options, enum values and
    aliases, defaults, relaxations; then warnings where rules changed but versions did not.

    A tools list (`new.tool_list`) has no spec set version to bump: only its tools' versions
    (`x-version`) are asked for."""
    changes: list[Change] = []
    warnings: list[Change] = []
    for name in [*old.tools, *(t for t in new.tools if t not in old.tools)]:
        if name not in new.tools:
            changes.append(_tool_removed(name))
        elif name not in old.tools:
            changes.append(_tool_added(name))
        else:
            found = list(_rule_diff(name, (), old.tools[name].args, new.tools[name].args))
            changes += found
            version = old.tools[name].version
            if found and version == new.tools[name].version:
                warnings.append(_version_warning(name, version, new.tool_list))
    changes += _relaxation_diff(old, new)
    if changes and old.version == new.version and not new.tool_list:
        warnings.append(
            Change(
                "spec_version_not_bumped",
                None,
                (),
                f"the rules changed but the spec set's version is still {old.version!r}",
                "runs scored under either spec set report the same version; bump `version`",
                "none",
                old.version,
                new.version,
            )
        )
    return changes + warnings


def _tool_removed(name: str) -> Change:
    return Change(
        "tool_removed",
        name,
        (),
        "tool removed",
        f"cases that expect {name!r} no longer load, and produced calls to it fail "
        "(unknown_tool): past passes that used it will fail",
        "can fail",
    )


def _tool_added(name: str) -> Change:
    return Change(
        "tool_added",
        name,
        (),
        "tool added",
        f"produced calls to {name!r} fail as extra calls instead of unknown tools, "
        "until cases expect it or a relaxation allows it",
        "none",
    )


def _version_warning(name: str, version: Any, listed: bool) -> Change:
    where = "its `x-version` (a tools list's only version)" if listed else "its `version`"
    return Change(
        "version_not_bumped",
        name,
        (),
        f"rules changed but the tool's version is still {version!r}",
        f"runs scored before and after report the same tool version; bump {where}",
        "none",
        version,
        version,
    )


# --- rules --------------------------------------------------------------------------------


def _rule_diff(tool: str, path: tuple[str, ...], a: Rule, b: Rule) -> Iterator[Change]:
    """The changes from rule `a` to rule `b` of the argument at `path`."""
    if a.kind != b.kind:
        yield _kind_changed(tool, path, a, b)
        yield from _default_diff(tool, path, a, b)
        return
    followed: tuple[Any, Any] | None = None
    if isinstance(a, ObjectRule) and isinstance(b, ObjectRule):
        yield from _args_diff(tool, path, a, b)
    elif isinstance(a, ListRule) and isinstance(b, ListRule):
        if a.ordered != b.ordered:
            yield _order_changed(tool, path, b.ordered)
        yield from _rule_diff(tool, (*path, LIST_ITEMS), a.items, b.items)
    elif isinstance(a, EnumRule) and isinstance(b, EnumRule):
        changes, followed = _enum_diff(tool, path, a, b)
        yield from changes
    else:
        yield from _options_diff(tool, path, a, b)
    if followed is None or not (_same(a.default, followed[0]) and _same(b.default, followed[1])):
        yield from _default_diff(tool, path, a, b)


def _args_diff(tool: str, path: tuple[str, ...], a: ObjectRule, b: ObjectRule) -> Iterator[Change]:
    for name in [*a.args, *(n for n in b.args if n not in a.args)]:
        here = (*path, name)
        if name not in b.args:
            yield Change(
                "argument_removed",
                tool,
                here,
                "argument removed",
                f"cases that give {name!r} no longer load, and produced calls that pass it "
                "fail (unexpected_argument): past passes that used it will fail",
                "can fail",
            )
        elif name not in a.args:
            yield _argument_added(tool, here, b.args[name])
        else:
            yield from _rule_diff(tool, here, a.args[name], b.args[name])


def _argument_added(tool: str, path: tuple[str, ...], rule: Rule) -> Change:
    name = path[-1]
    if not rule.compared:
        effect = f"produced calls that pass {name!r} no longer fail: it is never compared"
        verdicts: Verdicts = "can pass"
    elif rule.default is not MISSING:
        effect = (
            f"produced calls that pass {name!r} as {_show(rule.default)} (its default) no "
            "longer fail (unexpected_argument): past failures can pass"
        )
        verdicts = "can pass"
    else:
        effect = f"none for past runs: calls that pass {name!r} fail until cases give it"
        verdicts = "none"
    return Change("argument_added", tool, path, f"argument added ({rule.kind})", effect, verdicts)


def _kind_changed(tool: str, path: tuple[str, ...], a: Rule, b: Rule) -> Change:
    old, new = a.kind, b.kind
    verdicts: Verdicts
    if new in NOT_COMPARED and old not in NOT_COMPARED:
        effect, verdicts = "no longer compared: past failures on it can pass", "can pass"
    elif old in NOT_COMPARED and new not in NOT_COMPARED:
        effect, verdicts = "now compared: past passes can fail on it", "can fail"
    elif (old, new) == ("exact", "casefold"):
        effect, verdicts = "case differences are forgiven now: past failures can pass", "can pass"
    elif (old, new) == ("casefold", "exact"):
        effect, verdicts = "case differences fail now: past passes can fail", "can fail"
    else:
        effect, verdicts = f"compared as {new} instead of {old}: verdicts can flip", "either"
    return Change(
        "kind_changed",
        tool,
        path,
        f"kind {old} -> {new}",
        effect,
        verdicts,
        a.describe(),
        b.describe(),
    )


def _order_changed(tool: str, path: tuple[str, ...], ordered: bool) -> Change:
    verdicts: Verdicts
    if ordered:
        effect, verdicts = "order matters now: past passes in another order will fail", "can fail"
    else:
        effect, verdicts = "order no longer matters: past failures on order can pass", "can pass"
    old, new = ("unordered", "ordered") if ordered else ("ordered", "unordered")
    return Change("option_changed", tool, path, f"order {old} -> {new}", effect, verdicts, old, new)


def _options_diff(tool: str, path: tuple[str, ...], a: Rule, b: Rule) -> Iterator[Change]:
    for item in fields(a):
        name = item.name
        if name in _OPTION_FIELDS_SKIPPED or name.startswith("_"):
            continue
        old, new = getattr(a, name), getattr(b, name)
        if old != new:
            effect, verdicts = _option_effect(name, old, new)
            yield Change(
                "option_changed",
                tool,
                path,
                f"{name} {_show(old)} -> {_show(new)}",
                effect,
                verdicts,
                _plain(old),
                _plain(new),
            )


def _option_effect(name: str, old: Any, new: Any) -> tuple[str, Verdicts]:
    if name in ("tol", "rel_tol"):
        if new > old:
            return "wider tolerance: past failures within it can pass", "can pass"
        return "narrower tolerance: past passes outside it will fail", "can fail"
    if name == "coerce":
        if new:
            return "string forms are accepted now: past type_mismatch failures can pass", "can pass"
        return "string forms fail now (type_mismatch): past passes that sent them will fail", (
            "can fail"
        )
    if name == "formats":
        if set(new) >= set(old):
            return "more date formats accepted: past failures can pass", "can pass"
        if set(new) <= set(old):
            return "fewer date formats accepted: past passes can fail", "can fail"
    if name == "rubric":
        return "scored separately: call verdicts are unaffected", "none"
    return f"{name} changed: verdicts on this argument can flip", "either"


# --- enums --------------------------------------------------------------------------------


def _enum_diff(
    tool: str, path: tuple[str, ...], a: EnumRule, b: EnumRule
) -> tuple[list[Change], tuple[Any, Any] | None]:
    """The enum's changes, and (old, new) of a renamed value (aliases and a default that
    followed the rename are part of it, not changes of their own)."""
    old_values = {enum_key(v): v for v in a.values}
    new_values = {enum_key(v): v for v in b.values}
    dropped = [v for k, v in old_values.items() if k not in new_values]
    added = [v for k, v in new_values.items() if k not in old_values]
    renamed = (dropped[0], added[0]) if len(dropped) == 1 and len(added) == 1 else None
    changes: list[Change] = []
    if renamed is not None:
        changes.append(_value_renamed(tool, path, a, b, *renamed))
    else:
        changes += [_value_dropped(tool, path, a, b, value) for value in dropped]
        if added:
            changes.append(
                Change(
                    "values_added",
                    tool,
                    path,
                    f"values added: {_listed(added)}",
                    f"past failures using {_listed(added, ' or ')} can pass",
                    "can pass",
                    None,
                    added,
                )
            )
    changes += _aliases_diff(tool, path, a, b, renamed)
    return changes, renamed


def _value_renamed(
    tool: str, path: tuple[str, ...], a: EnumRule, b: EnumRule, old: Any, new: Any
) -> Change:
    followers = [
        alias
        for alias, target in a.aliases.items()
        if _same(target, old) and _same(b.canonical(alias), new)
    ]
    also = [f"aliases {_listed(followers)}"] if followers else []
    if _same(a.default, old) and _same(b.default, new):
        also.append("the default")
    follow = f" ({' and '.join(also)} follow)" if also else ""
    if b.canonical(old) is not MISSING and _same(b.canonical(old), new):
        effect = f"none: {_show(old)} is now an alias of {_show(new)}"
        verdicts: Verdicts = "none"
    else:
        effect = (
            f"cases and outputs that use {_show(old)} fail now (it is not a value and not an "
            f"alias): past passes using {_show(old)} will fail; keep it as an alias "
            f"({old}: {new}) to accept it"
        )
        verdicts = "can fail"
    return Change(
        "value_renamed",
        tool,
        path,
        f"enum value {_show(old)} renamed to {_show(new)}{follow}",
        effect,
        verdicts,
        old,
        new,
    )


def _value_dropped(
    tool: str, path: tuple[str, ...], a: EnumRule, b: EnumRule, value: Any
) -> Change:
    now = b.canonical(value)
    if now is not MISSING:
        effect = f"{_show(value)} now means {_show(now)}: past failures between them can pass"
        verdicts: Verdicts = "can pass"
    else:
        users = [value, *(alias for alias, target in a.aliases.items() if _same(target, value))]
        effect = f"past passes using {_listed(users, ' or ')} will fail"
        verdicts = "can fail"
    return Change(
        "values_dropped", tool, path, f"values dropped: {_show(value)}", effect, verdicts, value
    )


def _aliases_diff(
    tool: str,
    path: tuple[str, ...],
    a: EnumRule,
    b: EnumRule,
    renamed: tuple[Any, Any] | None,
) -> Iterator[Change]:
    old = {enum_key(alias): (alias, target) for alias, target in a.aliases.items()}
    new = {enum_key(alias): (alias, target) for alias, target in b.aliases.items()}
    b_values = {enum_key(v) for v in b.values}
    if renamed is not None:
        b_values.add(enum_key(renamed[0]))  # aliases of the renamed value follow it or drop
    for key, (alias, target) in old.items():
        if key not in new:
            if b.canonical(alias) is not MISSING or enum_key(target) not in b_values:
                continue  # it became a value, or its value was dropped: reported there
            yield Change(
                "alias_dropped",
                tool,
                path,
                f"alias {_show(alias)} dropped",
                f"values dropped: past passes using {_show(alias)} will fail",
                "can fail",
                {alias: target},
            )
            continue
        moved = new[key][1]
        if _same(target, moved):
            continue
        if renamed is not None and _same(target, renamed[0]) and _same(moved, renamed[1]):
            continue  # followed the rename
        yield Change(
            "alias_retargeted",
            tool,
            path,
            f"alias {_show(alias)} now means {_show(moved)} instead of {_show(target)}",
            f"verdicts on cases using {_show(alias)} can flip",
            "either",
            {alias: target},
            {alias: moved},
        )
    for key, (alias, target) in new.items():
        if key in old:
            continue
        if renamed is not None and _same(alias, renamed[0]):
            continue  # the renamed value kept as an alias: reported with the rename
        yield Change(
            "alias_added",
            tool,
            path,
            f"alias {_show(alias)} added (means {_show(target)})",
            f"past failures using {_show(alias)} can pass",
            "can pass",
            None,
            {alias: target},
        )


# --- defaults and relaxations ---------------------------------------------------------------


def _default_diff(tool: str, path: tuple[str, ...], a: Rule, b: Rule) -> Iterator[Change]:
    old, new = a.default, b.default
    if _same(old, new):
        return
    if old is MISSING:
        description = f"default {_show(new)} added"
        effect = f"an omitted value counts as {_show(new)} now: past failures can pass"
        verdicts: Verdicts = "can pass"
    elif new is MISSING:
        description = f"default {_show(old)} removed"
        effect = (
            f"an omitted value no longer counts as {_show(old)}: past passes that omitted it "
            "will fail where the other side gives it"
        )
        verdicts = "can fail"
    else:
        description = f"default {_show(old)} -> {_show(new)}"
        effect = (
            f"an omitted value counts as {_show(new)} instead of {_show(old)}: past passes "
            f"that omitted it against {_show(old)} will fail, and failures against "
            f"{_show(new)} can pass"
        )
        verdicts = "either"
    yield Change(
        "default_changed",
        tool,
        path,
        description,
        effect,
        verdicts,
        None if old is MISSING else old,
        None if new is MISSING else new,
    )


_RELAX_EFFECTS: dict[tuple[str, bool], tuple[str, Verdicts]] = {
    ("extra_calls", True): ("extra calls to it no longer fail: past failures can pass", "can pass"),
    ("extra_calls", False): ("extra calls to it fail again: past passes can fail", "can fail"),
    ("unknown_args", True): (
        "arguments its spec does not list no longer fail: past failures can pass",
        "can pass",
    ),
    ("unknown_args", False): (
        "arguments its spec does not list fail again: past passes can fail",
        "can fail",
    ),
}


def _relaxation_diff(old: SpecSet, new: SpecSet) -> Iterator[Change]:
    before = {(r.allow, t): r.reason for r in old.relaxations for t in r.tools}
    after = {(r.allow, t): r.reason for r in new.relaxations for t in r.tools}
    for code, present, other in (
        ("relaxation_removed", before, after),
        ("relaxation_added", after, before),
    ):
        added = code == "relaxation_added"
        word = code.removeprefix("relaxation_")
        for (allow, tool), reason in present.items():
            if (allow, tool) in other:
                continue
            effect, verdicts = _RELAX_EFFECTS[allow, added]
            entry = {"allow": allow, "reason": reason}
            yield Change(
                code,
                tool,
                (),
                f"relaxation {word}: allow {allow}" + (f" ({reason})" if added else ""),
                effect,
                verdicts,
                None if added else entry,
                entry if added else None,
            )


# --- helpers --------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return a is b
    return json_equal(a, b)


def _show(value: Any) -> str:
    if value is MISSING:
        return "(none)"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return (
        "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )


def _listed(values: list[Any], joiner: str = ", ") -> str:
    return joiner.join(_show(v) for v in values)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
