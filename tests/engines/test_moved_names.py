"""The README's batch-interface imports of before issue 24 still work for one release: the
old modules re-export the moved ones and say where they went."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

import pytest

import toolscore.engines.batch
import toolscore.engines.partitions


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("toolscore.batch", toolscore.engines.batch),
        ("toolscore.join", toolscore.engines.partitions),
    ],
)
def test_the_old_module_warns_and_gives_the_same_objects(old: str, new: ModuleType) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new.__name__}"):
        shim = importlib.import_module(old)
    assert shim.__all__
    for name in shim.__all__:
        assert getattr(shim, name) is getattr(new, name)
