"""The batch interface gives `toolscore score`'s report byte for byte, whatever the batches.

Each golden file becomes a spec, a cases and an outputs file; they are scored once by the
command line and once through `toolscore.engines.partitions.joined_records` and
`batch.BatchScorer` in small batches, merged with `merge_outcomes` and written with
`batch.write_report`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.engines.batch import (
    ALL_RUBRICS,
    BatchOutcome,
    BatchScorer,
    merge_outcomes,
    write_report,
)
from toolscore.engines.partitions import joined_records
from toolscore.errors import CaseError
from toolscore.specs.loading import load_specs

ROOT = Path(__file__).parents[2]
GOLDEN = sorted((ROOT / "tests" / "cases").glob("*.json"))
EXAMPLES = ROOT / "examples"


def _golden_files(path: Path, out: Path) -> tuple[Path, Path, Path]:
    """A golden file as a spec, a cases and an outputs file (its cases that load)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    spec = out / "spec.json"
    spec.write_text(json.dumps(data.get("spec_openai", data.get("spec"))))
    cases, outputs = [], []
    for index, golden in enumerate(data["cases"]):
        if "load_error" in golden:
            continue
        case_id = f"c{index}"
        target = {"turns": golden["turns"]} if "turns" in golden else {"plans": golden["plans"]}
        cases.append(json.dumps({"id": case_id, **target, **golden.get("case", {})}))
        if golden.get("missing"):
            continue
        if "produced_line" in golden:
            line = re.sub(r'"id":\s*"golden"', f'"id": "{case_id}"', golden["produced_line"])
            outputs.append(line.encode("utf-8", "surrogatepass"))
            continue
        if "output" in golden:
            output = {"id": case_id, **golden["output"]}
        elif "messages" in golden:
            output = {"id": case_id, "messages": golden["messages"]}
        else:
            output = {"id": case_id, "calls": golden["produced"]}
        outputs.append(json.dumps(output).encode())
    outputs.append(b'{"id": "no-such-case", "calls": []}')  # an unmatched output
    (out / "cases.jsonl").write_text("\n".join(cases) + "\n")
    (out / "outputs.jsonl").write_bytes(b"\n".join(outputs) + b"\n")
    return spec, out / "cases.jsonl", out / "outputs.jsonl"


def _batches(records: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    while batch := list(islice(records, size)):
        yield batch


def _score_in_batches(spec: Path, cases: Path, outputs: Path, target: Path, size: int) -> None:
    """What an engine does: join, score each batch apart, merge in case order, write."""
    specs = load_specs(spec)
    sources = (str(cases), str(outputs))
    scorer = BatchScorer(specs, sources, rubrics=ALL_RUBRICS, keep_failures=5)
    unmatched: list[str] = []
    records = joined_records(*sources, unmatched.extend)
    outcomes: list[BatchOutcome] = [scorer.score_records(b) for b in _batches(records, size)]
    summary = merge_outcomes(scorer.new_summary(), outcomes)
    summary.set_unmatched(unmatched)
    write_report(str(target), specs, summary, (o.report_lines for o in outcomes))


def _score_command(spec: Path, cases: Path, outputs: Path, target: Path, *more: str) -> None:
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(spec), "--cases", str(cases), "--outputs", str(outputs),
         "--json", str(target), *more],
    )  # fmt: skip
    summary = json.loads(target.read_text())["summary"]
    absent = summary["missing_outputs"] or summary.get("trials", {}).get("missing_trials")
    assert result.exit_code == (1 if absent else 0), result.output  # 1: outputs are missing


@pytest.mark.parametrize("golden", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_batches_give_the_report_of_score_on_the_golden_files(golden: Path, tmp_path: Path) -> None:
    spec, cases, outputs = _golden_files(golden, tmp_path)
    _score_command(spec, cases, outputs, tmp_path / "score.json", "--workers", "1")
    _score_in_batches(spec, cases, outputs, tmp_path / "batches.json", 3)
    expected = (tmp_path / "score.json").read_bytes()
    assert (tmp_path / "batches.json").read_bytes() == expected
    assert json.loads(expected)["summary"]["unmatched_outputs"] == 1


def test_batches_give_the_report_of_score_with_trials_and_missing_outputs(tmp_path: Path) -> None:
    directory = EXAMPLES / "support"
    spec = directory / "tools.yaml"
    cases = tmp_path / "cases.jsonl"
    lines = (directory / "cases.jsonl").read_text().splitlines()
    cases.write_text("\n".join(lines) + "\n")
    outputs = tmp_path / "outputs.jsonl"
    trials = []
    for number, line in enumerate((directory / "outputs.jsonl").read_text().splitlines()[1:]):
        data = json.loads(line)
        trials += [json.dumps({**data, "trial": trial}) for trial in range(number % 3 + 1)]
    outputs.write_text("\n".join(reversed(trials)) + "\n")  # out of order: joined by id
    _score_command(spec, cases, outputs, tmp_path / "score.json", "--workers", "1")
    _score_in_batches(spec, cases, outputs, tmp_path / "batches.json", 2)
    report = (tmp_path / "score.json").read_bytes()
    assert (tmp_path / "batches.json").read_bytes() == report
    assert json.loads(report)["summary"]["missing_outputs"] == 1


def test_batches_give_the_report_of_score_on_100000_generated_cases(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate.py"), "--kind", "single",
         "--n", "100000", "--out", str(tmp_path)],
        check=True,
    )  # fmt: skip
    files = (tmp_path / "tools.yaml", tmp_path / "cases.jsonl", tmp_path / "outputs.jsonl")
    _score_command(*files, tmp_path / "score.json", "--workers", "2")
    _score_in_batches(*files, tmp_path / "batches.json", 2000)
    report = (tmp_path / "score.json").read_bytes()
    assert (tmp_path / "batches.json").read_bytes() == report
    summary = json.loads(report[: report.index(b',"cases":[')] + b"}")["summary"]
    assert summary["cases"] == 100000
    assert 0 < summary["passed"] < 100000


def test_a_bad_case_line_fails_its_batch_as_score_fails(tmp_path: Path) -> None:
    directory = EXAMPLES / "support"
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "thanks", "plans": "not a list"}\n')
    scorer = BatchScorer(load_specs(directory / "tools.yaml"), (str(cases), "outputs.jsonl"))
    records = joined_records(str(cases), str(directory / "outputs.jsonl"))
    with pytest.raises(CaseError, match=r"cases\.jsonl:1: plans"):
        scorer.score_records(records)
    result = CliRunner().invoke(
        cli,
        ["score", "--specs", str(directory / "tools.yaml"), "--cases", str(cases),
         "--outputs", str(directory / "outputs.jsonl")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert re.search(r"cases\.jsonl:1: plans", result.output)
