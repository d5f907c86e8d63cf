"""Files in other layouts are converted to JSON Lines before scoring (converted.py): a JSON
Lines file is read as it is, an error found in a conversion names the user's file and its
record, and a saved run records the file the user gave, not the temporary conversion."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.errors import OutputError
from toolscore.inputs.converted import Conversion, as_json_lines, layout_of

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
SPECS = str(EXAMPLES / "support" / "tools.yaml")
INSPECT_CASES = str(EXAMPLES / "inspect" / "cases.jsonl")
INSPECT_LOG = str(EXAMPLES / "inspect" / "refunds.eval")


def test_a_json_lines_file_is_read_as_it_is(tmp_path: Path) -> None:
    lines = tmp_path / "outputs.jsonl"
    lines.write_text('{"id": "a", "calls": []}\n')
    assert layout_of(str(lines)) is None
    with as_json_lines(str(lines), Conversion("outputs")) as path:
        assert path == str(lines)


def test_an_inspect_log_is_converted_and_the_conversion_removed() -> None:
    layout = layout_of(INSPECT_LOG)
    assert layout is not None
    assert layout.name == "inspect-log"
    with as_json_lines(INSPECT_LOG, Conversion("outputs")) as path:
        assert path != INSPECT_LOG
        assert Path(path).read_bytes().startswith(b"{")
    assert not Path(path).exists()


def test_an_error_on_a_converted_line_names_the_users_file_and_record() -> None:
    conversion = as_json_lines(INSPECT_LOG, Conversion("outputs"))
    with pytest.raises(OutputError) as raised, conversion as path:
        raise OutputError(path, "not a call", line=3, field="calls")
    assert str(raised.value) == f"{INSPECT_LOG}: sample 3: calls: not a call"


def test_a_saved_run_records_the_file_given_not_its_conversion(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    args = ["score", "--specs", SPECS, "--cases", INSPECT_CASES, "--outputs", INSPECT_LOG]
    result = CliRunner().invoke(cli, [*args, "--db", str(db)])
    assert result.exit_code in (0, 1), result.output
    with sqlite3.connect(db) as connection:
        (paths,) = connection.execute("SELECT cases_path, outputs_path FROM runs").fetchall()
    assert paths == (INSPECT_CASES, INSPECT_LOG)
