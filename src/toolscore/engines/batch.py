"""The engine-neutral batch interface: score a batch of joined records, merge the summaries.

A joined record is one case with its outputs, as `toolscore join` writes them and as any
engine (the local `--workers` processes, Ray, Dask, Spark) hands them to a worker: the case
line's text and number, and the text and number of each of its output lines (none when the
case has no output, several for trials). A `BatchScorer` made once per worker turns a batch
of them into the report lines `--json` writes, the results-store rows and a partial summary;
`merge_outcomes` adds the partial summaries up, in case order, into the run's summary.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from toolscore.core.model import MISSING, Case, CaseResult
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.cases import may_hold_markers, parse_case
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.missing import check_policy
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.case import outcome_passed, score_replayed
from toolscore.scoring.stream import score_trials
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import SpecSet

if TYPE_CHECKING:
    from toolscore.rubrics.cache import JudgmentCache
    from toolscore.rubrics.entries import RubricEntry
    from toolscore.scoring.rubric_run import Pending, RubricRunner
    from toolscore.state import AnyEnvironment as Environment
    from toolscore.store.codec import ResultRow

ALL_RUBRICS = "all"
LOCAL_RUBRICS = "local"
"""What `rubrics=` asks a run to score: every rubric, or the deterministic ones only."""

RECORD_KEYS = ("seq", "id", "case_line", "case", "output_lines", "outputs", "encoded")
"""The keys of a joined record, in the order `toolscore join` writes them: the case's place
in the cases file (0 for the first case), its id, its line number and text, the line
numbers and texts of its output lines (empty lists when it has none), and which texts are
in base64, being no UTF-8 (`"case"`, `"outputs.N"`; usually none, and the key may be left
out)."""


class BatchOutcome(NamedTuple):
    """What scoring one batch gives back."""

    summary: SummaryBuilder
    report_lines: list[bytes]
    """Each case's report JSON, when the run writes a report."""
    rows: list[ResultRow]
    """Each case's results-store row, when the run is saved."""
    failures: list[CaseResult]
    """The first failing cases, as the terminal prints them: their mismatches without the
    values (an agent's may be nested too deep to send from one process to another)."""
    rubrics: Sequence[tuple[str, list[RubricEntry]]] = ()
    """Each case's rubric entries (case id, entries), when the run is saved and scored some."""
    pending: Sequence[Pending] = ()
    """The targets of remote rubrics, asked once scoring is done (`rubrics.run.run_remote`)."""


SETTINGS = (
    "sources", "cluster_by", "rubrics", "want_report", "want_rows", "keep_failures", "missing",
    "choice",
)  # fmt: skip
"""A `BatchScorer`'s keyword settings beside its specs and environment: what an engine sends
to the processes that build their own scorer (`BatchScorer.settings`)."""

LineGroup = tuple[int, bytes, str, Sequence[tuple[int, bytes]]]
"""A case line's number, text and id, and its output lines' numbers and texts (none when
the case has no output, several for trials): the lines share the id they were joined by."""


def _raw(value: str | bytes, name: str, encoded: Sequence[str] | None) -> bytes:
    # `encoded` may be any sequence (a NumPy array, from a data frame's column)
    if encoded is not None and len(encoded) and name in list(encoded):
        return base64.b64decode(value)
    return value.encode() if isinstance(value, str) else value


def record_groups(records: Iterable[Mapping[str, Any]]) -> Iterable[LineGroup]:
    """The line groups of joined records (texts given as str or bytes)."""
    for record in records:
        encoded = record.get("encoded")
        outputs = [
            (line, _raw(text, f"outputs.{n}", encoded))
            for n, (line, text) in enumerate(
                zip(record["output_lines"], record["outputs"], strict=True)
            )
        ]
        case = _raw(record["case"], "case", encoded)
        yield int(record["case_line"]), case, record["id"], outputs


def _load(raw: bytes, number: int, line_id: str, path: str, error: type[InputError]) -> Any:
    """A line parsed, with the id it was joined by checked."""
    data = parse_line(raw, path, number, error, lenient=error is OutputError)
    if data.get("id") != line_id:
        raise error(path, "a line must be a JSON object with one string id", line=number)
    return data


class BatchScorer:
    """Scores batches of joined records under one spec set; made once per worker, as it
    holds what every batch shares (the compiled specs, the environment, the rubric runner).

    `sources` are the names of the cases and outputs files, for errors and for the cases
    source of clustered intervals; `want_report` and `want_rows` ask for report lines and
    store rows; `keep_failures` how many failing cases to keep for the terminal; `missing`
    what a case without an output line is (`toolscore.inputs.missing`: under `exclude` it gives no
    report line, row or failure, and the summary only counts and names it); `choice` which
    choice of a response object with several to score where a line does not say.
    """

    def __init__(
        self,
        specs: SpecSet,
        sources: tuple[str, str],
        env: Environment | None = None,
        *,
        cluster_by: str | None = None,
        rubrics: str | None = None,
        want_report: bool = True,
        want_rows: bool = False,
        keep_failures: int = 0,
        missing: str = "fail",
        choice: int | None = None,
    ) -> None:
        self.specs = specs
        self.choice = choice
        self.sources = sources
        self.env = env
        self.cluster_by = cluster_by
        self.rubrics = rubrics
        self.want_report = want_report
        self.want_rows = want_rows
        self.keep_failures = keep_failures
        self.missing = check_policy(missing)
        self.runner: RubricRunner | None = None
        if rubrics is not None and specs.rubrics:
            from toolscore.scoring.rubric_run import RubricRunner  # noqa: PLC0415 - only with rubrics

            self.runner = RubricRunner(specs, remote=rubrics == ALL_RUBRICS)

    def settings(self) -> dict[str, Any]:
        """This scorer's `SETTINGS`, to build its like on another process:
        `BatchScorer(specs, env=env, **scorer.settings())`."""
        return {name: getattr(self, name) for name in SETTINGS}

    def new_summary(self) -> SummaryBuilder:
        """An empty summary of this run, to merge batch summaries into."""
        summary = SummaryBuilder(self.specs, self.cluster_by, self.sources[0], self.missing)
        if self.runner is not None:
            from toolscore.rubrics.summary import RubricTally  # noqa: PLC0415

            summary.rubrics = RubricTally()
        return summary

    def score_records(self, records: Iterable[Mapping[str, Any]]) -> BatchOutcome:
        """Score joined records (mappings with `RECORD_KEYS`), in the order given."""
        return self.score_groups(record_groups(records))

    def score_groups(self, groups: Iterable[LineGroup]) -> BatchOutcome:
        """Score line groups, in the order given."""
        searched = self.specs.has_patterns or (self.runner is not None and self.runner.has_regex)
        if self.env is None and not searched:
            # no call is replayed and no regex searched: nothing to time
            return self._score(groups)
        from toolscore.limits import alarms_installed  # noqa: PLC0415 - replay or regexes only

        with alarms_installed():  # once a batch, not once a case (see toolscore.limits)
            return self._score(groups)

    def _score(self, groups: Iterable[LineGroup]) -> BatchOutcome:
        # The report's and the store's code is imported only by runs that write them.
        want_report, want_rows = self.want_report, self.want_rows
        if want_report:
            from toolscore.report.json_report import case_to_json, plain  # noqa: PLC0415
        if want_rows:
            from toolscore.store.writer import result_row  # noqa: PLC0415
        specs = self.specs
        cases_source = self.sources[0]
        summary = self.new_summary()
        lines: list[bytes] = []
        rows: list[ResultRow] = []
        failures: list[CaseResult] = []
        runner = self.runner
        tally = summary.rubrics
        rubric_rows: list[tuple[str, list[RubricEntry]]] = []
        keep = want_report or want_rows
        exclude = self.missing == "exclude"
        for number, raw, line_id, outputs in groups:
            data = _load(raw, number, line_id, cases_source, CaseError)
            case = parse_case(data, specs, cases_source, number, may_hold_markers(raw))
            results = self._score_lines(case, line_id, outputs, summary)
            if exclude and not outputs:
                continue  # left out of the run: the summary counts and names it
            for result in results:
                entries = None
                if runner is not None and tally is not None:
                    entries = runner.run(case, result, tally, keep)
                # The store keys rubric rows by case id, unique only without trials.
                if entries and want_rows and result.trial is None:
                    rubric_rows.append((case.id, entries))
                if want_report:
                    data = case_to_json(result)
                    if entries:
                        data["rubrics"] = [entry.to_json() for entry in entries]
                    lines.append(orjson.dumps(data, default=plain))
                if want_rows:
                    rows.append(result_row(result))
                if len(failures) < self.keep_failures and not outcome_passed(result):
                    failures.append(_without_values(result))
        pending = runner.pending if runner is not None else []
        if runner is not None:
            runner.pending = []
        return BatchOutcome(summary, lines, rows, failures, rubric_rows, pending)

    def _score_lines(
        self,
        case: Case,
        line_id: str,
        outputs: Sequence[tuple[int, bytes]],
        summary: SummaryBuilder,
    ) -> Sequence[CaseResult]:
        """The results of a case's output lines (one, or one per trial), counted in `summary`."""
        specs, env = self.specs, self.env
        cases_source, outputs_source = self.sources
        if len(outputs) == 1:
            out_number, out_raw = outputs[0]
            data = _load(out_raw, out_number, line_id, outputs_source, OutputError)
            trajectory = parse_output(data, outputs_source, out_number, self.choice)
            if trajectory.trial is None:
                # One line, no trial: the usual case, scored without `score_trials` (it runs
                # once per case, so the calls it saves count); the same verdict either way.
                result = score_replayed(specs, case, trajectory, env, cases_source)
                if result.state is None:
                    summary.add(case, result)  # as `add_case` counts such a case
                else:
                    summary.add_case(case, (result,), 1)
                return (result,)
        trajectories = [
            parse_output(
                _load(out_raw, out_number, line_id, outputs_source, OutputError),
                outputs_source,
                out_number,
                self.choice,
            )
            for out_number, out_raw in outputs
        ]
        results = score_trials(specs, case, trajectories, env, self.sources)
        summary.add_case(case, results, len(trajectories))
        return results


def _without_values(result: CaseResult) -> CaseResult:
    mismatches = tuple(m._replace(expected=MISSING, produced=MISSING) for m in result.mismatches)
    return result._replace(calls=(), mismatches=mismatches, said=())


class EngineRun:
    """A scoring run on an engine, iterated alike whichever it is: each batch's outcome in
    cases-file order, merged into the run's summary as it is given; then `summary()`, and
    `pending`, the targets of remote rubrics for the late pass. An engine says where its
    outcomes come from in `_outcomes`."""

    engine = "local"
    """The engine's name, as the report's header gives it when it is not the local one."""

    def __init__(self, scorer: BatchScorer) -> None:
        self.scorer = scorer
        """What scores each batch, or gives its settings to the scorers the engine builds."""
        self._summary = scorer.new_summary()
        self.pending: list[Pending] = []
        """Every batch's remote rubric targets, in case order (complete after iteration)."""

    def __iter__(self) -> Iterator[BatchOutcome]:
        for outcome in self._outcomes():
            self._summary.merge(outcome.summary)
            self.pending.extend(outcome.pending)
            yield outcome

    def _outcomes(self) -> Iterator[BatchOutcome]:
        """The batches' outcomes in cases-file order."""
        raise NotImplementedError

    def summary(self) -> SummaryBuilder:
        """Every batch's tallies merged (complete once iteration has finished)."""
        return self._summary


def merge_outcomes(into: SummaryBuilder, outcomes: Iterable[BatchOutcome]) -> SummaryBuilder:
    """Merge batch summaries into `into`, which must be given them in case order (the
    disagreement ids it keeps are the first ones of the cases file); returns `into`."""
    for outcome in outcomes:
        into.merge(outcome.summary)
    return into


def write_report(
    target: str,
    specs: SpecSet,
    summary: SummaryBuilder,
    report_lines: Iterable[Sequence[bytes]],
    env: Environment | None = None,
    engine: str | None = None,
    pending: Iterable[Pending] = (),
    judgments: JudgmentCache | None = None,
) -> None:
    """Write the report JSON `score --json` writes, from the batches' report lines in case
    order and their merged summary (`engine`, when given, names the engine in the header).
    `pending`, the batches' remote rubric targets (`BatchOutcome.pending`), are asked in the
    late pass `score` runs (`scoring.rubric_run.late_pass`, with the cache of `judgments`)."""
    from toolscore.report.json_report import ReportWriter, run_header  # noqa: PLC0415

    writer = ReportWriter(target)
    try:
        for lines in report_lines:
            writer.add_all_encoded(lines)
        waiting = list(pending)
        late: dict[str, list[dict[str, Any]]] = {}
        if waiting:
            from toolscore.scoring.rubric_run import late_pass  # noqa: PLC0415 - remote rubrics

            found = late_pass(specs.rubrics, waiting, summary.rubrics, judgments)
            late = {case_id: [e.to_json() for e in entries] for case_id, entries in found.items()}
    except BaseException:
        writer.discard()
        raise
    writer.finish(run_header(specs, env, engine), summary.finish(), late)
