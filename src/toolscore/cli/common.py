"""Command groups of the `toolscore` command line, one module each.

Each module provides `register(group)`, which adds its commands to the `toolscore` group.
What every command shares lives here: turning the library's input errors into one line on
stderr with exit status 2 (and its option errors into usage errors), and the console the
readable output goes to.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from toolscore.errors import InputError, OptionsError, ReplayInterrupted
from toolscore.escape import printable

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])
NOTES_SHOWN = 5
"""How many notes of an import the command prints; the rest are in the files it wrote."""


def input_errors(command: F) -> F:
    """Turn the library's input errors into one line on stderr and exit status 2, its
    option errors into click's usage errors (exit status 2 too), and an interrupted replay
    into one line saying where, and exit status 130."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except OptionsError as error:
            if error.option is not None:
                raise click.BadParameter(error.message, param_hint=error.option) from None
            raise click.UsageError(error.message) from None
        except InputError as error:
            click.echo(f"toolscore: error: {printable(error)}", err=True)
            sys.exit(2)
        except ReplayInterrupted as stop:
            click.echo(f"toolscore: {printable(stop)}", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


def echo_written(written: Sequence[object], notes: Sequence[str] = ()) -> None:
    """Print an import's first notes (the count of the others, which the last file written
    holds) and the files it wrote."""
    for note in notes[:NOTES_SHOWN]:
        click.echo(printable(f"note: {note}"))
    if len(notes) > NOTES_SHOWN:
        click.echo(f"... {len(notes) - NOTES_SHOWN} more notes in {written[-1]}")
    click.echo("wrote " + ", ".join(str(path) for path in written))


def console(err: bool = False) -> Console:
    """A console on stdout (or stderr) at least 100 columns wide, so tables do not fold.

    It never reads text as rich markup or emoji codes, so that `[red]` or `:x:` in a name
    prints as written (control characters are `report.printable`'s job). Rich is imported
    here, when something is printed with it, not when a command starts.
    """
    from rich.console import Console  # noqa: PLC0415

    stream = sys.stderr if err else sys.stdout
    return Console(
        file=stream,
        soft_wrap=False,
        width=max(100, Console(file=stream).width),
        markup=False,
        emoji=False,
        highlight=False,
    )
