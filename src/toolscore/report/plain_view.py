"""The summary as plain text, for a pipe or a file: no box, no colour, no folding.

A table is its title on a line, then its header and rows with the columns aligned by
spaces (right-justified where the terminal's table right-justifies), then its caption; a
line is its text. Long values stay whole, for grep and for copying. Nothing here imports
rich.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator

from toolscore.report.layout import Block, Table

GAP = "  "
"""What separates two columns."""


def cell_width(text: str) -> int:
    """The columns `text` takes on a terminal: wide East Asian characters take two,
    combining marks none (so that a column of CJK names still lines up)."""
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * (width - cell_width(text))
    return fill + text if right else text + fill


def table_lines(table: Table) -> list[str]:
    """A table as plain lines: title, header, rows (trailing spaces trimmed), caption."""
    grid = [tuple(column.header for column in table.columns), *table.rows]
    widths = [max(cell_width(row[i]) for row in grid) for i in range(len(table.columns))]
    right = [column.justify == "right" for column in table.columns]
    lines = [table.title]
    for row in grid:
        cells = (_pad(cell, w, r) for cell, w, r in zip(row, widths, right, strict=True))
        lines.append(GAP.join(cells).rstrip())
    if table.caption is not None:
        lines.append(table.caption)
    return lines


def plain_lines(blocks: Iterable[Block]) -> Iterator[str]:
    """Each block as plain lines; a table is set apart by an empty line before it and
    before the line that follows it."""
    after_table = False
    for block in blocks:
        if isinstance(block, Table):
            yield ""
            yield from table_lines(block)
            after_table = True
            continue
        if after_table:
            yield ""
        yield from block.text.split("\n")
        after_table = False
