"""`toolscore lint`: check a spec (and cases) for problems before scoring with them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from toolscore.cli.common import input_errors
from toolscore.cli.options import env_option, tool_timeout_option
from toolscore.escape import printable
from toolscore.inputs.paths import check_inputs
from toolscore.run import environment

if TYPE_CHECKING:
    from toolscore.specs.loading import SpecSet
    from toolscore.state import AnyEnvironment as Environment


@click.command("lint")
@click.option("--specs", "specs_path", required=True, help="Spec file to check.")
@click.option(
    "--cases",
    "cases_path",
    help="Cases file to check against the spec; each case's plans are scored as an agent's "
    "output, and the agent that does nothing too.",
)
@env_option(
    "Also replay each plan against a store (as `score --env`): the spec's environment "
    "block, or FILE's (imports the tools module)."
)
@tool_timeout_option
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option(
    "--suggest-checks",
    is_flag=True,
    help="With --cases and --env: instead of linting, print for each case with a goal_state "
    "the state_checks that say what its goal changes, one JSON line a case.",
)
@input_errors
def lint_command(
    specs_path: str,
    cases_path: str | None,
    env_path: str | None,
    tool_timeout: float | None,
    strict: bool,
    suggest_checks: bool,
) -> None:
    """Check a spec (and cases) for problems before scoring with them: exit 1 on an error
    (on a warning too with --strict), 2 when a file cannot be read."""
    from toolscore.lint.checks import lint_files  # noqa: PLC0415 - only `lint` needs it

    if env_path is None and tool_timeout is not None:
        raise click.UsageError("--tool-timeout applies to replay: add --env")
    if suggest_checks and (env_path is None or cases_path is None):
        raise click.UsageError("--suggest-checks replays each case's goal: add --cases and --env")
    if cases_path is not None:
        check_inputs(("--cases", cases_path))

    def replayed_on(specs: SpecSet) -> Environment:
        assert env_path is not None
        return environment(specs, specs_path, env_path, tool_timeout)

    if suggest_checks:
        _print_suggestions(specs_path, cases_path or "", replayed_on)
        return
    findings = lint_files(specs_path, cases_path, replayed_on if env_path else None)
    out = sys.stdout
    for finding in findings:
        out.write(f"{printable(finding)}\n")
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    out.write(f"{errors} errors, {warnings} warnings\n")
    if errors or (strict and warnings):
        sys.exit(1)


def _print_suggestions(
    specs_path: str, cases_path: str, replayed_on: Callable[[SpecSet], Environment]
) -> None:
    """Print each case's suggested checks as one JSON line (control characters escaped)."""
    import orjson  # noqa: PLC0415

    from toolscore.lint.suggest import suggest_file  # noqa: PLC0415 - only this mode needs it

    out = sys.stdout
    for suggestion in suggest_file(specs_path, cases_path, replayed_on):
        out.write(orjson.dumps(suggestion.to_json()).decode() + "\n")


def register(group: click.Group) -> None:
    """Add `lint` to the `toolscore` group."""
    group.add_command(lint_command)
