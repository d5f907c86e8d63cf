"""The results store: every run recorded with its spec version, re-scored when rules change.

A run keeps its provenance (toolscore version, the spec set with its hash, version label and
tool versions, the relaxations in force, the git revision), the exact cases and outputs it
was scored from (compressed, stored once per content), its summary and every case result.
So a run can be re-scored under new specs long after its files are gone, and the old number
stays beside the new one. Standard library SQLite, one file:

    with open_store(path) as store:
        meta = RunMeta.from_files(specs, specs_path, cases_path, outputs_path, label, version)
        earlier = store.previous_scores(meta.cases_file.sha256, meta.outputs_file.sha256)
        with store.begin_run(meta) as writer:
            for result in run:
                writer.add(result)
            run_id = writer.finish(run.summary())
"""

from __future__ import annotations

from toolscore.store.compare import Cause, Comparison, Flip, Metric, compare
from toolscore.store.connection import DEFAULT_PATH, ENV_VAR, store_path
from toolscore.store.database import PreviousScore, RunInfo, Store, open_store
from toolscore.store.meta import InputFile, RunMeta
from toolscore.store.migrations import SCHEMA_VERSION
from toolscore.store.saving import StoreSink, describe_previous
from toolscore.store.specdiff import Change, spec_diff
from toolscore.store.writer import RunWriter

__all__ = [
    "DEFAULT_PATH",
    "ENV_VAR",
    "SCHEMA_VERSION",
    "Cause",
    "Change",
    "Comparison",
    "Flip",
    "InputFile",
    "Metric",
    "PreviousScore",
    "RunInfo",
    "RunMeta",
    "RunWriter",
    "Store",
    "StoreSink",
    "compare",
    "describe_previous",
    "open_store",
    "spec_diff",
    "store_path",
]
