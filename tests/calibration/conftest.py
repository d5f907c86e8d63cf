"""Shared fixtures of the calibration tests: a results store holding a batch to label."""

from __future__ import annotations

from pathlib import Path

import pytest

from label_pages import make_batch


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "results.db"
    make_batch(path)
    return path
