"""Load and validate spec files: the native YAML/JSON format, tool definitions (OpenAI,
Anthropic, Gemini, MCP: `tool_definitions`), and a native spec that takes its tools from a
definitions file and adds rules to them (a side rules file: `side_rules`).

A spec set says, per tool and per argument, which differences are harmless. It is checked
completely when loaded, so that scoring never meets a broken rule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscore.core.arguments import value_problem
from toolscore.core.forbid import by_tool
from toolscore.core.model import MISSING, Forbid
from toolscore.core.rules import ListRule, ObjectRule, Rule
from toolscore.core.rules.strings import holds_pattern
from toolscore.core.rules.structures import rubric_rules
from toolscore.core.values import show, suggest
from toolscore.errors import SpecError
from toolscore.specs.fields import RulePath, ToolFields, native_field
from toolscore.specs.forbid import spec_forbid
from toolscore.specs.parsing import parse_cached
from toolscore.specs.problems import TOOL_KEYS, Problems, compile_tool, version_problem
from toolscore.specs.side_rules import DEFINITIONS_KEY, Bundle, bundle_of, side_tools, stored_bundle
from toolscore.specs.tool_definitions import definition_tools, is_definitions

if TYPE_CHECKING:
    from toolscore.rubrics.spec import Rubric, RubricUse

RELAXATIONS = ("extra_calls", "unknown_args", "retries")
"""What a relaxation may `allow`."""
TOP_KEYS = ("version", "tools", "relax", "environment", "rubrics", "forbid", DEFINITIONS_KEY)
"""The keys of a native spec (`definitions`: the tool definitions file a side rules file
adds to, 2.5); any other is an error (the editor schemas list these too)."""
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
    """True for tool definitions read alone (docs/formats.md 2.5), which have no version
    label, relaxations or environment: only each tool's `x-version`."""
    fields: Mapping[str, ToolFields] = field(default_factory=dict)
    """For tool definitions, where each tool's rules are declared in the file (`rule_field`)."""
    forbid: tuple[Forbid, ...] = ()
    """The calls no case may make (the spec's `forbid`), whatever its plans say."""
    version_from_sha: bool = False
    """True when `version` is `sha256:` and the first 12 hex digits of the spec's sha256,
    taken because tool definitions have no version label (reports say so)."""
    content: bytes | None = None
    """The bytes `sha256` is the hash of, when they are not one file's: a side rules file
    and its definitions bundled (`side_rules`), which the results store keeps."""
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

    def rule_source(self, tool: str, path: RulePath = ()) -> str:
        """The file declaring the rule at `path` of `tool`'s arguments: the spec's, or the
        definitions file beside a side rules file."""
        located = self.fields.get(tool)
        return self.source if located is None else located.source_of(path)

    def describe(self) -> dict[str, Any]:
        """The provenance block of a report: version label, content hash, tool versions, and
        the version of each rubric in use when some argument has one."""
        described: dict[str, Any] = {
            "version": self.version,
            "sha256": self.sha256,
            "tools": {name: tool.version for name, tool in self.tools.items()},
        }
        if self.version_from_sha:
            described["version_from"] = "sha256"
        used = sorted({use.rubric for uses in self.rubric_uses.values() for use in uses})
        if used:
            described["rubrics"] = {name: self.rubrics[name].version for name in used}
        return described


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
    if isinstance(data, Mapping) and isinstance(data.get(DEFINITIONS_KEY), str):
        where = Path(path).parent / data[DEFINITIONS_KEY]
        definitions = _read_document(where, cache)
        return _parse_bundle(bundle_of(source, content, data, definitions[0], definitions[1:]))
    return parse_specs(data, source, hashlib.sha256(content).hexdigest())


def bundled_specs(content: bytes, note: str) -> SpecSet | None:
    """The spec set of a side rules file and its definitions, parsed again from the bundle
    a results store kept (`side_rules`); None when `content` is a spec file's own bytes.
    `note` is added to the file names in errors (` (stored with run 3)`)."""
    bundle = stored_bundle(content, note)
    if bundle is None:
        return None
    specs, problems = _parse_bundle(bundle)
    if problems:
        raise problems[0]
    assert specs is not None
    return specs


def _parse_bundle(bundle: Bundle) -> tuple[SpecSet | None, list[SpecError]]:
    """The spec set of a side rules file and its definitions."""
    return _parse(bundle.rules, bundle.rules_source, bundle.sha256, bundle)


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
    """Validate parsed spec data (native, or tool definitions); return the spec set or the
    problems. A side rules file's `definitions` is read by `load_specs`, which knows the
    file it is beside."""
    return _parse(data, source, sha256, None)


def _parse(
    data: Any, source: str, sha256: str, bundle: Bundle | None
) -> tuple[SpecSet | None, list[SpecError]]:
    problems = Problems(source)
    defined = problems if bundle is None else Problems(bundle.definitions_source)
    located: dict[str, ToolFields] = {}
    listed = bundle is None and is_definitions(data)
    if listed:
        tools = _defined_tools(data, defined, located)
        relaxations: tuple[Relaxation, ...] = ()
        version = None
        environment = None
        forbid: tuple[Forbid, ...] = ()
    elif isinstance(data, Mapping):
        problems.known_keys(data, TOP_KEYS)
        if bundle is None and DEFINITIONS_KEY in data:
            message = "must be the path of a definitions file, read from a spec file"
            problems.add(DEFINITIONS_KEY, message)
        version = data.get("version")
        if version is not None and not isinstance(version, str | int | float):
            problems.add("version", "must be a string")
        if bundle is None:
            tools = dict(_native_tools(data.get("tools"), problems))
        else:
            tools = _defined_tools(bundle.definitions, defined, located)
            _apply_side_tools(data.get("tools"), tools, located, problems, bundle)
        declared = data["tools"] if isinstance(data.get("tools"), Mapping) else {}
        if bundle is not None:
            declared = tools
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
        _check_defaults(tool.args, (), _adder(name, located, problems, defined))
    declared = data.get("rubrics", {}) if isinstance(data, Mapping) and not listed else {}
    rubrics: dict[str, Rubric] = {}
    uses: dict[str, tuple[RubricUse, ...]] = {}
    if declared or any(any(rubric_rules(tool.args.args)) for tool in tools.values()):
        rubrics = dict(_rubrics(declared, problems))
        uses = _rubric_uses(tools, rubrics, problems, defined, located)
    errors = defined.errors + problems.errors if defined is not problems else problems.errors
    if errors:
        return None, errors
    label = None if version is None else str(version)
    from_sha = label is None and (listed or bundle is not None) and bool(sha256)
    if from_sha:
        label = f"sha256:{sha256[:12]}"
    return SpecSet(
        tools,
        relaxations,
        label,
        source,
        sha256,
        environment,
        rubrics,
        uses,
        tool_list=listed,
        fields=located,
        forbid=forbid,
        version_from_sha=from_sha,
        content=None if bundle is None else bundle.content,
    ), []


def _defined_tools(
    data: Any, problems: Problems, located: dict[str, ToolFields]
) -> dict[str, ToolSpec]:
    """The tools of tool definitions (`tool_definitions`)."""
    return {
        name: ToolSpec(name, entry.version, rule, entry.description)
        for name, entry, rule in definition_tools(data, problems, located)
    }


def _apply_side_tools(
    node: Any,
    tools: dict[str, ToolSpec],
    located: dict[str, ToolFields],
    problems: Problems,
    bundle: Bundle,
) -> None:
    """Give the definitions' tools what the side rules file says of them (`side_tools`)."""
    arguments = {name: tool.args.args for name, tool in tools.items()}
    for side in side_tools(node, arguments, located, problems, bundle.definitions_source):
        tool = tools[side.name]
        merged = {name: side.overrides.get(name, rule) for name, rule in tool.args.args.items()}
        tools[side.name] = ToolSpec(
            side.name,
            tool.version if side.version is None else side.version,
            replace(tool.args, args=merged),
            tool.description if side.description is None else side.description,
        )
        located[side.name].override(frozenset(side.overrides), problems.source)


PathProblem = Callable[[RulePath, str], None]
"""Adds a problem about the rule at a path of one tool's arguments."""


def _adder(
    tool: str, located: Mapping[str, ToolFields], problems: Problems, defined: Problems
) -> PathProblem:
    """Adds problems about `tool`'s rules where they are declared: native paths of the spec,
    or the definitions file (`defined`), or a side rules file for an argument it overrides."""
    fields = located.get(tool)

    def add(path: RulePath, message: str) -> None:
        if fields is None:
            problems.add(native_field(tool, path), message)
        else:
            side = fields.source_of(path) != fields.source
            (problems if side else defined).add(fields.field(path), message)

    return add


def _rubrics(node: Any, problems: Problems) -> Iterator[tuple[str, Rubric]]:
    """The top-level `rubrics` map: rubric names to rubrics (the rubrics' modules are
    imported for a spec that has some, as are `_rubric_uses`')."""
    from toolscore.rubrics.spec import RubricSpecError, parse_rubric  # noqa: PLC0415

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


def _under(problems: Problems, where: str) -> Callable[[str, str], None]:
    """A `problem(at, message)` callback adding problems at paths below `where`."""

    def problem(at: str, message: str) -> None:
        problems.add(f"{where}.{at}", message)

    return problem


def _translated(
    problems: Problems, defined: Problems, fields: ToolFields
) -> Callable[[str, str], None]:
    """A `problem(at, message)` callback for a tool of tool definitions, `at` a native path
    within its arguments, named where it is declared (the side rules file for an argument
    it overrides)."""

    def problem(at: str, message: str) -> None:
        side = at.split(".", 1)[0] in fields.overrides
        (problems if side else defined).add(fields.translate(at), message)

    return problem


def _rubric_uses(
    tools: Mapping[str, ToolSpec],
    rubrics: dict[str, Rubric],
    problems: Problems,
    defined: Problems,
    located: Mapping[str, ToolFields],
) -> dict[str, tuple[RubricUse, ...]]:
    """Per tool, the rubrics on its text arguments (inline ones are added to `rubrics`)."""
    from toolscore.rubrics.spec import rubric_uses  # noqa: PLC0415 - see `_rubrics`

    found: dict[str, tuple[RubricUse, ...]] = {}
    for name, tool in tools.items():
        fields = located.get(name)
        if fields is None:
            problem = _under(problems, f"tools.{name}.args")
        else:
            problem = _translated(problems, defined, fields)
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


def _native_tools(node: Any, problems: Problems) -> Iterator[tuple[str, ToolSpec]]:
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
        problem = version_problem(version)
        if problem:
            problems.add(f"{where}.version", problem)
        rule = compile_tool(args, partial(native_field, str(name)), problems)
        if rule is not None:
            yield str(name), ToolSpec(str(name), version, rule, tool.get("description"))


def _relaxations(node: Any, tools: Mapping[str, Any], problems: Problems) -> Iterator[Relaxation]:
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


def _check_defaults(rule: Rule, path: RulePath, add: PathProblem) -> None:
    """A default must be a value its own rule accepts (null is always a valid default)."""
    if isinstance(rule, ObjectRule):
        for name, sub in rule.args.items():
            _check_defaults(sub, (*path, name), add)
    elif isinstance(rule, ListRule):
        _check_defaults(rule.items, (*path, "items"), add)
    if rule.default is not None and rule.default is not MISSING:
        problem = value_problem(rule, rule.default)
        if problem:
            add(path, f"default {show(rule.default)} is rejected by its own rule: {problem}")
