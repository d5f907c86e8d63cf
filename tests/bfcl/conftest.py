"""Shared fixtures of the BFCL tests: the multi-turn fixture imported once per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bfcl_runs import ANSWERS, DATA, FIXTURE, HERE, invoke


@pytest.fixture
def converted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(HERE)  # relative paths, as the golden files name them
    out = tmp_path / "mt"
    printed = invoke(
        "import", "bfcl", os.path.relpath(DATA), os.path.relpath(ANSWERS), "--out", str(out),
        "--classes-module", str(FIXTURE / "classes.py"),
    )  # fmt: skip
    assert "3 multi-turn entries: 5 cases (one per turn with calls), 6 tools" in printed
    return out
