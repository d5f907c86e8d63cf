"""Parse a spec or environment file (YAML or JSON) into plain data, safely and within bounds.

YAML is loaded with the safe constructor only (libyaml's parser where present, for speed),
and three things YAML allows are refused before any value is built, each as one error
naming the line: a key repeated in one mapping (YAML keeps the last silently), aliases that
would expand to more values than a spec could need (an "alias bomb" costs minutes to
validate), and nesting deeper than `MAX_DEPTH` (the validator walks specs recursively). A
recursive alias is refused too. JSON is read by orjson and held to the same depth, and a key
repeated in one JSON object is refused as in YAML (JSON readers differ on which they keep).
"""

from __future__ import annotations

import gc
import json
from typing import TYPE_CHECKING, Any, Final

import orjson

from toolscore.errors import SpecError
from toolscore.specs.cache import cached_document, keep_document

if TYPE_CHECKING:
    import yaml
    from yaml.nodes import MappingNode, Node

MAX_DEPTH: Final = 100
"""Deepest nesting of mappings and lists a spec file may have (a real one has under 20)."""
MAX_ALIAS_VALUES: Final = 100_000
"""How many values aliases may repeat in all, beyond those written out in the file."""

_STR: Final = "tag:yaml.org,2002:str"
_MERGE: Final = "tag:yaml.org,2002:merge"


def parse_document(content: bytes, source: str) -> Any:
    """The data of a spec file's content: JSON when `source` ends with `.json`, else YAML."""
    if source.endswith(".json"):
        try:
            data = orjson.loads(content)
        except orjson.JSONDecodeError as error:
            if "depth" in error.msg or "recursion" in error.msg:  # orjson's own bound, 1024
                raise _deep(source, error.lineno) from None
            raise SpecError(source, f"not valid JSON: {error}", line=error.lineno) from None
        _check_depth(data, source)
        _check_json_keys(content, source)
        return data
    return _load_yaml(content, source)


def parse_cached(content: bytes, source: str, cache: bool = True) -> Any:
    """`parse_document`'s data, taken from the cache of parsed specs when it holds this
    content (`specs.cache`), and kept there once parsed. An entry deeper than a spec may be
    is not one toolscore wrote: the content is parsed again."""
    kind = "json" if source.endswith(".json") else "yaml"
    if cache:
        found, data = cached_document(content, kind)
        if found:
            try:
                _check_depth(data, source)
            except SpecError:
                pass
            else:
                return data
    data = parse_document(content, source)
    if cache:
        keep_document(content, kind, data)
    return data


class _RepeatedKeyError(Exception):
    """Raised inside the stdlib's JSON parser to stop it at the first repeated key."""

    def __init__(self, key: str) -> None:
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> None:
    """Check one object's keys; the value is not kept (orjson built the document)."""
    if len(dict(pairs)) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKeyError(key)
            seen.add(key)


def _check_json_keys(content: bytes, source: str) -> None:
    """Refuse a key repeated in one JSON object. Called after orjson has accepted the
    document, so only a repeated key can fail here; the stdlib parser's hook sees each
    object's keys in order, which orjson does not show."""
    try:
        json.loads(content, object_pairs_hook=_unique_pairs)
    except _RepeatedKeyError as repeated:
        message = (
            f"duplicate key {repeated.key!r} in one object; JSON readers differ on which they keep"
        )
        raise SpecError(source, message, line=_repeated_key_line(content)) from None


def _repeated_key_line(content: bytes) -> int | None:
    """The line of the repeated key, from the YAML reader, which reads JSON documents too and
    knows where each key is; None where it cannot read this one (tabs, some escapes)."""
    try:
        _load_yaml(content, "")
    except SpecError as error:
        return error.line if "duplicate key" in error.message else None
    except Exception:  # JSON that YAML 1.1 reads otherwise: refused all the same, no line
        return None
    return None


def _deep(source: str, line: int | None = None) -> SpecError:
    return SpecError(source, f"nested deeper than {MAX_DEPTH} levels", line=line)


def _check_depth(data: Any, source: str) -> None:
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth == MAX_DEPTH:
                raise _deep(source)
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)


def safe_loader() -> type[yaml.SafeLoader]:
    """PyYAML's safe loader: libyaml's `CSafeLoader` where PyYAML was built with it (several
    times faster), else the pure-Python one. PyYAML is imported here, when a YAML file is
    read, not with the package."""
    import yaml  # noqa: PLC0415

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(content: bytes, source: str) -> Any:
    import yaml  # noqa: PLC0415 - see safe_loader

    loader = safe_loader()(content)
    collecting = gc.isenabled()
    gc.disable()  # a large spec makes many objects, none garbage yet: collecting is wasted
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, loader, source)
        return loader.construct_document(node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        if "maximum nesting depth" in problem:  # libyaml's own bound, deeper than ours
            raise _deep(source, line) from None
        raise SpecError(source, f"not valid YAML: {problem}", line=line) from None
    except RecursionError:  # the pure-Python composer, without libyaml, recurses per level
        raise _deep(source) from None
    finally:
        loader.dispose()
        if collecting:
            gc.enable()


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


def _check_nodes(root: Node, loader: yaml.SafeLoader, source: str) -> None:
    """Refuse duplicate keys, deep nesting, recursive aliases and alias bombs, walking each
    distinct node once (an alias is the same node object again)."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode  # noqa: PLC0415

    size: dict[int, int] = {}  # values a node stands for, aliases expanded
    depth: dict[int, int] = {}  # collections nested in a node, itself included
    entered: set[int] = set()
    stack: list[tuple[Node, list[Node] | None]] = [(root, None)]  # children: when leaving
    while stack:
        node, children = stack.pop()
        key = id(node)
        if children is not None:
            size[key] = 1 + sum(size[id(child)] for child in children)
            depth[key] = 1 + max((depth[id(child)] for child in children), default=0)
            if depth[key] > MAX_DEPTH:
                raise _deep(source, _line(node))
            continue
        if key in size:
            continue
        if key in entered:  # entered, not left: this node is inside itself
            message = "an alias refers to a value that contains it (a recursive value)"
            raise SpecError(source, message, line=_line(node))
        if isinstance(node, ScalarNode):
            size[key], depth[key] = 1, 0
            continue
        if isinstance(node, MappingNode):
            _check_keys(node, loader, source)
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, SequenceNode):
            children = list(node.value)
        else:
            children = []
        entered.add(key)
        stack.append((node, children))
        stack.extend((child, None) for child in reversed(children))
    repeated = size[id(root)] - len(size)
    if repeated > MAX_ALIAS_VALUES:
        message = (
            f"aliases repeat {repeated:,} values, more than the {MAX_ALIAS_VALUES:,} a spec "
            "may repeat (an alias bomb?)"
        )
        raise SpecError(source, message)


def _check_keys(node: MappingNode, loader: yaml.SafeLoader, source: str) -> None:
    from yaml.nodes import ScalarNode  # noqa: PLC0415

    first: dict[Any, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
            continue  # a merge (`<<`) may be overridden; a collection key fails construction
        key = key_node.value if key_node.tag == _STR else loader.construct_object(key_node)
        try:
            seen = first.get(key)
        except TypeError:
            continue
        if seen is not None:
            message = f"duplicate key {key!r} (first at line {seen}); YAML would keep only the last"
            raise SpecError(source, message, line=_line(key_node))
        first[key] = _line(key_node)
