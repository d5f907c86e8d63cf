"""Scoring on several processes gives exactly what one process gives, chunk by chunk."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from toolscore.cases import read_cases
from toolscore.errors import CaseError
from toolscore.outputs import read_outputs
from toolscore.parallel import ParallelScoring, leading_id
from toolscore.report.json_report import case_to_json, plain
from toolscore.scoring import score
from toolscore.specs import load_specs

EXAMPLES = Path(__file__).parent.parent / "examples"
RUNS = [
    ("support", "outputs.jsonl"),
    ("transcripts", "outputs-openai.jsonl"),
    ("transcripts", "outputs-anthropic.jsonl"),
]


@pytest.mark.parametrize(("example", "outputs"), RUNS)
@pytest.mark.parametrize("chunk_size", [1, 2, 5])
def test_parallel_equals_serial(example: str, outputs: str, chunk_size: int) -> None:
    directory = EXAMPLES / example
    specs = load_specs(directory / "tools.yaml")
    cases_path, outputs_path = str(directory / "cases.jsonl"), str(directory / outputs)
    serial = score(specs, read_cases(cases_path, specs), read_outputs(outputs_path))
    serial_lines = [orjson.dumps(case_to_json(r), default=plain) for r in serial]
    parallel = ParallelScoring(
        specs, cases_path, outputs_path, 2, want_report=True, keep_failures=3,
        chunk_size=chunk_size,
    )  # fmt: skip
    outcomes = list(parallel)
    assert [line for o in outcomes for line in o.report_lines] == serial_lines
    assert parallel.summary().finish().to_json() == serial.summary().to_json()
    assert len(outcomes) == -(-len(serial_lines) // chunk_size)


@pytest.mark.parametrize(
    ("raw", "found"),
    [
        (b'{"id":"case-1","plans":[]}\n', "case-1"),
        (b'{"id": "caf\xc3\xa9", "plans": []}\n', "café"),
        (b'{"id":"a\\"b","plans":[]}\n', None),  # an escape: left to the full parse
        (b'{"plans": [], "id": "x"}\n', None),
        (b'{"id":"","plans":[]}\n', None),
        (b'{"id":"\xff"}\n', None),
    ],
)
def test_leading_id(raw: bytes, found: str | None) -> None:
    assert leading_id(raw) == found


def test_a_line_that_contradicts_its_leading_id_is_refused(tmp_path: Path) -> None:
    directory = EXAMPLES / "support"
    specs = load_specs(directory / "tools.yaml")
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id":"thanks","plans":[],"id":"other"}\n')
    run = ParallelScoring(specs, str(cases), str(directory / "outputs.jsonl"), 2)
    with pytest.raises(CaseError, match=r"cases.jsonl:1: a line must be a JSON object"):
        list(run)


def test_by_default_a_large_input_is_scored_on_every_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner  # noqa: PLC0415

    from toolscore import cli as cli_module  # noqa: PLC0415

    example = cli_module.example_dir()
    args = [
        "score", "--specs", str(example / "tools.yaml"), "--cases", str(example / "cases.jsonl"),
        "--outputs", str(example / "outputs.jsonl"),
    ]  # fmt: skip
    used: list[int] = []

    class Spy(ParallelScoring):
        def __init__(self, *a: object, **k: object) -> None:
            super().__init__(*a, **k)  # type: ignore[arg-type]
            used.append(self.workers)

    monkeypatch.setattr(cli_module, "ParallelScoring", Spy)
    small = CliRunner().invoke(cli_module.cli, [*args, "--json", str(tmp_path / "a.json")])
    assert small.exit_code == 0, small.output
    assert used == []  # a small input is scored in process
    monkeypatch.setattr(cli_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1, 2})
    large = CliRunner().invoke(cli_module.cli, [*args, "--json", str(tmp_path / "b.json")])
    assert large.exit_code == 0, large.output
    assert used == [3]
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
