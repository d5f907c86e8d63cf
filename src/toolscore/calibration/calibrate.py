"""Measure each scorer against the people who labelled a batch, and list the scorer bugs.

A person's `correct` is a pass and `incorrect` a fail; `unsure` is counted but compared with
no scorer. With several labellers a case takes the majority label (a tie counts as unsure),
unless one labeller is chosen. A scorer bug is a case where the person and the rule scorer
disagree; bugs are grouped by the rule that decided, so that one
fix to one spec line shows how many cases it touches. The sample is stratified, so the bug
rate of each stratum is also scaled to the stratum's size in the whole run. A batch that
also sampled the cases where the scorers agree gives the rule scorer's accuracy on the whole
run (`accuracy`); the bug rate and its estimate stay over the disagreements.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from toolscore.calibration.accuracy import Cell, RunAccuracy, run_accuracy
from toolscore.calibration.agreement import Agreement, Rater, agreement
from toolscore.calibration.batches import (
    DISAGREEMENT,
    POPULATIONS,
    SCORERS,
    BatchCase,
    Batches,
    BatchInfo,
    Label,
)
from toolscore.calibration.bugrate import BugRate, StratumEstimate, bug_rate
from toolscore.errors import InputError
from toolscore.stats.records import fields_json

PERSON_LABELS = ("correct", "incorrect", "unsure")
FORGIVEN = "passed by the rules, incorrect for the person"
REJECTED = "failed by the rules, correct for the person"
PERSON = Rater("the person")


@dataclass(frozen=True)
class ScorerBug:
    """A case the person and the rule scorer judged differently, with the evidence: the
    differences the rule scorer accepted (when it passed the case) or rejected (when not)."""

    position: int
    case_id: str
    person: str
    rules_passed: bool
    stratum: str
    evidence: list[dict[str, Any]]
    notes: list[str]
    population: str = DISAGREEMENT

    def to_json(self) -> dict[str, Any]:
        """The bug as `calibrate --json` lists it."""
        return fields_json(
            self,
            "position",
            "case_id",
            "person",
            "rules_passed",
            "stratum",
            "population",
            "evidence",
            "notes",
        )


@dataclass(frozen=True)
class BugGroup:
    """The scorer bugs decided by one rule (a stratum), in one direction."""

    rule: str
    direction: str
    bugs: list[ScorerBug]

    def to_json(self) -> dict[str, Any]:
        """The group as `calibrate --json` lists it."""
        return {
            "rule": self.rule,
            "direction": self.direction,
            "cases": len(self.bugs),
            "bugs": [bug.to_json() for bug in self.bugs],
        }


@dataclass(frozen=True)
class LabelledBatch:
    """A batch and who labelled it how: what every calibration (of calls, of a rubric)
    starts from."""

    batch: BatchInfo
    labellers: list[str]
    chosen_labeller: str | None
    person_labels: Counter[str]
    """Cases by the person's (consensus) label; unlabelled cases are not counted."""
    unlabelled: int

    def labels_json(self) -> dict[str, Any]:
        """The labellers, the chosen one, the count of each label and of unlabelled cases,
        as `calibrate --json` prints them."""
        return {
            "labellers": self.labellers,
            "labeller": self.chosen_labeller,
            "labels": {label: self.person_labels.get(label, 0) for label in PERSON_LABELS},
            "unlabelled": self.unlabelled,
        }


def labelled_batch(
    info: BatchInfo, cases: Sequence[BatchCase], found: PersonLabels, labeller: str | None
) -> dict[str, Any]:
    """The `LabelledBatch` fields of a batch's cases and their labels (`person_labels`)."""
    return {
        "batch": info,
        "labellers": found.labellers,
        "chosen_labeller": labeller,
        "person_labels": Counter(found.person.values()),
        "unlabelled": len(cases) - len(found.person),
    }


@dataclass(frozen=True)
class Calibration(LabelledBatch):
    """The scorers measured against the person on one batch."""

    scorers: dict[str, Agreement]
    """Person (correct or incorrect) against each scorer's pass or fail."""
    per_labeller: dict[str, dict[str, Agreement]]
    between: list[tuple[str, str, Agreement]]
    """Each pair of labellers, on the cases both labelled (three labels, unsure included)."""
    confusion: dict[str, dict[str, dict[str, int]]]
    """confusion[scorer][person label]["passed" | "failed"] = cases."""
    groups: list[BugGroup] = field(default_factory=list)
    strata: list[StratumEstimate] = field(default_factory=list)
    """The disagreement sample's strata (the scorer-bug rate's)."""
    cells: list[Cell] = field(default_factory=list)
    """Every (population, stratum) of the run with its labelled and right cases."""

    @property
    def bug_count(self) -> int:
        """How many labelled cases are scorer bugs."""
        return sum(len(group.bugs) for group in self.groups)

    @property
    def bug_rate(self) -> BugRate:
        """The scorer-bug rate of the labelled cases, and the bugs it implies in the run."""
        return bug_rate(self.strata)

    @property
    def accuracy(self) -> RunAccuracy:
        """The rule scorer's estimated accuracy on the whole run (None-valued, with the
        reason, when the batch has no labelled sample of agreements)."""
        return run_accuracy(self.cells, self.batch.agreement_strata is not None)

    def to_json(self) -> dict[str, Any]:
        """The calibration as `calibrate --json` prints it."""
        return {
            "batch": self.batch.to_json(),
            **self.labels_json(),
            "agreement": {name: a.to_json() for name, a in self.scorers.items()},
            "per_labeller": {
                who: {name: a.to_json() for name, a in scores.items()}
                for who, scores in self.per_labeller.items()
            },
            "between_labellers": [
                {"labellers": [a, b], **found.to_json()} for a, b, found in self.between
            ],
            "confusion": self.confusion,
            "scorer_bugs": self.bug_count,
            "bug_groups": [group.to_json() for group in self.groups],
            "strata": [s.to_json() for s in self.strata],
            "scorer_bug_rate": self.bug_rate.to_json(),
            "run_accuracy": self.accuracy.to_json(),
        }


def consensus(labels: Sequence[str]) -> str:
    """The majority of several labellers' labels of one case; a tie is `unsure`."""
    counts = Counter(labels).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "unsure"
    return counts[0][0]


class PersonLabels(NamedTuple):
    """A batch's labels by case and labeller, the labellers, and the label each case takes."""

    by_case: dict[str, dict[str, Label]]
    labellers: list[str]
    person: dict[str, str]
    """Case id -> one labeller's label (with `labeller`) or the majority's."""


def person_labels(
    batches: Batches, batch_id: int, cases: Sequence[BatchCase], labeller: str | None
) -> PersonLabels:
    """The labels of batch `batch_id` and the person's label of each case: `labeller`'s
    (InputError when they gave none) or the majority of all (`consensus`)."""
    by_case: defaultdict[str, dict[str, Label]] = defaultdict(dict)
    for label in batches.labels(batch_id):
        by_case[label.case_id][label.labeller] = label
    labellers = sorted({who for given in by_case.values() for who in given})
    if labeller is not None and labeller not in labellers:
        known = ", ".join(labellers) or "nobody yet"
        raise InputError(
            batches.source, f"batch {batch_id} has no labels by {labeller!r} (labellers: {known})"
        )
    person: dict[str, str] = {}
    for case in cases:
        given = by_case.get(case.case_id, {})
        if labeller is not None:
            if labeller in given:
                person[case.case_id] = given[labeller].label
        elif given:
            person[case.case_id] = consensus([label.label for label in given.values()])
    return PersonLabels(dict(by_case), labellers, person)


def calibrate(batches: Batches, batch_ref: int | str, labeller: str | None = None) -> Calibration:
    """Compare the labels of a batch (one labeller's, or the majority) with each scorer."""
    info = batches.info(batch_ref)
    cases = batches.cases(info.id)
    found = person_labels(batches, info.id, cases, labeller)
    by_case, labellers, person = found
    return Calibration(
        **labelled_batch(info, cases, found, labeller),
        scorers=_against_scorers(cases, person),
        per_labeller={
            who: _against_scorers(
                cases, {c: given[who].label for c, given in by_case.items() if who in given}
            )
            for who in labellers
        },
        between=[(a, b, _between(by_case, a, b)) for a, b in itertools.combinations(labellers, 2)],
        confusion=_confusion(cases, person),
        groups=_bug_groups(cases, person, by_case),
        strata=_strata(info, cases, person),
        cells=_cells(info, cases, person),
    )


def _against_scorers(cases: Sequence[BatchCase], person: Mapping[str, str]) -> dict[str, Agreement]:
    result = {}
    for scorer in SCORERS:
        pairs = [
            (person[case.case_id] == "correct", case.verdicts[scorer])
            for case in cases
            if person.get(case.case_id) in ("correct", "incorrect")
        ]
        name = "the rule scorer" if scorer == "rules" else f"the {scorer} scorer"
        result[scorer] = agreement(pairs, PERSON, Rater(name, "verdict"))
    return result


def _between(by_case: Mapping[str, Mapping[str, Label]], a: str, b: str) -> Agreement:
    return agreement(
        (
            (given[a].label, given[b].label)
            for given in by_case.values()
            if a in given and b in given
        ),
        Rater(a),
        Rater(b),
    )


def _confusion(
    cases: Sequence[BatchCase], person: Mapping[str, str]
) -> dict[str, dict[str, dict[str, int]]]:
    table = {
        scorer: {label: {"passed": 0, "failed": 0} for label in PERSON_LABELS} for scorer in SCORERS
    }
    for case in cases:
        label = person.get(case.case_id)
        if label is None:
            continue
        for scorer in SCORERS:
            table[scorer][label]["passed" if case.verdicts[scorer] else "failed"] += 1
    return table


def is_bug(case: BatchCase, label: str | None) -> bool:
    """Whether the person's label contradicts the rule scorer's verdict on the case."""
    if label == "correct":
        return not case.verdicts["rules"]
    if label == "incorrect":
        return case.verdicts["rules"]
    return False


def _bug_groups(
    cases: Sequence[BatchCase],
    person: Mapping[str, str],
    by_case: Mapping[str, Mapping[str, Label]],
) -> list[BugGroup]:
    grouped: defaultdict[tuple[str, str], list[ScorerBug]] = defaultdict(list)
    for case in cases:
        label = person.get(case.case_id)
        if not is_bug(case, label):
            continue
        assert label is not None
        passed = case.verdicts["rules"]
        evidence = [
            _evidence(case.view, found)
            for found in case.view.get("differences", ())
            if found["accepted"] == passed
        ]
        notes = [
            f"{who}: {given.note}"
            for who, given in by_case.get(case.case_id, {}).items()
            if given.note
        ]
        bug = ScorerBug(
            case.position, case.case_id, label, passed, case.stratum, evidence, notes,
            case.population,
        )  # fmt: skip
        grouped[case.stratum, FORGIVEN if passed else REJECTED].append(bug)
    groups = [BugGroup(rule, direction, bugs) for (rule, direction), bugs in grouped.items()]
    groups.sort(key=lambda g: (-len(g.bugs), g.rule, g.direction))
    return groups


def _evidence(view: Mapping[str, Any], found: Mapping[str, Any]) -> dict[str, Any]:
    """One difference as bug evidence: the tool, the argument, the rule and the two values."""
    tool = None
    plan, plan_call, call = view.get("plan"), found.get("plan_call"), found.get("call")
    if plan is not None and plan_call is not None:
        tool = view["plans"][plan][plan_call]["name"]
    elif call is not None:
        tool = view["produced"][call]["name"]
    evidence = {"tool": tool, "argument": found["path"], "rule": found.get("rule")}
    for key in ("expected", "produced"):
        if key in found:
            evidence[key] = found[key]
    evidence["message"] = found["message"]
    return evidence


def _strata(
    info: BatchInfo, cases: Sequence[BatchCase], person: Mapping[str, str]
) -> list[StratumEstimate]:
    """The disagreement sample's strata, with their labelled cases and scorer bugs."""
    labelled: Counter[str] = Counter()
    bugs: Counter[str] = Counter()
    for case in cases:
        label = person.get(case.case_id)
        if case.population == DISAGREEMENT and label in ("correct", "incorrect"):
            labelled[case.stratum] += 1
            bugs[case.stratum] += is_bug(case, label)
    return [
        StratumEstimate(name, in_run, labelled[name], bugs[name])
        for name, in_run in info.strata.items()
    ]


def _cells(info: BatchInfo, cases: Sequence[BatchCase], person: Mapping[str, str]) -> list[Cell]:
    """Each stratum of each population of the run, with its labelled and right cases."""
    labelled: Counter[tuple[str, str]] = Counter()
    right: Counter[tuple[str, str]] = Counter()
    for case in cases:
        label = person.get(case.case_id)
        if label in ("correct", "incorrect"):
            labelled[case.population, case.stratum] += 1
            right[case.population, case.stratum] += not is_bug(case, label)
    return [
        Cell(population, name, in_run, labelled[population, name], right[population, name])
        for population in POPULATIONS
        for name, in_run in info.in_run(population).items()
    ]
