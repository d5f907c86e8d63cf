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


def scored_cases(
    converted: Path, result: Path, *, per_turn: bool = True, env: bool = True
) -> list[dict[str, Any]]:
    """The report's case entries of BFCL's `result` file, converted (in the older per-turn
    layout unless told otherwise) and scored, with `--env` unless told otherwise."""
    outputs = converted / "outputs.jsonl"
    layout = ["--per-turn"] if per_turn else []
    invoke("import", "bfcl-outputs", str(result), "--out", str(outputs), *layout)
    report = converted / "report.json"
    invoke(
        "score", "--specs", str(converted / "tools.yaml"), "--cases",
        str(converted / "cases.jsonl"), "--outputs", str(outputs),
        *(["--env"] if env else []), "--json", str(report),
    )  # fmt: skip
    cases: list[dict[str, Any]] = json.loads(report.read_text())["cases"]
    return cases
