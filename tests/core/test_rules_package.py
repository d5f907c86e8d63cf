"""The shape of `core.rules` and `core.values`: the JSON helpers need nothing but the model,
each family module imports its siblings rather than the package's facade, and the facade
re-exports every rule kind's class under the name the kind table gives."""

from __future__ import annotations

import ast
from pathlib import Path

from toolscore.core import rules
from toolscore.core.rules.base import Rule
from toolscore.core.rules.compile import KIND_OPTIONS

RULES = Path(rules.__file__).parent


def toolscore_imports(path: Path) -> set[str]:
    """The toolscore modules a source file imports from, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("toolscore"):
            found.add(str(node.module))
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("toolscore")}
    return found


def test_values_imports_only_the_model() -> None:
    assert toolscore_imports(RULES.parent / "values.py") == {"toolscore.core.model"}


def test_family_modules_import_their_siblings_not_the_facade() -> None:
    for path in sorted(RULES.glob("*.py")):
        if path.name != "__init__.py":
            assert "toolscore.core.rules" not in toolscore_imports(path), path.name


def test_the_facade_exports_a_class_for_every_kind() -> None:
    exported = {getattr(rules, name) for name in rules.__all__}
    classes = {c for c in exported if isinstance(c, type) and issubclass(c, Rule)}
    assert set(KIND_OPTIONS) <= {c.kind for c in classes}
