"""Chunks of the join end at a byte budget as well as at a count of cases (issue 25), so
that long lines do not make a chunk, and the memory that holds it, grow with them; scoring
gives the same results whatever the budget. A line over the line cap stops `score` with
exit 2 and one line, having written nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli, example_dir
from toolscore.engines.local import ParallelScoring
from toolscore.engines.partitions import Joined, joined_records
from toolscore.engines.ray import batch_records
from toolscore.errors import CaseError, OutputError
from toolscore.inputs.bounds import LINE_BYTES_VAR
from toolscore.inputs.join import CHUNK_BYTES, Chunk, joined_chunks, pairs
from toolscore.specs.loading import load_specs

PAD = 3000
"""Bytes added to each case's prompt and each output's response: long lines."""


@pytest.fixture
def padded(tmp_path: Path) -> Path:
    """The support example with every line made about `PAD` bytes longer."""
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    for name, field in (("cases.jsonl", "prompt"), ("outputs.jsonl", "response")):
        path = target / name
        rows = [orjson.loads(raw) for raw in path.read_bytes().splitlines() if raw.strip()]
        for row in rows:
            row[field] = str(row.get(field, "")) + "x" * PAD
        path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return target


def weight(chunk: Chunk) -> int:
    return sum(len(case.raw) + sum(len(o.raw) for o in outs) for case, outs in pairs(chunk))


def chunks_of(directory: Path, budget: int, outputs: str = "outputs.jsonl") -> list[Chunk]:
    cases, output_path = str(directory / "cases.jsonl"), str(directory / outputs)
    errors = (CaseError, OutputError)
    return list(joined_chunks(cases, output_path, 2000, errors, None, budget=budget))


@pytest.mark.parametrize("order", ["same", "reversed"])
def test_a_chunk_ends_at_the_byte_budget(padded: Path, order: str) -> None:
    """Aligned files and files in another order (the line-by-line join) alike."""
    outputs = "outputs.jsonl"
    if order == "reversed":
        lines = (padded / outputs).read_bytes().splitlines(keepends=True)
        outputs = "reversed.jsonl"
        (padded / outputs).write_bytes(b"".join(reversed(lines)))
    whole = chunks_of(padded, CHUNK_BYTES, outputs)
    assert len(whole) == 1
    budget = 4 * (PAD + 300)  # two cases and their outputs, about
    chunks = chunks_of(padded, budget, outputs)
    assert len(chunks) > 2
    assert all(weight(chunk) <= budget for chunk in chunks)
    flat = [(c.line, [o.line for o in outs]) for chunk in chunks for c, outs in pairs(chunk)]
    assert flat == [(c.line, [o.line for o in outs]) for c, outs in pairs(whole[0])]


def test_a_pair_longer_than_the_budget_is_a_chunk_of_its_own(padded: Path) -> None:
    chunks = chunks_of(padded, 100)
    assert all(len(pairs(chunk)) == 1 for chunk in chunks)
    assert sum(len(pairs(chunk)) for chunk in chunks) == len(pairs(chunks_of(padded, 1 << 30)[0]))


@pytest.mark.parametrize("workers", [1, 2])
def test_scores_are_the_same_whatever_the_budget(padded: Path, workers: int) -> None:
    specs = load_specs(padded / "tools.yaml")
    paths = str(padded / "cases.jsonl"), str(padded / "outputs.jsonl")

    def run(budget: int) -> tuple[object, list[bytes]]:
        scoring = ParallelScoring(
            specs, *paths, workers, want_report=True, keep_failures=3, chunk_bytes=budget
        )
        lines = [line for outcome in scoring for line in outcome.report_lines]
        return scoring.summary().finish().to_dict(), lines

    assert run(500) == run(CHUNK_BYTES)


def test_joined_records_are_the_same_whatever_the_budget(padded: Path) -> None:
    paths = str(padded / "cases.jsonl"), str(padded / "outputs.jsonl")
    assert list(joined_records(*paths, budget=500)) == list(joined_records(*paths))


def test_ray_batches_shrink_for_long_records(tmp_path: Path) -> None:
    part = tmp_path / "part-0.jsonl"
    part.write_bytes(b"x" * 10_000)
    joined = Joined(tmp_path, "c", "o", "jsonl", [part.name], 10, 0, 0)
    assert batch_records(joined, 2000, 1_000_000) == 1000
    assert batch_records(joined, 2000, 3_000) == 3
    assert batch_records(joined, 2000, 10) == 1
    assert batch_records(joined._replace(cases_count=0), 2000, 10) == 2000


def test_score_stops_at_a_line_over_the_cap(
    padded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LINE_BYTES_VAR, str(PAD + 500))
    lines = (padded / "outputs.jsonl").read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:-3] + b"y" * 600 + b'"}\n'
    (padded / "outputs.jsonl").write_bytes(b"".join(lines))
    report = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        [
            "score", "--specs", str(padded / "tools.yaml"),
            "--cases", str(padded / "cases.jsonl"),
            "--outputs", str(padded / "outputs.jsonl"), "--json", str(report),
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    error = result.stderr.strip().splitlines()
    assert len(error) == 1, result.stderr
    assert "outputs.jsonl:3: the line is longer than" in error[0]
    assert LINE_BYTES_VAR in error[0]
    assert not report.exists()
