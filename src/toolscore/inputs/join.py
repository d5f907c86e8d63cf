"""Join the lines of a cases file and an outputs file by id without parsing them, in chunks.

The process that hands work to the scoring workers does only this, so it must be cheap:
lines are read a block at a time, and each id is found by a pattern at the start of the line
(`{"id": "...",`, as JSON writers put it). When the two files list the same ids in the same
order, as they usually do, a chunk of cases is joined to the next chunk of outputs by
comparing the two id lists whole. At the first chunk that does not line up, the rest of both
files goes through `join_groups_by_id` (below), line by line, which accepts any order; the result is
the same either way, duplicate and unmatched ids included.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import IO, NamedTuple, TypeVar

from toolscore.core.model import Case, Trajectory
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.bounds import max_line_bytes
from toolscore.inputs.jsonl import ByteCounter, parse_line
from toolscore.inputs.lenient import Junk
from toolscore.inputs.lines import line_error
from toolscore.inputs.paths import close_input, open_input

BLOCK_BYTES = 1 << 20
"""Bytes read from a file at a time."""
CHUNK_BYTES = 16 << 20
"""The most bytes of raw lines in a chunk by default, its cases' and their outputs'
together (a chunk also ends at its count of cases, whichever comes first). Far past a chunk
of 2,000 ordinary cases (a few megabytes), so it bites only on long lines; low enough that
the few chunks in flight (`score --workers N` keeps 2N + 1) hold well under 100 MB of them.
"""


class RawLine(NamedTuple):
    """One line of a cases or outputs file, unparsed but for its id."""

    line: int
    raw: bytes
    id: str


Pairs = list[tuple[RawLine, list[RawLine]]]
"""Cases, each with its output lines (several for trials, none when the case has none), in
cases-file order."""


class Aligned(NamedTuple):
    """A chunk of cases and the outputs at the same places, with the same ids: sent to a
    worker as it was read, and made into pairs there (`pairs`)."""

    numbers: list[int]
    lines: list[bytes]
    out_numbers: list[int]
    out_lines: list[bytes]
    ids: list[str]


Unmatched = Callable[[list[str]], None] | None
"""Called at the end with the ids of outputs that match no case."""

_LEADING_ID = re.compile(rb'\{"id": ?"([^"\\]+)"')
_IDS = re.compile(rb'\n\{"id": ?"([^"\\\n]+)"')
"""The leading id of every line of a block of lines, the block starting with a newline (a
line without one has no match; the literal start makes the search fast)."""


def leading_id(raw: bytes) -> str | None:
    """The id of a line written `{"id":"...",` (as JSON writers do), or None."""
    match = _LEADING_ID.match(raw)
    if match is None:
        return None
    try:
        return match.group(1).decode()
    except UnicodeDecodeError:
        return None


Chunk = Pairs | Aligned
"""What the main process sends a worker: pairs, or an aligned chunk that makes them."""


def pairs(chunk: Chunk) -> Pairs:
    """The (case, output) line pairs of a chunk."""
    if isinstance(chunk, list):
        return chunk
    rows = zip(*chunk, strict=True)
    return [(RawLine(n, raw, i), [RawLine(m, out, i)]) for n, raw, m, out, i in rows]


def _decoded(ids: list[bytes]) -> list[str] | None:
    try:
        return [found.decode() for found in ids]
    except UnicodeDecodeError:
        return None


def line_id(
    raw: bytes, path: str, number: int, error: type[InputError], *, lenient: bool = False
) -> str:
    """The id of a line: its leading id, else the id of the line parsed whole (so that an
    error names the line; `lenient` for outputs lines, as `jsonl.parse_line`)."""
    found = leading_id(raw)
    if found is not None:
        return found
    value = parse_line(raw, path, number, error, lenient=lenient).get("id")
    if type(value) is Junk:
        raise error(path, value.reason, line=number, field="id")
    if type(value) is not str or not value:
        raise error(path, "every line needs a non-empty string id", line=number, field="id")
    return value


class LineReader:
    """The non-blank lines of a file with their numbers, taken a given count (and at most a
    given number of bytes) at a time; each line no longer than the line cap."""

    def __init__(
        self, path: str, error: type[InputError], counter: ByteCounter | None = None
    ) -> None:
        self.counter = counter
        self._source = str(path)
        self._error = error
        self._cap = max_line_bytes(self._source)
        self._handle: IO[bytes] = open_input(path, error)  # closed by close()
        self._numbers: list[int] = []
        self._lines: list[bytes] = []
        self._bytes = 0
        """The bytes of `_lines`."""
        self._read = 0
        self._at_end = False

    def close(self) -> None:
        """Close the file (standard input stays open)."""
        close_input(self._handle)

    def take(self, count: int, budget: int | None = None) -> tuple[list[int], list[bytes]]:
        """The next `count` non-blank lines (fewer at the end of the file) and their numbers;
        with a `budget`, no more lines than fit in that many bytes (but one at least)."""
        while len(self._lines) < count and not self._at_end:
            if budget is not None and self._bytes >= budget:
                break
            self._fill()
        lines = self._lines[:count]
        size = sum(map(len, lines))
        if budget is not None and size > budget:
            count = _fitting(lines, budget)
            lines = lines[:count]
            size = sum(map(len, lines))
        numbers = self._numbers[:count]
        del self._numbers[:count], self._lines[:count]
        self._bytes -= size
        return numbers, lines

    def put_back(self, numbers: list[int], lines: list[bytes]) -> None:
        """Return lines taken but not used: `take` gives them again first."""
        self._numbers[:0] = numbers
        self._lines[:0] = lines
        self._bytes += sum(map(len, lines))

    def peek(self) -> bytes | None:
        """The next line, left to be taken; None at the end of the file."""
        numbers, lines = self.take(1)
        self.put_back(numbers, lines)
        return lines[0] if lines else None

    def rest(self) -> Iterator[tuple[int, bytes]]:
        """Every line not taken yet, with its number (read a block of bytes at a time)."""
        while True:
            numbers, lines = self.take(4096, BLOCK_BYTES)
            if not lines:
                return
            yield from zip(numbers, lines, strict=True)

    def _fill(self) -> None:
        # readline with a bound, not readlines: a line longer than the cap is never held.
        readline, cap, size = self._handle.readline, self._cap, 0
        lines: list[bytes] = []
        while size < BLOCK_BYTES and (line := readline(cap + 1)):
            if len(line) > cap and line[-1:] != b"\n":  # it did not end within the cap
                raise line_error(self._source, self._read + len(lines) + 1, cap, self._error)
            lines.append(line)
            size += len(line)
        if not lines:
            self._at_end = True
            return
        first = self._read + 1
        self._read += len(lines)
        if self.counter is not None:
            self.counter.done += size
        if not any(map(bytes.isspace, lines)):
            self._numbers.extend(range(first, first + len(lines)))
            self._lines.extend(lines)
            self._bytes += size
            return
        for number, line in enumerate(lines, first):
            if not line.isspace():
                self._numbers.append(number)
                self._lines.append(line)
                self._bytes += len(line)


def _fitting(lines: list[bytes], budget: int, beside: list[bytes] | None = None) -> int:
    """How many of the first `lines` fit in `budget` bytes, counted with the lines at the
    same places of `beside` (one at least, however long)."""
    total = 0
    for place, line in enumerate(lines):
        total += len(line) + (
            len(beside[place]) if beside is not None and place < len(beside) else 0
        )
        if total > budget:
            return max(place, 1)
    return len(lines)


def joined_chunks(
    cases_path: str,
    outputs_path: str,
    size: int,
    errors: tuple[type[InputError], type[InputError]],
    on_unmatched: Unmatched,
    counter: ByteCounter | None = None,
    budget: int = CHUNK_BYTES,
) -> Iterator[Chunk]:
    """Chunks of `size` cases joined to their outputs by id, in cases-file order, each
    holding at most `budget` bytes of case and output lines together (but one case at least).

    `on_unmatched` is called with the ids of outputs that match no case, at the end.
    """
    cases = LineReader(cases_path, errors[0], counter)
    outputs = LineReader(outputs_path, errors[1])
    try:
        seen: set[str] = set()
        while True:
            numbers, lines = cases.take(size, budget)
            if not lines:
                break
            out_numbers, out_lines = outputs.take(len(lines), budget)
            keep = len(lines)
            if sum(map(len, lines)) + sum(map(len, out_lines)) > budget:
                keep = _fitting(lines, budget, out_lines)
            cases.put_back(numbers[keep:], lines[keep:])
            outputs.put_back(out_numbers[keep:], out_lines[keep:])
            del numbers[keep:], lines[keep:], out_numbers[keep:], out_lines[keep:]
            # The line after the chunk may be another trial of its last case.
            following = outputs.peek()
            found = _IDS.findall(b"\n" + b"".join(lines))
            ids = _decoded(found)
            if (
                ids is not None
                and len(ids) == len(lines)  # every line starts with its id
                and len(out_lines) == len(lines)
                and (following is None or _other_case(following, ids[-1]))
                and found == _IDS.findall(b"\n" + b"".join(out_lines))
                and len(set(ids)) == len(ids)
                and seen.isdisjoint(ids)
            ):
                seen.update(ids)
                yield Aligned(numbers, lines, out_numbers, out_lines, ids)
                continue
            # Not lined up: the rest, these lines first, joined line by line.
            rest_cases = itertools.chain(zip(numbers, lines, strict=True), cases.rest())
            rest_outputs = itertools.chain(zip(out_numbers, out_lines, strict=True), outputs.rest())
            yield from _joined_by_id(
                rest_cases, rest_outputs, (size, budget), (cases_path, outputs_path), errors,
                seen, on_unmatched,
            )  # fmt: skip
            return
        yield from _joined_by_id(
            iter(()), outputs.rest(), (size, budget), (cases_path, outputs_path), errors, seen,
            on_unmatched,
        )  # fmt: skip
    finally:
        cases.close()
        outputs.close()


def _other_case(line: bytes, case_id: str) -> bool:
    """Whether an outputs line is known to belong to another case than `case_id` (False
    when its id is not first on the line: the line-by-line join then decides)."""
    found = leading_id(line)
    return found is not None and found != case_id


def _joined_by_id(
    cases: Iterator[tuple[int, bytes]],
    outputs: Iterator[tuple[int, bytes]],
    bounds: tuple[int, int],
    sources: tuple[str, str],
    errors: tuple[type[InputError], type[InputError]],
    seen: set[str],
    on_unmatched: Unmatched,
) -> Iterator[Chunk]:
    joined = join_groups_by_id(
        (RawLine(n, raw, line_id(raw, sources[0], n, errors[0])) for n, raw in cases),
        (
            RawLine(n, raw, line_id(raw, sources[1], n, errors[1], lenient=True))
            for n, raw in outputs
        ),
        lambda raw: (raw.id, raw.line),
        lambda raw: (raw.id, raw.line),
        on_unmatched,
        sources,
        seen_cases=seen,
    )
    size, budget = bounds
    chunk: Pairs = []
    held = 0
    for pair in joined:
        case, found = pair
        weight = len(case.raw) + sum(len(output.raw) for output in found)
        if chunk and held + weight > budget:
            yield chunk
            chunk, held = [], 0
        chunk.append(pair)
        held += weight
        if len(chunk) == size:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


CaseT = TypeVar("CaseT")
OutputT = TypeVar("OutputT")


def join_groups_by_id(
    cases: Iterable[CaseT],
    outputs: Iterable[OutputT],
    case_key: Callable[[CaseT], tuple[str, int | None]],
    output_key: Callable[[OutputT], tuple[str, int | None]],
    on_unmatched: Callable[[list[str]], None] | None = None,
    sources: tuple[str, str] = ("<cases>", "<outputs>"),
    seen_cases: set[str] | None = None,
) -> Iterator[tuple[CaseT, list[OutputT]]]:
    """Pair each case with its outputs by id (several when the outputs are trials),
    streaming when both files are in the same order.

    `case_key` and `output_key` give an item's (id, line). A case's outputs are those read
    ahead of it (they wait in memory) and the lines with its id that follow the first one
    found; an output for a case already joined is an input error, as is a repeated case id.
    The ids of outputs that match no case (one per line) go to `on_unmatched` at the end.
    `seen_cases` holds the ids of cases already joined, when this joins the rest of files
    whose beginning was joined another way.
    """
    pending: dict[str, list[OutputT]] = {}
    remaining = iter(outputs)
    ahead: list[OutputT] = []
    """The output read past the end of a case's lines, read again next."""
    seen_cases = set() if seen_cases is None else seen_cases

    def read() -> OutputT | None:
        return ahead.pop() if ahead else next(remaining, None)

    def take(output: OutputT) -> str:
        # Outputs are read only as far as the case being joined needs, so one for a case
        # already joined can only be a late output for it.
        output_id, line = output_key(output)
        if output_id in seen_cases:
            raise OutputError(
                sources[1],
                f"duplicate output for case {output_id!r} (the trials of a case must come "
                "together, on consecutive lines)",
                line=line,
                field="id",
            )
        return output_id

    for case in cases:
        case_id, line = case_key(case)
        if case_id in seen_cases:
            raise CaseError(sources[0], f"duplicate case id {case_id!r}", line=line, field="id")
        found = pending.pop(case_id, None)
        while found is None:
            following = read()
            if following is None:
                break
            following_id = take(following)
            if following_id == case_id:
                found = [following]
            else:
                pending.setdefault(following_id, []).append(following)
        if found is not None:
            while (following := read()) is not None:  # the case's other trials
                if output_key(following)[0] != case_id:
                    ahead.append(following)
                    break
                found.append(following)
        seen_cases.add(case_id)
        yield case, found or []
    unmatched = [output_id for output_id, group in pending.items() for _ in group]
    while (following := read()) is not None:
        unmatched.append(take(following))
    if on_unmatched is not None:
        on_unmatched(unmatched)


def one_each(
    groups: Iterable[tuple[CaseT, list[OutputT]]],
    output_key: Callable[[OutputT], tuple[str, int | None]],
    source: str = "<outputs>",
) -> Iterator[tuple[CaseT, OutputT | None]]:
    """The groups of `join_groups_by_id` where each case takes one output at most (None when
    it has none): a second output for a case is an input error naming its line in `source`."""
    for case, found in groups:
        if len(found) > 1:
            output_id, line = output_key(found[1])
            raise OutputError(
                source, f"duplicate output for case {output_id!r}", line=line, field="id"
            )
        yield case, found[0] if found else None


def join(
    cases: Iterable[Case],
    outputs: Iterable[Trajectory],
    on_unmatched: Callable[[list[str]], None] | None = None,
    sources: tuple[str, str] = ("<cases>", "<outputs>"),
) -> Iterator[tuple[Case, Trajectory]]:
    """Pair cases with their trajectories by id, one each; a case with no output gets an
    empty, `missing` trajectory (see `one_each`)."""

    def output_key(trajectory: Trajectory) -> tuple[str, int | None]:
        return trajectory.case_id, trajectory.line

    groups = join_groups_by_id(
        cases, outputs, lambda case: (case.id, case.line), output_key, on_unmatched, sources
    )
    pairs = one_each(groups, output_key, sources[1])
    for case, found in pairs:
        yield case, found or Trajectory(case.id, (), missing=True)
