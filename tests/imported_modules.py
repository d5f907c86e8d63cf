"""Which modules a fresh interpreter has imported after a statement or a command, and which
of them are heavy or optional."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from toolscore.cli.app import cli

try:
    cli.main(sys.argv[2:], prog_name="toolscore", standalone_mode=False)
finally:
    with open(sys.argv[1], "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
"""


def imported(tmp_path: Path, *args: str) -> set[str]:
    """The modules `toolscore ARGS` imported, run in a fresh interpreter."""
    listing = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(listing), *args],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return set(listing.read_text().split())


def found(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules among `modules` that are one of `names` or inside one of them."""
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


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
    "mcp",
    "anthropic",
    "google",
    "pytest",
    "_pytest",
    "hypothesis",
)


STATEMENT_PROBE = """
import sys
{statement}
print("\\n".join(sorted(sys.modules)))
"""


def modules_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after running `statement`."""
    done = subprocess.run(
        [sys.executable, "-c", STATEMENT_PROBE.format(statement=statement)],
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
