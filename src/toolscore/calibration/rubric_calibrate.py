"""Measure a rubric (a judge, most often) against the people who labelled a rubric batch.

A person's `correct` says the produced text meets the rubric (a pass), `incorrect` that it
does not; `unsure` is counted but compared with nothing. Several labellers give the majority
label (a tie is unsure) unless one is chosen, as for call batches. The result: agreement with
the rubric's pass (n, agreed, rate with its 95% Wilson interval, Cohen's kappa), the
confusion matrix, agreement per score stratum, and the rubric's accuracy on the whole run:
the stratified estimate of `accuracy.run_accuracy`, each score stratum weighted by its
scored entries in the run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolscore.calibration.accuracy import Cell, RunAccuracy, run_accuracy
from toolscore.calibration.agreement import Agreement, Rater, agreement
from toolscore.calibration.batches import BatchCase, Batches, BatchInfo
from toolscore.calibration.calibrate import (
    PERSON,
    PERSON_LABELS,
    LabelledBatch,
    labelled_batch,
    person_labels,
)
from toolscore.calibration.rubric_sample import VERDICT
from toolscore.errors import InputError
from toolscore.stats.intervals import ratio, wilson
from toolscore.stats.records import fields_json

POPULATION = "scored"
"""The population of a rubric batch's cells: the run's scored entries of the rubric."""
NOTHING_LABELLED = "not available: no item is labelled (meets the rubric, or does not) yet"


@dataclass(frozen=True)
class StratumAgreement:
    """Agreement with the rubric within one score stratum."""

    stratum: str
    in_run: int
    labelled: int
    agreed: int

    def to_json(self) -> dict[str, Any]:
        """The stratum as `calibrate --json` lists it (`per_stratum`)."""
        return {
            **fields_json(self, "stratum", "in_run", "labelled", "agreed"),
            "rate": ratio(self.agreed, self.labelled),
        }


@dataclass(frozen=True)
class RubricCalibration(LabelledBatch):
    """A rubric measured against the person on one rubric batch."""

    agreement: Agreement
    confusion: dict[str, dict[str, int]]
    """confusion[person label]["passed" | "failed"] = items, by the rubric's pass."""
    strata: list[StratumAgreement]
    accuracy: RunAccuracy

    @property
    def rate_interval(self) -> tuple[float, float] | None:
        """The 95% Wilson interval of the agreement rate (None with nothing labelled)."""
        return wilson(self.agreement.agreed, self.agreement.n)

    def to_json(self) -> dict[str, Any]:
        """The calibration as `calibrate --json` prints it for a rubric batch."""
        assert self.batch.rubric is not None
        return {
            "batch": self.batch.to_json(),
            "rubric": self.batch.rubric["name"],
            **self.labels_json(),
            "agreement": {
                **self.agreement.to_json(),
                "interval": None if self.rate_interval is None else list(self.rate_interval),
            },
            "confusion": self.confusion,
            "per_stratum": [s.to_json() for s in self.strata],
            "run_accuracy": self.accuracy.to_json(),
        }


def calibrate_rubric(
    batches: Batches, batch_ref: int | str, labeller: str | None = None
) -> RubricCalibration:
    """Compare the labels of a rubric batch (one labeller's, or the majority) with the
    rubric's pass or fail."""
    info = batches.info(batch_ref)
    if info.rubric is None:
        raise InputError(batches.source, f"batch {info.id} is a batch of calls, not of a rubric")
    cases = batches.cases(info.id)
    labels = person_labels(batches, info.id, cases, labeller)
    person = labels.person
    judged = [
        (case, person[case.case_id] == "correct")
        for case in cases
        if person.get(case.case_id) in ("correct", "incorrect")
    ]
    found = agreement(
        ((meets, case.verdicts[VERDICT]) for case, meets in judged),
        PERSON,
        Rater(f"the rubric {info.rubric['name']}", "verdict"),
    )
    strata = _strata(info, judged)
    cells = [Cell(POPULATION, s.stratum, s.in_run, s.labelled, s.agreed) for s in strata]
    accuracy = (
        run_accuracy(cells, True)
        if judged
        else RunAccuracy([c for c in cells if c.in_run], None, None, None, NOTHING_LABELLED, 0)
    )
    return RubricCalibration(
        **labelled_batch(info, cases, labels, labeller),
        agreement=found,
        confusion=_confusion(cases, person),
        strata=strata,
        accuracy=accuracy,
    )


def _confusion(cases: Sequence[BatchCase], person: Mapping[str, str]) -> dict[str, dict[str, int]]:
    table = {label: {"passed": 0, "failed": 0} for label in PERSON_LABELS}
    for case in cases:
        label = person.get(case.case_id)
        if label is not None:
            table[label]["passed" if case.verdicts[VERDICT] else "failed"] += 1
    return table


def _strata(info: BatchInfo, judged: Sequence[tuple[BatchCase, bool]]) -> list[StratumAgreement]:
    labelled: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    for case, meets in judged:
        labelled[case.stratum] += 1
        agreed[case.stratum] += meets == case.verdicts[VERDICT]
    return [
        StratumAgreement(name, in_run, labelled[name], agreed[name])
        for name, in_run in info.strata.items()
    ]
