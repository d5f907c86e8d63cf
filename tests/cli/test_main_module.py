"""`python -m toolscore` runs the command line, as the `toolscore` script does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_python_dash_m_prints_the_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolscore", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("toolscore, version ")


def test_python_dash_m_reports_bad_input_with_status_2(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "toolscore", "lint", "--specs", str(missing)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "nowhere.yaml" in done.stderr
