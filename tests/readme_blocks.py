"""The README's code blocks and heredocs, read as the tests that run them need them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]


README = (ROOT / "README.md").read_text()


BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


HEREDOC = re.compile(r"cat > (\S+) <<'EOF'\n(.*?)\nEOF\n", re.S)


def blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README) if lang == language]


def heredocs() -> dict[str, str]:
    return {name: body + "\n" for name, body in HEREDOC.findall(README)}
