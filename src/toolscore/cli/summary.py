"""`--summary auto|tables|plain|none`: how a command prints the summary of a run.

The summary is built once as neutral blocks (`report.terminal.summary_blocks`); this module
only picks the view. `auto` draws rich tables when the stream the summary goes to is a
terminal and plain aligned text otherwise (a pipe, a file, a CI log), so that piping the
output neither loads rich nor fills a file with box characters; `tables` asks for the rich
tables anyway, `plain` for the text, `none` for no summary at all. The lines a command
prints about where its results went, and why it fails, are plain text in every mode.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import click

from toolscore.escape import printable

if TYPE_CHECKING:
    from rich.console import Console

    from toolscore.report.layout import Block

F = TypeVar("F", bound=Callable[..., Any])
SUMMARY_MODES = ("auto", "tables", "plain", "none")
View = Literal["tables", "plain", "none"]


def summary_option(command: F) -> F:
    """`--summary auto|tables|plain|none`, default `auto`."""
    return click.option(
        "--summary",
        "summary_mode",
        type=click.Choice(SUMMARY_MODES),
        default="auto",
        show_default=True,
        help="How to print the summary: 'auto' draws tables on a terminal and plain text "
        "otherwise (a pipe, a file); 'tables' draws them anyway, 'plain' prints aligned text, "
        "'none' prints no summary (report files are still written, the exit status is the "
        "same).",
    )(command)


def chosen_view(mode: str, stream: Any) -> View:
    """The view `mode` means for `stream`: `auto` is tables on a terminal, else plain."""
    if mode == "auto":
        isatty = getattr(stream, "isatty", None)
        return "tables" if isatty is not None and isatty() else "plain"
    if mode not in ("tables", "plain", "none"):
        raise ValueError(f"unknown summary mode {mode!r}")
    return mode  # type: ignore[return-value]


class SummaryPrinter:
    """Prints a summary on stdout (or stderr) in the view its mode chose, and the plain
    lines that go with it. Rich is imported only when the view is `tables`."""

    def __init__(self, mode: str, err: bool = False) -> None:
        self.err = err
        self.view = chosen_view(mode, sys.stderr if err else sys.stdout)
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The rich console of the tables' view (made on first use)."""
        if self._console is None:
            from toolscore.cli.common import console  # noqa: PLC0415

            self._console = console(err=self.err)
        return self._console

    def blocks(self, blocks: Iterable[Block]) -> None:
        """Print summary blocks (nothing under `none`)."""
        if self.view == "tables":
            from toolscore.report.rich_view import print_blocks  # noqa: PLC0415 - rich

            print_blocks(self.console, blocks)
        elif self.view == "plain":
            from toolscore.report.plain_view import plain_lines  # noqa: PLC0415

            for line in plain_lines(blocks):
                click.echo(line, err=self.err)

    def line(self, text: object, fold: bool = False) -> None:
        """Print one line, made printable, in every view; `fold` lets the tables' view fold
        it at the terminal's width (as it always printed it), the others keep it whole."""
        if fold and self.view == "tables":
            self.console.print(printable(text))
        else:
            click.echo(printable(text), err=self.err)
