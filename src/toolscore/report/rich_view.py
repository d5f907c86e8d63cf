"""The summary drawn with rich for a terminal: boxed tables, bold and coloured lines.

It turns `report.layout`'s neutral blocks into rich renderables and prints them as the
summary always printed (a test compares the two views' cells). Only this view imports
rich, so that a summary written to a pipe or a file never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from toolscore.report.layout import Block, Line, Table


def rich_table(table: Table) -> RichTable:
    """A neutral table as a rich one: title on the left, columns justified as declared."""
    drawn = RichTable(title=table.title, title_justify="left")
    for column in table.columns:
        drawn.add_column(column.header, justify=column.justify)
    for row in table.rows:
        drawn.add_row(*row)
    if table.caption is not None:
        drawn.caption = table.caption
    return drawn


def rich_text(line: Line) -> Text:
    """A neutral line as a rich `Text` in its style (never read as markup)."""
    return Text(line.text, style=line.style)


def print_blocks(console: Console, blocks: Iterable[Block]) -> None:
    """Print each block on `console`, a table boxed and a line in its style."""
    for block in blocks:
        if isinstance(block, Table):
            console.print(rich_table(block), soft_wrap=block.soft_wrap)
        else:
            console.print(rich_text(block), soft_wrap=block.soft_wrap)
