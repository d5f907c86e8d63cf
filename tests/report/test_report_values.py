"""A value in a mismatch that JSON writers refuse is shown by its short rendering
(`{"$unwritable": ...}`), scalars included: an integer beyond 64 bits and a lone surrogate
are scalars `plain` leaves alone but orjson cannot write (issue 30 checks scalars without
`plain`, never without the check)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from toolscore.core.model import MISSING, Mismatch
from toolscore.report.json_report import mismatch_to_json, safe_value


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (2**70, {"$unwritable": repr(2**70)}),
        ("a\ud800b", {"$unwritable": repr("a\ud800b")}),
        (-(2**64), {"$unwritable": repr(-(2**64))}),
    ],
    ids=["int beyond 64 bits", "lone surrogate", "negative int beyond 64 bits"],
)
def test_an_unwritable_scalar_is_its_rendering(value: Any, shown: Any) -> None:
    assert safe_value(value) == shown
    mismatch = Mismatch("value_mismatch", ("a",), "exact", 1, value, "differs")
    data = mismatch_to_json(mismatch)
    assert data["produced"] == shown
    orjson.dumps(data)  # the case's JSON can be written


@pytest.mark.parametrize("value", ["text", 2**63, -(2**63), 1.5, True, None, 0])
def test_a_writable_scalar_is_itself(value: Any) -> None:
    assert safe_value(value) is value
    assert "produced" not in mismatch_to_json(Mismatch("missing_argument", produced=MISSING))
