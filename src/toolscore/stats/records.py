"""How a result object's JSON block names its parts: where keys are the attributes' own
names, `fields_json` writes each once, so that the keys of the report, `compare --json` and
`calibrate --json` cannot drift from the attributes they show."""

from __future__ import annotations

from typing import Any


def fields_json(obj: object, *names: str) -> dict[str, Any]:
    """The attributes `names` of `obj` (fields or properties), in that order, each under its
    own name."""
    return {name: getattr(obj, name) for name in names}
