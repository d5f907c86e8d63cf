"""`import toolscore` and a plain `toolscore score` import none of the optional libraries.

The integrations (pytest, Inspect, OpenTelemetry, Parquet, Ray) each import their library
only in the command or function that needs it; a team that installs toolscore alone must be
able to import it, and start-up must not pay for what a run does not use. Each check runs in
a fresh interpreter, and a control run shows that the listing sees an import when one happens.
"""

from __future__ import annotations

import pytest

from imported_modules import modules_after, optional_among


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
