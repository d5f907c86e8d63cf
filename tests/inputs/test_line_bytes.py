"""A line longer than the line cap (64 MiB, $TOOLSCORE_MAX_LINE_BYTES) is refused in one line
naming the file and the line, after reading one byte past the cap, never the line whole
(issue 25): from a plain file, a gzip stream, the chunked join and a collector export."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.bounds import LINE_BYTES_VAR, MAX_LINE_BYTES, env_limit, max_line_bytes
from toolscore.inputs.conversion import Conversion
from toolscore.inputs.join import joined_chunks, pairs
from toolscore.inputs.jsonl import iter_lines, read_jsonl
from toolscore.inputs.lines import bounded_lines
from toolscore.inputs.otlp_export import convert

CAP = 1000


def line(size: int, case_id: str = "a") -> bytes:
    """A JSON object of exactly `size` bytes, without its newline."""
    head = b'{"id": "' + case_id.encode() + b'", "pad": "'
    return head + b"x" * (size - len(head) - 2) + b'"}'


@pytest.fixture(autouse=True)
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LINE_BYTES_VAR, str(CAP))


def test_a_line_at_the_cap_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(line(CAP) + b"\n" + line(CAP, "b") + b"\n" + line(CAP + 1, "c") + b"\n")
    read = iter_lines(path)
    assert [number for number, _ in (next(read), next(read))] == [1, 2]
    with pytest.raises(InputError) as refused:
        next(read)
    assert str(refused.value).startswith(f"{path}:3: the line is longer than 1,000 bytes")
    assert LINE_BYTES_VAR in str(refused.value)
    assert "\n" not in str(refused.value)


def test_the_last_line_without_a_newline_is_capped_too(tmp_path: Path) -> None:
    path = tmp_path / "outputs.jsonl"
    path.write_bytes(line(CAP))
    assert [number for number, _, _ in read_jsonl(path)] == [1]
    path.write_bytes(line(CAP + 1))
    with pytest.raises(OutputError, match=r"outputs.jsonl:1: the line is longer"):
        list(read_jsonl(path, OutputError))


class Recorded(io.BytesIO):
    """A file that records the most bytes any one readline asked for and returned."""

    asked = 0
    given = 0

    def readline(self, size: int | None = -1) -> bytes:
        assert size is not None
        assert size > 0, "an unbounded readline"
        got = super().readline(size)
        self.asked, self.given = max(self.asked, size), max(self.given, len(got))
        return got


def test_a_huge_line_is_never_read_whole() -> None:
    """A 1 MB line without a newline (the 5 GB file of one line, scaled down) is refused
    having read no more than the cap and one byte."""
    handle = Recorded(b"x" * 1_000_000)
    with pytest.raises(InputError, match="<stdin>:1: the line is longer"):
        list(bounded_lines(handle, "<stdin>", CAP))
    assert handle.asked == handle.given == CAP + 1


def test_a_gzip_stream_is_read_under_the_same_cap(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl.gz"
    with gzip.open(path, "wb") as out:
        out.write(line(CAP) + b"\n" + line(CAP + 1, "b") + b"\n")
    with gzip.open(path, "rb") as handle:
        lines = bounded_lines(handle, str(path), CAP)
        assert next(lines) == line(CAP) + b"\n"
        with pytest.raises(InputError, match=r"cases.jsonl.gz:2: the line is longer"):
            next(lines)


def test_the_chunked_join_refuses_a_long_line_naming_it(tmp_path: Path) -> None:
    cases, outputs = tmp_path / "cases.jsonl", tmp_path / "outputs.jsonl"
    cases.write_bytes(line(200, "a") + b"\n" + line(200, "b") + b"\n")
    outputs.write_bytes(line(200, "a") + b"\n\n" + line(CAP + 1, "b") + b"\n")
    with pytest.raises(OutputError, match=r"outputs.jsonl:3: the line is longer"):
        list(joined_chunks(str(cases), str(outputs), 10, (CaseError, OutputError), None))
    outputs.write_bytes(line(200, "a") + b"\n" + line(CAP, "b") + b"\n")
    chunks = list(joined_chunks(str(cases), str(outputs), 10, (CaseError, OutputError), None))
    assert [case.id for chunk in chunks for case, _ in pairs(chunk)] == ["a", "b"]


def test_a_collector_export_line_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    path.write_bytes(line(CAP + 1) + b"\n")
    with pytest.raises(InputError, match=r"export.jsonl:1: the line is longer"):
        convert(str(path), Conversion("outputs"), io.BytesIO())


def test_the_limits_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert max_line_bytes() == CAP
    monkeypatch.delenv(LINE_BYTES_VAR)
    assert max_line_bytes() == MAX_LINE_BYTES == 64 * 1024 * 1024
    monkeypatch.setenv("TOOLSCORE_X", " 12 ")
    assert env_limit("TOOLSCORE_X", 5) == 12
    for wrong in ("0", "-3", "1e6", "lots"):
        monkeypatch.setenv("TOOLSCORE_X", wrong)
        with pytest.raises(InputError, match=r"^f: \$TOOLSCORE_X must be a whole number of b"):
            env_limit("TOOLSCORE_X", 5, "f", "bytes")


def test_standard_input_is_read_under_the_same_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    given = line(CAP) + b"\n" + line(CAP + 1, "b") + b"\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(given)))
    read = iter_lines("-")
    assert next(read)[0] == 1
    with pytest.raises(InputError, match=r"^<stdin>:2: the line is longer"):
        next(read)
