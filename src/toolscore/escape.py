"""Text from files and agents made safe to print as one line.

A tool name, an argument or a tool's error message is whatever an agent (or a file) put
there; printed raw, an escape sequence in it could clear the screen, recolour the output,
retitle the window, or (with bidirectional overrides) make a line read other than it is, and
a newline would split a one-line error in two. `printable` shows each control character as a
Python-style escape (`\\x1b`, `\\n`, `\\u202e`) instead of sending it. It has no
dependencies, so that error messages (`toolscore.errors`) and every view can use it.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "["
    "\x00-\x1f\x7f-\x9f"  # C0 controls (escape, newline, ...), DEL and C1 controls
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional marks and overrides
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff"  # lone surrogates: a terminal cannot show them, encoding them fails
    "]"
)
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object) -> str:
    """`str(value)` with every control character (C0, DEL, C1), bidirectional control, line
    separator and lone surrogate written as an escape, so it prints as one inert line."""
    text = str(value)
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text
