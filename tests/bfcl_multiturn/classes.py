"""Two tiny state classes written in the style of BFCL's multi-turn classes (for tests)."""

import copy

DEFAULT_COUNTER = {"count": 0, "history": []}


class TinyCounter:
    def __init__(self):
        self.count = 0
        self.history = []
        self._api_description = "A counter."

    def _load_scenario(self, scenario, long_context=False):
        state = copy.deepcopy(DEFAULT_COUNTER)
        state.update(scenario)
        self.count = state["count"]
        self.history = state["history"]

    def increment(self, by=1):
        if by <= 0:
            return {"error": "by must be positive"}
        self.count += by
        self.history.append(by)
        return {"count": self.count}

    def get_count(self):
        return {"count": self.count}

    def reset(self):
        self.count = 0
        return "reset done"


class TinyNotes:
    def __init__(self):
        self.notes = {}

    def _load_scenario(self, scenario, long_context=False):
        self.notes = dict(scenario.get("notes", {}))

    def add_note(self, title, text):
        self.notes[title] = text
        return {"added": title}

    def read_note(self, title):
        if title not in self.notes:
            raise KeyError(f"no note {title}")
        return self.notes[title]

    def delete_note(self, title):
        del self.notes[title]
        return {"deleted": title}
