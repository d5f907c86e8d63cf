"""Sample a stored run's results of one rubric into a labelling batch, to calibrate it.

The run's scored entries of the rubric (`rubric_results`) are stratified by score: each
distinct score is a stratum for a judge's integer scale and for deterministic checks (whose
score is the share of checks passed); a similarity's continuous score goes into fixed-width
bins of 0.1 (`[0.8, 0.9)`, the last bin closed at 1). Strata take turns as in the
disagreement sample (`sample.stratified_sample`), so a rare score is not drowned by the
common ones. Unscored entries are counted (with their reasons) but never sampled: there is
no verdict to check. The sampled cases are read again from the run's stored files for what
the labelling page shows: the prompt, the plan's text and the produced text.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from toolscore.calibration.batches import BatchCase, Batches
from toolscore.calibration.disagreements import DEFAULT_SIZE, wanted_cases, wanted_outputs
from toolscore.calibration.sample import stratified_sample
from toolscore.errors import InputError
from toolscore.inputs.join import join
from toolscore.rubrics.base import JudgeRubric, SimilarityRubric
from toolscore.rubrics.checks import LocalRubric, PhrasesCheck
from toolscore.scoring.case import score_case
from toolscore.stats.records import fields_json
from toolscore.store.rubrics import has_rubric_table

if TYPE_CHECKING:
    from toolscore.specs.loading import SpecSet
    from toolscore.store.database import Store

BIN_WIDTH = 0.1
"""The width of a similarity score's stratum."""
DISTINCT = "each distinct score is a stratum"
BINNED = "scores in fixed-width bins of 0.1, [low, high), the last closed at 1"
VERDICT = "rubric"
"""The key of the rubric's pass in a rubric batch case's `verdicts`."""


class StoredEntry(NamedTuple):
    """One scored rubric entry of the run, as stored."""

    case_id: str
    plan_call: int
    call: int | None
    tool: str
    argument: str
    score: float
    passed: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        """The entry as a rubric batch keeps it (`BatchCase.entry`)."""
        return {
            **fields_json(self, "case_id", "plan_call", "call", "tool", "argument"),
            "score": round(self.score, 4),
            "passed": self.passed,
            "reason": self.reason,
        }


def rubric_definition(rubric: Any) -> dict[str, Any]:
    """What the labelling page shows of a rubric: a judge's text, scale and threshold, a
    similarity's threshold, or the deterministic checks with their settings."""
    if isinstance(rubric, JudgeRubric):
        return {
            "kind": "judge",
            "text": rubric.text,
            "scale": [rubric.low, rubric.high],
            "threshold": rubric.threshold,
            "model": rubric.endpoint.model,
            "version": rubric.version,
        }
    if isinstance(rubric, SimilarityRubric):
        return {
            "kind": "similarity",
            "threshold": rubric.threshold,
            "model": rubric.endpoint.model,
            "version": rubric.version,
        }
    assert isinstance(rubric, LocalRubric)
    return {
        "kind": "checks",
        "checks": [_check(check) for check in rubric.checks],
        "version": rubric.version,
    }


def _check(check: Any) -> dict[str, Any]:
    kind = check.kind
    if isinstance(check, PhrasesCheck) and not check.present:
        kind = "not_contains"
    found: dict[str, Any] = {"check": kind}
    for item in dataclasses.fields(check):
        if item.name in ("folded", "present"):
            continue
        value = getattr(check, item.name)
        if isinstance(value, re.Pattern):
            value = value.pattern
        found[item.name] = list(value) if isinstance(value, tuple) else value
    return found


def score_stratum(score: float, binned: bool) -> tuple[float, str]:
    """(sort key, name) of the stratum of a score: `score 4`, or `score 0.8-0.9` binned."""
    if not binned:
        return score, f"score {score:g}"
    low = min(math.floor(round(score / BIN_WIDTH, 9)), round(1 / BIN_WIDTH) - 1)
    return low, f"score {low * BIN_WIDTH:.1f}-{(low + 1) * BIN_WIDTH:.1f}"


def item_key(entry: StoredEntry) -> str:
    """The id of a rubric batch's item (its `case_id` column, and what labels name):
    `case/plan call/argument`, the plan call counted from 0."""
    return f"{entry.case_id}/{entry.plan_call}/{entry.argument}"


def _population(
    store: Store, run_id: int, rubric: str, binned: bool
) -> tuple[list[tuple[str, str]], dict[str, int], Counter[str]]:
    """The run's scored entries of a rubric as (stratum, `seq/plan_call/argument`) pairs
    (only these small ids are kept of the many entries a large run can have), the entries
    per stratum in score order, and the unscored entries by reason."""
    unscored: Counter[str] = Counter()
    if not has_rubric_table(store.db):
        return [], {}, unscored
    rows = store.db.execute(
        "SELECT seq, plan_call, argument, score, passed, coalesce(unscored, reason) "
        "FROM rubric_results WHERE run_id = ? AND rubric = ?",
        (run_id, rubric),
    )
    pairs: list[tuple[str, str]] = []
    keys: dict[str, float] = {}
    for seq, plan_call, argument, score, passed, why in rows:
        if score is None or passed is None:
            unscored[why] += 1
            continue
        order, name = score_stratum(score, binned)
        keys[name] = order
        pairs.append((name, f"{seq}/{plan_call}/{argument}"))
    counts = Counter(name for name, _ in pairs)
    return pairs, {name: counts[name] for name in sorted(keys, key=keys.__getitem__)}, unscored


def _entries(store: Store, run_id: int, rubric: str, ids: Sequence[str]) -> list[StoredEntry]:
    """The stored entries of the chosen ids (`seq/plan_call/argument`), in their order."""
    found = []
    for item in ids:
        seq, plan_call, argument = item.split("/", 2)
        row = store.db.execute(
            "SELECT s.case_id, r.plan_call, r.call, r.tool, r.argument, r.score, r.passed, "
            "r.reason FROM rubric_results AS r JOIN results AS s "
            "ON s.run_id = r.run_id AND s.seq = r.seq WHERE r.run_id = ? AND r.seq = ? "
            "AND r.plan_call = ? AND r.argument = ? AND r.rubric = ?",
            (run_id, int(seq), int(plan_call), argument, rubric),
        ).fetchone()
        case_id, plan_call_, call, tool, argument_, score, passed, reason = row
        found.append(
            StoredEntry(case_id, plan_call_, call, tool, argument_, score, bool(passed), reason)
        )
    return found


def sample_rubric(
    store: Store, run_ref: int | str, rubric: str, n: int = DEFAULT_SIZE, seed: int = 0
) -> int:
    """Store a batch of `n` of the run's scored entries of `rubric`, stratified by score and
    sampled with `seed`; return its id. InputError when the run's spec has no such rubric or
    the run has no scored entry of it."""
    run = store.run(run_ref)
    specs = store.specs(run)
    where = f"run {run.id}"
    if rubric not in specs.rubrics:
        known = ", ".join(sorted(specs.rubrics)) or "none"
        raise InputError("--rubric", f"{where}'s spec has no rubric {rubric!r} (rubrics: {known})")
    definition = rubric_definition(specs.rubrics[rubric])
    binned = definition["kind"] == "similarity"
    population, counts, unscored = _population(store, run.id, rubric, binned)
    if not population:
        why = f", {sum(unscored.values())} unscored" if unscored else ""
        raise InputError("--rubric", f"{where} has no scored results of rubric {rubric!r}{why}")
    chosen = stratified_sample(population, n, seed)
    del population
    entries = _entries(store, run.id, rubric, chosen)
    texts = _texts(store, run, specs, entries)
    cases: list[BatchCase] = []
    keys: set[str] = set()
    for position, entry in enumerate(entries, 1):
        key = item_key(entry)
        while key in keys:  # only when a case id or an argument's name holds a slash
            key += "'"
        keys.add(key)
        view = {
            "kind": "rubric",
            "case_id": entry.case_id,
            "tool": entry.tool,
            "argument": entry.argument,
            "plan_call": entry.plan_call,
            "call": entry.call,
            **texts.get((entry.case_id, entry.plan_call, entry.argument), {}),
        }
        stratum = score_stratum(entry.score, binned)[1]
        verdicts = {VERDICT: entry.passed}
        cases.append(BatchCase(position, key, stratum, verdicts, view, entry=entry.to_json()))
    info = {
        "name": rubric,
        "kind": definition["kind"],
        "definition": definition,
        "strata_by": BINNED if binned else DISTINCT,
        "unscored": sum(unscored.values()),
        "unscored_reasons": dict(unscored.most_common()),
    }
    return Batches.of(store).create(
        run.id, "rubric", seed, n, sum(counts.values()), counts, cases, rubric=info
    )


def _texts(
    store: Store, run: Any, specs: SpecSet, entries: list[StoredEntry]
) -> dict[tuple[str, int, str], dict[str, Any]]:
    """The prompt, the plan's text and the produced text of each entry, from the run's
    stored files (the sampled cases are scored again for their pairing)."""
    wanted: dict[str, list[StoredEntry]] = {}
    for entry in entries:
        wanted.setdefault(entry.case_id, []).append(entry)
    sources = (
        f"{run.cases_path} (stored with run {run.id})",
        f"{run.outputs_path} (stored with run {run.id})",
    )
    cases = wanted_cases(store.content_lines(run.cases_sha256), specs, sources[0], wanted)
    outputs = wanted_outputs(store.content_lines(run.outputs_sha256), sources[1], wanted)
    paths = {
        (use.tool, use.argument): use.path for uses in specs.rubric_uses.values() for use in uses
    }
    found: dict[tuple[str, int, str], dict[str, Any]] = {}
    for case, trajectory in join(cases, outputs, sources=sources):
        result = score_case(specs, case, trajectory)
        plan = case.plans[result.plan] if result.plan is not None else ()
        for entry in wanted[case.id]:
            path = paths.get((entry.tool, entry.argument), tuple(entry.argument.split(".")))
            expected = _text(
                plan[entry.plan_call].args if entry.plan_call < len(plan) else None, path
            )
            produced = None
            if entry.call is not None and entry.call < len(result.calls):
                produced = _text(result.calls[entry.call].args, path)
            found[case.id, entry.plan_call, entry.argument] = {
                "prompt": case.prompt if isinstance(case.prompt, str) else None,
                "expected": expected,
                "produced": produced,
            }
    return found


def _text(args: Mapping[str, Any] | None, path: tuple[str, ...]) -> str | None:
    """The text at `path` through nested objects of a call's arguments, or None."""
    value: Any = args
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, str) else None
