"""The readable forms of a labelling batch and of a calibration, rendered with rich."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolscore.calibration.accuracy import RunAccuracy
from toolscore.calibration.agreement import Agreement
from toolscore.calibration.batches import SCORERS, BatchInfo
from toolscore.calibration.calibrate import PERSON_LABELS, Calibration, LabelledBatch
from toolscore.calibration.rubric_calibrate import RubricCalibration
from toolscore.core.values import show
from toolscore.report.cells import interval, percent
from toolscore.report.printable import printable, safe_text
from toolscore.report.terminal import LINES_PER_CASE, capped


def render_batch(out: Console, info: BatchInfo, labelled: int) -> None:
    """A batch: its run, baseline, seed, size, and the run's disagreements (and agreements,
    when sampled) per stratum; a rubric batch its rubric and the run's entries per score."""
    if info.rubric is not None:
        unscored = info.rubric.get("unscored", 0)
        out.print(
            safe_text(
                f"batch {info.id} · run {info.run_id} · rubric {info.rubric['name']} "
                f"({info.rubric['kind']}) · seed {info.seed} · {info.size} of "
                f"{info.disagreements} scored entries sampled · {unscored} unscored not "
                f"sampled · {labelled} labelled",
                style="bold",
            )
        )
        _strata_table(out, f"Scored entries in the run ({info.rubric['strata_by']})", info.strata)
        return
    sampled = info.size - info.agreements_sampled
    agreeing = ""
    if info.agreement_strata is not None:
        in_run = sum(info.agreement_strata.values())
        agreeing = f" · {info.agreements_sampled} of {in_run} agreements sampled"
    out.print(
        safe_text(
            f"batch {info.id} · run {info.run_id} · rules vs {info.baseline} · seed {info.seed} · "
            f"{sampled} of {info.disagreements} disagreements sampled{agreeing} · "
            f"{labelled} labelled",
            style="bold",
        )
    )
    _strata_table(out, "Disagreements in the run, by deciding rule", info.strata)
    if info.agreement_strata:
        _strata_table(out, "Agreements in the run, by deciding rule", info.agreement_strata)


def _strata_table(out: Console, title: str, strata: Mapping[str, int]) -> None:
    table = Table(title=title, title_justify="left", min_width=60)
    table.add_column("stratum")
    table.add_column("in run", justify="right")
    for stratum, count in strata.items():
        table.add_row(safe_text(stratum), str(count))
    out.print(table)


def evidence_line(item: Mapping[str, Any]) -> str:
    """One piece of bug evidence, printable: `tool.argument [rule]: expected X, produced Y
    (message)`."""
    where = f"{item['tool']}{item['argument'].replace('/', '.')} [{item['rule'] or 'call'}]"
    expected = show(item["expected"]) if "expected" in item else "(no value)"
    produced = show(item["produced"]) if "produced" in item else "(no value)"
    return printable(f"{where}: expected {expected}, produced {produced} ({item['message']})")


def _kappa(found: Agreement) -> str:
    if found.kappa is not None:
        return f"{found.kappa:.2f}"
    return "undefined" if found.n else "-"


def _kappa_notes(out: Console, rows: list[tuple[str, Agreement]]) -> None:
    """Why each undefined kappa of a table is undefined, one sentence per row (a kappa of 0
    printed instead would read as "no better than chance" when it measures nothing)."""
    for name, found in rows:
        if found.n and found.kappa_undefined:
            out.print(safe_text(f"  kappa {name}: {found.kappa_undefined}"), soft_wrap=True)


def _agreed(found: Agreement) -> str:
    return f"{found.agreed}/{found.n} ({percent(found.rate)})"


def render_calibration(out: Console, result: Calibration, limit: int) -> None:
    """Agreement with each scorer, between labellers, the confusion matrix, and the scorer
    bugs grouped by rule (at most `limit` cases printed per group)."""
    info = result.batch
    out.print(
        safe_text(
            f"batch {info.id} · run {info.run_id} · rules vs {info.baseline} · "
            + _labels_line(result),
            style="bold",
        )
    )
    table = Table(
        title="The person against each scorer (unsure left out)", title_justify="left", min_width=60
    )
    table.add_column("scorer")
    table.add_column("agreed", justify="right")
    table.add_column("Cohen's kappa", justify="right")
    for name, found in result.scorers.items():
        table.add_row(name, _agreed(found), _kappa(found))
    out.print(table)
    _kappa_notes(out, list(result.scorers.items()))
    if len(result.labellers) > 1 and result.chosen_labeller is None:
        per = Table(title="Each labeller against each scorer", title_justify="left", min_width=60)
        per.add_column("labeller")
        for name in SCORERS:
            per.add_column(f"{name} (kappa)", justify="right")
        for labeller, scores in result.per_labeller.items():
            per.add_row(
                safe_text(labeller),
                *(f"{_agreed(scores[s])} {_kappa(scores[s])}" for s in SCORERS),
            )
        out.print(per)
        _kappa_notes(
            out,
            [
                (f"{labeller}/{s}", scores[s])
                for labeller, scores in result.per_labeller.items()
                for s in SCORERS
            ],
        )
        between = Table(
            title="Between labellers (three labels)", title_justify="left", min_width=60
        )
        between.add_column("labellers")
        between.add_column("agreed", justify="right")
        between.add_column("Cohen's kappa", justify="right")
        for a, b, found in result.between:
            between.add_row(safe_text(f"{a} / {b}"), _agreed(found), _kappa(found))
        out.print(between)
        _kappa_notes(out, [(f"{a} / {b}", found) for a, b, found in result.between])
    confusion = Table(title="Confusion: person (rows) by scorer verdict", title_justify="left")
    confusion.add_column("person")
    for name in SCORERS:
        confusion.add_column(f"{name} pass", justify="right")
        confusion.add_column(f"{name} fail", justify="right")
    for label in PERSON_LABELS:
        cells = []
        for name in SCORERS:
            cell = result.confusion[name][label]
            cells += [str(cell["passed"]), str(cell["failed"])]
        confusion.add_row(label, *cells)
    out.print(confusion)
    _render_bugs(out, result, limit)
    _render_accuracy(out, result)


def _render_accuracy(out: Console, result: Calibration) -> None:
    """The rule scorer's estimated accuracy on the whole run with its 95% interval, or why
    there is none."""
    _render_run_accuracy(
        out, result.accuracy, "rule scorer's", "cases", "labelled cases of both samples"
    )


def _render_run_accuracy(
    out: Console, found: RunAccuracy, scorer: str, entries: str, labelled: str
) -> None:
    """A scorer's estimated accuracy on the whole run (`found`) with its 95% interval, or why
    there is none; `entries` names what the run counts, `labelled` what the sample does."""
    if found.value is None:
        out.print(Text(f"{scorer} accuracy on the run: {found.note}"), soft_wrap=True)
        return
    line = (
        f"{scorer} accuracy on the run's {found.run_cases} {entries}: about "
        f"{percent(found.value)} (95% CI {interval(found.interval)}), from {found.labelled} "
        f"{labelled}, {found.right} judged right; {found.method}"
    )
    out.print(Text(line + (f"; {found.note}" if found.note else "")), soft_wrap=True)


def _labels_line(result: LabelledBatch) -> str:
    """Who labelled a batch (one labeller, or the majority of several) and how."""
    who = result.chosen_labeller or (
        ", ".join(result.labellers) + (" (majority)" if len(result.labellers) > 1 else "")
    )
    counts = " · ".join(f"{result.person_labels.get(k, 0)} {k}" for k in PERSON_LABELS)
    return f"labels by {who or 'nobody yet'}: {counts} · {result.unlabelled} unlabelled"


def _render_bugs(out: Console, result: Calibration, limit: int) -> None:
    judged = result.person_labels.get("correct", 0) + result.person_labels.get("incorrect", 0)
    if not judged:
        batch = result.batch.id
        out.print(
            "nothing labelled yet" if not result.person_labels.total() else
            "no case labelled correct or incorrect yet (only unsure)",
            f"so no scorer bug can be found: label batch {batch} with `toolscore label {batch}` "
            f"(or `toolscore labels import {batch} FILE`)",
            sep=", ",
            soft_wrap=True,
        )  # fmt: skip
        return
    if not result.groups:
        out.print("no scorer bugs: the person and the rule scorer agree on every labelled case")
        _render_bug_rate(out, result)
        return
    out.print(
        Text(
            f"{result.bug_count} scorer bugs (the person and the rule scorer disagree), "
            "by the rule that decided:",
            style="bold",
        )
    )
    for group in result.groups:
        out.print(safe_text(f"  {group.rule}: {len(group.bugs)} cases {group.direction}"))
        for bug in group.bugs[:limit]:
            out.print(safe_text(f"    #{bug.position} {bug.case_id} (person: {bug.person})"))
            evidence = [evidence_line(item) for item in bug.evidence[: LINES_PER_CASE + 1]]
            evidence += [printable(f"note {note}") for note in bug.notes[: LINES_PER_CASE + 1]]
            count = len(bug.evidence) + len(bug.notes)
            for line in capped(evidence, count, "pieces of evidence and notes"):
                out.print(Text(f"      {line}"))
        if len(group.bugs) > limit:
            out.print(Text(f"    ... and {len(group.bugs) - limit} more (--json lists all)"))
    _render_bug_rate(out, result)


def _render_bug_rate(out: Console, result: Calibration) -> None:
    """The scorer-bug rate of the labelled cases and the bugs it implies in the whole run,
    each with its 95% interval, and how the run's estimate was made."""
    found = result.bug_rate
    out.print(
        Text(
            f"scorer-bug rate: {found.bugs}/{found.labelled} labelled cases "
            f"({percent(found.rate)}, 95% CI {interval(found.interval)})"
        ),
        soft_wrap=True,
    )
    if found.estimate is None or found.estimate_interval is None:
        return
    low, high = found.estimate_interval
    out.print(
        Text(
            f"scaled to the run's {found.in_run} disagreements: about {found.estimate:.1f} "
            f"scorer bugs (95% CI {low:.1f} - {high:.1f}; {found.method})"
        ),
        soft_wrap=True,
    )


def render_rubric_calibration(out: Console, result: RubricCalibration) -> None:
    """The calibration of a rubric batch in the terminal."""
    info = result.batch
    assert info.rubric is not None
    out.print(
        safe_text(
            f"batch {info.id} · run {info.run_id} · rubric {info.rubric['name']} "
            f"({info.rubric['kind']}) · " + _labels_line(result),
            style="bold",
        )
    )
    found = result.agreement
    kappa = (
        f"{found.kappa:.2f}" if found.kappa is not None else f"undefined ({found.kappa_undefined})"
    )
    out.print(
        safe_text(
            f"the person against the rubric (unsure left out): {found.agreed}/{found.n} agreed "
            f"({percent(found.rate)}, 95% CI {interval(result.rate_interval)}); "
            f"Cohen's kappa {kappa}"
        ),
        soft_wrap=True,
    )
    confusion = Table(title="Confusion: person (rows) by rubric verdict", title_justify="left")
    confusion.add_column("person")
    confusion.add_column("rubric pass", justify="right")
    confusion.add_column("rubric fail", justify="right")
    for label in PERSON_LABELS:
        cell = result.confusion[label]
        confusion.add_row(label, str(cell["passed"]), str(cell["failed"]))
    out.print(confusion)
    per = Table(title=f"By score stratum ({info.rubric['strata_by']})", title_justify="left")
    per.add_column("stratum")
    per.add_column("in run", justify="right")
    per.add_column("labelled", justify="right")
    per.add_column("agreed", justify="right")
    for s in result.strata:
        rate = percent(s.agreed / s.labelled) if s.labelled else "-"
        per.add_row(safe_text(s.stratum), str(s.in_run), str(s.labelled), f"{s.agreed} ({rate})")
    out.print(per)
    if info.rubric.get("unscored"):
        out.print(f"{info.rubric['unscored']} unscored entries of the run were not sampled")
    _render_run_accuracy(out, result.accuracy, "rubric's", "scored entries", "labelled")
