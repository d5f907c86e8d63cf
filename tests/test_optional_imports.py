"""`import toolscore` and a plain `toolscore score` import none of the optional libraries.

The integrations (pytest, Inspect, OpenTelemetry, Parquet, Ray) each import their library
only in the command or function that needs it; a team that installs toolscore alone must be
able to import it, and start-up must not pay for what a run does not use. Each check runs in
a fresh interpreter, and a control run shows that the listing sees an import when one happens.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

OPTIONAL = (
    "pyarrow",
    "pandas",
    "inspect_ai",
    "zstandard",
    "opentelemetry",
    "ray",
    "dask",
    "distributed",
    "openai",
    "pytest",
    "_pytest",
    "hypothesis",
)

PROBE = """
import sys
{statement}
print("\\n".join(sorted(sys.modules)))
"""


def modules_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after running `statement`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(statement=statement)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def optional_among(modules: set[str]) -> list[str]:
    """The optional libraries (or their submodules) among `modules`."""
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in OPTIONAL))


@pytest.mark.parametrize(
    "statement",
    [
        "import toolscore",
        "import toolscore.cli.app",
        "from toolscore import load_specs, read_cases, read_outputs, score",
    ],
)
def test_importing_toolscore_pulls_in_no_optional_library(statement: str) -> None:
    assert optional_among(modules_after(statement)) == []


def test_the_listing_sees_an_optional_library_once_it_is_imported() -> None:
    assert "pytest" in optional_among(modules_after("import toolscore, pytest"))
