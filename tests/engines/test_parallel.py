"""Scoring on several processes gives exactly what one process gives, chunk by chunk."""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolscore.engines.local import ParallelScoring
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.cases import read_cases
from toolscore.inputs.join import Chunk, join_groups_by_id, joined_chunks, leading_id, pairs
from toolscore.inputs.jsonl import read_jsonl
from toolscore.inputs.outputs import read_outputs
from toolscore.report.json_report import case_to_json, plain
from toolscore.scoring.stream import score
from toolscore.specs.loading import load_specs

EXAMPLES = Path(__file__).parents[2] / "examples"
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
    assert parallel.summary().finish().to_dict() == serial.summary().to_dict()
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

    from toolscore import run as run_module  # noqa: PLC0415
    from toolscore.cli import app as cli_module  # noqa: PLC0415

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

    monkeypatch.setattr(run_module, "ParallelScoring", Spy)
    small = CliRunner().invoke(cli_module.cli, [*args, "--json", str(tmp_path / "a.json")])
    assert small.exit_code == 0, small.output
    assert used == [1]  # a small input is scored in this process
    monkeypatch.setattr(run_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(run_module, "default_workers", lambda: 3)
    large = CliRunner().invoke(cli_module.cli, [*args, "--json", str(tmp_path / "b.json")])
    assert large.exit_code == 0, large.output
    assert used == [1, 3]
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def _write_lines(path: Path, ids: list[str], blank_every: int, late_id_every: int) -> None:
    lines = []
    for k, line_id in enumerate(ids):
        if blank_every and k % blank_every == 0:
            lines.append(b"   ")
        if late_id_every and k % late_id_every == 0:
            lines.append(orjson.dumps({"x": k, "id": line_id}))  # the id is not first
        else:
            lines.append(orjson.dumps({"id": line_id, "x": k}))
    path.write_bytes(b"\n".join(lines) + b"\n")


def _bytes(chunk: Chunk) -> int:
    return sum(len(c.raw) + sum(len(o.raw) for o in group) for c, group in pairs(chunk))


def _serial_pairs(cases: Path, outputs: Path) -> tuple[list[tuple[int, list[int]]], list[str]]:
    unmatched: list[str] = []

    def keyed(path: Path) -> list[tuple[str, int]]:
        return [(data["id"], number) for number, _, data in read_jsonl(path)]

    sources = (str(cases), str(outputs))
    pairs = join_groups_by_id(
        keyed(cases), keyed(outputs), lambda c: c, lambda o: o, unmatched.extend, sources
    )
    return [(c[1], [o[1] for o in group]) for c, group in pairs], unmatched


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 30), max_size=40),
    st.lists(st.integers(0, 30), max_size=40),
    st.booleans(),
    st.integers(1, 7),
    st.integers(0, 5),
    st.integers(0, 6),
    st.lists(st.integers(1, 3), max_size=40),
    st.sampled_from([1, 40, 100, 1 << 24]),
)
def test_the_raw_join_equals_the_serial_join(
    case_keys: list[int],
    output_keys: list[int],
    same_order: bool,
    chunk: int,
    blank_every: int,
    late_id_every: int,
    repeats: list[int],
    budget: int,
) -> None:
    """Same pairs, same unmatched outputs, same first error, for any order, duplicates,
    blank lines, ids that are not first on their line, trials (several consecutive
    outputs of one case, which may fall across a chunk's end) and chunks' byte budgets."""
    if same_order:
        output_keys = [
            k for i, k in enumerate(case_keys) for _ in range(repeats[i] if i < len(repeats) else 1)
        ]
    with tempfile.TemporaryDirectory() as folder:
        cases, outputs = Path(folder) / "c.jsonl", Path(folder) / "o.jsonl"
        _write_lines(cases, [f"id-{k}" for k in case_keys], blank_every, late_id_every)
        _write_lines(outputs, [f"id-{k}" for k in output_keys], blank_every, 0)
        try:
            expected: object = _serial_pairs(cases, outputs)
        except InputError as error:
            expected = str(error)
        unmatched: list[str] = []
        try:
            chunks = list(
                joined_chunks(
                    str(cases),
                    str(outputs),
                    chunk,
                    (CaseError, OutputError),
                    unmatched.extend,
                    budget=budget,
                )
            )
            found: object = (
                [(c.line, [o.line for o in group]) for one in chunks for c, group in pairs(one)],
                unmatched,
            )
            assert all(len(pairs(one)) <= chunk for one in chunks)
            assert all(len(pairs(one)) == 1 or _bytes(one) <= budget for one in chunks)
        except InputError as error:
            found = str(error)
        assert found == expected
