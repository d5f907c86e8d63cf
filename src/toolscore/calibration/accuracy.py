"""The rule scorer's accuracy on a whole run, estimated from a batch that sampled both the
cases where the scorers disagree and those where they agree (`disagreements --agreements`).

The two populations split the run, and each is split into strata by deciding rule; a
labelled case is right when the person's label is the rule verdict. The estimate is the
stratified one over the (population, stratum) cells, each weighted by its size in the run
(`bugrate.scaled_count` with the finite-population correction, as both samples are drawn
without replacement), divided by the run's cases.

Its interval is Wilson's at the effective sample size p (1 - p) / v, v the stratified
variance, as Korn and Graubard (1998) do for proportions estimated from survey samples: a
plain normal interval p ± z √v would leave [0, 1] near the ends, where a scorer's accuracy
usually is, and would have no width when every labelled case of each stratum is right.
Where v is 0 the effective size is the labelled cases. A disagreement-only sample says
nothing of the agreeing cases, which are most of a run, so then there is no estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolscore.calibration.batches import AGREEMENT, DISAGREEMENT
from toolscore.calibration.bugrate import scaled_count
from toolscore.stats.intervals import wilson
from toolscore.stats.records import fields_json

WILSON = "Wilson interval of the share of right verdicts (the run is one stratum)"
STRATIFIED = (
    "stratified over (population, stratum): p = sum of N_h * p_h / N; 95% Wilson interval at "
    "the effective sample size p * (1 - p) / v, v = sum of N_h^2 * (1 - n_h / N_h) * "
    "p_h * (1 - p_h) / n_h / N^2 (the labelled cases when v is 0)"
)
UNCOVERED = (
    "; {} of the run's cases are in strata with no labelled case: the estimate is over the "
    "others, and the interval's upper bound counts them as right"
)
CENSUS = "every case of the run is labelled: the share of right verdicts is known exactly"
NO_SPREAD = (
    "; every labelled case of each stratum is right (or each wrong), so the interval is "
    "Wilson's at the number of labelled cases"
)
NO_AGREEMENT_SAMPLE = (
    "not available: this batch has no sample of the cases where the scorers agree "
    "(make one with `toolscore disagreements RUN --agreements K`)"
)
NOTHING_LABELLED = "not available: no case of the {} sample is labelled correct or incorrect yet"


@dataclass(frozen=True)
class Cell:
    """One stratum of one population: its cases in the run, the labelled ones (correct or
    incorrect) and how many of those the rule scorer judged as the person did."""

    population: str
    stratum: str
    in_run: int
    labelled: int
    right: int

    def to_json(self) -> dict[str, Any]:
        """The cell as `calibrate --json` lists it."""
        return fields_json(self, "population", "stratum", "in_run", "labelled", "right")


@dataclass(frozen=True)
class RunAccuracy:
    """The estimated share of the run's cases where the rule verdict is right, with its 95%
    interval; `value` is None, with the reason in `note`, when it cannot be estimated."""

    cells: list[Cell]
    value: float | None
    interval: tuple[float, float] | None
    method: str | None
    note: str
    uncovered: int

    @property
    def labelled(self) -> int:
        """Labelled cases (correct or incorrect) of both samples."""
        return sum(cell.labelled for cell in self.cells)

    @property
    def right(self) -> int:
        """Labelled cases where the person's label is the rule verdict."""
        return sum(cell.right for cell in self.cells)

    @property
    def run_cases(self) -> int:
        """The run's cases in the two populations: all of them, for a batch with both."""
        return sum(cell.in_run for cell in self.cells)

    def to_json(self) -> dict[str, Any]:
        """The estimate as `calibrate --json` shows it (`run_accuracy`)."""
        return {
            "available": self.value is not None,
            "value": self.value,
            "interval": list(self.interval) if self.interval else None,
            **fields_json(self, "labelled", "right", "run_cases"),
            "uncovered_cases": self.uncovered,
            "method": self.method,
            "note": self.note,
            "strata": [cell.to_json() for cell in self.cells],
        }


def run_accuracy(cells: Sequence[Cell], agreements_recorded: bool) -> RunAccuracy:
    """The rule scorer's accuracy on the run from the labelled cells of a batch (see the
    module docstring); `agreements_recorded` says whether the batch sampled agreements."""
    cells = [cell for cell in cells if cell.in_run]
    if not agreements_recorded:
        return RunAccuracy(cells, None, None, None, NO_AGREEMENT_SAMPLE, 0)
    for population in (DISAGREEMENT, AGREEMENT):
        mine = [cell for cell in cells if cell.population == population]
        if mine and not any(cell.labelled for cell in mine):
            return RunAccuracy(cells, None, None, None, NOTHING_LABELLED.format(population), 0)
    from scipy.stats import norm  # noqa: PLC0415 - only calibrate needs scipy

    z = float(norm.ppf(0.975))
    scaled = scaled_count([(c.in_run, c.labelled, c.right) for c in cells], z, fpc=True)
    assert scaled is not None  # some cell is labelled
    total = sum(cell.in_run for cell in cells)
    covered = total - scaled.uncovered
    value = scaled.estimate / covered
    if all(cell.labelled == cell.in_run for cell in cells):
        return RunAccuracy(cells, value, (value, value), CENSUS, "", 0)
    if not scaled.stratified:
        low, high = scaled.interval  # Wilson bounds times N
        return RunAccuracy(cells, value, (low / total, high / total), WILSON, "", 0)
    note = UNCOVERED.format(scaled.uncovered) if scaled.uncovered else ""
    variance = scaled.variance / covered**2
    if variance > 0:
        size = value * (1 - value) / variance
    else:
        size = sum(cell.labelled for cell in cells)
        note += NO_SPREAD
    bounds = wilson(value * size, size, z)
    assert bounds is not None
    # the cases of unlabelled strata: none right at the lower bound, all right at the upper
    low, high = bounds[0] * covered / total, (bounds[1] * covered + scaled.uncovered) / total
    return RunAccuracy(
        cells, value, (low, high), STRATIFIED, note.removeprefix("; "), scaled.uncovered
    )
