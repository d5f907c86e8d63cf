"""Cases without an output line, and output lines without a case: counted, named, never a pass.

A case the outputs file has no line for fails with `missing_output` in every rate whose unit
is a case (accuracy, name accuracy, abstention accuracy), unless the run is told that its
outputs are partial (`missing="exclude"`, `score --missing exclude`): then such cases are
left out of every rate and count, and the summary says how many and which. Output lines
whose id is no case are counted and named. Both id lists are capped (`IDS_KEPT`), so memory
does not grow with the run. When most cases have no output, `likely_cause` says why, where
it can tell: ids that differ only by a prefix, letter case or whitespace, or a trace export
grouped by trace id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from toolscore.core.model import Case, CaseResult, Mismatch

MISSING_POLICIES: Final = ("fail", "exclude")
"""What a case without an output line is: a failure (the default), or left out of the run."""
IDS_KEPT: Final = 10_000
"""How many ids of cases without output (and of outputs without case) the summary keeps."""
IDS_SHOWN: Final = 5
"""How many of them the terminal prints."""
NO_OUTPUT: Final = "the outputs file has no line for this case"

MISSING_OUTPUT = Mismatch("missing_output", message=NO_OUTPUT)
"""The mismatch of every case without an output line."""


def check_policy(missing: str) -> str:
    """`missing` when it is a policy of `MISSING_POLICIES`, else a ValueError."""
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {', '.join(MISSING_POLICIES)}, not {missing!r}")
    return missing


def nothing_calls(case: Case) -> bool:
    """Whether making no call at all carries out some plan of `case`: it has no plan, or an
    empty one (the matcher's verdict on an empty call list, without running it)."""
    return not case.plans or not all(case.plans)


def missing_result(case: Case) -> CaseResult:
    """The verdict on a case without an output line: failed, with `missing_output`, and
    failed by the exact and lowercase baselines too (they judge the agent's calls, and there
    are none to judge); the do-nothing baseline judges the case, which is there."""
    return CaseResult(
        id=case.id,
        passed=False,
        kind=case.kind,
        plan=None,
        mismatches=(MISSING_OUTPUT,),
        baselines={"exact": False, "lowercase": False, "nothing": nothing_calls(case)},
        name_ok=False,
        missing_output=True,
    )


@dataclass
class IdSample:
    """A count of ids and the first `IDS_KEPT` of them, in the order they were added."""

    count: int = 0
    ids: list[str] = field(default_factory=list)

    def add(self, item: str) -> None:
        """Count one id (and keep it while fewer than `IDS_KEPT` are kept)."""
        self.count += 1
        if len(self.ids) < IDS_KEPT:
            self.ids.append(item)

    def extend(self, items: Sequence[str]) -> None:
        """Count every id of `items`, keeping the first ones."""
        self.count += len(items)
        self.ids.extend(items[: IDS_KEPT - len(self.ids)])

    def merge(self, other: IdSample) -> None:
        """Add the ids of the cases that came after this sample's (a worker's chunk)."""
        self.count += other.count
        self.ids.extend(other.ids[: IDS_KEPT - len(self.ids)])

    @property
    def truncated(self) -> bool:
        """Whether some counted ids are not kept."""
        return self.count > len(self.ids)

    def shown(self, limit: int = IDS_SHOWN) -> str:
        """The first `limit` ids, comma-separated, with "..." when there are more."""
        first = ", ".join(self.ids[:limit])
        return first + (", ..." if self.count > limit else "")


@dataclass
class JoinTally:
    """What joining outputs to cases left over: the cases without an output line (under
    `exclude`, the cases left out of the run), and the output lines whose id is no case."""

    policy: str = "fail"
    missing: IdSample = field(default_factory=IdSample)
    unmatched: IdSample = field(default_factory=IdSample)

    @property
    def excluded(self) -> int:
        """How many cases were left out of every rate (`missing="exclude"`)."""
        return self.missing.count if self.policy == "exclude" else 0

    def merge(self, other: JoinTally) -> None:
        """Add the tallies of the cases that came after this one's."""
        self.missing.merge(other.missing)
        self.unmatched.merge(other.unmatched)

    def to_json(self) -> dict[str, Any]:
        """The summary's keys about joining, beside `missing_outputs` and `unmatched_outputs`."""
        return {
            "missing_policy": self.policy,
            "missing_output_ids": self.missing.ids,
            "missing_output_ids_truncated": self.missing.truncated,
            "unmatched_output_ids": self.unmatched.ids,
            "unmatched_output_ids_truncated": self.unmatched.truncated,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JoinTally:
        """The tally of a stored summary (one saved before these keys existed: counts only)."""
        return cls(
            data.get("missing_policy", "fail"),
            IdSample(data["missing_outputs"], list(data.get("missing_output_ids", ()))),
            IdSample(data["unmatched_outputs"], list(data.get("unmatched_output_ids", ()))),
        )


def missing_fails(join: JoinTally, missing_trials: int = 0) -> bool:
    """Whether the run lacks outputs that count as failures: a case without an output line,
    or an absent trial, under the `fail` policy (the run's exit status is then 1)."""
    return join.policy == "fail" and (join.missing.count > 0 or missing_trials > 0)


def missing_line(join: JoinTally, missing_trials: int = 0) -> str:
    """The line `score` ends with when outputs are missing (`missing_fails`)."""
    parts = []
    cases = join.missing.count
    if cases:
        plural = "s" if cases != 1 else ""
        parts.append(f"{cases} case{plural} without an output line ({join.missing.shown()})")
    if missing_trials:
        parts.append(f"{missing_trials} absent trial{'s' if missing_trials != 1 else ''}")
    return (
        f"{' and '.join(parts)}, counted as failures: exit status 1 (`--missing exclude` "
        "leaves them out of every rate, for a partial run)"
    )


def _normalised(case_id: str) -> str:
    """An id without its letter case and whitespace."""
    return "".join(case_id.casefold().split())


def _near(missing: Iterable[str], unmatched: Iterable[str]) -> tuple[str, str] | None:
    """A (case id, output id) pair that differ only by a prefix (on either side), letter
    case or whitespace, or None when the samples hold none."""
    cases = {_normalised(i): i for i in missing}
    outputs = {_normalised(i): i for i in unmatched}
    for key, output in outputs.items():
        for start in range(len(key)):  # the whole id first, then without a prefix
            if key[start:] in cases:
                return cases[key[start:]], output
    for key, case_id in cases.items():
        for start in range(1, len(key)):
            if key[start:] in outputs:
                return case_id, outputs[key[start:]]
    return None


PROVIDER_ID_PREFIXES = ("chatcmpl-", "resp_", "msg_", "run-", "lc_run-")
"""How the ids of provider response objects begin (OpenAI Chat Completions and Responses,
Anthropic Messages, LangChain messages), which a merged dump writes over the case id."""


def _provider_id(unmatched: Iterable[str]) -> str | None:
    """The first unmatched output id that looks like a provider's response id, if any."""
    return next((i for i in unmatched if i.startswith(PROVIDER_ID_PREFIXES)), None)


def likely_cause(join: JoinTally, cases: int, trace_export: bool = False) -> list[str]:
    """One or two lines for standard error when more than half the cases have no output
    (none otherwise): how many, and the likely cause where it can be told. `cases` is how
    many cases the cases file has; `trace_export` says the outputs were an OpenTelemetry
    collector export grouped by trace id (no `--group-by`)."""
    missing = join.missing.count
    if not cases or 2 * missing <= cases:
        return []
    lines = [f"warning: {missing} of {cases} cases have no output line"]
    near = None if trace_export else _near(join.missing.ids, join.unmatched.ids)
    if trace_export:
        lines.append(
            "  likely cause: the outputs are an OpenTelemetry collector export, grouped by "
            "trace id; give --group-by with the span attribute holding the case ids "
            "(gen_ai.conversation.id, session.id, ...)"
        )
    elif near is not None:
        lines.append(
            f"  likely cause: case and output ids differ only by a prefix, letter case or "
            f"whitespace (case {near[0]!r}, output {near[1]!r}); ids are compared exactly"
        )
    elif _provider_id(join.unmatched.ids):
        lines.append(
            f"  likely cause: the outputs' ids are a provider's response ids "
            f"({_provider_id(join.unmatched.ids)!r}): a line written as "
            '{"id": case_id, **response.model_dump()} takes the id of the dump, which comes '
            'last; write the case id after it ({**response.model_dump(), "id": case_id}) or '
            'beside it ({"id": case_id, "response": ...})'
        )
    elif join.unmatched.count:
        count = join.unmatched.count
        lines.append(
            f"  {count} output line{'s match' if count != 1 else ' matches'} no case "
            f"({join.unmatched.shown()}): are the two files from the same run?"
        )
    return lines
