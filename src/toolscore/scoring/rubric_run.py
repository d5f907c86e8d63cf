"""Run the rubrics of a scored case, apart from its call verdict.

After a case is scored, each pair (plan call, produced call) of its best plan whose tool has
a rubric on a `text` argument gives a `RubricTarget`: the produced text, the plan's text
when it is a plain string, the case's prompt. Deterministic rubrics judge it at once; remote
ones (judge, similarity) are collected and asked in one batch per rubric once scoring is
done (`run_remote`), through a callable the caller passes in. A plan call left unpaired, or
an argument the produced call did not send as a string, is an unscored entry with its
reason. A deterministic rubric whose regex search runs out of time on `max_timeouts` texts
(3 unless its check says otherwise) is not run again in that run: its later entries are
unscored with `stopped`'s reason. A case's `response_rubrics` score what the agent said
(every text of its output, in order: `rubrics.response`), one entry each, numbered by
`plan_call`; a case whose agent said nothing gets them unscored with the reason. Nothing here
touches the call verdict or the metrics.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from toolscore.core.model import MISSING, Case, CaseResult
from toolscore.core.values import json_type
from toolscore.rubrics.base import (
    RESPONSE_ARGUMENT,
    RESPONSE_TOOL,
    RemoteRubric,
    RubricTarget,
    RubricVerdict,
)
from toolscore.rubrics.checks import LocalRubric, timed_out
from toolscore.rubrics.entries import RubricEntry
from toolscore.rubrics.response import KEY as RESPONSE_RUBRICS
from toolscore.rubrics.response import parse_response_rubrics, response_text
from toolscore.rubrics.spec import RubricUse

if TYPE_CHECKING:
    from toolscore.rubrics.summary import RubricTally
    from toolscore.specs.loading import SpecSet

Remote = Callable[[RemoteRubric, Sequence[RubricTarget], Any], list[RubricVerdict]]
"""What asks an endpoint: `(rubric, targets, cache) -> one verdict per target, in order`
(`toolscore.rubrics.remote.score_remote`; tests pass a fake)."""

UNPAIRED = "the plan call has no produced call paired with it"
UNPARSEABLE = "the produced call's arguments could not be parsed"
ABSENT = "the produced call does not send this argument"
NO_OUTPUT = "the case has no output line"
SILENT = "the agent said nothing (no text in its output)"


def stopped(rubric: str, timeouts: int) -> str:
    """The unscored reason of a rubric no longer run after `timeouts` regex timeouts."""
    return (
        f"not run: rubric {rubric!r} was stopped for the rest of the run after its regex "
        f"search ran out of time on {timeouts} text{'' if timeouts == 1 else 's'}"
    )


_new = tuple.__new__


class Pending(NamedTuple):
    """A target waiting for its remote rubric."""

    rubric: str
    target: RubricTarget


class RubricRunner:
    """Runs a spec set's rubrics case by case; remote targets wait in `pending` unless
    `remote` is False (then they are left out, as `--no-rubrics` leaves out every rubric)."""

    def __init__(self, specs: SpecSet, remote: bool = True) -> None:
        self.rubrics = specs.rubrics
        self.remote = remote
        self.pending: list[Pending] = []
        self.timeouts: dict[str, int] = {}
        """Regex timeouts so far, by rubric name."""
        self.stopped: dict[str, str] = {}
        """The rubrics no longer run (their regex ran out of time too often), with why."""
        # Per tool, each use with its rubric, resolved once: this runs for every case.
        self._uses: dict[str, tuple[_Use, ...]] = {
            tool: tuple(_Use.of(use, specs.rubrics[use.rubric]) for use in uses)
            for tool, uses in specs.rubric_uses.items()
        }

    @property
    def has_regex(self) -> bool:
        """Whether some rubric (on an argument, or for a case's response) runs a regex: its
        time limit needs the alarm."""
        return any(
            check.kind == "regex"
            for rubric in self.rubrics.values()
            if isinstance(rubric, LocalRubric)
            for check in rubric.checks
        )

    def run(
        self,
        case: Case,
        result: CaseResult,
        tally: RubricTally | None = None,
        keep: bool = True,
    ) -> list[RubricEntry]:
        """The rubric entries of one scored case (remote ones join `pending` instead), each
        counted in `tally` when given; with `keep` false only counted (a run that writes
        neither a report nor a store needs no entry: making them costs time at every case)."""
        entries = self._calls(case, result, tally, keep)
        if RESPONSE_RUBRICS in case.extra:
            entries += self._responses(case, result, tally, keep)
            if len(entries) > 1:
                entries.sort(key=_order)
        return entries

    def _calls(
        self, case: Case, result: CaseResult, tally: RubricTally | None, keep: bool
    ) -> list[RubricEntry]:
        """The entries of the rubrics on the text arguments of the case's paired calls."""
        if result.turns:
            return self._run_turns(case, result, tally, keep)
        if result.plan is None:
            return []
        plan = case.plans[result.plan]
        table = self._uses
        calls = result.calls
        entries: list[RubricEntry] = []
        for i, j in result.pairs:
            found = table.get(plan[i].name)
            if found is None:
                continue
            args = calls[j].args
            for use in found:
                # The common case first, in line: a deterministic rubric on a text argument
                # at the top level of the call (this runs for every case of a run).
                if use.judge is not None and use.name is not None and args is not None:
                    text = args.get(use.name, MISSING)
                    if type(text) is str:
                        score, passed, reason, unscored = use.judge(text, args)
                        if unscored is not None and timed_out(unscored):
                            self._timed_out(use)
                        if tally is not None:
                            tally.count(use.key, score, passed, unscored or reason)
                        if keep:
                            # tuple.__new__ skips the named tuple's own (Python) __new__.
                            entries.append(_new(RubricEntry, (
                                j, i, use.tool, use.argument, use.rubric, score, passed,
                                reason, False, unscored, 0,
                            )))  # fmt: skip
                        continue
                entry = self._paired(case, result, i, j, use)
                if entry is not None:
                    if tally is not None:
                        tally.add(entry)
                    if keep:
                        entries.append(entry)
        if len(result.pairs) < len(plan):
            paired = {i for i, _ in result.pairs}
            for i, expected in enumerate(plan):
                found = table.get(expected.name)
                if found is None or i in paired:
                    continue
                for use in found:
                    if use.judge is None and not self.remote:
                        continue
                    entry = RubricEntry.not_scored(None, i, use.use, UNPAIRED)
                    if tally is not None:
                        tally.add(entry)
                    if keep:
                        entries.append(entry)
        if len(entries) > 1:
            entries.sort(key=_order)
        return entries

    def _run_turns(
        self, case: Case, result: CaseResult, tally: RubricTally | None, keep: bool
    ) -> list[RubricEntry]:
        """The rubric entries of a conversation case, turn by turn: each turn's pairs against
        its plan (an entry's `call` counts the conversation's calls, `plan_call` the turn's
        plan)."""
        entries: list[RubricEntry] = []
        for turn in result.turns:
            if turn.plan is None:
                continue
            spec = case.turns[turn.turn]
            part = case._replace(plans=spec.plans, prompt=spec.prompt, turns=())
            verdict = result._replace(plan=turn.plan, pairs=turn.pairs, turns=())
            entries += self._calls(part, verdict, tally, keep)
        return entries

    def _responses(
        self, case: Case, result: CaseResult, tally: RubricTally | None, keep: bool
    ) -> list[RubricEntry]:
        """The entries of the case's `response_rubrics` on what the agent said (remote ones
        join `pending` instead, unless remote rubrics are not run)."""
        text = response_text(result.said)
        why = NO_OUTPUT if result.missing_output else SILENT
        prompt = case.prompt if isinstance(case.prompt, str) else None
        entries: list[RubricEntry] = []
        for k, item in enumerate(
            parse_response_rubrics(case.extra[RESPONSE_RUBRICS], self.rubrics)
        ):
            rubric = self.rubrics[item.rubric]
            local = rubric if isinstance(rubric, LocalRubric) else None
            if local is None and not self.remote:
                continue
            unscored: str | None
            if text is None:
                entry = RubricEntry(
                    None, k, RESPONSE_TOOL, RESPONSE_ARGUMENT, item.rubric, None, None, why,
                    unscored=why,
                )  # fmt: skip
            elif local is not None:
                stopped = self.stopped.get(item.rubric)
                if stopped is not None:
                    score, passed, reason, unscored = None, None, stopped, stopped
                else:
                    score, passed, reason, unscored = local.judge(text, {})
                    if unscored is not None and timed_out(unscored):
                        self._count_timeout(item.rubric, local.max_timeouts)
                entry = RubricEntry(
                    None, k, RESPONSE_TOOL, RESPONSE_ARGUMENT, item.rubric, score, passed,
                    reason, False, unscored,
                )  # fmt: skip
            else:
                target = RubricTarget(
                    case.id, RESPONSE_TOOL, RESPONSE_ARGUMENT, None, k, text, None, prompt, {},
                    item.text,
                )  # fmt: skip
                self.pending.append(Pending(item.rubric, target))
                continue
            if tally is not None:
                tally.add(entry)
            if keep:
                entries.append(entry)
        return entries

    def _timed_out(self, use: _Use) -> None:
        """Count a regex timeout of `use`'s rubric (`_count_timeout`)."""
        self._count_timeout(use.rubric, None if use.local is None else use.local.max_timeouts)

    def _count_timeout(self, rubric: str, limit: int | None) -> None:
        """Count a regex timeout of `rubric`; at its `limit` (its `max_timeouts`), the
        rubric is stopped for the rest of the run: every use of it on an argument is given a
        judge that only says why it is no longer run, and its response entries say so too."""
        count = self.timeouts[rubric] = self.timeouts.get(rubric, 0) + 1
        if limit is None or count < limit:
            return
        why = self.stopped[rubric] = stopped(rubric, count)

        def judge(text: str, arguments: Mapping[str, Any]) -> _Judged:
            return None, None, why, why

        for tool, uses in self._uses.items():
            self._uses[tool] = tuple(
                u._replace(judge=judge) if u.rubric == rubric else u for u in uses
            )

    def _paired(
        self, case: Case, result: CaseResult, i: int, j: int, use: _Use
    ) -> RubricEntry | None:
        """The entry of one rubric on a paired call, or None when its target waits for a
        remote rubric (or remote rubrics are not run)."""
        if use.judge is None and not self.remote:
            return None
        args = result.calls[j].args
        if args is None:
            return RubricEntry.not_scored(j, i, use.use, UNPARSEABLE)
        text = _lookup(args, use.use.path)
        if text is MISSING:
            return RubricEntry.not_scored(j, i, use.use, ABSENT)
        if not isinstance(text, str):
            why = f"the produced value is {json_type(text)}, not text"
            return RubricEntry.not_scored(j, i, use.use, why)
        if use.judge is not None:
            score, passed, reason, unscored = use.judge(text, args)
            if unscored is not None and timed_out(unscored):
                self._timed_out(use)
            return RubricEntry(
                j, i, use.tool, use.argument, use.rubric, score, passed, reason, False, unscored
            )
        expected = _lookup(case.plans[result.plan or 0][i].args or {}, use.use.path)
        prompt = case.prompt if isinstance(case.prompt, str) else None
        target = RubricTarget(
            case.id, use.tool, use.argument, j, i, text,
            expected if type(expected) is str else None, prompt, args,
        )  # fmt: skip
        self.pending.append(Pending(use.rubric, target))
        return None


_Judged = tuple[float | None, bool | None, str, str | None]
"""What a deterministic rubric's judge gives: (score, passed, reason, unscored)."""


class _Use(NamedTuple):
    """A rubric use, with what scoring it needs at hand: the deterministic rubric's `judge`
    (None for a remote rubric) and the argument's `name` when it is at the top level of the
    call (None inside an object)."""

    use: RubricUse
    local: LocalRubric | None
    judge: Callable[[str, Mapping[str, Any]], _Judged] | None
    name: str | None
    tool: str
    argument: str
    rubric: str
    key: tuple[str, str, str]
    """(tool, argument, rubric): where a tally counts its results."""

    @classmethod
    def of(cls, use: RubricUse, rubric: Any) -> _Use:
        local = rubric if isinstance(rubric, LocalRubric) else None
        name = use.path[0] if len(use.path) == 1 else None
        judge = None if local is None else local.judge
        key = (use.tool, use.argument, use.rubric)
        return cls(use, local, judge, name, use.tool, use.argument, use.rubric, key)


def _lookup(args: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at `path` through nested objects, or MISSING."""
    value: Any = args
    for key in path:
        if not isinstance(value, Mapping):
            return MISSING
        value = value.get(key, MISSING)
        if value is MISSING:
            return MISSING
    return value


def run_remote(
    rubrics: Mapping[str, Any], pending: Iterable[Pending], remote: Remote, cache: Any = None
) -> dict[str, list[RubricEntry]]:
    """Ask each remote rubric about its waiting targets in one batch; return the entries by
    case id. A batch that fails as a whole (an exception, or not one verdict per target)
    leaves its targets unscored with the reason, and the others go on."""
    batches: dict[str, list[RubricTarget]] = {}
    for item in pending:
        batches.setdefault(item.rubric, []).append(item.target)
    found: dict[str, list[RubricEntry]] = {}
    for name, targets in batches.items():
        for target, verdict in zip(
            targets, _verdicts(rubrics[name], targets, remote, cache), strict=True
        ):
            found.setdefault(target.case_id, []).append(RubricEntry.of(target, verdict))
    return found


def late_pass(
    rubrics: Mapping[str, Any],
    pending: Sequence[Pending],
    tally: RubricTally | None,
    cache: Any = None,
    refresh: bool = False,
    remote: Remote | None = None,
) -> dict[str, list[RubricEntry]]:
    """The late pass of remote rubrics, once every case is scored: ask each about the texts
    waiting for it (`run_remote`; judgments in `cache` reused unless `refresh`), count the
    entries in `tally`, and return them by case id for the report and the store. Nothing is
    asked when nothing waits, or without a tally (the run scores no rubric)."""
    if not pending or tally is None:
        return {}
    if remote is None:
        from toolscore.rubrics.remote import check_keys  # noqa: PLC0415 - remote rubrics only

        # a rubric named only by cases' response_rubrics has not had its key checked yet
        check_keys([rubrics[name] for name in dict.fromkeys(p.rubric for p in pending)])
    found = run_remote(rubrics, pending, remote or remote_scorer(refresh), cache)
    for entries in found.values():
        for entry in entries:
            tally.add(entry)
    return found


def remote_in_use(specs: SpecSet) -> list[RemoteRubric]:
    """The remote rubrics some argument of `specs` uses, each once (those that only cases
    name, in `response_rubrics`, are known once the cases are read: `late_pass` checks
    their keys before asking)."""
    names = dict.fromkeys(use.rubric for uses in specs.rubric_uses.values() for use in uses)
    return [r for name in names if not isinstance(r := specs.rubrics[name], LocalRubric)]


def check_remote_keys(specs: SpecSet, source: str) -> bool:
    """Whether some remote rubric of `specs` is in use; an InputError naming `source` (the
    spec file) and `rubrics.NAME.api_key_env` when one's key variable is unset or empty, so
    that a run stops before anything is sent."""
    remote = remote_in_use(specs)
    if remote:
        from toolscore.rubrics.remote import check_keys  # noqa: PLC0415 - remote rubrics only

        check_keys(remote, source)
    return bool(remote)


def remote_scorer(refresh: bool = False) -> Remote:
    """`rubrics.remote.score_remote`, asking again where the cache has an answer when
    `refresh` (`--refresh-rubrics`)."""
    from toolscore.rubrics.remote import score_remote  # noqa: PLC0415 - remote rubrics only

    return functools.partial(score_remote, refresh=True) if refresh else score_remote


def _verdicts(
    rubric: RemoteRubric, targets: list[RubricTarget], remote: Remote, cache: Any
) -> list[RubricVerdict]:
    try:
        verdicts = list(remote(rubric, targets, cache))
    except Exception as error:
        why = f"the rubric could not be run: {type(error).__name__}: {str(error)[:200]}"
        return [RubricVerdict(rubric.name, None, None, why, unscored=why) for _ in targets]
    if len(verdicts) != len(targets):
        why = f"the rubric gave {len(verdicts)} verdicts for {len(targets)} texts"
        return [RubricVerdict(rubric.name, None, None, why, unscored=why) for _ in targets]
    return verdicts


def _order(entry: RubricEntry) -> tuple[int, str, str]:
    return entry.order


def entry_order(entry: Mapping[str, Any]) -> tuple[int, str, str]:
    """Where an entry (as `RubricEntry.to_json` gives it) stands in its case's list."""
    return entry["plan_call"], entry["argument"], entry["rubric"]
