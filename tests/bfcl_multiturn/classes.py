"""Two tiny state classes written in the style of BFCL's multi-turn classes (for tests)."""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_COUNTER: dict[str, Any] = {"count": 0, "history": []}


class TinyCounter:
    def __init__(self) -> None:
        self.count = 0
        self.history: list[int] = []
        self._api_description = "A counter."

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        state = copy.deepcopy(DEFAULT_COUNTER)
        state.update(scenario)
        self.count = state["count"]
        self.history = state["history"]

    def increment(self, by: int = 1) -> dict[str, Any]:
        if by <= 0:
            return {"error": "by must be positive"}
        self.count += by
        self.history.append(by)
        return {"count": self.count}

    def get_count(self) -> dict[str, int]:
        return {"count": self.count}

    def reset(self) -> str:
        self.count = 0
        return "reset done"


class TinyNotes:
    def __init__(self) -> None:
        self.notes: dict[str, str] = {}

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        self.notes = dict(scenario.get("notes", {}))

    def add_note(self, title: str, text: str) -> dict[str, str]:
        self.notes[title] = text
        return {"added": title}

    def read_note(self, title: str) -> str:
        if title not in self.notes:
            raise KeyError(f"no note {title}")
        return self.notes[title]

    def delete_note(self, title: str) -> dict[str, str]:
        del self.notes[title]
        return {"deleted": title}
