"""Every spec, case and outputs line the golden files hold, collected by shape: spec files
(YAML or JSON with `tools`, or a tool list) and the `spec` of golden JSON files; cases files
(JSON Lines, one case a line) and the `case`s of golden files, each with the spec it is read
against; outputs files and the `line`s and `output`s of golden files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from toolscore.errors import CaseError, InputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.specs.loading import parse_specs
from toolscore.state.checks import parse_checks

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (ROOT / "tests", ROOT / "src" / "toolscore" / "examples", ROOT / "examples")
SKIPPED_PARTS = {"tau_bench", "tau2", "multi_turn_func_doc", "possible_answer", "data"}
"""Folders of a suite's own files (its data, not toolscore's formats)."""
SUITE_FOLDERS = {ROOT / "tests" / "bfcl", ROOT / "tests" / "bfcl_multiturn"}
"""Folders holding BFCL's own files (JSON Lines named .json), beside toolscore's golden/."""
SKIPPED_FILES = {"events.golden.json": "the OpenTelemetry events toolscore writes, no input"}


class Golden(NamedTuple):
    """One document of a format, where it came from, and the spec a case is read against."""

    format: str
    where: str
    document: Any
    spec: Any = None


def _files() -> Iterator[Path]:
    for folder in FOLDERS:
        for path in sorted(folder.rglob("*")):
            parts = set(path.relative_to(folder).parts[:-1])
            if path.name in SKIPPED_FILES or parts & SKIPPED_PARTS or path.parent in SUITE_FOLDERS:
                continue
            if path.suffix in (".json", ".jsonl", ".yaml", ".yml"):
                yield path


def _read(path: Path) -> Any:
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if path.suffix == ".json":
        return json.loads(text)
    return yaml.safe_load(text)


def is_spec(data: Any) -> bool:
    """A native spec (a mapping with `tools`) or a tool list (items with name or function)."""
    if isinstance(data, dict):
        return "tools" in data and isinstance(data["tools"], dict)
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(i, dict) and ("function" in i or "parameters" in i) for i in data)
    )


SPEC_OF_FOLDER = {"inspect": Path("..") / "support" / "tools.yaml"}
"""Cases files read against another folder's spec, as their tests and the README read them."""


def _sibling_spec(path: Path) -> Any:
    """The spec beside a cases file (or the one `SPEC_OF_FOLDER` names for its folder)."""
    for name in ("tools.yaml", "tools.json", SPEC_OF_FOLDER.get(path.parent.name)):
        if name is not None and (path.parent / name).exists():
            return _read(path.parent / name)
    raise AssertionError(f"{path}: no spec to read its cases against")


BACKEND_SPECS = {
    "sqlite": ROOT / "examples" / "support" / "env" / "tools.yaml",
    "documents": ROOT / "tests" / "state_docs" / "tools.yaml",
}
"""The specs of the state goldens' back ends (tests/state/*_golden.yaml)."""


def _spec_for(entry: dict[str, Any], spec: Any) -> Any:
    """The spec a golden entry's `case` is read against: its file's, else its back end's."""
    backend = entry.get("backend")
    if spec is None and backend in BACKEND_SPECS:
        return _read(BACKEND_SPECS[backend])
    return spec


def collect() -> list[Golden]:
    """Every golden document, in a stable order."""
    found: list[Golden] = []
    for path in _files():
        where = str(path.relative_to(ROOT))
        data = _read(path)
        if path.suffix == ".jsonl":
            found.extend(_lines(path, where, data))
        elif is_spec(data):
            found.append(Golden("spec", where, data))
        else:
            found.extend(_embedded(where, data))
    return found


def _lines(path: Path, where: str, lines: list[Any]) -> Iterator[Golden]:
    name = path.name
    if name.startswith("cases"):
        spec = _sibling_spec(path)
        for n, line in enumerate(lines, 1):
            yield Golden("cases", f"{where}:{n}", line, spec)
    elif name.startswith("outputs"):
        for n, line in enumerate(lines, 1):
            yield Golden("outputs", f"{where}:{n}", line)
    elif all(isinstance(line, dict) and "line" in line for line in lines):
        for n, entry in enumerate(lines, 1):
            yield Golden("outputs", f"{where}:{n}", {"id": "bad", **entry["line"]})


def _is_line(key: str, node: dict[str, Any]) -> bool:
    """Whether `node[key]` is an outputs line: a format golden's `line`, a state golden's
    `output` beside its `case` (an Inspect log's `output` is no outputs line)."""
    return key == "line" or (key == "output" and "case" in node)


def _embedded(where: str, data: Any) -> Iterator[Golden]:
    """The specs, cases and lines a golden file holds under its `spec`, `case`, `line` and
    `output` keys, at any depth; a case is read against the nearest enclosing spec."""

    def walk(node: Any, at: str, spec: Any) -> Iterator[Golden]:
        if isinstance(node, dict):
            spec = node["spec"] if is_spec(node.get("spec")) else spec
            for key, value in node.items():
                here = f"{at}.{key}" if at else key
                if key == "spec" and is_spec(value):
                    yield Golden("spec", f"{where}:{here}", value)
                elif key == "case" and isinstance(value, dict) and _spec_for(node, spec):
                    case = {"id": "c", **value}
                    yield Golden("cases", f"{where}:{here}", case, _spec_for(node, spec))
                elif key == "cases" and spec is not None and isinstance(value, list):
                    for k, item in enumerate(value):
                        if isinstance(item, dict) and ("plans" in item or "turns" in item):
                            case = {"id": f"c{k}", **item}
                            yield Golden("cases", f"{where}:{here}[{k}]", case, spec)
                elif isinstance(value, dict) and _is_line(key, node):
                    yield Golden("outputs", f"{where}:{here}", {"id": "c", **value})
                else:
                    yield from walk(value, here, spec)
        elif isinstance(node, list):
            for k, item in enumerate(node):
                yield from walk(item, f"{at}[{k}]", spec)

    yield from walk(data, "", None)


def _check_fail(field: str, message: str) -> CaseError:
    return CaseError("<cases>", message, field=field)


def _state_checks(case: dict[str, Any]) -> None:
    """Read the case's `state_checks` (and its turns') as `--env` does, for a SQLite
    environment when a check names a `table`, else for a documents one (the schema, which
    does not know the environment, takes either)."""
    turns = case.get("turns")
    entries = turns if isinstance(turns, list) else []
    nodes = [case.get("state_checks")] + [t.get("state_checks") for t in entries if type(t) is dict]
    for node in nodes:
        if node is not None:
            items = node if isinstance(node, list) else []
            sqlite = any(isinstance(item, dict) and "table" in item for item in items)
            parse_checks(node, not sqlite, _check_fail)


def load_problem(golden: Golden) -> str | None:
    """Why toolscore's loader refuses the document (`FIELD: message`), or None."""
    try:
        if golden.format == "spec":
            _, errors = parse_specs(golden.document)
            if errors:
                raise errors[0]
        elif golden.format == "cases":
            specs, errors = parse_specs(golden.spec)
            assert specs is not None, f"{golden.where}: its spec does not load: {errors[0]}"
            parse_case(golden.document, specs)
            _state_checks(golden.document)
        else:
            parse_output(golden.document)
    except InputError as error:
        return f"{error.field}: {error.message}"
    return None
