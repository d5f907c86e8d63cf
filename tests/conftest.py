"""Test settings: under CI, Hypothesis runs derandomized so that a run is repeatable."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# tau-bench's layout names its task files tasks_test.py: data for the importer, not tests.
collect_ignore_glob = ["taubench_fixture/*"]
