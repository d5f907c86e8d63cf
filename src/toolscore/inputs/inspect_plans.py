"""An Inspect AI sample's toolscore case: the plans kept in its metadata or in its target.

The Inspect scorer (integrations/inspect.py) reads them from the running sample, the eval-log
reader (inspect_logs.py) from the logged one, so that a log can be its own cases file. A
sample's `metadata["plans"]` holds a list of plans or a case object (`{"plans": ..., ...}`);
otherwise its `target` is JSON text of a list of plans, of one plan (a non-empty list of call
objects), or of a case object, and a target of several strings holds one plan in each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

PLANS_KEY = "plans"


class PlansError(ValueError):
    """A sample whose plans cannot be read; `field` says where they were looked for."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def case_data(target: Any, metadata: Any, key: str = PLANS_KEY) -> tuple[dict[str, Any], str]:
    """The case's keys (all but `id`) and where they were found (`metadata.plans`, `target`).

    The keys are checked later, as every case's are (`parse_case`)."""
    if isinstance(metadata, Mapping) and key in metadata:
        node, where = metadata[key], f"metadata.{key}"
    else:
        node, where = _target_json(target, key), "target"
    if isinstance(node, Mapping):
        return dict(node), where
    return {"plans": _plans(node)}, where


def _target_json(target: Any, key: str) -> Any:
    texts = [target] if isinstance(target, str) else target
    if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
        raise PlansError("target", "must be a string or a list of strings")
    if not any(text.strip() for text in texts):
        message = f"no plans: give them in the target (JSON text) or in metadata.{key}"
        raise PlansError("target", message)
    try:
        if len(texts) > 1:
            return [json.loads(text) for text in texts]
        return json.loads(texts[0])
    except json.JSONDecodeError as error:
        raise PlansError("target", f"plans must be JSON text ({error.msg})") from None


def _plans(node: Any) -> Any:
    """A list of plans; one plan (a non-empty list of call objects) becomes a list of one."""
    if isinstance(node, list) and node and all(isinstance(call, Mapping) for call in node):
        return [node]
    return node
