"""Rubrics on a case's response (the case key `response_rubrics`): which spec rubric scores
what the agent said, and for a judge the case's own assertion in place of its rubric text.

Each entry names a rubric of the spec's `rubrics` map (`{"rubric": NAME}`); a judge's entry
may add `text` (`{"rubric": NAME, "text": "The agent tells the user ..."}`), so that the spec
holds the endpoint, model and scale once and each case gives only its assertion. The entries
are checked when the cases load (docs/formats.md, section 2.7), so that scoring reads them
without checking again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from toolscore.core.values import show, suggest

KEY = "response_rubrics"
"""The case key."""
ENTRY_KEYS = ("rubric", "text")


class ResponseRubric(NamedTuple):
    """One entry of a case's `response_rubrics`: the rubric's name and, for a judge, the
    case's assertion (None: the judge's own text)."""

    rubric: str
    text: str | None = None


class ResponseRubricError(ValueError):
    """An entry that cannot be read; `where` names the field within the case."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


def parse_response_rubrics(node: Any, rubrics: Mapping[str, Any]) -> tuple[ResponseRubric, ...]:
    """The entries of a `response_rubrics` value, checked against the spec's `rubrics`;
    ResponseRubricError names the first entry and field at fault."""
    if not isinstance(node, list):
        raise ResponseRubricError(
            KEY, f"must be a list of {{rubric, text?}} entries, got {show(node)}"
        )
    found = []
    for k, entry in enumerate(node):
        where = f"{KEY}[{k}]"
        if not isinstance(entry, Mapping):
            raise ResponseRubricError(
                where, f"an entry is an object naming a spec rubric, got {show(entry)}"
            )
        for key in entry:
            if key not in ENTRY_KEYS:
                raise ResponseRubricError(
                    f"{where}.{key}", f"unknown key{suggest(str(key), list(ENTRY_KEYS))}"
                )
        name = entry.get("rubric")
        if not isinstance(name, str) or not name:
            raise ResponseRubricError(
                f"{where}.rubric", "must name a rubric of the spec's 'rubrics' map"
            )
        rubric = rubrics.get(name)
        if rubric is None:
            known = list(rubrics)
            hint = suggest(name, known) if known else " (the spec declares no rubric)"
            raise ResponseRubricError(f"{where}.rubric", f"unknown rubric {name!r}{hint}")
        # The rubrics' modules are loaded once a spec has a rubric (not when cases are read).
        from toolscore.rubrics.base import JudgeRubric, SimilarityRubric  # noqa: PLC0415
        from toolscore.rubrics.checks import LocalRubric, MentionsCheck  # noqa: PLC0415

        if isinstance(rubric, SimilarityRubric):
            raise ResponseRubricError(
                f"{where}.rubric",
                f"rubric {name!r} is a similarity, which needs an expected text; a response "
                "has none",
            )
        if isinstance(rubric, LocalRubric) and any(
            isinstance(check, MentionsCheck) for check in rubric.checks
        ):
            raise ResponseRubricError(
                f"{where}.rubric",
                f"rubric {name!r} has a 'mentions' check, which names an argument of a call; "
                "a response has none",
            )
        text = entry.get("text")
        if text is not None:
            if not isinstance(rubric, JudgeRubric):
                raise ResponseRubricError(
                    f"{where}.text",
                    f"'text' replaces a judge's rubric text, and rubric {name!r} is not a judge",
                )
            if not isinstance(text, str) or not text.strip():
                raise ResponseRubricError(f"{where}.text", "must be the assertion, as text")
        found.append(ResponseRubric(name, text))
    return tuple(found)


def response_text(said: tuple[str, ...]) -> str | None:
    """What the agent said, as a response rubric reads it: its texts in order, separated by
    blank lines; None when it said nothing (only white space counts as nothing)."""
    texts = [text for text in said if text.strip()]
    return "\n\n".join(texts) if texts else None
