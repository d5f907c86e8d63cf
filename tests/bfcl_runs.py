"""BFCL multi-turn fixtures imported and scored through the command line, for the
multi-turn tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from toolscore.cli.app import cli

HERE = Path(__file__).parent


FIXTURE = HERE / "bfcl_multiturn"


DATA = FIXTURE / "BFCL_v4_multi_turn_base.json"


ANSWERS = FIXTURE / "possible_answer" / "BFCL_v4_multi_turn_base.json"


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def scored_cases(converted: Path, result: Path) -> list[dict[str, Any]]:
    """The report's case entries of BFCL's `result` file, converted and scored with `--env`."""
    outputs = converted / "outputs.jsonl"
    invoke("import", "bfcl-outputs", str(result), "--out", str(outputs))
    report = converted / "report.json"
    invoke(
        "score", "--specs", str(converted / "tools.yaml"), "--cases",
        str(converted / "cases.jsonl"), "--outputs", str(outputs), "--env",
        "--json", str(report),
    )  # fmt: skip
    cases: list[dict[str, Any]] = json.loads(report.read_text())["cases"]
    return cases
