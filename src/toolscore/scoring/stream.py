"""A scoring run: cases joined with their outputs by id, each scored as it is read (its
trials, its state, its rubrics), the verdicts streamed in case order and counted into the
summary. A case without an output line fails, unless the run leaves such cases out
(`missing="exclude"`, `toolscore.inputs.missing`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from toolscore.core.model import Case, CaseResult, Trajectory
from toolscore.inputs.join import join_groups_by_id
from toolscore.inputs.trials import ordered_trials
from toolscore.scoring.case import score_replayed
from toolscore.scoring.summary import Summary, SummaryBuilder
from toolscore.specs.loading import SpecSet

if TYPE_CHECKING:
    from toolscore.rubrics.entries import RubricEntry
    from toolscore.rubrics.summary import RubricTally
    from toolscore.scoring.rubric_run import Pending, RubricRunner
    from toolscore.state import AnyEnvironment as Environment


def score_trials(
    specs: SpecSet,
    case: Case,
    outputs: Sequence[Trajectory],
    env: Environment | None = None,
    sources: tuple[str, str] = ("<cases>", "<outputs>"),
) -> list[CaseResult]:
    """Score one case against each of its outputs (its trials, in trial order; none: one
    missing output scored as no call). Each trial's result carries its `trial` and, when
    trials are given, how many the case has and how many passed on calls."""
    if len(outputs) == 1 and outputs[0].trial is None:  # the usual case, kept cheap
        return [score_replayed(specs, case, outputs[0], env, sources[0])]
    if not outputs:
        trajectories = [Trajectory(case.id, (), missing=True)]
    else:
        trajectories = ordered_trials(outputs, sources[1])
    results = [score_replayed(specs, case, t, env, sources[0]) for t in trajectories]
    if trajectories[0].trial is None:
        return results
    counts = (len(results), sum(r.passed for r in results))
    return [
        r._replace(trial=t.trial, trials=counts) for r, t in zip(results, trajectories, strict=True)
    ]


class Scoring:
    """A run scoring `cases` against `outputs` (joined by id) under `specs`, lazily and in one
    pass: iterate it for the case results as they are decided, then ask for `summary()`.

    `sources` names the two inputs in error messages (duplicate ids). With `env`, each case
    is also replayed against the environment's store and judged on its final state. With
    `cluster_by`, the summary also gives the accuracy's clustered interval (`cluster_key`).
    With `rubrics` (a `RubricRunner` of `specs`), each case's rubrics are run apart from its
    verdict and counted in `rubric_tally`, the summary's `rubrics` block: see
    `take_rubrics`, `pending` and `add_rubrics`. A case without an output line fails with
    `missing_output`; with `missing="exclude"` (a partial run) it is left out of the results
    and of every rate, and the summary counts and names it instead.
    """

    def __init__(
        self,
        specs: SpecSet,
        cases: Iterable[Case],
        outputs: Iterable[Trajectory],
        sources: tuple[str, str] = ("<cases>", "<outputs>"),
        env: Environment | None = None,
        cluster_by: str | None = None,
        rubrics: RubricRunner | None = None,
        rubric_tally: RubricTally | None = None,
        missing: str = "fail",
    ) -> None:
        self.specs = specs
        self.env = env
        self.sources = sources
        self.unmatched_output_ids: list[str] = []
        self._builder = SummaryBuilder(specs, cluster_by, sources[0], missing)
        self._groups = join_groups_by_id(
            cases,
            outputs,
            lambda case: (case.id, case.line),
            lambda trajectory: (trajectory.case_id, trajectory.line),
            self._unmatched,
            sources,
        )
        self._done = False
        self._rubrics = rubrics
        self._entries: list[tuple[str, list[RubricEntry]]] = []
        self._builder.rubrics = rubric_tally if rubrics is not None else None

    def _unmatched(self, ids: list[str]) -> None:
        self.unmatched_output_ids = ids
        self._builder.set_unmatched(ids)

    def __iter__(self) -> Iterator[CaseResult]:
        """The case results in case order; under the `exclude` policy, without the cases that
        have no output line (the summary counts and names them)."""
        specs, builder, env = self.specs, self._builder, self.env
        exclude = builder.missing_policy == "exclude"
        for case, outputs in self._groups:
            results = score_trials(specs, case, outputs, env, self.sources)
            builder.add_case(case, results, len(outputs))
            if exclude and not outputs:
                continue
            if self._rubrics is not None:
                self._run_rubrics(case, results)
            yield from results
        self._done = True

    def _run_rubrics(self, case: Case, results: Sequence[CaseResult]) -> None:
        """Run the rubrics on each result (each trial's) and count them; keep the entries of
        a case without trials (the store keys rubric results by case id, as `score` does)."""
        assert self._rubrics is not None
        for result in results:
            entries = self._rubrics.run(case, result, self._builder.rubrics)
            if entries and result.trial is None:
                self._entries.append((case.id, entries))

    def take_rubrics(self) -> list[tuple[str, list[RubricEntry]]]:
        """The rubric entries (by case id) of the cases yielded since the last call: the
        deterministic ones, and the unscored ones of remote rubrics."""
        taken, self._entries = self._entries, []
        return taken

    @property
    def pending(self) -> list[Pending]:
        """The targets waiting for remote rubrics (`rubric_run.run_remote`), once iterated."""
        return [] if self._rubrics is None else self._rubrics.pending

    def add_rubrics(self, found: Mapping[str, Sequence[RubricEntry]]) -> None:
        """Count the remote rubrics' entries (by case id) in the summary."""
        tally = self._builder.rubrics
        if tally is None:
            return
        for entries in found.values():
            for entry in entries:
                tally.add(entry)

    def summary(self) -> Summary:
        """Finish the run (scoring whatever was not iterated yet) and return its summary."""
        if not self._done:
            for _ in self:
                pass
        return self._builder.finish()


score = Scoring
"""`score(specs, cases, outputs, ...)` starts a `Scoring` run: the class itself, so that its
parameters are written once."""
