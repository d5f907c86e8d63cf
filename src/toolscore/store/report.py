"""A stored run's report JSON: the header and summary `score --json` wrote, rebuilt from the
store, so that `show --json` and the HTML report of a stored run read the same thing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from toolscore.errors import SpecError
from toolscore.report.lenient import lenient_rules
from toolscore.specs.loading import SpecSet
from toolscore.store.database import RunInfo, Store


def stored_specs(store: Store, info: RunInfo) -> SpecSet:
    """The run's spec set for its report: read again from the store, so that its lenient
    rules are listed; a stand-in with the relaxations alone if it no longer loads."""
    try:
        return replace(store.specs(info), source=info.specs_path)
    except SpecError:
        return info.spec_stand_in()


def stored_report_head(store: Store, info: RunInfo) -> dict[str, Any]:
    """The run's report JSON without its cases (`store.cases(info.id)` streams those): the
    run's record under `run` first, then the header and the summary."""
    head: dict[str, Any] = {
        "run": info.to_json(),
        "toolscore": info.toolscore_version,
        "specs": {
            "version": info.specs_version,
            "sha256": info.specs_sha256,
            "tools": info.tool_versions,
        },
        "relaxations": info.relaxations,
    }
    specs = stored_specs(store, info)
    if specs.tools:
        rubrics = specs.describe().get("rubrics")
        if rubrics is not None:  # the versions of the rubrics in use, as the report had them
            head["specs"]["rubrics"] = rubrics
        head["lenient_rules"] = [rule.to_json() for rule in lenient_rules(specs)]
    head["summary"] = store.summary(info.id)
    return head
