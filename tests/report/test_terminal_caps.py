"""The terminal shows at most LINES_PER_CASE lines under a case, then counts the rest; the
report JSON keeps every mismatch (issue 11, item 8: 10,000 extra calls printed 10,000 lines).
Also: `calibrate` before any label says nothing is labelled yet, not "no scorer bugs"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli, example_dir
from toolscore.report.terminal import LINES_PER_CASE

EXTRA = 10_000


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def flood(tmp_path: Path) -> Path:
    """The support example where the abstention case `thanks` got 10,000 calls."""
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    lines = (target / "outputs.jsonl").read_bytes().splitlines()
    calls = [{"name": "get_order", "args": {"order_id": f"o-{n}"}} for n in range(EXTRA)]
    flooded = [
        orjson.dumps({"id": "thanks", "calls": calls}) if b'"thanks"' in line else line
        for line in lines
    ]
    (target / "outputs.jsonl").write_bytes(b"\n".join(flooded) + b"\n")
    return target


def case_block(output: str, start: str) -> list[str]:
    """The lines from the one starting with `start` to the next unindented or case line."""
    lines = output.splitlines()
    first = next(n for n, line in enumerate(lines) if line.lstrip().startswith(start))
    indent = len(lines[first]) - len(lines[first].lstrip())
    block = [lines[first]]
    for line in lines[first + 1 :]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    return block


def test_a_flood_of_calls_prints_a_capped_block_and_the_json_keeps_all(flood: Path) -> None:
    report, db = flood / "report.json", flood / "r.db"
    result = run(
        "score", "--specs", str(flood / "tools.yaml"), "--cases", str(flood / "cases.jsonl"),
        "--outputs", str(flood / "outputs.jsonl"), "--json", str(report), "--db", str(db),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    more = f"... and {EXTRA - LINES_PER_CASE} more ({EXTRA} mismatches; --json lists all)"
    block = case_block(result.stdout, "thanks:")
    assert len(block) == 1 + LINES_PER_CASE + 1
    assert block[-1].strip() == more
    assert all("extra_call" in line for line in block[1:-1])
    assert len(result.stdout.splitlines()) < 100
    thanks = next(c for c in json.loads(report.read_text())["cases"] if c["id"] == "thanks")
    assert len(thanks["mismatches"]) == EXTRA
    for args in (["show", "1"], ["show", "1", "--case", "thanks"]):
        shown = run(*args, "--db", str(db))
        assert shown.exit_code == 0, shown.output
        block = case_block(shown.stdout, "thanks")
        assert len(block) == 1 + LINES_PER_CASE + 1
        assert block[-1].strip() == more
    full = json.loads(run("show", "1", "--case", "thanks", "--json", "--db", str(db)).stdout)
    assert len(full["mismatches"]) == EXTRA


def test_a_case_at_the_cap_prints_every_line_and_no_count(tmp_path: Path) -> None:
    target = tmp_path / "support"
    shutil.copytree(example_dir(), target)
    calls = [{"name": "get_order", "args": {"order_id": f"o-{n}"}} for n in range(LINES_PER_CASE)]
    (target / "outputs.jsonl").write_bytes(orjson.dumps({"id": "thanks", "calls": calls}) + b"\n")
    result = run(
        "score", "--specs", str(target / "tools.yaml"), "--cases", str(target / "cases.jsonl"),
        "--outputs", str(target / "outputs.jsonl"),
    )  # fmt: skip
    block = case_block(result.stdout, "thanks:")
    assert len(block) == 1 + LINES_PER_CASE
    assert "more" not in block[-1]


def test_calibrate_before_any_label_says_nothing_is_labelled(tmp_path: Path) -> None:
    example, db = example_dir(), str(tmp_path / "r.db")
    saved = run(
        "score", "--specs", str(example / "tools.yaml"), "--cases", str(example / "cases.jsonl"),
        "--outputs", str(example / "outputs.jsonl"), "--db", db,
    )  # fmt: skip
    assert saved.exit_code == 0
    assert run("disagreements", "1", "--db", db).exit_code == 0
    result = run("calibrate", "1", "--db", db)
    assert result.exit_code == 0, result.output
    assert "no scorer bugs" not in result.stdout
    assert (
        "nothing labelled yet, so no scorer bug can be found: label batch 1 with "
        "`toolscore label 1` (or `toolscore labels import 1 FILE`)"
    ) in result.stdout
    labels = tmp_path / "unsure.jsonl"
    labels.write_text('{"case_id": "default-omitted", "label": "unsure", "labeller": "ann"}\n')
    assert run("labels", "import", "1", str(labels), "--db", db).exit_code == 0
    result = run("calibrate", "1", "--db", db)
    assert "no case labelled correct or incorrect yet (only unsure), so no scorer bug" in (
        result.stdout
    )
    labels.write_text('{"case_id": "default-omitted", "label": "correct", "labeller": "ann"}\n')
    assert run("labels", "import", "1", str(labels), "--db", db).exit_code == 0
    assert "no scorer bugs" in run("calibrate", "1", "--db", db).stdout
