"""BFCL's string normalisation, for `--bfcl-strings` only.

BFCL's checker compares strings after deleting spaces and `,./-_*^`, lower-casing, and turning
`'` into `"` (`standardize_string`), at the levels it looks at: a string argument, the string
items of a list argument, the string values of a dict argument (also of dicts inside a list).
That is one lenient rule for every string, identifiers included, which toolscore's principles
reject; it is offered only so that a team can reproduce BFCL's numbers. toolscore has no rule
kind for it, so it is applied to the values themselves: to the expected values when a BFCL
file is imported, and to the produced values when a BFCL result file is converted. Both sides
must therefore be converted with the option for the scores to mean anything.
"""

from __future__ import annotations

import re
from typing import Any

_DROPPED = re.compile(r"[ ,./\-_*^]")


def standardize(text: str) -> str:
    """A string as BFCL's checker compares it."""
    return _DROPPED.sub("", text).lower().replace("'", '"')


def standardize_produced(value: Any) -> Any:
    """A produced argument value with its strings normalised where BFCL normalises them."""
    if isinstance(value, str):
        return standardize(value)
    if isinstance(value, list):
        return [_one_level(item) for item in value]
    if isinstance(value, dict):
        return {key: _std(item) for key, item in value.items()}
    return value


def standardize_answer(value: Any) -> Any:
    """One BFCL possible-answer alternative, normalised at the same levels.

    Inside a dict (a dict argument, or a dict item of a list), BFCL lists the acceptable values
    of each key, so the strings of those lists are normalised.
    """
    if isinstance(value, str):
        return standardize(value)
    if isinstance(value, list):
        return [_answer_dict(item) if isinstance(item, dict) else _std(item) for item in value]
    if isinstance(value, dict):
        return _answer_dict(value)
    return value


def _std(value: Any) -> Any:
    return standardize(value) if isinstance(value, str) else value


def _one_level(item: Any) -> Any:
    if isinstance(item, dict):
        return {key: _std(v) for key, v in item.items()}
    return _std(item)


def _answer_dict(value: dict[str, Any]) -> dict[str, Any]:
    return {
        key: [_std(a) for a in alts] if isinstance(alts, list) else _std(alts)
        for key, alts in value.items()
    }
