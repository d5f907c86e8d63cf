"""Text from files and agents made safe to print on a terminal.

A tool name, an argument or a tool's error message is whatever an agent (or a file) put
there; printed raw, an escape sequence in it could clear the screen, recolour the output,
retitle the window, or (with bidirectional overrides) make a line read other than it is.
Every terminal view passes such text through `printable`, which shows each control
character as a Python-style escape (`\\x1b`, `\\n`, `\\u202e`) instead of sending it. Rich
markup (`[red]`) is left as it is: `Text` objects and the consoles of `toolscore.cli.common`
never interpret it.
"""

from __future__ import annotations

from rich.text import Text

from toolscore.escape import printable

__all__ = ["printable", "safe_text"]


def safe_text(value: object, style: str = "") -> Text:
    """`printable(value)` as a rich `Text` (never read as markup) in `style`."""
    return Text(printable(value), style=style)
