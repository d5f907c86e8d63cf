"""Shared fixtures of the BFCL tests: the multi-turn fixture imported once per test, in the
older per-turn layout (`converted`) and as conversations (`conversations`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bfcl_runs import ANSWERS, DATA, FIXTURE, HERE, invoke


def _imported(out: Path, *layout: str) -> str:
    return invoke(
        "import", "bfcl", os.path.relpath(DATA), os.path.relpath(ANSWERS), "--out", str(out),
        "--classes-module", str(FIXTURE / "classes.py"), *layout,
    )  # fmt: skip


@pytest.fixture
def converted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(HERE)  # relative paths, as the golden files name them
    out = tmp_path / "mt"
    printed = _imported(out, "--per-turn")
    assert "3 multi-turn entries: 5 cases (one per turn with calls), 6 tools" in printed
    return out


@pytest.fixture
def conversations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(HERE)
    out = tmp_path / "conversations"
    printed = _imported(out)
    assert "3 multi-turn entries: 3 cases (conversations, one per entry), 6 tools" in printed
    return out
