"""Sample a stored run's disagreements between the rule scorer and a baseline into a batch.

The run's stored verdicts say which cases disagree (a query on the results table); its stored
cases and outputs are read again, and only the disagreeing cases are scored again, for their
pairing and the differences a person will be shown. A failed case's stratum comes from its
stored mismatches; the first pass over the stored files scores the others again to find
theirs, and the second builds the views of the sampled cases. With `agreements`, the cases
where the two agree are stratified the same way (one more pass) and sampled in proportion.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from toolscore.calibration.batches import AGREEMENT, DISAGREEMENT, BatchCase, Batches
from toolscore.calibration.sample import proportional_sample, stratified_sample
from toolscore.calibration.view import case_view, stratum, stratum_view
from toolscore.core.model import Case, Trajectory
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.cases import may_hold_markers, parse_case
from toolscore.inputs.join import join_groups_by_id, leading_id
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import score_case
from toolscore.specs.loading import SpecSet
from toolscore.store.codec import BASELINES, ResultRow, case_json

if TYPE_CHECKING:
    from toolscore.store.database import RunInfo, Store

DEFAULT_SIZE = 100


class StoredCase(NamedTuple):
    """A case of a run (where the rule scorer and the baseline disagree, or agree): its
    stored results row, kept as stored (compressed) until needed, as a large run can have
    many."""

    case_id: str
    row: ResultRow

    def stored(self) -> tuple[dict[str, Any], list[str | None]]:
        """The case's report JSON as the run stored it, and the tool of each mismatch."""
        return case_json(*self.row)


def verdicts(stored: dict[str, Any]) -> dict[str, bool]:
    """Each scorer's verdict on a stored case, the rule scorer first."""
    baselines = stored["baselines"]
    return {"rules": bool(stored["passed"]), **{b: bool(baselines[b]) for b in BASELINES}}


def sample_disagreements(
    store: Store,
    run_ref: int | str,
    vs: str = "exact",
    n: int = DEFAULT_SIZE,
    seed: int = 0,
    agreements: int = 0,
) -> int:
    """Store a batch of `n` of the run's cases where the rules and baseline `vs` disagree,
    sampled with `seed` and stratified by deciding rule, and of `agreements` cases where they
    agree, allocated to the same strata in proportion to their size; return the batch's id.

    With agreements, the batch keeps the run's agreeing cases per stratum beside its
    disagreements per stratum, so that the labels can be weighted to the whole run.
    """
    if vs not in BASELINES:
        raise InputError(str(store.path), f"--vs must be one of {', '.join(BASELINES)}")
    if agreements < 0:
        raise InputError("--agreements", f"must be 0 or more, not {agreements}")
    run = store.run(run_ref)
    if "trials" in store.summary(run.id):  # a case's trials share its id: one label each?
        raise InputError(
            str(store.path), f"run {run.id} has trials (several outputs per case): not sampled"
        )
    specs = store.specs(run)
    strata = _strata(store, run, specs, stored_disagreements(store, run.id, vs))
    if not strata:
        raise InputError(
            str(store.path), f"run {run.id}: the rule scorer and {vs} agree on every case"
        )
    chosen = stratified_sample(((s, case_id) for case_id, s in strata.items()), n, seed)
    population = dict.fromkeys(chosen, DISAGREEMENT)
    counts = _counts(strata)
    agreement_counts = None
    if agreements:
        agreeing = _strata(store, run, specs, stored_agreements(store, run.id, vs), True)
        picked = proportional_sample(
            ((s, case_id) for case_id, s in agreeing.items()), agreements, f"agreements/{seed}"
        )
        population.update(dict.fromkeys(picked, AGREEMENT))
        chosen += picked
        random.Random(f"order/{seed}").shuffle(chosen)  # the person cannot tell which is which
        agreement_counts = _counts(agreeing)
        strata.update((case_id, agreeing[case_id]) for case_id in picked)
    order = {case_id: position for position, case_id in enumerate(chosen, 1)}
    rows = _rows(store, run.id, order)

    def picked_row(case_id: str) -> tuple[dict[str, Any], list[str | None]]:
        return case_json(*rows[case_id])

    cases = [
        BatchCase(
            order[case.id], case.id, strata[case.id], verdicts(stored), view, population[case.id]
        )
        for case, view, stored, _ in _views(store, run, specs, order, picked_row)
    ]
    cases.sort(key=lambda c: c.position)
    return Batches.of(store).create(
        run.id, vs, seed, n, sum(counts.values()), counts, cases, agreements, agreement_counts
    )


def _counts(strata: Mapping[str, str]) -> dict[str, int]:
    """Cases per stratum, the largest first."""
    return dict(sorted(Counter(strata.values()).items(), key=lambda item: (-item[1], item[0])))


def _strata(
    store: Store,
    run: RunInfo,
    specs: SpecSet,
    found: Iterable[StoredCase],
    agreeing: bool = False,
) -> dict[str, str]:
    """The stratum of each of the `found` cases of a run, by case id.

    A failed case's stratum is its first stored mismatch; only the cases the rules passed
    (and failed ones whose mismatch names no tool) are scored again to find theirs. Only
    ids are kept of the many cases a large run can have. A case of the `agreeing`
    population that exact JSON passed too is `tool [as planned]`.
    """
    strata: dict[str, str] = {}
    rescore: dict[str, ResultRow | None] = {}
    as_planned: set[str] = set()
    for item in found:
        stored, tools = item.stored()
        if stored["mismatches"] and tools and tools[0]:
            strata[item.case_id] = stratum({}, stored, tools)
            continue
        # a passed case's row holds nothing the stratum needs
        rescore[item.case_id] = item.row if stored["mismatches"] else None
        if agreeing and stored["passed"] and stored["baselines"].get("exact"):
            as_planned.add(item.case_id)

    def kept(case_id: str) -> tuple[dict[str, Any], list[str | None]]:
        row = rescore[case_id]
        return ({"mismatches": []}, []) if row is None else case_json(*row)

    for case, light, stored, tools in _views(store, run, specs, rescore, kept, light=True):
        strata[case.id] = stratum(light, stored, tools, case.id in as_planned)
    return strata


def _rows(store: Store, run_id: int, wanted: Collection[str]) -> dict[str, ResultRow]:
    """The stored rows of the wanted cases of a run (one pass over the run's results)."""
    rows = store.db.execute(
        "SELECT case_id, passed, kind, plan, baselines, detail FROM results WHERE run_id = ?",
        (run_id,),
    )
    return {row[0]: row for row in rows if row[0] in wanted}


def stored_disagreements(store: Store, run_id: int, vs: str) -> Iterator[StoredCase]:
    """The run's cases whose stored rule verdict differs from baseline `vs`, in run order."""
    return _stored(store, run_id, vs, agree=False)


def stored_agreements(store: Store, run_id: int, vs: str) -> Iterator[StoredCase]:
    """The run's other cases: the stored rule verdict is baseline `vs`'s, in run order."""
    return _stored(store, run_id, vs, agree=True)


def _stored(store: Store, run_id: int, vs: str, agree: bool) -> Iterator[StoredCase]:
    bit = BASELINES.index(vs)
    rows = store.db.execute(
        "SELECT case_id, passed, kind, plan, baselines, detail FROM results WHERE run_id = ? "
        f"AND (baselines IS NULL OR passed {'=' if agree else '!='} ((baselines >> ?) & 1)) "
        "ORDER BY seq",
        (run_id, bit),
    )
    for row in rows:
        if row[4] is None:  # baselines of another shape, kept in the detail
            stored, _ = case_json(*row)
            if (bool(stored["baselines"].get(vs)) == stored["passed"]) != agree:
                continue
        yield StoredCase(row[0], row)


def _views(
    store: Store,
    run: RunInfo,
    specs: SpecSet,
    wanted: Collection[str],
    stored_of: Callable[[str], tuple[dict[str, Any], list[str | None]]],
    light: bool = False,
) -> Iterator[tuple[Case, dict[str, Any], dict[str, Any], list[str | None]]]:
    """`rescored_views` of a stored run's wanted cases, read from its stored files."""
    sources = (
        f"{run.cases_path} (stored with run {run.id})",
        f"{run.outputs_path} (stored with run {run.id})",
    )
    case_lines = store.content_lines(run.cases_sha256)
    output_lines = store.content_lines(run.outputs_sha256)
    return rescored_views(specs, case_lines, output_lines, sources, wanted, stored_of, light)


def rescored_views(
    specs: SpecSet,
    case_lines: Iterable[tuple[int, bytes]],
    output_lines: Iterable[tuple[int, bytes]],
    sources: tuple[str, str],
    wanted: Collection[str],
    stored_of: Callable[[str], tuple[dict[str, Any], list[str | None]]],
    light: bool = False,
) -> Iterator[tuple[Case, dict[str, Any], dict[str, Any], list[str | None]]]:
    """Each wanted case scored again from the (line number, line) of a cases and an outputs
    file: the case, its labelling view (with `light`, only what the stratum needs), its
    stored report JSON and the tool of each stored mismatch (both from `stored_of`)."""
    cases = wanted_cases(case_lines, specs, sources[0], wanted)
    outputs = wanted_outputs(output_lines, sources[1], wanted)
    groups = join_groups_by_id(
        cases, outputs, lambda c: (c.id, c.line), lambda t: (t.case_id, t.line), sources=sources
    )
    for case, found in groups:
        stored, tools = stored_of(case.id)
        trajectory = _stored_trial(case, found, stored.get("trial"))
        result = score_case(specs, case, trajectory)
        if light:
            yield case, stratum_view(specs, case, result), stored, tools
        else:
            yield case, case_view(specs, case, result, stored), stored, tools


def _stored_trial(case: Case, found: list[Trajectory], trial: Any) -> Trajectory:
    """The output a stored entry was scored from: the one of its trial (a run with trials
    keeps several entries per case id), else the case's only output."""
    for trajectory in found:
        if trajectory.trial == trial and type(trajectory.trial) is type(trial):
            return trajectory
    return found[0] if found else Trajectory(case.id, (), missing=True)


def wanted_cases(
    lines: Iterable[tuple[int, bytes]], specs: SpecSet, source: str, wanted: Collection[str]
) -> Iterator[Case]:
    """The cases of a stored cases file (its numbered lines) whose ids are `wanted`."""
    for number, raw in lines:
        if _other_case(raw, wanted):
            continue
        data = parse_line(raw, source, number, CaseError)
        if data.get("id") in wanted:
            yield parse_case(data, specs, source, number, has_markers=may_hold_markers(raw))


def wanted_outputs(
    lines: Iterable[tuple[int, bytes]], source: str, wanted: Collection[str]
) -> Iterator[Trajectory]:
    """The outputs of a stored outputs file (its numbered lines) whose ids are `wanted`."""
    for number, raw in lines:
        if _other_case(raw, wanted):
            continue
        data = parse_line(raw, source, number, OutputError, lenient=True)
        if data.get("id") in wanted:
            yield parse_output(data, source, number)


def _other_case(raw: bytes, wanted: Collection[str]) -> bool:
    """Whether a line plainly starts with the id of a case not wanted (so it need not be
    parsed); a line whose id is written any other way is parsed to find out."""
    found = leading_id(raw)
    return found is not None and found not in wanted
