"""One rubric result of a case, as the report lists it: in a module of its own, below the
runner that makes entries and the summary that counts them."""

from __future__ import annotations

from typing import Any, NamedTuple

from toolscore.rubrics.base import RubricTarget, RubricVerdict
from toolscore.rubrics.spec import RubricUse
from toolscore.stats.records import fields_json


class RubricEntry(NamedTuple):
    """One rubric result of a case, as the report lists it (`to_json`)."""

    call: int | None
    plan_call: int
    tool: str
    argument: str
    rubric: str
    score: float | None
    passed: bool | None
    reason: str
    cached: bool = False
    unscored: str | None = None
    tokens: int = 0

    @classmethod
    def of(cls, target: RubricTarget, verdict: RubricVerdict) -> RubricEntry:
        """The entry of a verdict on a target."""
        return cls(
            target.call, target.plan_call, target.tool, target.argument, verdict.rubric,
            verdict.score, verdict.passed, verdict.reason, verdict.cached, verdict.unscored,
            verdict.tokens,
        )  # fmt: skip

    @classmethod
    def not_scored(cls, call: int | None, plan_call: int, use: RubricUse, why: str) -> RubricEntry:
        """The entry of a target that could not be built (`why`)."""
        return cls(
            call, plan_call, use.tool, use.argument, use.rubric, None, None, why, unscored=why
        )

    def to_json(self) -> dict[str, Any]:
        """The entry as the case's `rubrics` list in the report shows it."""
        return {
            **fields_json(self, "call", "plan_call", "tool", "argument", "rubric"),
            "score": None if self.score is None else round(self.score, 4),
            **fields_json(self, "passed", "reason", "cached", "unscored"),
        }

    @property
    def order(self) -> tuple[int, str, str]:
        """Where the entry stands in its case's list: by plan call, argument, rubric."""
        return self.plan_call, self.argument, self.rubric
