"""`fields_json`, the JSON block whose keys are its object's attribute names."""

from __future__ import annotations

from dataclasses import dataclass

from toolscore.calibration.agreement import Agreement
from toolscore.stats.records import fields_json


@dataclass(frozen=True)
class _Counts:
    passed: int
    n: int

    @property
    def share(self) -> float:
        return self.passed / self.n


def test_fields_and_properties_in_the_order_named() -> None:
    data = fields_json(_Counts(1, 4), "share", "n", "passed")
    assert data == {"share": 0.25, "n": 4, "passed": 1}
    assert list(data) == ["share", "n", "passed"]


def test_a_block_keeps_its_keys_and_their_order() -> None:
    data = Agreement(n=4, agreed=3, kappa=0.5).to_json()
    assert list(data.items()) == [
        ("n", 4),
        ("agreed", 3),
        ("rate", 0.75),
        ("kappa", 0.5),
        ("kappa_undefined", None),
    ]
