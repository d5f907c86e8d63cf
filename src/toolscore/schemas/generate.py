"""Generate a format's schema, write it as its shipped file does, and read the shipped copy
(a test holds the two equal, so the shipped files cannot go stale)."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from toolscore.schemas.cases import cases_schema
from toolscore.schemas.outputs import outputs_schema
from toolscore.schemas.rules import Schema
from toolscore.schemas.spec import spec_schema

GENERATORS: dict[str, Callable[[], Schema]] = {
    "spec": spec_schema,
    "cases": cases_schema,
    "outputs": outputs_schema,
}
NAMES: tuple[str, ...] = tuple(GENERATORS)
"""The formats that have a schema, as `toolscore schema NAME` takes them."""


def generate(name: str) -> Schema:
    """The schema of the format `name` (one of `NAMES`), built from the loaders' tables now."""
    return GENERATORS[name]()


def render(schema: Schema) -> str:
    """A schema as its file holds it: JSON indented by two spaces, keys in the order built,
    ASCII only, ending with a newline."""
    return json.dumps(schema, indent=2) + "\n"


def file_name(name: str) -> str:
    """The shipped file of a format's schema: `spec.schema.json`."""
    return f"{name}.schema.json"


def shipped(name: str) -> str:
    """The text of the schema file shipped in the package for the format `name`."""
    return resources.files("toolscore.schemas").joinpath(file_name(name)).read_text("utf-8")


def write_shipped(folder: Path) -> list[Path]:
    """Write every format's schema into `folder` as its shipped file (`spec.schema.json`),
    generated now: how the package's copies are made after a table changes."""
    written = []
    for name in NAMES:
        path = folder / file_name(name)
        path.write_text(render(generate(name)), encoding="utf-8")
        written.append(path)
    return written
