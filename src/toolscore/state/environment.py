"""Load a state environment: the initial SQLite database and the tools' implementations.

An environment is the `environment` block of a spec file. Its database (a `.sql` script or a
SQLite file) is read once into a private image that every replay copies into memory, so the
user's file is only ever opened read-only (`image`: the image is a file of toolscore's own,
and the environment holds no copy of the store in memory; the initial state's rows are read
from it when a comparison needs them, `StoredTables`). Its tools module is the user's own
code, imported by `environment_common` (what this kind shares with `documents`) only when the
user named an environment. `load_environment` picks the kind.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from toolscore.core.values import show, suggest
from toolscore.errors import InputError
from toolscore.state.documents import DocumentEnvironment, load_documents
from toolscore.state.environment_common import (
    COMPARE_MODES,
    DEFAULT_NOW,
    NUMBERS,
    EnvironmentBase,
    Tool,
    ToolContext,
    env_error,
    import_module,
    load_function,
    refuse_unknown_keys,
    require_strings,
    shared_fields,
)
from toolscore.state.errors_policy import POLICY_KEYS, ErrorPolicy
from toolscore.state.guard import ReplayConnection, guard
from toolscore.state.image import (
    build_image,
    copy_into,
    new_folder,
    open_image,
    read_rows,
    remove_when_freed,
    without_wal,
)
from toolscore.state.limits import PROGRESS_STEPS, watch
from toolscore.state.outputs import OPTION_KEYS, output_option
from toolscore.state.size import (
    DEFAULT_MAX_SIZE_MB,
    MB,
    cap_length,
    size_problem,
    size_settings,
)
from toolscore.state.snapshot import (
    Ignore,
    Snapshot,
    StoredTables,
    TableShape,
    read_shapes,
    schema_version,
)

__all__ = [
    "COMPARE_MODES",
    "DEFAULT_NOW",
    "KINDS",
    "NO_POLICY",
    "NUMBERS",
    "Environment",
    "EnvironmentBase",
    "Tool",
    "ToolContext",
    "env_error",
    "import_module",
    "load_environment",
    "load_function",
    "load_sqlite",
    "refuse_unknown_keys",
    "without_wal",
]

SQLITE_KEYS = (
    "kind",
    "database",
    "tools",
    "ignore",
    "compare",
    "now",
    "foreign_keys",
    "timeout",
    "numbers",
    "max_size_mb",
    *POLICY_KEYS,
    *OPTION_KEYS,
)
"""The keys of a SQLite environment block; any other is an error under `--env`."""
KINDS = ("sqlite", "documents")
NO_POLICY = ErrorPolicy()
"""Today's behaviour: a call that raises is rolled back; no result is an error."""


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True, kw_only=True)
class Environment(EnvironmentBase):
    """An initial database image, the tools that act on it, and how final states compare."""

    database: Path
    database_sha256: str
    image_path: Path
    """The initial database, a private file that every replay copies (`image`)."""
    schema_version: int
    schema: tuple[tuple[str, str], ...]
    """Each object of the initial schema: its type and its SQL (`touched` reads it)."""
    shapes: Mapping[str, TableShape]
    initial: Snapshot
    """The initial state, its rows read from the image when asked for (`StoredTables`)."""
    ignore: Ignore
    foreign_keys: bool
    max_size_mb: int
    """The most megabytes each replay database (main, temp) and any one value may hold."""
    size_settings: tuple[str, ...]
    """The PRAGMAs that set that cap on a copy of the image (`size`)."""
    kind: ClassVar[str] = "sqlite"

    def __reduce__(self) -> tuple[Any, ...]:
        # Worker processes load the environment again (the tools module is imported there).
        return (load_environment, (dict(self.config), self.base_dir, self.source))

    def connect(self, factory: type[ReplayConnection] = ReplayConnection) -> ReplayConnection:
        """A new connection to a private in-memory copy of the initial database, guarded
        (`guard`: it reaches no file), capped (`size`: it holds at most `max_size_mb`) and
        watched (`limits`: its statements can be stopped)."""
        db = sqlite3.connect(":memory:", factory=factory)
        copy_into(self.image_path, db)
        guard(db, *self.size_settings, *(["PRAGMA foreign_keys = ON"] if self.foreign_keys else []))
        cap_length(db, self.max_size_mb)
        db.set_progress_handler(watch, PROGRESS_STEPS)
        return db

    @property
    def image(self) -> bytes:
        """The initial database, serialised (read from its file: a copy each time)."""
        return self.image_path.read_bytes()

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
            **({"max_size_mb": self.max_size_mb} if "max_size_mb" in self.config else {}),
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
        return load_documents(config, base_dir, source)
    return load_sqlite(config, base_dir, source)


def load_sqlite(config: Mapping[str, Any], base_dir: Path, source: str) -> Environment:
    """A `kind: sqlite` environment: the database image, the tools, the comparison rules."""
    fail = env_error(source)
    refuse_unknown_keys(config, SQLITE_KEYS, fail)
    require_strings(config, fail, database="a path", tools="a path or a module name")
    foreign_keys = config.get("foreign_keys", True)
    if not isinstance(foreign_keys, bool):
        raise fail("foreign_keys", f"must be true or false, got {show(foreign_keys)}")
    max_size_mb = config.get("max_size_mb", DEFAULT_MAX_SIZE_MB)
    problem = size_problem(max_size_mb)
    if problem is not None:
        raise fail("max_size_mb", problem)
    for key in OPTION_KEYS:  # how required outputs are found (`state.outputs`)
        if key in config:
            output_option(key, config[key], fail)
    shared = shared_fields(config, base_dir, source, fail)

    database = base_dir / config["database"]
    try:
        folder = new_folder()
    except OSError as error:
        raise fail("database", f"cannot make a folder for the replays' copy: {error}") from None
    try:
        image = folder / "initial.db"
        sha256 = build_image(database, image, source, max_size_mb)
        if image.stat().st_size > max_size_mb * MB:
            size = f"{image.stat().st_size / MB:,.1f} MB"
            raise fail("max_size_mb", f"the database {database} holds {size}, over the cap "
                                      f"of {max_size_mb} MB: raise max_size_mb")  # fmt: skip
        template = open_image(image)
        try:
            ignore = _ignore(config.get("ignore", {}), read_shapes(template, Ignore()), fail)
            shapes = read_shapes(template, ignore)
            version = schema_version(template)
            read = template.execute("SELECT type, coalesce(sql, '') FROM sqlite_schema")
            schema = tuple(read.fetchall())
            settings = size_settings(template, max_size_mb)
        finally:
            template.close()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    env = Environment(
        **shared,
        database=database,
        database_sha256=sha256,
        image_path=image,
        schema_version=version,
        schema=schema,
        shapes=shapes,
        initial=Snapshot(StoredTables(shapes, partial(read_rows, image))),
        ignore=ignore,
        foreign_keys=foreign_keys,
        max_size_mb=max_size_mb,
        size_settings=settings,
    )
    remove_when_freed(env, folder)
    return env


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
