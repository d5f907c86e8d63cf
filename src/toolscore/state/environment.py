"""Load a state environment: the initial SQLite database and the tools' implementations.

An environment is the `environment` block of a spec file. Its database (a `.sql` script or a
SQLite file) is read once into an in-memory image that every replay copies, so the user's
file is only ever opened read-only. The image is the one copy of the initial state that the
environment keeps: its rows are read from it when a comparison needs them (`StoredTables`),
and a store's load holds at most two copies of it at once (the image and the database it is
read from), so that a replay's memory is bounded by a few times the store's size. Its tools
module is the user's own code, imported by `environment_common` (what this kind shares with
`documents`) only when the user named an environment. `load_environment` picks the kind.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote as quote_uri

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
from toolscore.state.limits import PROGRESS_STEPS, watch
from toolscore.state.outputs import OPTION_KEYS, output_option
from toolscore.state.size import (
    DEFAULT_MAX_SIZE_MB,
    MB,
    cap_length,
    oversize,
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
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True, kw_only=True)
class Environment(EnvironmentBase):
    """An initial database image, the tools that act on it, and how final states compare."""

    database: Path
    database_sha256: str
    image: bytes
    """The initial database, serialised; every replay opens a private copy of it."""
    schema_version: int
    schema: tuple[tuple[str, str], ...]
    """Each object of the initial schema: its type and its SQL (`touched` reads it)."""
    shapes: Mapping[str, TableShape]
    initial: Snapshot
    """The initial state, its rows read from `image` when asked for (`StoredTables`)."""
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
        db.deserialize(self.image)
        guard(db, *self.size_settings, *(["PRAGMA foreign_keys = ON"] if self.foreign_keys else []))
        cap_length(db, self.max_size_mb)
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
    template, image = _template(database, source, max_size_mb)
    try:
        if image is None:
            image = without_wal(template.serialize())
        if len(image) > max_size_mb * MB:
            size = f"{len(image) / MB:,.1f} MB"
            raise fail("max_size_mb", f"the database {database} holds {size}, over the cap "
                                      f"of {max_size_mb} MB: raise max_size_mb")  # fmt: skip
        ignore = _ignore(config.get("ignore", {}), read_shapes(template, Ignore()), fail)
        shapes = read_shapes(template, ignore)
        version = schema_version(template)
        schema = template.execute("SELECT type, coalesce(sql, '') FROM sqlite_schema").fetchall()
        settings = size_settings(template, max_size_mb)
    finally:
        template.close()
    return Environment(
        **shared,
        database=database,
        database_sha256=_sha256(database),
        image=image,
        schema_version=version,
        schema=tuple(schema),
        shapes=shapes,
        initial=Snapshot(StoredTables(shapes, _image_reader(image))),
        ignore=ignore,
        foreign_keys=foreign_keys,
        max_size_mb=max_size_mb,
        size_settings=settings,
    )


def _template(
    path: Path, source: str, max_size_mb: int
) -> tuple[sqlite3.Connection, bytes | None]:
    """The initial database in memory, built from a SQL script (under the size cap, as a
    replay is) or copied from a SQLite file; and its image when the file itself is that
    image (a file at rest: then nothing serializes the database again)."""
    field = "environment.database"
    if not path.is_file():
        raise InputError(source, f"no such file: {path}", field=field)
    template = sqlite3.connect(":memory:")
    image = None
    try:
        if path.suffix.lower() == ".sql":
            (page_size,) = template.execute("PRAGMA page_size").fetchone()
            template.execute(f"PRAGMA max_page_count = {max_size_mb * MB // page_size}")
            cap_length(template, max_size_mb)
            _run_script(template, path, source, max_size_mb)
        else:
            image = _copy_database(template, path, source)
    except BaseException:
        template.close()
        raise
    return template, image


def _sha256(path: Path) -> str:
    """The file's sha256, read in chunks (never the whole file in memory at once)."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _image_reader(image: bytes) -> Callable[[TableShape], list[tuple[Any, ...]]]:
    """Reads a table's compared rows from a copy of `image` made for the read and freed after
    it: what the initial state's `StoredTables` asks for."""

    def read(shape: TableShape) -> list[tuple[Any, ...]]:
        db = sqlite3.connect(":memory:")
        try:
            db.deserialize(image)
            return db.execute(shape.select).fetchall()
        finally:
            db.close()

    return read


def _run_script(db: sqlite3.Connection, path: Path, source: str, max_size_mb: int) -> None:
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
            cap = (
                f", over the cap of {max_size_mb} MB: raise max_size_mb" if oversize(error) else ""
            )
            raise InputError(
                str(path),
                f"{error} (in the statement {show(first)}){cap}",
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


def _copy_database(db: sqlite3.Connection, path: Path, source: str) -> bytes | None:
    """Copy a SQLite file into `db` without writing to it or beside it; return the image
    read, when the file was read as one (None: the database must be serialized).

    A file at rest is read as bytes and loaded into memory: those bytes are the image. When a
    `-wal` or `-journal` file lies beside it, another connection has changes in flight:
    SQLite itself reads them then, from a read-only connection.
    """
    with path.open("rb") as file:
        magic = file.read(len(_SQLITE_MAGIC))
    if magic != _SQLITE_MAGIC:
        raise InputError(
            source,
            f"{path} is not a SQLite database (use a .sql script or a SQLite file)",
            field="environment.database",
        )
    image = None
    try:
        if any(path.with_name(path.name + s).exists() for s in ("-wal", "-journal")):
            uri = f"file:{quote_uri(str(path.resolve()))}?mode=ro"
            original = sqlite3.connect(uri, uri=True)
            try:
                original.backup(db)
            finally:
                original.close()
        else:
            image = without_wal(path.read_bytes())
            db.deserialize(image)
        db.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlite3.Error as error:
        raise InputError(
            source, f"cannot read the database {path}: {error}", field="environment.database"
        ) from None
    return image


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
