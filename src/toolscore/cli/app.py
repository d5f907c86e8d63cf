"""The `toolscore` command line: the root group, `--version`, and the registry of commands.

Each command lives in a module of its own (`cli/score.py`, `cli/lint.py`, ...), imported
only when it is asked for. Commands parse options, call the library, and turn its input
errors into one-line messages with exit status 2. Exit 0 means scoring completed; 1 means a
threshold was not met, or (`score`) some case had no output line and `--missing exclude`
was not given.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from toolscore._version import __version__
from toolscore.build import build_kind
from toolscore.cli.common import console, input_errors


def _show_version(context: click.Context, _: click.Parameter, value: bool) -> None:
    """`--version`: the version and which build runs (compiled or pure-python)."""
    if value and not context.resilient_parsing:
        click.echo(f"toolscore, version {__version__} ({build_kind()})")
        context.exit()


LAZY_COMMANDS = {
    "score": "toolscore.cli.score",
    "lint": "toolscore.cli.lint",
    "replay": "toolscore.cli.replay",
    "import": "toolscore.cli.bfcl",
    "runs": "toolscore.cli.store",
    "show": "toolscore.cli.store",
    "rescore": "toolscore.cli.store",
    "compare": "toolscore.cli.store",
    "spec-diff": "toolscore.cli.store",
    "store": "toolscore.cli.store",
    "label": "toolscore.cli.label",
    "disagreements": "toolscore.cli.calibration",
    "batches": "toolscore.cli.calibration",
    "labels": "toolscore.cli.calibration",
    "calibrate": "toolscore.cli.calibration",
    "report": "toolscore.cli.report",
    "join": "toolscore.cli.join",
    "audit": "toolscore.cli.audit",
    "suggest": "toolscore.cli.suggest",
    "coverage": "toolscore.cli.coverage",
    "blame": "toolscore.cli.blame",
    "spec": "toolscore.cli.spec",
    "schema": "toolscore.cli.schema",
}
"""The commands other modules add (with their `register`), and the module of each."""


class _LazyGroup(click.Group):
    """The `toolscore` group: a command of `LAZY_COMMANDS` is registered, its module
    imported, only when it is asked for, so that `toolscore score` does not import the
    results store, calibration or BFCL code (nor what they import), and `--version` not
    even the scorer."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            wanted = LAZY_COMMANDS.get(cmd_name)
            # An unknown name registers them all: click's "Did you mean" looks among them.
            for module in [wanted] if wanted else sorted(set(LAZY_COMMANDS.values())):
                importlib.import_module(module).register(self)
        return self.commands.get(cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and the build (compiled or pure-python), and exit.",
)
def cli() -> None:
    """Score what an LLM agent did with its tools against what a correct agent would have done."""


def example_dir() -> Path:
    """The bundled support-desk example (installed with the package)."""
    from importlib import resources  # noqa: PLC0415 - only the demo and tests need it

    return Path(str(resources.files("toolscore") / "examples" / "support"))


@cli.command("demo")
@input_errors
def demo_command() -> None:
    """Score the bundled support-desk example three ways and show why they differ."""
    from toolscore.cli.demo import run_demo  # noqa: PLC0415 - only the demo needs it

    run_demo(console(), example_dir(), __version__)


def main() -> None:
    """Entry point of the `toolscore` script."""
    cli(prog_name="toolscore")
