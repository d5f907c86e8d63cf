"""Re-score a stored run under new specs, from the cases and outputs the store kept.

The old run stays as it was; the new one is stored beside it, linked by `rescored_from`, so
that the old number and the new one can be compared. The new specs' rubrics run too:
deterministic ones case by case, remote ones (judge, similarity) once the cases are scored,
reusing the judgments the store keeps. `rubrics_only` keeps the old run's case results and
summary as they were stored and (re)computes only its rubric results.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscore._version import __version__
from toolscore.core.model import Case, Trajectory
from toolscore.core.rules import ListRule, ObjectRule, Rule, TextRule
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.cases import may_hold_markers, parse_case
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.stream import score
from toolscore.specs.loading import SpecSet, load_specs
from toolscore.store.meta import InputFile, RunMeta, git_revision, now, specs_input
from toolscore.store.restore import summary_from_json

if TYPE_CHECKING:
    from toolscore.rubrics.summary import RubricTally
    from toolscore.scoring.rubric_run import RubricRunner
    from toolscore.store.database import RunInfo, Store
    from toolscore.store.writer import RunWriter

ROWS_AT_ONCE = 4096
"""Stored case results copied per batch by a rubrics-only rescore."""
RESCORE_MARK = re.compile(r"(?: \(rescore of run \d+\)|^rescore of run \d+)$")
"""The end of a label that `rescore_label` gave."""


def rescore_label(old: RunInfo) -> str:
    """The default label of a rescore of `old`: its label marked as a rescore,
    `"v1 (rescore of run 1)"`, or `"rescore of run 1"` when it had none. A rescore of a
    rescore names the run it re-scored, not the chain: the old mark is replaced."""
    base = RESCORE_MARK.sub("", old.label or "")
    return f"{base} (rescore of run {old.id})" if base else f"rescore of run {old.id}"


def rescore(
    store: Store,
    run_ref: int | str,
    specs_path: str | Path | None,
    label: str | None = None,
    *,
    rubrics: bool = True,
    rubrics_only: bool = False,
    refresh: bool = False,
    missing: str | None = None,
) -> int:
    """Score the stored inputs of run `run_ref` (an id, `latest` or -N: `Store.resolve`)
    under the specs at `specs_path` (None: the specs stored with the run); store the result
    as a new run linked to the old one and return its id. The label defaults to the old run's,
    marked as a rescore of it (`rescore_label`); a case the new specs cannot read (a tool
    they dropped) is an input error naming the stored file and line.

    `rubrics` false skips the rubrics; `refresh` asks remote rubrics again where the store
    has their judgment. With `rubrics_only`, every case result and the summary are the old
    run's, byte for byte, but for the rubric results: the new specs may change nothing but
    rubrics (an InputError says what else they change). A remote rubric whose key variable
    is unset is an InputError before anything is sent. `missing` says what a case without
    an output line is (`toolscore.inputs.missing`; None: what it was in the old run).
    """
    old = store.run(run_ref)
    if missing is None:
        missing = store.summary(old.id).get("missing_policy", "fail")
    if specs_path is None:
        specs = store.specs(old)
        source = f"{old.specs_path} (stored with run {old.id})"
        specs_file = InputFile(old.specs_path, old.specs_sha256, readable=False)
    else:
        specs = load_specs(specs_path)
        source = str(specs_path)
        specs_file = specs_input(specs, source)
    if rubrics_only:
        changed = calls_changed(store.specs(old), specs)
        if changed is not None:
            raise InputError(
                source,
                f"--rubrics-only keeps run {old.id}'s call results, but these specs change "
                f"more than rubrics ({changed}); rescore without --rubrics-only",
            )
    runner, tally = _rubric_runner(specs, source) if rubrics or rubrics_only else (None, None)
    meta = RunMeta(
        specs=specs,
        specs_file=specs_file,
        cases_file=InputFile(old.cases_path, old.cases_sha256, readable=False),
        outputs_file=InputFile(old.outputs_path, old.outputs_sha256, readable=False),
        label=rescore_label(old) if label is None else label,
        toolscore_version=__version__,
        created=now(),
        git_revision=git_revision(),
        rescored_from=old.id,
    )
    sources = (
        f"{old.cases_path} (stored with run {old.id})",
        f"{old.outputs_path} (stored with run {old.id})",
    )
    with store.begin_run(meta) as writer:
        if rubrics_only:
            _copy_results(store, old.id, writer)
        run = score(
            specs,
            stored_cases(store, old.cases_sha256, specs, sources[0]),
            stored_outputs(store, old.outputs_sha256, sources[1]),
            sources=sources,
            rubrics=runner,
            rubric_tally=tally,
            missing=missing,
        )
        for result in run:
            if not rubrics_only:
                writer.add(result)
            writer.add_rubrics(run.take_rubrics())
        if tally is not None:
            from toolscore.scoring.rubric_run import late_pass  # noqa: PLC0415 - with rubrics

            late = late_pass(specs.rubrics, run.pending, tally, store.judgments, refresh)
            writer.add_rubrics(late.items())
        if rubrics_only:
            return _finish_rubrics_only(store, old, writer, tally)
        return writer.finish(run.summary())


def _rubric_runner(specs: SpecSet, source: str) -> tuple[RubricRunner | None, RubricTally | None]:
    """The runner of `specs`' rubrics and the tally it counts in (None, None without any);
    a remote rubric's unset key variable is an InputError naming `source`."""
    if not specs.rubrics:
        return None, None
    from toolscore.rubrics.summary import RubricTally  # noqa: PLC0415
    from toolscore.scoring.rubric_run import RubricRunner, check_remote_keys  # noqa: PLC0415

    check_remote_keys(specs, source)
    return RubricRunner(specs), RubricTally()


def _copy_results(store: Store, run_id: int, writer: RunWriter) -> None:
    """Stage run `run_id`'s stored case results, unchanged, as the new run's."""
    rows = store.db.execute(
        "SELECT case_id, passed, kind, plan, baselines, detail FROM results WHERE run_id = ? "
        "ORDER BY seq",
        (run_id,),
    )
    while batch := rows.fetchmany(ROWS_AT_ONCE):
        writer.add_rows(batch)


def _finish_rubrics_only(
    store: Store, old: RunInfo, writer: RunWriter, tally: RubricTally | None
) -> int:
    """Store the run with the old run's summary, its `rubrics` block made anew."""
    stored: dict[str, Any] = dict(store.summary(old.id))
    stored.pop("rubrics", None)
    if tally is not None:
        stored["rubrics"] = tally.to_json()
    return writer.finish(summary_from_json(stored), stored=stored)


def calls_changed(old: SpecSet, new: SpecSet) -> str | None:
    """What `new` changes from `old` besides rubrics, in a few words (the first tool whose
    rules differ, or the relaxations), or None when rubrics are all that differ: then every
    call verdict, mismatch and metric is the same under both."""
    for name in [*old.rules, *(n for n in new.rules if n not in old.rules)]:
        if name not in new.rules:
            return f"tool {name!r} is removed"
        if name not in old.rules:
            return f"tool {name!r} is added"
        if _without_rubrics(old.rules[name]) != _without_rubrics(new.rules[name]):
            return f"the rules of tool {name!r} differ"
    if old.extra_ok != new.extra_ok:
        return "the relaxations differ"
    return None


def _without_rubrics(rule: Rule) -> Rule:
    """`rule` with the `rubric` of every text argument in it taken out."""
    if isinstance(rule, TextRule):
        return replace(rule, rubric=None)
    if isinstance(rule, ObjectRule):
        return replace(rule, args={k: _without_rubrics(v) for k, v in rule.args.items()})
    if isinstance(rule, ListRule):
        return replace(rule, items=_without_rubrics(rule.items))
    return rule


def stored_cases(store: Store, sha256: str, specs: SpecSet, source: str) -> Iterator[Case]:
    """The cases of the stored file `sha256`, read under `specs` (`source` names it in
    errors)."""
    for number, raw in store.content_lines(sha256):
        data = parse_line(raw, source, number, CaseError)
        yield parse_case(data, specs, source, number, has_markers=may_hold_markers(raw))


def stored_outputs(store: Store, sha256: str, source: str) -> Iterator[Trajectory]:
    """The outputs of the stored file `sha256`, read as `score` reads an outputs file."""
    for number, raw in store.content_lines(sha256):
        yield parse_output(
            parse_line(raw, source, number, OutputError, lenient=True), source, number
        )
