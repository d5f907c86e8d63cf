"""The report JSON (docs/formats.md), written streaming and atomically.

Case results go to a spool file as they are decided; the final file (summary first, then the
cases) appears only when scoring completed, so a failed run leaves nothing half-written. A disk
that is full or read-only is an input error naming the file, not a traceback.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from toolscore._version import __version__
from toolscore.build import build_kind
from toolscore.core.model import MISSING, OMITTED, AnyOf, CaseResult, Mismatch, Ref
from toolscore.core.values import show
from toolscore.errors import InputError
from toolscore.files import atomic_file
from toolscore.report.lenient import lenient_rules
from toolscore.scoring.summary import Summary
from toolscore.specs.loading import SpecSet

if TYPE_CHECKING:
    from toolscore.report.sink import Late, Scored
    from toolscore.state import AnyEnvironment


def plain(value: Any, markers: bool = False) -> Any:
    """A value as JSON shows it: `$any` alternatives as a list (as `{"$any": [...]}`, as cases
    files spell it, with `markers`), `$ref` and `$omitted` as their objects."""
    if type(value) is AnyOf:
        alternatives = [plain(v, markers) for v in value]
        return {"$any": alternatives} if markers else alternatives
    if value is OMITTED:
        return {"$omitted": True}
    if type(value) is Ref:
        return {"$ref": str(value)}
    if isinstance(value, Mapping):
        return {k: plain(v, markers) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v, markers) for v in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""The types `plain` returns unchanged, whatever `markers` says."""


def safe_value(value: Any, markers: bool = False) -> Any:
    """`plain(value, markers)`, or its short rendering when it is nested too deep to write as
    JSON (an agent can send anything; the report must still be written)."""
    try:
        # `plain` leaves a scalar as it is; orjson may still refuse it (a lone surrogate, an
        # integer beyond 64 bits).
        converted = value if type(value) in _SCALARS else plain(value, markers)
        orjson.dumps(converted)
    except (orjson.JSONEncodeError, RecursionError):
        return {"$unwritable": show(value)}
    return converted


def mismatch_to_json(mismatch: Mismatch) -> dict[str, Any]:
    """One mismatch as the report shows it; an omitted value is left out, not null."""
    data: dict[str, Any] = {
        "code": mismatch.code,
        "call": mismatch.call,
        "plan_call": mismatch.plan_call,
        "path": mismatch.pointer,
        "rule": mismatch.rule,
    }
    if mismatch.expected is not MISSING:
        data["expected"] = safe_value(mismatch.expected)
    if mismatch.produced is not MISSING:
        data["produced"] = safe_value(mismatch.produced)
    data["message"] = mismatch.message
    return data


def case_to_json(result: CaseResult) -> dict[str, Any]:
    """One case's verdict as the report shows it."""
    data: dict[str, Any] = {
        "id": result.id,
        "passed": result.passed,
        "kind": result.kind,
        "plan": result.plan,
        "baselines": dict(result.baselines),
        "mismatches": [mismatch_to_json(m) for m in result.mismatches],
    }
    if result.trial is not None:  # shown beside the id
        data = {"id": data.pop("id"), "trial": result.trial, **_trials_json(result), **data}
    if result.missing_output:
        data["missing_output"] = True
    if result.state is not None:
        data["state_passed"] = result.state.passed
        data["state"] = result.state.to_json()
    if result.format is not None:
        data["format"] = result.format
    if result.notes:
        data["notes"] = list(result.notes)
    if result.unread:
        data["unread"] = list(result.unread)
    if result.trace is not None:
        data["trace"] = {"trace_id": result.trace[0], "span_id": result.trace[1]}
    if result.partial is not None:
        data["partial"] = result.partial.to_json()
    if result.efficiency is not None:
        data["efficiency"] = result.efficiency.to_json()
    errors = [
        {"call": j, "name": call.name, "result": safe_value(call.result)}
        for j, call in enumerate(result.calls)
        if call.result_error
    ]
    if errors:
        data["tool_errors"] = errors
    if result.retries:
        data["retries"] = [retry.to_json() for retry in result.retries]
    if result.turns:
        data["turns"] = [
            {**turn.to_json(), "mismatches": [mismatch_to_json(m) for m in turn.mismatches]}
            for turn in result.turns
        ]
        data["first_failed_turn"] = result.first_failed_turn
    return data


def _trials_json(result: CaseResult) -> dict[str, Any]:
    if result.trials is None:
        return {}
    return {"trials": {"n": result.trials[0], "passed": result.trials[1]}}


def report_header(
    specs: SpecSet, version: str, environment: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The provenance of a report: scorer version and build, spec set, relaxations and lenient
    rules in force, and the environment when calls were replayed against a store."""
    header = {
        "toolscore": version,
        "build": build_kind(),
        "specs": specs.describe(),
        "relaxations": [r.to_json() for r in specs.relaxations],
        "lenient_rules": [rule.to_json() for rule in lenient_rules(specs)],
    }
    if specs.forbid:
        header["forbid"] = [
            {"tool": f.tool, "args": safe_value(f.args, markers=True), "reason": f.reason}
            for f in specs.forbid
        ]
    if environment is not None:
        header["environment"] = environment
    return header


def run_header(
    specs: SpecSet, env: AnyEnvironment | None = None, engine: str | None = None
) -> dict[str, Any]:
    """The header of a run's report: `report_header` with this scorer's version, the
    environment calls were replayed against (if any), and the `engine` when one is named
    (an engine other than the local one: the only difference from a local run's report)."""
    header = report_header(specs, __version__, env.describe() if env is not None else None)
    if engine is not None:
        header["engine"] = engine
    return header


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=plain)


@contextmanager
def _writing(target: str) -> Iterator[None]:
    """An OSError while writing `target` (disk full, read-only, no permission) as one line."""
    try:
        yield
    except OSError as error:
        raise InputError(target, f"cannot write: {error.strerror or error}") from None


class ReportWriter:
    """Writes a report to PATH (atomically) or to stdout (`-`) once the run has finished.

    A PATH that exists and is not a regular file (`/dev/stdout`, a pipe) is written into, not
    replaced; a directory is refused at once, before any scoring.
    """

    def __init__(self, target: str, stdout: IO[bytes] | None = None) -> None:
        self.target = target
        self._stdout = stdout
        if target != "-" and Path(target).is_dir():
            raise InputError(target, "is a directory, not a report file")
        self._in_place = target != "-" and Path(target).exists() and not Path(target).is_file()
        # The spool sits beside the report (same disk), or in the temporary directory.
        directory = None if self._in_place else "." if target == "-" else Path(target).parent
        self._directory = directory
        with _writing(target):
            # Kept open across add() calls and closed by finish() or discard().
            self._spool: IO[bytes] = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115
        self._first = True

    def add(self, result: CaseResult) -> None:
        """Append one case result to the spool."""
        self.add_encoded(_dumps(case_to_json(result)))

    def add_encoded(self, case_json: bytes) -> None:
        """Append one case result already encoded as JSON (by a worker process)."""
        self.add_all_encoded([case_json])

    def add_all_encoded(self, cases_json: Sequence[bytes]) -> None:
        """Append case results already encoded as JSON (a worker's chunk), in one write."""
        if not cases_json:
            return
        with _writing(self.target):
            self._spool.write((b"\n" if self._first else b",\n") + b",\n".join(cases_json))
        self._first = False

    def finish(
        self,
        header: dict[str, Any],
        summary: Summary,
        rubrics: Mapping[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        """Write the complete report: header, summary, then the spooled cases; `rubrics`
        adds rubric entries decided after the cases were spooled (remote rubrics), by case id."""
        if rubrics:
            self._add_rubrics(rubrics)
        head = dict(header, summary=summary.to_dict())
        opening = _dumps(head)[:-1] + b',"cases":['
        self._spool.seek(0)
        try:
            if self.target == "-":
                out = self._stdout or sys.stdout.buffer
                out.write(opening)
                shutil.copyfileobj(self._spool, out)
                out.write(b"\n]}\n")
                out.flush()
            elif self._in_place:
                with _writing(self.target), open(self.target, "wb") as handle:
                    handle.write(opening)
                    shutil.copyfileobj(self._spool, handle)
                    handle.write(b"\n]}\n")
            else:
                self._replace(opening)
        finally:
            self.discard()

    def _add_rubrics(self, rubrics: Mapping[str, list[dict[str, Any]]]) -> None:
        """Rewrite the spool with each case's late rubric entries merged into its list, in
        report order (each spooled case is one line: it is read again, and written anew only
        when it has late entries). Runs with remote rubrics only: they are slow anyway."""
        from toolscore.scoring.rubric_run import entry_order  # noqa: PLC0415 - only remote rubrics

        self._spool.seek(0)
        with _writing(self.target):
            rewritten: IO[bytes] = tempfile.TemporaryFile(dir=self._directory)  # noqa: SIM115
            for line in self._spool:
                body = line.rstrip(b"\n")
                comma = body.endswith(b",")
                case = body[:-1] if comma else body
                if case:
                    data = orjson.loads(case)
                    late = rubrics.get(data["id"])
                    if late:
                        data["rubrics"] = sorted([*data.get("rubrics", ()), *late], key=entry_order)
                        case = _dumps(data)
                rewritten.write(
                    case + (b"," if comma else b"") + (b"\n" if line.endswith(b"\n") else b"")
                )
            self._spool.close()
            self._spool = rewritten

    def _replace(self, opening: bytes) -> None:
        """Write the report beside its target, then move it into place."""
        with _writing(self.target), atomic_file(self.target) as handle:
            handle.write(opening)
            shutil.copyfileobj(self._spool, handle)
            handle.write(b"\n]}\n")

    def discard(self) -> None:
        """Drop the spool without writing anything (the run failed)."""
        with contextlib.suppress(OSError):  # what is left in its buffer cannot be written
            self._spool.close()


class ReportSink:
    """The report JSON as a run's output (a `report.sink.Sink`): each batch's report lines
    spooled by a `ReportWriter`, the header made when the run is finished."""

    def __init__(
        self,
        target: str,
        specs: SpecSet,
        env: AnyEnvironment | None = None,
        engine: str | None = None,
    ) -> None:
        self.writer = ReportWriter(target)
        self.specs = specs
        self.env = env
        self.engine = engine

    def add(self, outcome: Scored) -> None:
        """Spool the batch's report lines."""
        self.writer.add_all_encoded(outcome.report_lines)

    def finish(self, summary: Summary, late: Late, run_id: int | None) -> None:
        """Write the report, the late rubric entries merged into their cases."""
        entries = {case_id: [e.to_json() for e in found] for case_id, found in late.items()}
        self.writer.finish(run_header(self.specs, self.env, self.engine), summary, entries)

    def discard(self) -> None:
        """Drop the spool."""
        self.writer.discard()
