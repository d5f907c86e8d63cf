"""Mismatch counts of many pairs of calls at once, as one array, for choosing a pairing.

A failed case's diagnosis needs the mismatch count of every plan call with every produced call
of its tool: n^2 numbers for n calls, which as Python lists (or a dict of pairs) cost about
300 bytes each, 2.7 GB at n = 3,000 (issue 25). `mismatch_counts` keeps them in a NumPy array
of floats (8 bytes each) and works them out an argument at a time: each argument is judged once per
distinct pair of values, and a keyed argument (`Rule.key`) by looking keys up, so an
argument that tells every call apart costs one array fill per plan call, not n judgements.
NumPy is imported by the first table, not by `import toolscore`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolscore.core.arguments import accepted_keys, argument_count, mismatch_count
from toolscore.core.model import MISSING, OMITTED, AnyOf, Call
from toolscore.core.rules import ObjectRule, Rule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Counts = npt.NDArray[np.int32]
    Table = npt.NDArray[np.float64]

MEMO_ENTRIES = 1 << 22
"""Counts kept for expected values met again (about 16 MB per argument): an argument whose
plan values all differ fills it with rows that are never reused, so past this it is worked
out each time instead."""


def mismatch_counts(rule: ObjectRule, expected: Sequence[Call], produced: Sequence[Call]) -> Table:
    """`mismatch_count` of every expected call (rows) with every produced call (columns).

    The counts are floats (whole numbers, exact), the type scipy's assignment takes without
    a copy: an array of 3,000 x 3,000 is 72 MB, twice that if it had to be converted.

    Fifty refunds in one currency with fifty order ids take one currency judgement and fifty
    key look-ups, not 2,500 walks of every argument.
    """
    import numpy as np  # noqa: PLC0415 - only a large diagnosis needs it

    table = np.zeros((len(expected), len(produced)), dtype=np.float64)
    objects = [j for j, call in enumerate(produced) if type(call.args) is dict]
    given: list[dict[str, Any]] = [produced[j].args for j in objects]  # type: ignore[misc]
    if not objects:
        for r, e in enumerate(expected):
            table[r] = [mismatch_count(rule, e, p) for p in produced]
        return table
    unknown = np.array(
        [0 if rule.allow_unknown else sum(name not in rule.args for name in a) for a in given],
        dtype=np.int32,
    )
    arguments = [_ArgumentCounts(rule, arg, given) for arg in rule.compared_args]
    every = len(objects) == len(produced)
    columns = np.array(objects, dtype=np.intp)
    for r, e in enumerate(expected):
        if type(e.args) is not dict:
            table[r] = [mismatch_count(rule, e, p) for p in produced]
            continue
        total = table[r] if every else np.zeros(len(objects), dtype=np.float64)
        total += unknown
        for argument in arguments:
            argument.add_to(total, e.args)
        if not every:  # some arguments are not an object (unparsed): walked pair by pair
            table[r] = [0 if type(p.args) is dict else mismatch_count(rule, e, p) for p in produced]
            table[r, columns] = total
    return table


class _ArgumentCounts:
    """One argument's mismatch counts against fixed produced calls, for any expected call.

    The produced values are grouped by `_value_class`: values of one class count the same
    against any expected value, so each group is judged once per class of expected value.
    A group whose value has no class (an object, an array) is judged call by call.
    """

    __slots__ = (
        "alone",
        "arg",
        "firsts",
        "groups",
        "groups_of_key",
        "memo",
        "owner",
        "unkeyed",
        "values",
    )

    def __init__(
        self,
        owner: ObjectRule,
        arg: tuple[str, Rule, Any, bool],
        given: Sequence[Mapping[str, Any]],
    ) -> None:
        import numpy as np  # noqa: PLC0415 - as in mismatch_counts

        self.owner, self.arg = owner, arg
        name, rule = arg[0], arg[1]
        self.values = [args.get(name, MISSING) for args in given]
        groups: list[int] = []  # per produced call, its group; -1: judged on its own
        self.firsts: list[Any] = []  # per group, its first value
        group_of: dict[Any, int] = {}
        for value in self.values:
            found = _value_class(value)
            group = -1 if found is None else group_of.setdefault(found, len(group_of))
            if group == len(self.firsts):
                self.firsts.append(value)
            groups.append(group)
        # The counts of the groups get one entry more, always 0, which the calls judged on
        # their own (group -1) pick up.
        self.groups = np.array(groups, dtype=np.intp)
        self.alone = [j for j, group in enumerate(groups) if group < 0]
        self.groups_of_key: dict[Any, list[int]] | None = None
        self.unkeyed: list[int] = []  # the groups without a key: judged
        if rule.keyed:
            self.groups_of_key = {}
            for group, value in enumerate(self.firsts):
                key = None if value is MISSING else rule.key(value)
                if key is None:
                    self.unkeyed.append(group)
                else:
                    self.groups_of_key.setdefault(key, []).append(group)
        self.memo: dict[Any, Counts] = {}

    def add_to(self, total: Table, expected_args: Mapping[str, Any]) -> None:
        """Add the argument's count against each produced call to `total`."""
        expected = expected_args.get(self.arg[0], self.arg[2])
        by_group = self._by_group(expected)
        if by_group is not None:
            total += by_group[self.groups]
        for j in self.alone:
            total[j] += argument_count(self.owner, self.arg, expected, self.values[j])

    def _by_group(self, expected: Any) -> Counts | None:
        """The count of each group against `expected` (and a 0 after them); None when every
        one is 0. By keys where both sides have them, else judged and kept for next time."""
        import numpy as np  # noqa: PLC0415 - as in mismatch_counts

        accepted = None if self.groups_of_key is None else accepted_keys(self.arg[1], expected)
        if accepted is not None and self.groups_of_key is not None:
            by_key = np.ones(len(self.firsts) + 1, dtype=np.int32)
            by_key[-1] = 0
            for key in accepted:
                by_key[self.groups_of_key.get(key, [])] = 0
            for group in self.unkeyed:
                by_key[group] = self._count(expected, group)
            return by_key if by_key.any() else None
        found = _value_class(expected)
        counts = None if found is None else self.memo.get(found)
        if counts is None:
            counts = np.array(
                [self._count(expected, group) for group in range(len(self.firsts))] + [0],
                dtype=np.int32,
            )
            if found is not None and len(self.memo) * counts.size < MEMO_ENTRIES:
                self.memo[found] = counts
        return counts if counts.any() else None

    def _count(self, expected: Any, group: int) -> int:
        return argument_count(self.owner, self.arg, expected, self.firsts[group])


def _value_class(value: Any) -> Any:
    """A hashable stand-in for a value that no rule tells apart from the value itself: its
    type and value for a JSON scalar (`1`, `1.0` and `true` are three classes), the classes
    of its alternatives for `$any`. None for objects, arrays and `$ref`s: judged each time."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return kind, value
    if value is MISSING or value is OMITTED:
        return value
    if kind is AnyOf:
        parts = tuple(_value_class(alternative) for alternative in value)
        return None if None in parts else (AnyOf, parts)
    return None
