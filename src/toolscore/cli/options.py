"""The command-line options several commands declare alike, each written once.

A command that takes one of these means the same by it as every other: the same flag, type,
default and help, so that `--help` reads alike and a change reaches them all. This module
imports only click and the spec loader (`--missing` loads its policies when used), so that
the commands of `toolscore score` can use it without importing the results store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from toolscore.specs.loading import MAX_TIMEOUT, SPEC_ENVIRONMENT

F = TypeVar("F", bound=Callable[..., Any])


def env_option(help_text: str, default: str | None = None) -> Callable[[F], F]:
    """`--env [FILE]`: the environment to replay calls against, the spec's own block when
    given without a file; `default` is what no `--env` means (None: replay nothing)."""
    return click.option(
        "--env",
        "env_path",
        is_flag=False,
        flag_value=SPEC_ENVIRONMENT,
        default=default,
        metavar="[FILE]",
        help=help_text,
    )


def missing_option(help_text: str, default: str | None = None) -> Callable[[F], F]:
    """`--missing fail|exclude`: what a case with no output line counts as; `default` is
    what no `--missing` means (None: as the run being read did)."""
    from toolscore.inputs.missing import MISSING_POLICIES  # noqa: PLC0415 - its commands only

    extra: dict[str, Any] = {} if default is None else {"default": default, "show_default": True}
    return click.option("--missing", type=click.Choice(MISSING_POLICIES), help=help_text, **extra)


def tool_timeout_option(command: F) -> F:
    """`--tool-timeout SECONDS`: how long each replayed tool call may run."""
    return click.option(
        "--tool-timeout",
        type=click.FloatRange(0, MAX_TIMEOUT, min_open=True),
        metavar="SECONDS",
        help="How long each replayed tool call may run (overrides the environment's `timeout`; "
        "default 10).",
    )(command)


def db_option(command: F) -> F:
    """`--db PATH`: which results store (default $TOOLSCORE_DB, else ./.toolscore/results.db)."""
    return click.option(
        "--db",
        "db_path",
        metavar="PATH",
        help="Results store (default: $TOOLSCORE_DB, else ./.toolscore/results.db).",
    )(command)


def json_option(command: F) -> F:
    """`--json`: print JSON on stdout instead of tables."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")(command)


def show_failures_option(command: F) -> F:
    """`--show-failures N`: how many failing cases a run's summary prints."""
    return click.option(
        "--show-failures",
        default=10,
        show_default=True,
        type=click.IntRange(0),
        help="How many failing cases to print with their mismatches.",
    )(command)


def refresh_rubrics_option(command: F) -> F:
    """`--refresh-rubrics`: ask remote rubrics again instead of using the stored judgment."""
    return click.option(
        "--refresh-rubrics",
        is_flag=True,
        help="Ask judge and similarity rubrics again even where the results store keeps their "
        "judgment (the new one replaces it).",
    )(command)


def outputs_out_option(command: F) -> F:
    """`--out FILE`: where an importer of a benchmark's results writes the outputs file."""
    return click.option(
        "--out", "out_path", required=True, help="The outputs file (JSON Lines) to write."
    )(command)
