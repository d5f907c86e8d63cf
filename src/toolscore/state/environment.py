"""Load a state environment: the initial SQLite database and the tools' implementations.

An environment is the `environment` block of a spec file. Its database (a `.sql` script or a
SQLite file) is read once into an in-memory image that every replay copies, so the user's
file is only ever opened read-only. Its tools module is the user's own code: it is imported
here and nowhere else, and only when the user named an environment.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from random import Random
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple
from urllib.parse import quote as quote_uri

from toolscore.errors import InputError, ReplayInterrupted
from toolscore.rules import show, suggest
from toolscore.specs import DEFAULT_TIMEOUT, timeout_problem
from toolscore.state.errors_policy import POLICY_KEYS, ErrorPolicy, load_policy, unknown_terminal
from toolscore.state.guard import ReplayConnection, guard
from toolscore.state.limits import PROGRESS_STEPS, exit_call, watch
from toolscore.state.outputs import OPTION_KEYS, output_option
from toolscore.state.snapshot import (
    Ignore,
    Snapshot,
    TableShape,
    read_shapes,
    schema_version,
    take_snapshot,
)

COMPARE_MODES = ("diff", "exact")
DEFAULT_NOW = datetime(2026, 1, 1, tzinfo=UTC)
"""The clock tools see when the environment does not set `now`."""
_KEYS = (
    "kind",
    "database",
    "tools",
    "ignore",
    "compare",
    "now",
    "foreign_keys",
    "timeout",
    "numbers",
    *POLICY_KEYS,
    *OPTION_KEYS,
)
NUMBERS = ("numeric", "typed")
KINDS = ("sqlite", "documents")
NO_POLICY = ErrorPolicy()
"""Today's behaviour: a call that raises is rolled back; no result is an error."""
_SQLITE_MAGIC = b"SQLite format 3\x00"

if TYPE_CHECKING:
    from toolscore.state.documents import DocumentEnvironment


class ToolContext(NamedTuple):
    """What a tool may use besides the database, fixed per case so that replay is deterministic.

    `random` is seeded from a hash of the case id; every replay of the case (the agent's
    calls, a plan's calls) starts from the same seed and the same `now`.
    """

    now: datetime
    random: Random
    case_id: str


class Tool(NamedTuple):
    """A tool implementation: `function(db, **args)`, plus `ctx=` when it declares `ctx`."""

    name: str
    function: Callable[..., Any]
    takes_ctx: bool


class ReplayRules:
    """What every kind of environment does alike: the number rule, each case's fixed
    context, and which spec tools its tools module lacks (a mixin of the two kinds)."""

    __slots__ = ()
    numbers: Literal["numeric", "typed"]
    now: datetime
    tools: Mapping[str, Tool]

    @property
    def typed(self) -> bool:
        """Whether `2` and `2.0` differ (`numbers: typed`)."""
        return self.numbers == "typed"

    def context(self, case_id: str) -> ToolContext:
        """The clock and the random source of one case, the same at every replay."""
        seed = int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "big")
        return ToolContext(self.now, Random(seed), case_id)

    def lacking(self, names: Iterable[str]) -> tuple[str, ...]:
        """The given tool names (e.g. a spec's tools) that the tools module does not define."""
        return tuple(sorted(name for name in set(names) if name not in self.tools))


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class Environment(ReplayRules):
    """An initial database image, the tools that act on it, and how final states compare."""

    config: Mapping[str, Any]
    base_dir: Path
    source: str
    database: Path
    database_sha256: str
    tools_module: str
    tools: Mapping[str, Tool]
    image: bytes
    """The initial database, serialised; every replay opens a private copy of it."""
    schema_version: int
    shapes: Mapping[str, TableShape]
    initial: Snapshot
    ignore: Ignore
    compare: Literal["diff", "exact"]
    now: datetime
    foreign_keys: bool
    timeout: float
    """Seconds each tool call (and each setup statement) may run (`limits`)."""
    policy: ErrorPolicy = NO_POLICY
    """What counts as a tool's error, what it leaves, which tools end replay."""
    numbers: Literal["numeric", "typed"] = "numeric"
    """How numbers compare (`snapshot.same`): as numbers, or keeping 2 and 2.0 apart."""
    kind: ClassVar[str] = "sqlite"

    def __reduce__(self) -> tuple[Any, ...]:
        # Worker processes load the environment again (the tools module is imported there).
        return (load_environment, (dict(self.config), self.base_dir, self.source))

    def connect(self, factory: type[ReplayConnection] = ReplayConnection) -> ReplayConnection:
        """A new connection to a private in-memory copy of the initial database, guarded
        (`guard`: it reaches no file) and watched (`limits`: its statements can be stopped)."""
        db = sqlite3.connect(":memory:", factory=factory)
        db.deserialize(self.image)
        guard(db, *(["PRAGMA foreign_keys = ON"] if self.foreign_keys else []))
        db.set_progress_handler(watch, PROGRESS_STEPS)
        return db

    def describe(self) -> dict[str, Any]:
        """Provenance for reports: the database and its hash, the tools module, the rules."""
        return {
            "database": str(self.database),
            "sha256": self.database_sha256,
            "tools": self.tools_module,
            "compare": self.compare,
            "ignore": {
                **dict.fromkeys(sorted(self.ignore.tables), "*"),
                **{table: sorted(cols) for table, cols in sorted(self.ignore.columns.items())},
            },
            "now": self.now.isoformat(),
            "timeout": self.timeout,
            **({"numbers": self.numbers} if self.typed else {}),
            **self.policy.describe(),
            **{key: self.config[key] for key in OPTION_KEYS if key in self.config},
        }


def load_environment(
    config: Mapping[str, Any], base_dir: Path, source: str
) -> Environment | DocumentEnvironment:
    """Validate an `environment` block, build the initial store and import the tools.

    `kind: sqlite` (the default) is a database; `kind: documents` is JSON-like data
    (`documents`). Paths are relative to `base_dir` (the spec file's folder); errors name
    `source` (the spec file) and the field at fault.
    """
    fail = env_error(source)
    if not isinstance(config, Mapping):
        raise fail("", "must be a mapping with `database` and `tools`")
    kind = config.get("kind", "sqlite")
    if kind not in KINDS:
        raise fail("kind", f"must be 'sqlite' or 'documents', got {show(kind)}")
    if kind == "documents":
        from toolscore.state.documents import load_documents  # noqa: PLC0415 - no cycle

        return load_documents(config, base_dir, source)
    return load_sqlite(config, base_dir, source)


def env_error(source: str) -> Callable[[str, str], InputError]:
    """The error builder for a key of the `environment` block in the file `source`."""

    def fail(key: str, message: str) -> InputError:
        return InputError(source, message, field=f"environment.{key}" if key else "environment")

    return fail


def refuse_unknown_keys(
    config: Mapping[str, Any], keys: tuple[str, ...], fail: Callable[[str, str], InputError]
) -> None:
    """An input error for the first key of the block that is not one of `keys`, with the
    nearest valid name suggested for a typo."""
    for key in config:
        if key not in keys:
            raise fail(str(key), f"unknown key{suggest(str(key), keys)} (keys: {', '.join(keys)})")


def load_sqlite(config: Mapping[str, Any], base_dir: Path, source: str) -> Environment:
    """A `kind: sqlite` environment: the database image, the tools, the comparison rules."""
    fail = env_error(source)
    refuse_unknown_keys(config, _KEYS, fail)
    for key in ("database", "tools"):
        if not isinstance(config.get(key), str) or not config[key]:
            raise fail(key, "required: a path" + (" or a module name" if key == "tools" else ""))
    compare = config.get("compare", "diff")
    if compare not in COMPARE_MODES:
        raise fail("compare", f"must be 'diff' or 'exact', got {show(compare)}")
    numbers = config.get("numbers", "numeric")
    if numbers not in NUMBERS:
        raise fail("numbers", f"must be 'numeric' or 'typed', got {show(numbers)}")
    foreign_keys = config.get("foreign_keys", True)
    if not isinstance(foreign_keys, bool):
        raise fail("foreign_keys", f"must be true or false, got {show(foreign_keys)}")
    now = _now(config.get("now", DEFAULT_NOW), fail)
    for key in OPTION_KEYS:  # how required outputs are found (`state.outputs`)
        if key in config:
            output_option(key, config[key], fail)
    timeout = config.get("timeout", DEFAULT_TIMEOUT)
    problem = timeout_problem(timeout)
    if problem is not None:
        raise fail("timeout", problem)

    database = base_dir / config["database"]
    template = _template(database, source)
    try:
        image = without_wal(template.serialize())
        ignore = _ignore(config.get("ignore", {}), read_shapes(template, Ignore()), fail)
        shapes = read_shapes(template, ignore)
        initial = take_snapshot(template, shapes.values())
        version = schema_version(template)
    finally:
        template.close()
    module, tools = _import_tools(config["tools"], base_dir, fail)
    policy = load_policy(config, base_dir, fail, load_function)
    unknown_terminal(policy, tools, fail)
    return Environment(
        config=dict(config),
        base_dir=base_dir,
        source=source,
        database=database,
        database_sha256=hashlib.sha256(database.read_bytes()).hexdigest(),
        tools_module=module,
        tools=tools,
        image=image,
        schema_version=version,
        shapes=shapes,
        initial=initial,
        ignore=ignore,
        compare=compare,
        now=now,
        foreign_keys=foreign_keys,
        timeout=float(timeout),
        policy=policy,
        numbers=numbers,
    )


def _now(value: Any, fail: Callable[[str, str], InputError]) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise fail("now", f"not an ISO 8601 date-time: {show(value)}") from None
    if not isinstance(value, datetime):
        raise fail("now", f"must be an ISO 8601 date-time, got {show(value)}")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _template(path: Path, source: str) -> sqlite3.Connection:
    """The initial database in memory, built from a SQL script or copied from a SQLite file."""
    field = "environment.database"
    if not path.is_file():
        raise InputError(source, f"no such file: {path}", field=field)
    template = sqlite3.connect(":memory:")
    try:
        if path.suffix.lower() == ".sql":
            _run_script(template, path, source)
        else:
            _copy_database(template, path, source)
    except BaseException:
        template.close()
        raise
    return template


def _run_script(db: sqlite3.Connection, path: Path, source: str) -> None:
    """Run a SQL script statement by statement, so that an error names its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(
            source, f"cannot read {path}: {error}", field="environment.database"
        ) from None
    for start, statement in _statements(text):
        try:
            db.executescript(statement)
        except sqlite3.Error as error:
            first = statement.strip().splitlines()[0]
            raise InputError(
                str(path),
                f"{error} (in the statement {show(first)})",
                line=start,
                field="environment.database",
            ) from None


def _statements(text: str) -> Iterator[tuple[int, str]]:
    """Complete SQL statements with the line each starts on; a trailing fragment last."""
    buffer: list[str] = []
    start = 1
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if not buffer:
            if not line.strip() or line.lstrip().startswith("--"):
                continue
            start = number
        buffer.append(line)
        if ";" in line and sqlite3.complete_statement("".join(buffer)):
            yield start, "".join(buffer)
            buffer = []
    if buffer:
        yield start, "".join(buffer)


def _copy_database(db: sqlite3.Connection, path: Path, source: str) -> None:
    """Copy a SQLite file into `db` without writing to it or beside it.

    A file at rest is read as bytes and loaded into memory. When a `-wal` or `-journal` file
    lies beside it, another connection has changes in flight: SQLite itself reads them then,
    from a read-only connection.
    """
    content = path.read_bytes()
    if not content.startswith(_SQLITE_MAGIC):
        raise InputError(
            source,
            f"{path} is not a SQLite database (use a .sql script or a SQLite file)",
            field="environment.database",
        )
    try:
        if any(path.with_name(path.name + s).exists() for s in ("-wal", "-journal")):
            uri = f"file:{quote_uri(str(path.resolve()))}?mode=ro"
            original = sqlite3.connect(uri, uri=True)
            try:
                original.backup(db)
            finally:
                original.close()
        else:
            db.deserialize(without_wal(content))
        db.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlite3.Error as error:
        raise InputError(
            source, f"cannot read the database {path}: {error}", field="environment.database"
        ) from None


def without_wal(image: bytes) -> bytes:
    """A database image marked for a rollback journal: in memory there is no WAL."""
    return image[:18] + b"\x01\x01" + image[20:] if image[18:20] == b"\x02\x02" else image


def _ignore(
    node: Any, shapes: Mapping[str, TableShape], fail: Callable[[str, str], InputError]
) -> Ignore:
    """Validate `ignore: {table: [columns] | "*"}` against the initial schema."""
    if not isinstance(node, Mapping):
        raise fail("ignore", 'must map table names to a list of columns or "*"')
    tables: set[str] = set()
    columns: dict[str, frozenset[str]] = {}
    for table, value in node.items():
        where = f"ignore.{table}"
        shape = shapes.get(table)
        if shape is None:
            raise fail(
                where, f"no table {table!r} in the database{suggest(str(table), list(shapes))}"
            )
        if value == "*":
            tables.add(table)
            continue
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise fail(where, 'must be a list of column names, or "*" for the whole table')
        for column in value:
            if column not in shape.all_columns:
                hint = suggest(column, list(shape.all_columns))
                raise fail(where, f"table {table!r} has no column {column!r}{hint}")
            if column in shape.key:
                raise fail(where, f"{column!r} is the table's key: rows are matched by it")
        columns[table] = frozenset(value)
    return Ignore(frozenset(tables), columns)


def _import_tools(
    reference: str, base_dir: Path, fail: Callable[[str, str], InputError]
) -> tuple[str, dict[str, Tool]]:
    """Import the tools module (a dotted module name, or a path to a .py file)."""
    module = import_module(reference, base_dir, fail)
    tools = {
        name: Tool(name, function, _takes_ctx(function))
        for name, function in vars(module).items()
        if inspect.isfunction(function)
        and function.__module__ == module.__name__
        and not name.startswith("_")
    }
    if not tools:
        raise fail("tools", f"{reference!r} defines no tool functions")
    return reference, tools


def load_function(
    reference: Any, base_dir: Path, fail: Callable[[str, str], InputError], key: str
) -> Callable[..., Any]:
    """The function `module:function` (a module name or a .py path, then the function's
    name) of an environment key such as `data` or `error_predicate`; the user's code."""
    if not isinstance(reference, str) or ":" not in reference.strip(":"):
        raise fail(key, f"must be 'module:function', got {show(reference)}")
    module_ref, _, name = reference.rpartition(":")
    module = import_module(module_ref, base_dir, fail, key)
    function = getattr(module, name, None)
    if not callable(function):
        raise fail(key, f"{module_ref!r} has no function {name!r}")
    return function  # type: ignore[no-any-return]


def import_module(
    reference: str, base_dir: Path, fail: Callable[[str, str], InputError], key: str = "tools"
) -> ModuleType:
    """Import a module of the user's (a dotted module name, or a path to a .py file), with
    every failure one input error naming the environment key `key`."""
    is_path = reference.endswith(".py") or "/" in reference or "\\" in reference
    try:
        if is_path:
            return _import_file(base_dir / reference, lambda _, m: fail(key, m))
        if all(part.isidentifier() for part in reference.split(".")):
            with _importable_from(base_dir):
                return importlib.import_module(reference)
        raise fail(key, f"{reference!r} is neither a module name nor a .py path")
    except InputError:
        raise
    except SyntaxError as error:
        where = f" ({error.filename}:{error.lineno})" if error.filename else ""
        raise fail(key, f"cannot import {reference!r}: SyntaxError: {error.msg}{where}") from None
    except SystemExit as error:
        raise fail(
            key, f"cannot import {reference!r}: it called {exit_call(error)} on import"
        ) from None
    except KeyboardInterrupt:
        raise ReplayInterrupted(f"the import of the {key} module {reference!r}") from None
    except Exception as error:
        message = str(error).splitlines()[0] if str(error) else ""
        raise fail(key, f"cannot import {reference!r}: {type(error).__name__}: {message}") from None


def _import_file(path: Path, fail: Callable[[str, str], InputError]) -> ModuleType:
    if not path.is_file():
        raise fail("tools", f"no such file: {path}")
    name = "toolscore_env_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise fail("tools", f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        with _importable_from(path.parent):
            spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    """Let the tools module import its siblings while it is being imported."""
    entry = str(folder.resolve())
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        sys.path.remove(entry)


def _takes_ctx(function: Callable[..., Any]) -> bool:
    try:
        parameter = inspect.signature(function).parameters.get("ctx")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind is not inspect.Parameter.POSITIONAL_ONLY
