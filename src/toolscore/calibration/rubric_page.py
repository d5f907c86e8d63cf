"""What the labelling page shows of one item of a rubric batch, as plain values.

The rubric (a judge's text, or the deterministic checks), the case's prompt, the plan's text
and the produced text, the tool and the argument. The rubric's score, pass and reason are
left out until the person has labelled the item, so that they cannot anchor the judgement:
the page is built without them, not merely styled to hide them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolscore.calibration.batches import BatchCase, Label
from toolscore.calibration.page import json_text, visible

WORDS = {"correct": "meets the rubric", "incorrect": "does not", "unsure": "unsure"}
"""How the rubric page names the three labels."""


@dataclass(frozen=True)
class RubricVerdictShown:
    """The rubric's verdict on the item, shown once labelled."""

    score: float
    passed: bool
    reason: str
    agrees: bool | None
    """Whether the person's label is the rubric's pass (None when unsure)."""


@dataclass(frozen=True)
class RubricItemPage:
    """Everything the rubric template shows of one item; `verdict` is None until labelled."""

    rubric: str
    kind: str
    text: str | None
    """A judge's rubric text."""
    settings: tuple[tuple[str, str], ...]
    """The rubric's other settings (scale, threshold, model) as (name, value) texts."""
    checks: tuple[str, ...]
    """A deterministic rubric's checks, one JSON text each."""
    case_id: str
    tool: str
    argument: str
    prompt: str | None
    expected: str | None
    produced: str | None
    stratum: str | None
    verdict: RubricVerdictShown | None


def rubric_item_page(
    case: BatchCase, label: Label | None, rubric: Mapping[str, Any]
) -> RubricItemPage:
    """The page of one rubric batch item for a labeller whose label of it is `label` (None:
    not yet labelled, and then nothing of the rubric's verdict is included)."""
    view = case.view
    definition = rubric.get("definition", {})
    settings = tuple(
        (key, visible(json_text(definition[key])))
        for key in ("scale", "threshold", "model", "version")
        if definition.get(key) is not None
    )
    verdict = None
    if label is not None and case.entry is not None:
        passed = bool(case.entry["passed"])
        verdict = RubricVerdictShown(
            case.entry["score"],
            passed,
            visible(str(case.entry["reason"])),
            None if label.label == "unsure" else passed == (label.label == "correct"),
        )
    return RubricItemPage(
        rubric=visible(str(rubric.get("name", ""))),
        kind=str(rubric.get("kind", "")),
        text=None if definition.get("text") is None else visible(str(definition["text"])),
        settings=settings,
        checks=tuple(json_text(check) for check in definition.get("checks", ())),
        case_id=visible(str(view.get("case_id", ""))),
        tool=visible(str(view.get("tool", ""))),
        argument=visible(str(view.get("argument", ""))),
        prompt=_text(view.get("prompt")),
        expected=_text(view.get("expected")),
        produced=_text(view.get("produced")),
        stratum=None if label is None else visible(case.stratum),
        verdict=verdict,
    )


def _text(value: Any) -> str | None:
    return None if value is None else visible(str(value))
