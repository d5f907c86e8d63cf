"""`score --junit PATH`: the verdicts as JUnit XML, which every CI shows test by test.

One `<testcase>` per case (per case and trial), named by the case id, its `classname` the
spec's name and the case's first tag; a failing case holds one `<failure>` whose text lists
its mismatches a line each (code, call, path, rule, message, expected and produced values).
The run's metrics are `<properties>` of the `<testsuite>`, whose counts lead it. It is made
from the report's case entries as the scoring pass makes them (no second pass); the test
cases are spooled to a temporary file as they come, so memory stays constant, and the file
is renamed into place once the run has finished, whole or not at all.

Agent text may hold anything: `]]>`, markup, characters XML 1.0 forbids (most control
characters, lone surrogates). Text is escaped, never put in CDATA, and each forbidden
character is written as its Python-style escape (`\\x1b`, `\\ud800`).
"""

from __future__ import annotations

import contextlib
import datetime
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final
from xml.sax.saxutils import escape

import orjson

from toolscore.errors import InputError
from toolscore.files import atomic_file
from toolscore.inputs.jsonl import read_jsonl
from toolscore.inputs.paths import is_stream

if TYPE_CHECKING:
    from toolscore.report.sink import Late, Scored
    from toolscore.scoring.summary import Summary
    from toolscore.specs.loading import SpecSet
    from toolscore.state import AnyEnvironment

_FORBIDDEN: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_PLAIN_ATTRIBUTE: Final = re.compile('[^&<>"\t\n\r\x00-\x1f\ud800-\udfff\ufffe\uffff]*')
"""Text that an attribute holds as it is (most ids and names): nothing to escape."""
_ATTRIBUTE: Final = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
SHOWN_VALUE: Final = 500
"""Characters of an expected or produced value a failure's text shows."""
SUITE: Final = "toolscore"


def _allowed(text: str) -> str:
    """`text` with each character XML 1.0 forbids written as its escape."""

    def replace(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _FORBIDDEN.sub(replace, text)


def xml_text(value: object) -> str:
    """Element text: escaped, with forbidden characters replaced."""
    return escape(_allowed(str(value)))


def xml_attribute(value: object) -> str:
    """An attribute value, quoted: escaped (line breaks too), forbidden characters replaced."""
    text = str(value)
    if _PLAIN_ATTRIBUTE.fullmatch(text):
        return f'"{text}"'
    return f'"{escape(_allowed(text), _ATTRIBUTE)}"'


def _shown(value: Any) -> str:
    """A value as JSON writes it (a string in quotes), cut short when it is long."""
    shown = orjson.dumps(value).decode()
    if len(shown) > SHOWN_VALUE:
        return f"{shown[:SHOWN_VALUE]}... ({len(shown)} characters)"
    return shown


def mismatch_text(mismatch: dict[str, Any]) -> str:
    """One mismatch of the report, as `score` prints it, then its expected and produced
    values on lines of their own."""
    where = []
    if mismatch.get("call") is not None:
        where.append(f"call {mismatch['call']}")
    elif mismatch.get("plan_call") is not None:
        where.append(f"plan call {mismatch['plan_call']}")
    if mismatch.get("path"):
        where.append(str(mismatch["path"]))
    rule = f" [{mismatch['rule']}]" if mismatch.get("rule") else ""
    head = " ".join([str(mismatch["code"]), *where])
    lines = [f"{head}{rule}: {mismatch.get('message', '')}"]
    for key in ("expected", "produced"):
        if key in mismatch:
            lines.append(f"  {key}: {_shown(mismatch[key])}")
    return "\n".join(lines)


def failure_text(entry: dict[str, Any]) -> tuple[str, str, str]:
    """(message, type, text) of a failing case's `<failure>`."""
    mismatches = entry.get("mismatches") or []
    codes = list(dict.fromkeys(m["code"] for m in mismatches))
    lines = [mismatch_text(m) for m in mismatches]
    if entry.get("missing_output"):
        lines.insert(0, "no output line for this case")
    lines.extend(f"unread: {where}" for where in entry.get("unread", ()))
    count = len(mismatches)
    message = f"{count} mismatch{'es' if count != 1 else ''}: {', '.join(codes)}"
    return message, codes[0] if codes else "failed", "\n".join(lines)


class CaseTags:
    """The tags of each case, read from the cases file (JSON Lines) in step with the report's
    entries, which come in the cases file's order: no case is kept beyond the current one."""

    def __init__(self, cases_path: str | None) -> None:
        self._lines = (
            read_jsonl(cases_path) if cases_path and not is_stream(cases_path) else iter(())
        )
        self._current: tuple[str, list[str]] | None = None

    def of(self, case_id: str) -> list[str]:
        """The tags of the case `case_id` (the current case, or one further on)."""
        while self._current is None or self._current[0] != case_id:
            found = next(self._lines, None)
            if found is None:
                return []
            data = found[2]
            tags = data.get("tags")
            kept: list[str] = tags if isinstance(tags, list) else []  # checked when scored
            self._current = (str(data.get("id")), kept)
        return self._current[1]


class JunitWriter:
    """Collects test cases from the report's case entries, then writes the JUnit XML file."""

    def __init__(self, target: str, spec_name: str) -> None:
        path = Path(target)
        if target == "-":
            raise InputError(target, "--junit writes a file: give its path")
        if path.is_dir():
            raise InputError(target, "is a directory, not a JUnit XML file")
        if not path.parent.is_dir():  # found before scoring, not after
            raise InputError(target, "cannot write: its directory does not exist")
        self.target = target
        self.spec_name = spec_name
        self.tags = CaseTags(None)
        self.tests = 0
        self.failures = 0
        self.started = time.monotonic()
        self.timestamp = datetime.datetime.now().replace(microsecond=0).isoformat()
        with self._writing():
            self._spool: IO[bytes] = tempfile.TemporaryFile(dir=path.parent)  # noqa: SIM115

    def read_tags(self, cases_path: str) -> None:
        """Take the cases' tags from `cases_path` (JSON Lines; a stream has none to give)."""
        self.tags = CaseTags(cases_path)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except OSError as error:
            raise InputError(self.target, f"cannot write: {error.strerror or error}") from None

    def add_all_encoded(self, cases_json: Sequence[bytes]) -> None:
        """Add the test cases of report entries (encoded as the report holds them)."""
        parts = [self._testcase(orjson.loads(case)) for case in cases_json]
        with self._writing():
            self._spool.write("".join(parts).encode())

    def _testcase(self, entry: dict[str, Any]) -> str:
        self.tests += 1
        case_id = entry["id"]
        tags = self.tags.of(case_id)
        classname = f"{self.spec_name}.{tags[0]}" if tags else self.spec_name
        name = case_id if "trial" not in entry else f"{case_id} [trial {entry['trial']}]"
        head = (
            f"    <testcase name={xml_attribute(name)} classname={xml_attribute(classname)}"
            ' time="0"'
        )
        if entry.get("passed"):
            return f"{head}/>\n"
        self.failures += 1
        message, kind, text = failure_text(entry)
        return (
            f"{head}>\n      <failure message={xml_attribute(message)} type={xml_attribute(kind)}>"
            f"{xml_text(text)}</failure>\n    </testcase>\n"
        )

    def finish(self, summary: dict[str, Any], header: dict[str, Any]) -> None:
        """Write the file: the suite's counts and properties, then the spooled test cases."""
        seconds = f"{time.monotonic() - self.started:.3f}"
        counts = f'tests="{self.tests}" failures="{self.failures}" errors="0" skipped="0"'
        opening = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="{SUITE}" {counts} time="{seconds}">\n'
            f'  <testsuite name="{SUITE}" {counts} time="{seconds}"'
            f' timestamp="{self.timestamp}">\n'
            "    <properties>\n"
            + "".join(
                f"      <property name={xml_attribute(k)} value={xml_attribute(v)}/>\n"
                for k, v in properties(summary, header)
            )
            + "    </properties>\n"
        )
        closing = "  </testsuite>\n</testsuites>\n"
        self._spool.seek(0)
        try:
            with self._writing(), atomic_file(self.target) as out:
                out.write(opening.encode())
                shutil.copyfileobj(self._spool, out)
                out.write(closing.encode())
        finally:
            self.discard()

    def discard(self) -> None:
        """Drop the spooled test cases (the run failed, or the file is written)."""
        with contextlib.suppress(OSError):
            self._spool.close()


class JunitSink:
    """The JUnit XML file as a run's output (a `report.sink.Sink`): a `JunitWriter` named
    after the spec file, fed each batch's report lines; its properties are the report's
    header, made when the run is finished."""

    def __init__(
        self, target: str, specs_path: str, specs: SpecSet, env: AnyEnvironment | None = None
    ) -> None:
        self.writer = JunitWriter(target, Path(specs_path).stem)
        self.specs = specs
        self.env = env

    def read_tags(self, cases_path: str) -> None:
        """Take the cases' tags (each test case's class) from `cases_path`."""
        self.writer.read_tags(cases_path)

    def add(self, outcome: Scored) -> None:
        """Add the batch's test cases."""
        self.writer.add_all_encoded(outcome.report_lines)

    def finish(self, summary: Summary, late: Late, run_id: int | None) -> None:
        """Write the file."""
        from toolscore.report.json_report import run_header  # noqa: PLC0415 - at the end only

        self.writer.finish(summary.to_dict(), run_header(self.specs, self.env))

    def discard(self) -> None:
        """Drop the spooled test cases."""
        self.writer.discard()


def properties(summary: dict[str, Any], header: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The run's provenance and metrics as (name, value) pairs; values that are not numbers
    or strings are their JSON text (`[0.61, 0.93]`), an absent value `null`."""
    yield "toolscore", str(header.get("toolscore"))
    specs = header.get("specs") or {}
    yield "specs.version", _value(specs.get("version"))
    yield "specs.sha256", _value(specs.get("sha256"))
    for key in ("cases", "passed", "accuracy", "accuracy_ci95"):
        yield key, _value(summary.get(key))
    for key in ("name_accuracy", "argument_accuracy", "abstention_accuracy"):
        rate = summary.get(key) or {}
        for part in ("value", "n", "passed", "ci95"):
            name = key if part == "value" else f"{key}.{part}"
            yield name, _value(rate.get(part))
    for key in ("missed_calls", "missing_outputs", "unmatched_outputs", "unread_cases"):
        yield key, _value(summary.get(key))
    yield "missing_policy", _value(summary.get("missing_policy", "fail"))
    trials = summary.get("trials")
    if trials:
        yield "trials.n", _value(trials.get("n"))
        for estimate in ("pass_hat_k", "pass_at_k"):
            for row in trials.get("calls", {}).get(estimate, ()):
                yield f"{estimate}.{row['k']}", _value(row.get("value"))


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()
