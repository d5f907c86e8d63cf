"""The terminal summary as neutral data: tables and styled lines, with no rich in sight.

`report.terminal` decides what the summary shows and builds it from these types once; a view
decides only how it looks: `report.rich_view` draws rich tables for a terminal,
`report.plain_view` aligned plain text for a pipe or a file. So that a summary printed to a
file does not import rich at all, this module imports nothing beyond the standard library and
`toolscore.escape`.

Every text held here is already printable (`safe_line` and the cells built by `report.terminal`
pass agent-provided text through `printable`); the views never interpret markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolscore.escape import printable

Justify = Literal["left", "right"]


@dataclass(frozen=True)
class Line:
    """One styled line of the summary (or several, joined by newlines, printed as a block).

    `style` is a rich style name ("bold red") that only the rich view applies. `soft_wrap`
    False lets the rich view fold the text at the terminal's width (as the heading and the
    relaxations always were); True keeps it whole. The plain view never folds."""

    text: str
    style: str = ""
    soft_wrap: bool = True


def safe_line(value: object, style: str = "", soft_wrap: bool = True) -> Line:
    """`printable(value)` as a `Line`: text from files and agents made inert."""
    return Line(printable(value), style, soft_wrap)


@dataclass(frozen=True)
class Column:
    """A table's column: its header and which side its cells align to."""

    header: str
    justify: Justify = "left"


@dataclass
class Table:
    """A titled table of text cells, with an optional caption under it.

    `add_column` and `add_row` read as rich's do, so that the tables are built as they
    always were; a row shorter than the columns is padded with empty cells. `soft_wrap` is
    the rich view's print option, kept only so that its output stays as it was."""

    title: str
    columns: list[Column] = field(default_factory=list)
    rows: list[tuple[str, ...]] = field(default_factory=list)
    caption: str | None = None
    soft_wrap: bool = False

    def add_column(self, header: str, justify: Justify = "left") -> None:
        """Add a column (before any row)."""
        self.columns.append(Column(header, justify))

    def add_row(self, *cells: str) -> None:
        """Add a row of printable texts, padded with empty cells to the columns."""
        if len(cells) > len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)}")
        self.rows.append((*cells, *("" for _ in range(len(self.columns) - len(cells)))))


Block = Line | Table
"""What a summary is a sequence of."""
