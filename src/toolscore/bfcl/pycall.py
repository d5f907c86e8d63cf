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

- a call whose values no toolscore file can hold (a lone surrogate, a number no double
  holds, lists and objects nested deeper than `jsonsafe.MAX_DEPTH`) is a call that fails to
  parse too, with the reason.

Such a call is written to the outputs file with its text as `args` and the reason as
`error`: toolscore scores it `arguments_unparseable` (or `unknown_tool` when it has no name).
Code fences (with a language tag) and `<TOOLCALL>` tags around the calls are removed first;
lone surrogates in the text are written as `\\udXXX` escapes (inside a string literal that
still means the surrogate, which the value check then names).

Reading takes time linear in the text's length: it is parsed once, and each call's text is
cut from it by the offsets `ast` records (`ast.get_source_segment` splits the whole text
again for every call).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from toolscore.bfcl.jsonsafe import escape_surrogates, json_problem, pointer

_CALL_START = re.compile(r"[\[(]?\s*(?P<name>[A-Za-z_][\w.]*)\s*\(")
_FENCE = re.compile(r"^```[A-Za-z0-9_+-]*[ \t]*\n?|\n?```$")
_OPEN, _CLOSE = "<TOOLCALL>", "</TOOLCALL>"
_NEWLINE = re.compile(rb"\r\n|\r|\n")
"""Line ends as Python's tokenizer counts them (what `ast` line numbers count)."""


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
    body = text
    start = text.find(_OPEN)
    if start >= 0:
        end = text.find(_CLOSE, start + len(_OPEN))
        if end >= 0:
            body = text[start + len(_OPEN) : end]
    body = body.strip()
    if body.startswith("```"):
        body = _FENCE.sub("", body)
    return body.strip("`\n\t ")


def parse_calls(text: str) -> CallText:
    """The calls a prompting-form answer makes (see the module docstring)."""
    text = escape_surrogates(text)
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
    source = _Source(body)
    return CallText([_call(element, source) for element in elements])


class _Source:
    """The parsed text, from which each call's own text is cut by its offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._data = b""
        self._starts: list[int] = []

    def segment(self, node: ast.expr) -> str:
        """The text of one node: `ast` gives lines and UTF-8 byte offsets within them."""
        if node.end_lineno is None or node.end_col_offset is None:  # pragma: no cover
            return ast.unparse(node)  # parsed nodes always have positions
        if not self._starts:  # the line starts, found once for all the calls
            self._data = self.text.encode("utf-8")
            self._starts = [0, *(found.end() for found in _NEWLINE.finditer(self._data))]
        start = self._starts[node.lineno - 1] + node.col_offset
        end = self._starts[node.end_lineno - 1] + node.end_col_offset
        return self._data[start:end].decode("utf-8")


def _broken(name: str | None, text: str, reason: str) -> dict[str, Any]:
    return {"name": name, "args": text, "error": escape_surrogates(reason)}


def _call(node: ast.expr, source: _Source) -> dict[str, Any]:
    text = source.segment(node)
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
    problem = json_problem(args)
    if problem is not None:
        path, reason = problem
        where = f" at {pointer(path[1:])}" if len(path) > 1 else ""
        return _broken(name, text, f"argument {path[0]!r}{where}: {reason}")
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
    """The JSON value a literal expression stands for; NotLiteralError for anything else.

    Numbers are returned as they are, non-finite ones included: `json_problem` judges them
    with every other value no toolscore file can hold.
    """
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        raise NotLiteralError(f"{type(value).__name__} is not a JSON value")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = node.operand
        if (
            isinstance(operand, ast.Constant)
            and isinstance(operand.value, int | float)
            and not isinstance(operand.value, bool)
        ):
            value = operand.value
            return -value if isinstance(node.op, ast.USub) else value
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
        shown = repr(node.value)
        return f"the constant {shown if len(shown) <= 40 else shown[:37] + '...'}"
    return f"a {type(node).__name__}"
