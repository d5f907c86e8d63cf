"""Test settings: under CI, Hypothesis runs derandomized so that a run is repeatable; the
cache of parsed specs goes to a folder of this test session, never the user's own."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# tau-bench's layout names its task files tasks_test.py: data for the importer, not tests.
collect_ignore_glob = ["taubench_fixture/*"]

# Set before any test runs, so that the commands tests start in subprocesses inherit it.
_SPEC_CACHE = tempfile.mkdtemp(prefix="toolscore-test-cache-")
os.environ["TOOLSCORE_CACHE_DIR"] = _SPEC_CACHE
atexit.register(shutil.rmtree, _SPEC_CACHE, True)
