"""`toolscore join`: partitioned joined records, with the counts and errors `score` gives."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.engines.batch import RECORD_KEYS
from toolscore.engines.partitions import MANIFEST, joined_records, read_joined

EXAMPLE = Path(__file__).parents[2] / "examples" / "support"


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    """The support example with its first output missing and one output for no case."""
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes((EXAMPLE / "cases.jsonl").read_bytes())
    outputs = tmp_path / "outputs.jsonl"
    lines = (EXAMPLE / "outputs.jsonl").read_text().splitlines()[1:]
    outputs.write_text("\n".join([*lines, '{"id": "stray", "calls": []}']) + "\n")
    return cases, outputs


def _join(cases: Path, outputs: Path, out: Path, *more: str) -> str:
    result = CliRunner().invoke(
        cli, ["join", "--cases", str(cases), "--outputs", str(outputs), "--out", str(out), *more]
    )
    assert result.exit_code == 0, result.output
    return result.output


def _part_records(directory: Path) -> list[dict[str, object]]:
    joined = read_joined(directory)
    if joined.format == "parquet":
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # noqa: PLC0415

        return [row for path in joined.paths() for row in pq.read_table(path).to_pylist()]
    return [
        orjson.loads(line)
        for path in joined.paths()
        for line in Path(path).read_bytes().splitlines()
    ]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_join_writes_parts_of_joined_records_in_case_order(tmp_path: Path, fmt: str) -> None:
    cases, outputs = _inputs(tmp_path)
    said = _join(cases, outputs, tmp_path / "out", "--rows-per-part", "4", "--format", fmt)
    assert "6 cases in 2 parts" in said
    assert "1 missing outputs, 1 unmatched outputs" in said
    joined = read_joined(tmp_path / "out")
    assert joined.parts == [f"part-00000.{fmt}", f"part-00001.{fmt}"]
    assert (joined.cases_count, joined.missing_outputs, joined.unmatched_outputs) == (6, 1, 1)
    assert (joined.cases, joined.outputs) == (str(cases), str(outputs))
    records = _part_records(tmp_path / "out")
    assert records == list(joined_records(str(cases), str(outputs)))
    assert [r["seq"] for r in records] == list(range(6))
    assert all(list(r) == list(RECORD_KEYS) for r in records)
    first = records[0]
    assert first["outputs"] == []
    assert first["output_lines"] == []
    case_lines = cases.read_text().splitlines()
    assert [json.loads(str(r["case"]))["id"] for r in records] == [
        json.loads(line)["id"] for line in case_lines
    ]
    assert records[1]["output_lines"] == [1]


def test_the_counts_are_those_score_reports(tmp_path: Path) -> None:
    cases, outputs = _inputs(tmp_path)
    _join(cases, outputs, tmp_path / "out")
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(EXAMPLE / "tools.yaml"), "--cases", str(cases),
         "--outputs", str(outputs), "--json", str(tmp_path / "r.json")],
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # an output is missing
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    joined = read_joined(tmp_path / "out")
    assert summary["missing_outputs"] == joined.missing_outputs == 1
    assert summary["unmatched_outputs"] == joined.unmatched_outputs == 1
    assert summary["unmatched_output_ids"] == list(joined.unmatched_output_ids)


def test_a_repeated_case_id_fails_join_as_it_fails_score(tmp_path: Path) -> None:
    cases, outputs = _inputs(tmp_path)
    first = cases.read_text().splitlines()[0]
    cases.write_text(cases.read_text() + first + "\n")
    joined = CliRunner().invoke(
        cli, ["join", "--cases", str(cases), "--outputs", str(outputs),
              "--out", str(tmp_path / "o"), "--rows-per-part", "2"],
    )  # fmt: skip
    scored = CliRunner().invoke(
        cli, ["score", "--specs", str(EXAMPLE / "tools.yaml"), "--cases", str(cases),
              "--outputs", str(outputs)],
    )  # fmt: skip
    assert joined.exit_code == scored.exit_code == 2
    error = [line for line in scored.output.splitlines() if line.startswith("toolscore: error")]
    assert error
    assert joined.output.strip() == error[0]
    assert "cases.jsonl:7" in error[0]
    assert list((tmp_path / "o").iterdir()) == []  # no parts, no join.json


def test_join_refuses_a_directory_holding_a_join(tmp_path: Path) -> None:
    cases, outputs = _inputs(tmp_path)
    _join(cases, outputs, tmp_path / "out")
    again = CliRunner().invoke(
        cli,
        ["join", "--cases", str(cases), "--outputs", str(outputs), "--out", str(tmp_path / "out")],
    )
    assert again.exit_code == 2
    assert "already holds a join" in again.output


def test_a_directory_without_a_join_is_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["score", "--specs", str(EXAMPLE / "tools.yaml"), "--engine", "ray",
              "--joined", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output.strip() == f"toolscore: error: {tmp_path}: holds no {MANIFEST}: " + (
        "write it with `toolscore join`"
    )


def test_joined_needs_the_ray_engine(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["score", "--specs", str(EXAMPLE / "tools.yaml"), "--joined", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "--address and --joined need --engine ray" in result.output


def test_a_join_of_converted_files_names_the_files_given(tmp_path: Path) -> None:
    """Parquet inputs are joined through their JSON Lines conversions, but `join.json` must
    name the Parquet files: the conversions are gone once the join is written, and `score
    --joined --save` reads the files it names."""
    tables = Path(__file__).parents[2] / "examples" / "parquet"
    cases, outputs = tables / "cases.parquet", tables / "outputs.parquet"
    _join(cases, outputs, tmp_path / "joined")
    joined = read_joined(tmp_path / "joined")
    assert (joined.cases, joined.outputs) == (str(cases), str(outputs))
    assert joined.cases_count == sum(1 for _ in _part_records(tmp_path / "joined"))
