"""Write a draft as YAML with comments: a small emitter for the one shape a spec has
(tools, their arguments, rule nodes), scalars written by `yaml.safe_dump` so that any name,
description or value reads back as written (the output round-trips through
`yaml.safe_load`). YAML loaders drop comments; the reasons starting with `draft:` carry the
same guesses as data."""

from __future__ import annotations

import re
from typing import Any

from toolscore.drafting.draft import Draft, DraftRule, DraftTool
from toolscore.escape import printable

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDENT = "  "


def emit(draft: Draft) -> str:
    """The draft as a YAML document."""
    lines = [line for note in draft.notes for line in _comments([note], "") or ["#"]]
    lines += ["version: 1", "tools:" if draft.tools else "tools: {}"]
    for tool in draft.tools:
        lines += _tool(tool, 1)
    return "\n".join(lines) + "\n"


def _tool(tool: DraftTool, depth: int) -> list[str]:
    pad = _INDENT * depth
    lines = _comments(tool.comments, pad)
    lines.append(f"{pad}{key(tool.name)}:")
    inner = pad + _INDENT
    lines.append(f"{inner}version: 1")
    if tool.description is not None:
        lines.append(f"{inner}description: {scalar(tool.description)}")
    if not tool.args:
        lines.append(f"{inner}args: {{}}")
        return lines
    lines.append(f"{inner}args:")
    for name, rule in tool.args.items():
        lines += _rule(name, rule, depth + 2)
    return lines


def _rule(name: str, rule: Any, depth: int) -> list[str]:
    """An argument (or `items`) and its rule: flow style when it holds no nested rule,
    else a block with `args`/`items` below."""
    pad = _INDENT * depth
    if not isinstance(rule, DraftRule):
        return [f"{pad}{key(name)}: {flow(rule)}"]
    lines = _comments(rule.comments, pad)
    nested = (isinstance(rule.node.get("args"), dict) and rule.node["args"]) or isinstance(
        rule.node.get("items"), DraftRule
    )
    if not nested:
        plain = rule.plain()
        written = flow(plain["kind"]) if plain.keys() == {"kind"} else flow(plain)
        return [*lines, f"{pad}{key(name)}: {written}"]
    lines.append(f"{pad}{key(name)}:")
    inner = pad + _INDENT
    for option, value in rule.node.items():
        if option == "args":
            lines.append(f"{inner}args:")
            for sub, subrule in value.items():
                lines += _rule(sub, subrule, depth + 2)
        elif option == "items":
            lines += _rule("items", value, depth + 1)
        else:
            lines.append(f"{inner}{key(option)}: {flow(value)}")
    return lines


def _comments(comments: list[str], pad: str) -> list[str]:
    return [f"{pad}# {line}" for comment in comments for line in _one_line(comment)]


def _one_line(comment: str) -> list[str]:
    """A comment as lines without line breaks (a YAML comment ends at one), each with its
    other control characters escaped (YAML refuses them even in a comment)."""
    parts = re.split(r"[\r\n\x85\u2028\u2029]+", comment)
    return [printable(part.strip()) for part in parts if part.strip()]


def key(name: str) -> str:
    """A mapping key: plain when it reads back as itself, else quoted."""
    import yaml  # noqa: PLC0415 - only `spec init` writes YAML

    if _PLAIN_KEY.fullmatch(name) and yaml.safe_load(name) == name:
        return name
    return scalar(name)


def scalar(value: Any) -> str:
    """A scalar on one line: strings double-quoted (escapes keep it on one line), other
    values as `yaml.safe_dump` writes them."""
    import yaml  # noqa: PLC0415 - only `spec init` writes YAML

    if isinstance(value, str) and _PLAIN_VALUE.fullmatch(value) and yaml.safe_load(value) == value:
        return value
    if isinstance(value, str):
        text = yaml.safe_dump(value, default_style='"', width=float("inf"), allow_unicode=True)
    else:
        text = yaml.safe_dump(value, width=float("inf"), allow_unicode=True)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def flow(value: Any) -> str:
    """Any JSON-like value in flow style, on one line."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key(str(k))}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    return scalar(value)
