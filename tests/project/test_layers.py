"""The layers of docs/architecture.md, enforced: every module's imports (function-level and
`TYPE_CHECKING` ones too), read with `ast`, go only to a lower layer or to the module's own
package; no module imports the public facade `toolscore`; there is no import cycle between
modules nor between packages; the top level stays a few base modules; and no module is long."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "toolscore"

LAYERS: dict[str, float] = {
    # 0: the base, with its own order: escape < errors < files, limits
    "toolscore.escape": 0.0,
    "toolscore._version": 0.0,
    "toolscore.build": 0.0,
    "toolscore.stats": 0.0,
    "toolscore.errors": 0.1,
    "toolscore.files": 0.2,
    "toolscore.limits": 0.2,
    "toolscore.core": 1,
    "toolscore.rubrics": 2,
    "toolscore.specs": 3,
    "toolscore.inputs": 4,
    "toolscore.state": 4,
    "toolscore.scoring": 5,
    "toolscore": 5.5,  # the public facade: layers 0-5 only, and nothing inside imports it
    "toolscore.report": 6,
    "toolscore.store": 7,
    "toolscore.engines": 8,
    "toolscore.calibration": 8,
    "toolscore.html_report": 9,
    "toolscore.run": 10,
    "toolscore.lint": 10,
    "toolscore.schemas": 10,
    "toolscore.audit": 10,
    "toolscore.bfcl": 10,
    "toolscore.taubench": 10,
    "toolscore.tau2": 10,
    "toolscore.integrations": 10,
    "toolscore.drafting": 10,
    "toolscore.batch": 10,  # deprecated re-export of engines.batch, for one release
    "toolscore.join": 10,  # deprecated re-export of engines.partitions, for one release
    "toolscore.cli": 11,
    "toolscore.__main__": 12,  # `python -m toolscore`: the command line, run
}
"""Each top-level module or package of `toolscore` and its layer (docs/architecture.md). A
module imports only from a lower layer or from inside its own package; packages on one layer
do not import each other."""

CORE_ORDER: dict[str, int] = {
    "toolscore.core.model": 0,
    "toolscore.core.values": 1,
    "toolscore.core.rules": 2,
    "toolscore.core.assignment": 3,
    "toolscore.core.dataflow": 3,
    "toolscore.core.arguments": 4,
    "toolscore.core.plan_calls": 4,
    "toolscore.core.plans": 5,
    "toolscore.core.forbid": 5,
    "toolscore.core.call_order": 1,
    "toolscore.core.diagnosis": 6,
}
"""The order inside `core`: model < values < rules < assignment, dataflow < arguments <
plans < diagnosis."""

ALLOWED: dict[tuple[str, str], str] = {}
"""Imports that break the rule, each with its reason (at most three)."""

MAX_TOP_LEVEL_MODULES = 12
MAX_LINES = 600
"""A module holds one job; past this many lines it holds several (split it by concept)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str) -> Iterator[tuple[str, int]]:
    """The toolscore modules `name` imports (the module itself where a name is imported
    from it, the submodule where the name is one), with the line of each import."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        for named in targets:
            if named == "toolscore" or named.startswith("toolscore."):
                target = named
                while target not in MODULES:
                    target = target.rpartition(".")[0]
                yield target, node.lineno


def top(name: str) -> str:
    """The top-level module or package `name` belongs to (`toolscore` for the facade)."""
    return ".".join(name.split(".")[:2])


def core_rank(name: str) -> int | None:
    for prefix, rank in CORE_ORDER.items():
        if name == prefix or name.startswith(prefix + "."):
            return rank
    return None


def violation(source: str, target: str) -> str | None:
    """Why `source` may not import `target`, or None when it may."""
    if target == "toolscore":
        return "imports the public facade (import the module that defines the name)"
    if target == source:
        return None
    here, there = top(source), top(target)
    if here == there and here != "toolscore":
        if target == here and source != here:
            return f"imports its own package's facade {here} (import the sibling module)"
        if here == "toolscore.core":
            mine, theirs = core_rank(source), core_rank(target)
            if mine is not None and theirs is not None and theirs > mine:
                return "imports upward inside core"
        return None
    if here not in LAYERS or there not in LAYERS:
        return f"{here if here not in LAYERS else there} has no layer in LAYERS"
    if LAYERS[there] < LAYERS[here]:
        return None
    if LAYERS[there] == LAYERS[here]:
        return f"imports {there}, a sibling on its layer"
    return f"imports {there}, a higher layer"


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for name in MODULES:
        edges[name] |= {target for target, _ in imports(name) if target != name}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_import_goes_down_the_layers() -> None:
    problems = []
    for name, path in MODULES.items():
        for target, line in imports(name):
            why = violation(name, target)
            if why is not None and (name, target) not in ALLOWED:
                problems.append(f"{path.relative_to(SRC)}:{line}: {why}")
    assert problems == []


def test_the_allow_list_is_short_and_still_needed() -> None:
    assert len(ALLOWED) <= 3
    for (source, target), reason in ALLOWED.items():
        assert reason
        assert target in {t for t, _ in imports(source)}, f"{source} no longer imports {target}"


def test_no_cycle_between_modules() -> None:
    assert cycles(graph()) == []


def test_no_cycle_between_packages() -> None:
    packages: dict[str, set[str]] = defaultdict(set)
    for source, targets in graph().items():
        packages[top(source)] |= {top(t) for t in targets if top(t) != top(source)}
    assert cycles(packages) == []


def test_every_module_has_a_layer() -> None:
    assert sorted({top(name) for name in MODULES} - set(LAYERS)) == []


def test_the_top_level_is_a_few_base_modules() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules


def test_no_module_is_long() -> None:
    long = {
        str(path.relative_to(SRC)): lines
        for path in MODULES.values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


@pytest.mark.parametrize(
    ("source", "target", "why"),
    [
        ("toolscore.core.model", "toolscore.scoring.case", "a higher layer"),
        ("toolscore.inputs.cases", "toolscore.state", "a sibling on its layer"),
        ("toolscore.scoring.case", "toolscore.scoring", "own package's facade"),
        ("toolscore.report.terminal", "toolscore", "public facade"),
        ("toolscore.core.model", "toolscore.core.plans", "upward inside core"),
    ],
)
def test_the_rule_catches_a_wrong_import(source: str, target: str, why: str) -> None:
    """The control: each kind of wrong import is reported (so a passing run means something)."""
    found = violation(source, target)
    assert found is not None
    assert why in found


def test_the_rule_lets_a_right_import_through() -> None:
    assert violation("toolscore.scoring.case", "toolscore.core.model") is None
    assert violation("toolscore.cli.app", "toolscore.scoring") is None
    assert violation("toolscore.scoring.check", "toolscore.scoring.case") is None


RUN_INTERNALS = (
    "toolscore.engines.batch",
    "toolscore.engines.local",
    "toolscore.engines.ray",
    "toolscore.inputs.join",
    "toolscore.scoring.stream",
    "toolscore.scoring.rubric_run",
    "toolscore.store.saving",
    "toolscore.store.writer",
)
"""What a scoring run is made of: chunking, workers, engines, the late rubric pass, saving."""


def test_the_command_line_leaves_the_run_to_the_library() -> None:
    """`cli` parses options, calls `toolscore.run` (or another library function) and prints:
    it drives no engine, joins nothing and saves nothing itself."""
    assert set(RUN_INTERNALS) <= set(MODULES)  # the names still name modules
    problems = [
        f"{name} imports {target}"
        for name in MODULES
        if top(name) == "toolscore.cli"
        for target, _ in imports(name)
        if target in RUN_INTERNALS
    ]
    assert problems == []


def test_a_cycle_is_found() -> None:
    """The control of the cycle tests: a two-module cycle is reported."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


NO_IO = {"os", "sys", "io", "pathlib", "shutil", "tempfile", "subprocess", "socket", "sqlite3"}
NO_IO |= {"click", "rich", "urllib", "http", "multiprocessing", "threading"}


def test_the_core_does_no_io() -> None:
    """`core` compares values: it opens no file, starts nothing and knows no command line."""
    problems = []
    for name, path in MODULES.items():
        if top(name) != "toolscore.core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                used = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                used = {(node.module or "").split(".")[0]}
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                used = {"open"} if node.func.id == "open" else set()
            else:
                continue
            problems += [f"{name}:{node.lineno}: {u}" for u in sorted(used & (NO_IO | {"open"}))]
    assert problems == []
