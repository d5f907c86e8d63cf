"""Load and validate spec files: the native YAML/JSON format and OpenAI-style tool lists.

A spec set says, per tool and per argument, which differences are harmless. It is checked
completely when loaded, so that scoring never meets a broken rule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolscore.core.arguments import value_problem
from toolscore.core.forbid import by_tool
from toolscore.core.model import MISSING, Forbid
from toolscore.core.rules import ListRule, ObjectRule, Rule, RuleError, compile_rule
from toolscore.core.rules.strings import holds_pattern
from toolscore.core.values import show, suggest
from toolscore.errors import SpecError
from toolscore.rubrics.spec import Rubric, RubricSpecError, RubricUse, parse_rubric, rubric_uses
from toolscore.specs.fields import RulePath, ToolFields, native_field
from toolscore.specs.forbid import spec_forbid
from toolscore.specs.parsing import parse_cached

RELAXATIONS = ("extra_calls", "unknown_args", "retries")
"""What a relaxation may `allow`."""
TOP_KEYS = ("version", "tools", "relax", "environment", "rubrics", "forbid")
"""The keys of a native spec; any other is an error (the editor schemas list these too)."""
TOOL_KEYS = ("version", "args", "description")
"""The keys of a tool of a native spec."""
RELAX_KEYS = ("allow", "tools", "reason")
"""The keys of a relaxation."""
DEFAULT_TIMEOUT = 10.0
"""Seconds a replayed tool call (or a setup statement) may run when `environment.timeout`
does not say."""
MAX_TIMEOUT = 86_400.0
SPEC_ENVIRONMENT = "spec"
"""What an environment path (`--env` given without a file) means: the spec file's own
`environment` block."""


@dataclass(frozen=True, slots=True)
class Relaxation:
    """A declared exception to failing closed, with the reason it is harmless."""

    allow: str
    tools: tuple[str, ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        """The relaxation as reports list it."""
        return {"allow": self.allow, "tools": list(self.tools), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its spec version and the rule for its arguments (an object rule)."""

    name: str
    version: str | int | None
    args: ObjectRule
    description: str | None = None


@dataclass(frozen=True)
class SpecSet:
    """Every tool's rules, the relaxations in force, and where they came from."""

    tools: Mapping[str, ToolSpec]
    relaxations: tuple[Relaxation, ...] = ()
    version: str | None = None
    source: str = "<specs>"
    sha256: str = ""
    environment: Mapping[str, Any] | None = None
    """The `environment` block (database, tool implementations) for state checks, as written;
    it is only read, and its tool module only imported, when the user asks for state checks."""
    rubrics: Mapping[str, Rubric] = field(default_factory=dict)
    """Every rubric by name: the `rubrics` map's and the inline ones (named `tool.argument`)."""
    rubric_uses: Mapping[str, tuple[RubricUse, ...]] = field(default_factory=dict)
    """Per tool, its text arguments that have a rubric (tools without any are left out)."""
    tool_list: bool = False
    """True for an OpenAI-style tools list (docs/formats.md 2.5), which has no version
    label, relaxations or environment: only each tool's `x-version`."""
    fields: Mapping[str, ToolFields] = field(default_factory=dict)
    """For a tools list, where each tool's rules are declared in the file (`rule_field`)."""
    forbid: tuple[Forbid, ...] = ()
    """The calls no case may make (the spec's `forbid`), whatever its plans say."""
    rules: Mapping[str, ObjectRule] = field(init=False)
    lowercase_rules: Mapping[str, ObjectRule] = field(init=False)
    extra_ok: frozenset[str] = field(init=False)
    retries_ok: frozenset[str] = field(init=False)
    """The tools whose retried calls a `retries` relaxation excuses (`core.retries`)."""
    forbidden: Mapping[str, tuple[Forbid, ...]] = field(init=False)
    """`forbid` by tool: a call to a tool without entries costs one lookup."""
    has_patterns: bool = field(init=False)
    """Whether some argument has a `pattern` rule, whose searches run under a time limit
    (scoring installs its alarm once a batch then, `engines.batch`)."""

    def __post_init__(self) -> None:
        lenient = {t for r in self.relaxations if r.allow == "unknown_args" for t in r.tools}
        rules = {
            name: replace(tool.args, allow_unknown=True) if name in lenient else tool.args
            for name, tool in self.tools.items()
        }
        object.__setattr__(self, "rules", rules)
        lowered = {name: rule.lowercased() for name, rule in rules.items()}
        object.__setattr__(self, "lowercase_rules", lowered)
        extra = {t for r in self.relaxations if r.allow == "extra_calls" for t in r.tools}
        object.__setattr__(self, "extra_ok", frozenset(extra))
        retried = {t for r in self.relaxations if r.allow == "retries" for t in r.tools}
        object.__setattr__(self, "retries_ok", frozenset(retried))
        object.__setattr__(self, "forbidden", by_tool(self.forbid))
        patterns = any(holds_pattern(rule) for rule in rules.values())
        object.__setattr__(self, "has_patterns", patterns)

    def rule_field(self, tool: str, path: RulePath = ()) -> str:
        """The field naming the rule at `path` of `tool`'s arguments in messages: its path
        in a native spec (`tools.refund.args.amount`), where it is declared in a tools list
        (`[0].function.parameters.properties.amount`)."""
        located = self.fields.get(tool)
        return native_field(tool, path) if located is None else located.field(path)

    def describe(self) -> dict[str, Any]:
        """The provenance block of a report: version label, content hash, tool versions, and
        the version of each rubric in use when some argument has one."""
        described: dict[str, Any] = {
            "version": self.version,
            "sha256": self.sha256,
            "tools": {name: tool.version for name, tool in self.tools.items()},
        }
        used = sorted({use.rubric for uses in self.rubric_uses.values() for use in uses})
        if used:
            described["rubrics"] = {name: self.rubrics[name].version for name in used}
        return described


class _Problems:
    """Collects spec problems so that `lint` can show them all and loading can raise the first."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.errors: list[SpecError] = []

    def add(self, where: str, message: str) -> None:
        self.errors.append(SpecError(self.source, message, field=where))

    def known_keys(self, node: Mapping[Any, Any], keys: tuple[str, ...], where: str = "") -> None:
        """A problem for each key of the mapping `node` (at `where`) that is not one of
        `keys`, with the nearest valid name suggested for a typo."""
        for key in node:
            if key not in keys:
                at = f"{where}.{key}" if where else str(key)
                self.add(at, f"unknown key{suggest(str(key), keys)}")

    def entry(self, where: str, node: Any, keys: tuple[str, ...], form: str) -> bool:
        """Whether the entry `node` at `where` is a mapping (else the problem that it must be
        `form`); its unknown keys are problems too (`known_keys`)."""
        if not isinstance(node, Mapping):
            self.add(where, f"must be {form}")
            return False
        self.known_keys(node, keys, where)
        return True


def load_specs(path: str | Path, cache: bool = True) -> SpecSet:
    """Read a spec file (`.yaml`, `.yml` or `.json`) and return its validated spec set
    (`cache`: its parse may come from, and goes to, the cache of parsed specs)."""
    specs, problems = _load(path, cache)
    if problems:
        raise problems[0]
    assert specs is not None
    return specs


def check_specs(path: str | Path, cache: bool = True) -> tuple[SpecSet | None, list[SpecError]]:
    """Every problem of a spec file, for `lint`; the spec set too when there are none."""
    return _load(path, cache)


def _load(path: str | Path, cache: bool = True) -> tuple[SpecSet | None, list[SpecError]]:
    source, content, data = _read_document(path, cache)
    return parse_specs(data, source, hashlib.sha256(content).hexdigest())


def _read_document(path: str | Path, cache: bool = True) -> tuple[str, bytes, Any]:
    """A YAML or JSON file's name, bytes and parsed data (an unreadable file is a SpecError);
    the parse comes from the cache of parsed specs when `cache` and it is there."""
    source = str(path)
    try:
        content = Path(path).read_bytes()
    except OSError as error:
        raise SpecError(source, f"cannot read: {error.strerror or error}") from None
    return source, content, parse_cached(content, source, cache)


def read_mapping(path: str | Path) -> dict[str, Any]:
    """A YAML or JSON file holding one mapping (an environment file, say), safely loaded."""
    source, _, data = _read_document(path)
    if not isinstance(data, dict):
        raise SpecError(source, "must hold a mapping")
    return data


def parse_specs(
    data: Any, source: str = "<specs>", sha256: str = ""
) -> tuple[SpecSet | None, list[SpecError]]:
    """Validate parsed spec data (native or OpenAI-style); return the spec set or the problems."""
    problems = _Problems(source)
    located: dict[str, ToolFields] = {}
    if isinstance(data, list):
        tools = dict(_openai_tools(data, problems, located))
        relaxations: tuple[Relaxation, ...] = ()
        version = None
        environment = None
        forbid: tuple[Forbid, ...] = ()
    elif isinstance(data, Mapping):
        problems.known_keys(data, TOP_KEYS)
        version = data.get("version")
        if version is not None and not isinstance(version, str | int | float):
            problems.add("version", "must be a string")
        tools = dict(_native_tools(data.get("tools"), problems))
        declared = data["tools"] if isinstance(data.get("tools"), Mapping) else {}
        relaxations = tuple(_relaxations(data.get("relax", []), declared, problems))
        forbid = tuple(spec_forbid(data.get("forbid", []), tools, declared, problems.add))
        environment = data.get("environment")
        if environment is not None and not isinstance(environment, Mapping):
            problems.add("environment", "must be a mapping with database and tools")
        elif environment is not None and "timeout" in environment:
            problem = timeout_problem(environment["timeout"])
            if problem is not None:
                problems.add("environment.timeout", problem)
    else:
        problems.add("(top)", "a spec is a mapping with 'tools', or a list of tool definitions")
        return None, problems.errors
    for name, tool in tools.items():
        _check_defaults(tool.args, (), _locator(name, located), problems)
    declared = data.get("rubrics", {}) if isinstance(data, Mapping) else {}
    rubrics = dict(_rubrics(declared, problems))
    uses = _rubric_uses(tools, rubrics, problems, located)
    if problems.errors:
        return None, problems.errors
    label = None if version is None else str(version)
    listed = isinstance(data, list)
    return SpecSet(
        tools,
        relaxations,
        label,
        source,
        sha256,
        environment,
        rubrics,
        uses,
        listed,
        located,
        forbid,
    ), []


Locator = Callable[[RulePath], str]
"""Names the field of the rule at a path of one tool's arguments."""


def _locator(tool: str, located: Mapping[str, ToolFields]) -> Locator:
    """The locator of `tool`'s rules: where a tools list declares them, else native paths."""
    fields = located.get(tool)
    if fields is not None:
        return fields.field
    return lambda path: native_field(tool, path)


def _rubrics(node: Any, problems: _Problems) -> Iterator[tuple[str, Rubric]]:
    """The top-level `rubrics` map: rubric names to rubrics."""
    if not isinstance(node, Mapping):
        problems.add("rubrics", "must be a mapping of rubric names to rubrics")
        return
    for name, rubric in node.items():
        if not isinstance(name, str) or not name.strip():
            problems.add("rubrics", f"a rubric's name must be a non-empty string, got {show(name)}")
            continue
        try:
            yield name, parse_rubric(name, rubric)
        except RubricSpecError as error:
            where = f"rubrics.{name}.{error.where}" if error.where else f"rubrics.{name}"
            problems.add(where, error.message)


def _under(problems: _Problems, where: str) -> Callable[[str, str], None]:
    """A `problem(at, message)` callback adding problems at paths below `where`."""

    def problem(at: str, message: str) -> None:
        problems.add(f"{where}.{at}", message)

    return problem


def _translated(problems: _Problems, fields: ToolFields) -> Callable[[str, str], None]:
    """A `problem(at, message)` callback for a tool of a tools list, `at` a native path
    within its arguments, named where it is in the file."""

    def problem(at: str, message: str) -> None:
        problems.add(fields.translate(at), message)

    return problem


def _rubric_uses(
    tools: Mapping[str, ToolSpec],
    rubrics: dict[str, Rubric],
    problems: _Problems,
    located: Mapping[str, ToolFields],
) -> dict[str, tuple[RubricUse, ...]]:
    """Per tool, the rubrics on its text arguments (inline ones are added to `rubrics`)."""
    found: dict[str, tuple[RubricUse, ...]] = {}
    for name, tool in tools.items():
        fields = located.get(name)
        if fields is None:
            problem = _under(problems, f"tools.{name}.args")
        else:
            problem = _translated(problems, fields)
        uses = tuple(rubric_uses(name, tool.args, rubrics, problem))
        if uses:
            found[name] = uses
    return found


def timeout_problem(value: Any) -> str | None:
    """What is wrong with an `environment.timeout` value (seconds per call), or None."""
    if type(value) not in (int, float) or not 0 < value <= MAX_TIMEOUT:
        return (
            f"must be a number of seconds above 0 and at most {MAX_TIMEOUT:,.0f}, got {show(value)}"
        )
    return None


def _native_tools(node: Any, problems: _Problems) -> Iterator[tuple[str, ToolSpec]]:
    if not isinstance(node, Mapping) or not node:
        problems.add("tools", "must be a non-empty mapping of tool names to tool specs")
        return
    for name, tool in node.items():
        where = f"tools.{name}"
        form = "a mapping with 'args' (and optionally 'version')"
        if not problems.entry(where, tool, TOOL_KEYS, form):
            continue
        args = tool.get("args") or {}
        version = tool.get("version")
        problem = _version_problem(version)
        if problem:
            problems.add(f"{where}.version", problem)
        rule = _compile_tool(args, _locator(str(name), {}), problems)
        if rule is not None:
            yield str(name), ToolSpec(str(name), version, rule, tool.get("description"))


def _version_problem(version: Any) -> str | None:
    """Why a tool's version cannot be recorded with its results, or None (results stores and
    reports keep it as a JSON number, so an integer must fit in 64 bits)."""
    if version is None or isinstance(version, str):
        return None
    if not isinstance(version, int) or isinstance(version, bool):
        return "must be a string or an integer"
    if not -(2**63) <= version < 2**63:
        return "must be an integer within 64 bits (a string holds any label)"
    return None


def _compile_tool(args: Any, locate: Locator, problems: _Problems) -> ObjectRule | None:
    """The tool's arguments as one object rule; each bad argument is its own problem."""
    if not isinstance(args, Mapping):
        problems.add(locate(()), "must be a mapping of argument names to rules")
        return None
    compiled: dict[str, Rule] = {}
    for name, node in args.items():
        try:
            compiled[str(name)] = compile_rule(node, (str(name),))
        except RuleError as error:
            problems.add(locate(error.path), error.message)
    if len(compiled) < len(args):
        return None
    return ObjectRule(args=compiled)


def _relaxations(node: Any, tools: Mapping[str, Any], problems: _Problems) -> Iterator[Relaxation]:
    if not isinstance(node, list):
        problems.add("relax", "must be a list of {allow, tools, reason} entries")
        return
    for index, entry in enumerate(node):
        where = f"relax[{index}]"
        if not problems.entry(where, entry, RELAX_KEYS, "a mapping with allow, tools and reason"):
            continue
        allow, names, reason = entry.get("allow"), entry.get("tools"), entry.get("reason")
        ok = True
        if allow not in RELAXATIONS:
            problems.add(
                f"{where}.allow",
                f"must be one of {', '.join(RELAXATIONS)}{suggest(str(allow), RELAXATIONS)}",
            )
            ok = False
        if not isinstance(reason, str) or not reason.strip():
            problems.add(f"{where}.reason", "every relaxation needs a reason")
            ok = False
        if names is None and allow == "retries" and "tools" not in entry:
            names = list(tools)  # a retry of any tool: the header lists them all
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            problems.add(f"{where}.tools", "must be a non-empty list of tool names")
            continue
        for name in names:
            if name not in tools:
                problems.add(f"{where}.tools", f"unknown tool {name!r}{suggest(name, list(tools))}")
                ok = False
        if ok:
            yield Relaxation(str(allow), tuple(names), str(reason))


def _check_defaults(rule: Rule, path: RulePath, locate: Locator, problems: _Problems) -> None:
    """A default must be a value its own rule accepts (null is always a valid default)."""
    if isinstance(rule, ObjectRule):
        for name, sub in rule.args.items():
            _check_defaults(sub, (*path, name), locate, problems)
    elif isinstance(rule, ListRule):
        _check_defaults(rule.items, (*path, "items"), locate, problems)
    if rule.default is not None and rule.default is not MISSING:
        problem = value_problem(rule, rule.default)
        if problem:
            problems.add(
                locate(path), f"default {show(rule.default)} is rejected by its own rule: {problem}"
            )


# --- OpenAI-style tool definitions ----------------------------------------------------------

_SCHEMA_KINDS = {
    "string": "exact",
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
    "object": "object",
    "array": "list",
}


def _openai_tools(
    items: list[Any], problems: _Problems, located: dict[str, ToolFields]
) -> Iterator[tuple[str, ToolSpec]]:
    """The tools of a tools list; where each tool's rules stand goes into `located`, and
    problems are named where they are in the list (`[2].function.parameters`)."""
    # Only tool lists carry JSON Schema: native specs never pay for importing its validator.
    from jsonschema import Draft202012Validator  # noqa: PLC0415
    from jsonschema.exceptions import SchemaError as JsonSchemaError  # noqa: PLC0415

    if not items:
        problems.add("(top)", "the tool list is empty")
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        function = item.get("function", item) if isinstance(item, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            problems.add(
                f"[{index}]", "a tool definition needs 'name' (or 'function': {name, ...})"
            )
            continue
        assert isinstance(item, Mapping)
        base = f"[{index}].function" if "function" in item else f"[{index}]"
        name = function["name"]
        if name in first:
            twice = f"tool {name!r} is defined twice (first at [{first[name]}])"
            problems.add(f"{base}.name", twice)
            continue
        first[name] = index
        fields = located[name] = ToolFields(base)
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        try:
            Draft202012Validator.check_schema(parameters)
        except JsonSchemaError as error:
            problems.add(f"{base}.parameters", f"not a valid JSON Schema: {error.message}")
            continue
        try:
            args = _schema_args(parameters, (), f"{base}.parameters", fields)
        except RuleError as error:
            problems.add(fields.field(error.path), error.message)
            continue
        rule = _compile_tool(args, fields.field, problems)
        problem = _version_problem(function.get("x-version"))
        if problem:
            problems.add(f"{base}.x-version", problem)
        elif rule is not None:
            yield name, ToolSpec(name, function.get("x-version"), rule, function.get("description"))


def _schema_args(
    schema: Mapping[str, Any], path: RulePath, where: str, fields: ToolFields
) -> dict[str, Any]:
    """The rule nodes of a schema's `properties` (the schema at `where`)."""
    properties = schema.get("properties") or {}
    return {
        name: _schema_rule(prop, (*path, name), f"{where}.properties.{name}", fields)
        for name, prop in properties.items()
    }


def _schema_rule(prop: Any, path: RulePath, where: str, fields: ToolFields) -> dict[str, Any]:
    """The rule node for one JSON Schema property (at `where`): its `x-compare`, else derived
    from the type."""
    fields.record(path, where)
    if not isinstance(prop, Mapping):
        return {"kind": "exact"}
    compare = prop.get("x-compare")
    if compare is not None:
        fields.record(path, f"{where}.x-compare")
        if not isinstance(compare, str | Mapping):
            raise RuleError(path, "x-compare must be a kind name or a kind object")
        node = {"kind": compare} if isinstance(compare, str) else dict(compare)
        if isinstance(compare, Mapping):
            fields.record_written(compare, path, f"{where}.x-compare")
        kind = node.get("kind")
        if kind == "object" and "args" not in node:
            node["args"] = _schema_args(prop, path, where, fields)
        if kind == "list" and "items" not in node and isinstance(prop.get("items"), Mapping):
            node["items"] = _schema_rule(prop["items"], (*path, "items"), f"{where}.items", fields)
        if kind == "enum" and "values" not in node and isinstance(prop.get("enum"), list):
            node["values"] = prop["enum"]
    else:
        node = _derived(prop, path, where, fields)
    if "default" in prop and "default" not in node:
        node["default"] = prop["default"]
    return node


def _derived(
    prop: Mapping[str, Any], path: RulePath, where: str, fields: ToolFields
) -> dict[str, Any]:
    if isinstance(prop.get("enum"), list):
        return {"kind": "enum", "values": prop["enum"]}
    types = prop.get("type")
    if isinstance(types, list):
        types = next((t for t in types if t != "null"), None)
    kind = _SCHEMA_KINDS.get(types, "exact") if isinstance(types, str) else "exact"
    node: dict[str, Any] = {"kind": kind}
    if kind == "object":
        node["args"] = _schema_args(prop, path, where, fields)
    elif kind == "list":
        items = prop.get("items")
        node["items"] = (
            _schema_rule(items, (*path, "items"), f"{where}.items", fields)
            if isinstance(items, Mapping)
            else "exact"
        )
    return node
