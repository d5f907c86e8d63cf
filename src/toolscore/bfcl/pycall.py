"""Read BFCL's prompting form, Python call text such as `[get_weather(city="Paris")]`.

The text is parsed with `ast` and only literals are read from it: strings, numbers, booleans,
`None`, and lists, tuples (as lists) and dicts with string keys made of them. Nothing is ever
evaluated (BFCL's own decoder evaluates arithmetic and lambdas, and turns a bare name into its
string). What the model wrote is never an error here, it is scored:

- empty text, `[]`, or text that does not start like a call (prose) is no call at all: the
  model abstained, and its text is kept as the response;
- text that starts like a call but does not parse is one call that fails to parse, named
  after the function the text starts with;
- a call whose arguments are not literals (a name, attribute access, a call, an expression),
  or that passes positional arguments (BFCL silently drops them), is a call that fails to
  parse, with the reason and the call's text.

Such a call is written to the outputs file with its text as `args` and the reason as
`error`: toolscore scores it `arguments_unparseable` (or `unknown_tool` when it has no name).
Code fences (with a language tag) and `<TOOLCALL>` tags around the calls are removed first.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

_CALL_START = re.compile(r"[\[(]?\s*(?P<name>[A-Za-z_][\w.]*)\s*\(")
_FENCE = re.compile(r"^```[A-Za-z0-9_+-]*[ \t]*\n?|\n?```$")
_TOOLCALL = re.compile(r"<TOOLCALL>(.*?)</TOOLCALL>", re.DOTALL)


@dataclass(frozen=True)
class CallText:
    """What a prompting-form answer says: the calls (as outputs-file call entries, a broken
    one with `args` holding its text and `error` the reason) and the text when it was not a
    call list."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    response: str | None = None

    @property
    def malformed(self) -> int:
        """How many of the calls could not be read."""
        return sum(1 for call in self.calls if "error" in call)


class NotLiteralError(ValueError):
    """An argument value that is not a literal; the message says what it is instead."""


def unwrap(text: str) -> str:
    """The call text without surrounding whitespace, code fences or `<TOOLCALL>` tags."""
    found = _TOOLCALL.search(text)
    body = found.group(1) if found else text
    body = body.strip()
    if body.startswith("```"):
        body = _FENCE.sub("", body)
    return body.strip("`\n\t ")


def parse_calls(text: str) -> CallText:
    """The calls a prompting-form answer makes (see the module docstring)."""
    body = unwrap(text)
    if body in ("", "[]", "()"):
        return CallText([], text if text.strip() else None)
    start = _CALL_START.match(body)
    if start is None:
        return CallText([], text)
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        reason = getattr(error, "msg", None) or str(error) or type(error).__name__
        return CallText([_broken(start.group("name"), body, f"not a Python call list: {reason}")])
    node = tree.body
    if isinstance(node, ast.Call):
        elements: list[ast.expr] = [node]
    elif isinstance(node, ast.List | ast.Tuple):
        elements = list(node.elts)
    else:
        return CallText([_broken(start.group("name"), body, "not a call or a list of calls")])
    return CallText([_call(element, body) for element in elements])


def _broken(name: str | None, text: str, reason: str) -> dict[str, Any]:
    return {"name": name, "args": text, "error": reason}


def _call(node: ast.expr, body: str) -> dict[str, Any]:
    text = ast.get_source_segment(body, node) or ast.unparse(node)
    if not isinstance(node, ast.Call):
        return _broken(None, text, f"{_what(node)} is not a call")
    name = _dotted(node.func)
    if name is None:
        return _broken(None, text, f"the function is {_what(node.func)}, not a name")
    if node.args:
        return _broken(
            name, text, "positional arguments: BFCL's functions are called with keywords"
        )
    args: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return _broken(name, text, "**arguments are not literal keyword arguments")
        if keyword.arg in args:
            return _broken(name, text, f"argument {keyword.arg!r} is given twice")
        try:
            args[keyword.arg] = literal(keyword.value)
        except NotLiteralError as error:
            return _broken(name, text, f"argument {keyword.arg!r}: {error}")
        except RecursionError:
            return _broken(name, text, f"argument {keyword.arg!r}: nested too deeply")
    return {"name": name, "args": args}


def _dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of attribute accesses on a name (BFCL's dotted tool names)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def literal(node: ast.expr) -> Any:
    """The JSON value a literal expression stands for; NotLiteralError for anything else."""
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _finite(value)
        raise NotLiteralError(f"{type(value).__name__} is not a JSON value")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = node.operand
        if (
            isinstance(operand, ast.Constant)
            and isinstance(operand.value, int | float)
            and not isinstance(operand.value, bool)
        ):
            value = operand.value
            return _finite(-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.List | ast.Tuple):
        return [literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[str, Any] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:
                raise NotLiteralError("** inside a dict is not a literal")
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise NotLiteralError("dict keys must be strings (JSON object keys)")
            result[key.value] = literal(item)
        return result
    raise NotLiteralError(f"{_what(node)} is not a literal value (it is never evaluated)")


def _finite(value: int | float) -> int | float:
    if isinstance(value, float) and not math.isfinite(value):
        raise NotLiteralError(f"{value} is not a finite number")
    return value


def _what(node: ast.AST) -> str:
    """A few words for an expression that is not a literal."""
    if isinstance(node, ast.Name):
        return f"the name {node.id!r}"
    if isinstance(node, ast.Attribute):
        return "attribute access"
    if isinstance(node, ast.Call):
        return "a call"
    if isinstance(node, ast.Set):
        return "a set"
    if isinstance(node, ast.BinOp | ast.BoolOp | ast.Compare | ast.UnaryOp):
        return "an expression"
    if isinstance(node, ast.Constant):
        return f"the constant {node.value!r}"
    return f"a {type(node).__name__}"
