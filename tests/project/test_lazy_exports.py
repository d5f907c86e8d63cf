"""The packages whose names are imported on first use (`lazy_loader.attach`): each one's
table of lazy names says what its `TYPE_CHECKING` imports say, every name in it resolves to
the object its module defines, and `__all__` lists them all."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import toolscore

SRC = Path(__file__).resolve().parents[2] / "src"
LAZY_PACKAGES = sorted(
    path.parent.relative_to(SRC).as_posix().replace("/", ".")
    for path in SRC.glob("toolscore/**/__init__.py")
    if "lazy_loader.attach" in path.read_text(encoding="utf-8")
)


def _declared(package: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(module, name) pairs of the package's TYPE_CHECKING imports and of its lazy table."""
    path = SRC / package.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typed: set[tuple[str, str]] = set()
    lazy: set[tuple[str, str]] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                assert statement.module
                typed |= {(statement.module, alias.name) for alias in statement.names}
        if isinstance(node, ast.Assign) and "lazy_loader.attach" in ast.unparse(node.value):
            call = node.value
            assert isinstance(call, ast.Call)
            table = ast.literal_eval(
                next(k.value for k in call.keywords if k.arg == "submod_attrs")
            )
            lazy |= {
                (f"{package}.{module}", name) for module, names in table.items() for name in names
            }
    return typed, lazy


def test_the_lazy_packages_are_found() -> None:
    assert {"toolscore", "toolscore.core", "toolscore.inputs", "toolscore.scoring"} <= set(
        LAZY_PACKAGES
    )


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_the_lazy_table_matches_the_typed_imports(package: str) -> None:
    typed, lazy = _declared(package)
    assert lazy
    assert typed == lazy


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_is_its_module_s_object_and_listed(package: str) -> None:
    module = importlib.import_module(package)
    _, lazy = _declared(package)
    for source, name in lazy:
        assert getattr(module, name) is getattr(importlib.import_module(source), name)
        assert name in module.__all__
    assert set(dir(module)) >= {name for _, name in lazy}


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        toolscore.no_such_name  # noqa: B018
