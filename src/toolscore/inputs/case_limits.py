"""A case's `forbid` and `max_calls`, read and checked against its plans: a plan that calls
what the spec or the case forbids, or more calls than the case allows, could never pass, so
the case is refused as input (naming the plan call and the entry)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolscore.core.forbid import ByTool, plan_call_forbidden, with_case
from toolscore.core.model import Forbid, Plan
from toolscore.core.rules import ObjectRule
from toolscore.errors import CaseError
from toolscore.specs.forbid import forbid_entry
from toolscore.specs.loading import SpecSet

Fail = Callable[[str, str], CaseError]


def case_limits(
    data: Mapping[str, Any], specs: SpecSet, plans: Sequence[Plan], fail: Fail
) -> tuple[tuple[Forbid, ...], int | None]:
    """The case's own forbid entries and its `max_calls` (None when it sets none), after
    checking that no plan breaks them or the spec's entries."""
    node = data.get("forbid", [])
    if type(node) is not list:
        raise fail("forbid", "must be a list of {name, args} entries")
    forbid = tuple(
        forbid_entry(entry, specs.tools, f"forbid[{i}]", fail, spec=False)
        for i, entry in enumerate(node)
    )
    max_calls = data.get("max_calls")
    if max_calls is not None and (type(max_calls) is not int or max_calls < 1):
        raise fail("max_calls", f"must be a positive integer, got {max_calls!r}")
    if max_calls is not None:
        for p, plan in enumerate(plans):
            if len(plan) > max_calls:
                raise fail(
                    "max_calls",
                    f"plans[{p}] has {len(plan)} calls, more than max_calls {max_calls}: "
                    "it could never pass",
                )
    forbidden = with_case(specs.forbidden, forbid)
    if forbidden:
        check_plans(plans, specs.rules, forbidden, fail)
    return forbid, max_calls


def check_plans(
    plans: Sequence[Plan], rules: Mapping[str, ObjectRule], forbidden: ByTool, fail: Fail
) -> None:
    """Refuse the case when some plan call accepts a call an entry of `forbidden` forbids."""
    for p, plan in enumerate(plans):
        for c, call in enumerate(plan):
            for entry in forbidden.get(call.name, ()):
                if plan_call_forbidden(rules[call.name], entry, call):
                    reason = f" ({entry.reason})" if entry.reason else ""
                    raise fail(
                        f"plans[{p}][{c}]",
                        f"the plan makes a call that {entry.where} forbids{reason}",
                    )
