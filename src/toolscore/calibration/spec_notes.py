"""What the spec says about the tools a case calls, kept in its labelling view.

A person asked whether an agent did the right thing needs the rules the scorer applied: that
`unit` defaults to celsius and takes `C` as an alias, that `city` is compared ignoring case,
that extra lookups are allowed. `rules_view` writes them into the view, so that a batch
stands on its own; the page (`calibration.page`) shows them beside the values. They describe
the spec, not a verdict, so the page shows them before the case is labelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolscore.core.model import MISSING
from toolscore.core.rules import Rule
from toolscore.report.json_report import safe_value
from toolscore.report.lenient import forgiven, with_nested
from toolscore.specs.loading import SpecSet

MAX_NESTED = 50
"""Rules kept under one top-level argument at most (an object may nest hundreds)."""


def rules_view(specs: SpecSet, names: Iterable[Any]) -> dict[str, Any]:
    """The view's `rules`: for each tool of the spec among `names` (the tool names of the
    case's plans and calls; others are left out, so that a name an agent made up is never a
    key), `args`, each top-level argument's rule followed by its nested ones, and the
    `relaxations` in force for it."""
    found: dict[str, Any] = {}
    for name in names:
        if not isinstance(name, str) or name in found or name not in specs.tools:
            continue
        args = specs.tools[name].args.args
        found[name] = {
            "args": {
                key: [_entry(where, rule) for where, rule in with_nested(rule, key)][:MAX_NESTED]
                for key, rule in args.items()
            },
            "relaxations": [
                {"allow": r.allow, "reason": r.reason} for r in specs.relaxations if name in r.tools
            ],
        }
    return found


def _entry(where: str, rule: Rule) -> dict[str, Any]:
    """`{"argument", "rule", "default"?, "forgives", "reason"}`: the rule as mismatches name
    it, its default when it has one, what it accepts beyond the value as written."""
    entry: dict[str, Any] = {"argument": where, "rule": rule.describe()}
    if rule.default is not MISSING:
        entry["default"] = safe_value(rule.default)
    entry["forgives"] = list(forgiven(rule))
    entry["reason"] = rule.reason
    return entry


def names_in(view: Any) -> list[Any]:
    """The tool names of a view's plans and produced calls, in order (duplicates kept)."""
    calls = [call for plan in _list(view.get("plans")) for call in _list(plan)]
    calls += _list(view.get("produced"))
    return [call.get("name") for call in calls if isinstance(call, dict)]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
