"""A side rules file: a native spec whose tools come from a file of tool definitions
(`definitions: tools.json`), adding or overriding rules per tool and argument without
touching the list sent to the model (docs/formats.md 2.5).

Its `tools` entries may only name tools and arguments the definitions have (anything else
is a problem naming the side file's field). The two files are bundled into one document
(`Bundle.content`), whose sha256 is the spec's: it covers both files, and it is what a
results store keeps, so that a stored run's spec can be read again without either file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from toolscore.core.rules import Rule, RuleError, compile_rule
from toolscore.core.values import suggest
from toolscore.errors import SpecError
from toolscore.specs.fields import ToolFields, native_field
from toolscore.specs.parsing import parse_document
from toolscore.specs.problems import TOOL_KEYS, Problems, version_problem

DEFINITIONS_KEY = "definitions"
"""The top-level key of a native spec naming its definitions file."""
_MARK = b'{"toolscore_bundle":'


@dataclass(frozen=True)
class Bundle:
    """A side rules file and its definitions file, parsed, and their bundled bytes."""

    rules: Mapping[str, Any]
    rules_source: str
    definitions: Any
    definitions_source: str
    content: bytes
    sha256: str


def bundle_of(
    source: str,
    content: bytes,
    data: Mapping[str, Any],
    definitions_source: str,
    read: tuple[bytes, Any],
) -> Bundle:
    """The bundle of the side rules file `source` (its bytes and data) and the definitions
    file it names (read: its bytes and data)."""
    import hashlib  # noqa: PLC0415

    definitions_content, definitions = read
    document = {
        "toolscore_bundle": 1,
        "rules": {"file": source, "text": _text(content, source)},
        "definitions": {
            "file": definitions_source,
            "text": _text(definitions_content, definitions_source),
        },
    }
    bundled = orjson.dumps(document)
    sha256 = hashlib.sha256(bundled).hexdigest()
    return Bundle(data, source, definitions, definitions_source, bundled, sha256)


def _text(content: bytes, source: str) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError(source, "must be UTF-8 text beside a side rules file") from None


def stored_bundle(content: bytes, note: str) -> Bundle | None:
    """The bundle a results store kept (None for a spec file's own bytes); `note` is added
    to both file names in errors."""
    if not content.startswith(_MARK):
        return None
    import hashlib  # noqa: PLC0415

    try:
        document = orjson.loads(content)
        files = [(document[key]["file"], document[key]["text"]) for key in ("rules", "definitions")]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        raise SpecError(f"<stored spec>{note}", "a stored bundle that cannot be read") from None
    parts = []
    for name, text in files:
        try:
            parts.append((f"{name}{note}", parse_document(text.encode("utf-8"), name)))
        except SpecError as error:
            raise SpecError(f"{name}{note}", error.message, line=error.line) from None
    (rules_source, rules), (definitions_source, definitions) = parts
    if not isinstance(rules, Mapping):
        raise SpecError(rules_source, "must hold a mapping")
    sha256 = hashlib.sha256(content).hexdigest()
    return Bundle(rules, rules_source, definitions, definitions_source, content, sha256)


@dataclass(frozen=True)
class SideTool:
    """What a side rules file says of one tool: its version, description, and the rules of
    the arguments it overrides."""

    name: str
    version: Any
    description: Any
    overrides: dict[str, Rule]


def side_tools(
    node: Any,
    arguments: Mapping[str, Mapping[str, Any]],
    located: Mapping[str, ToolFields],
    problems: Problems,
    definitions_source: str,
) -> Iterator[SideTool]:
    """The side rules file's `tools` entries; `arguments` are the definitions' tools (those
    that loaded) with their arguments' rules, `located` every tool the definitions name."""
    if node is None:
        return
    if not isinstance(node, Mapping):
        problems.add("tools", f"must be a mapping of tool names (of {definitions_source}) to rules")
        return
    for name, entry in node.items():
        where = f"tools.{name}"
        if name not in located:
            known = ", ".join(located)
            message = f"{name!r} is not a tool of {definitions_source} (tools: {known})"
            problems.add(where, f"{message}{suggest(str(name), list(located))}")
            continue
        if not problems.entry(where, entry, TOOL_KEYS, "a mapping with 'args' and/or 'version'"):
            continue
        existing = arguments.get(name)
        if existing is None:
            continue  # the definition did not load: its own problem says why
        problem = version_problem(entry.get("version"))
        if problem:
            problems.add(f"{where}.version", problem)
        args = entry.get("args") or {}
        if not isinstance(args, Mapping):
            problems.add(f"{where}.args", "must be a mapping of argument names to rules")
            continue
        overrides: dict[str, Rule] = {}
        for argument, rule in args.items():
            if argument not in existing:
                known = ", ".join(existing) or "none"
                message = (
                    f"{argument!r} is not an argument of {name!r} in {definitions_source} "
                    f"(arguments: {known}){suggest(str(argument), list(existing))}"
                )
                problems.add(f"{where}.args.{argument}", message)
                continue
            try:
                overrides[str(argument)] = compile_rule(rule, (str(argument),))
            except RuleError as error:
                problems.add(native_field(str(name), error.path), error.message)
        yield SideTool(str(name), entry.get("version"), entry.get("description"), overrides)
