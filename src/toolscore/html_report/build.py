"""Build the HTML report of a run from where the run is: a report JSON file, the results
store, or a `score` that has just written its report.

Each reads the run's header and summary, streams its cases through the selection
(`embed.select_cases`), finds the chosen cases' plans and produced calls where the inputs
can be read again, and renders the page (`html.report_html`).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolscore.errors import InputError, SpecError
from toolscore.html_report.embed import Caps, select_cases
from toolscore.html_report.html import Provenance, report_html
from toolscore.html_report.sources import (
    ReportFile,
    details_from_files,
    details_from_store,
    file_sha256,
)

if TYPE_CHECKING:
    from toolscore.specs.loading import SpecSet
    from toolscore.store.database import Store


def html_from_report_file(
    path: str,
    caps: Caps,
    inputs: tuple[SpecSet, str, str] | None = None,
    coverage: Mapping[str, Any] | None = None,
) -> str:
    """The page of a report JSON file (`score --json`, `show --json`). The file keeps no
    plans or produced calls: with `inputs` (the specs, cases and outputs files it was scored
    from) the chosen cases are scored again for them; without, its cases show their verdicts
    and mismatches only. `coverage` (`toolscore coverage --json`'s report) adds its section."""
    report = ReportFile(path)
    try:
        selection = select_cases(report.cases(), caps)
    finally:
        report.close()
    head = report.head if coverage is None else {**report.head, "coverage": coverage}
    run = head.get("run")
    if isinstance(run, dict):  # `show --json` of a stored run
        provenance = _stored_provenance(run, path)
    else:
        modified = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.UTC)
        provenance = Provenance(
            date=modified.isoformat(timespec="seconds"),
            date_note="when the report JSON was written: the file records no date",
            rest_hint=f"Every case is in the report JSON, {path}.",
            details_note=(
                "A report JSON keeps each case's verdict and mismatches, not its plans and "
                "produced calls: `toolscore score ... --html` or `toolscore report RUN --html` "
                "(a run saved with --save), or `--specs --cases --outputs` here, show them."
            ),
        )
    details: dict[str, Any] = {}
    if inputs is not None:
        specs, cases_path, outputs_path = inputs
        chosen = {case["id"]: case for case in selection.cases(caps) if "id" in case}
        details = details_from_files(specs, cases_path, outputs_path, chosen)
        given = (("cases", cases_path, file_sha256(cases_path)),
                 ("outputs", outputs_path, file_sha256(outputs_path)))  # fmt: skip
        provenance = replace(provenance, inputs=given, details_note="")
    try:
        return report_html(head, selection, caps, details, provenance)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        # A hand-edited or foreign file: whatever the checks let through is still one line.
        raise InputError(path, f"not a toolscore report JSON: cannot read {error!r}") from None


def html_from_store(
    store: Store, run_ref: str, caps: Caps, coverage: Mapping[str, Any] | None = None
) -> str:
    """The page of a stored run: its report as `show --json` rebuilds it, the chosen cases
    scored again from the stored files for their plans and produced calls, what the
    person's labels of its newest labelled batch say about the scorer, and `coverage` (the
    spec's coverage by the run, `toolscore coverage --json`'s report) when given."""
    from toolscore.calibration import report_block  # noqa: PLC0415
    from toolscore.store.report import stored_report_head  # noqa: PLC0415

    info = store.run(run_ref)
    head = stored_report_head(store, info)
    calibration = report_block(store, info.id)
    if calibration is not None:
        head["calibration"] = calibration
    if coverage is not None:
        head["coverage"] = coverage
    selection = select_cases(store.cases(info.id), caps)
    chosen = {case["id"]: case for case in selection.cases(caps)}
    provenance = _stored_provenance(head["run"], None)
    try:
        specs = store.specs(info)
    except SpecError as error:
        details: dict[str, Any] = {}
        note = f"The run's stored spec file no longer loads ({error.message})."
        provenance = replace(provenance, details_note=note)
    else:
        details = details_from_store(store, info, specs, chosen)
    return report_html(head, selection, caps, details, provenance)


def html_from_score(
    report_path: str,
    specs: SpecSet,
    cases_path: str,
    outputs_path: str,
    caps: Caps,
    label: str | None = None,
    run_id: int | None = None,
) -> str:
    """The page of a `score` run that has just written its report JSON to `report_path`;
    the chosen cases are scored again from the input files (not from a stream)."""
    from toolscore.inputs.paths import is_stream  # noqa: PLC0415

    report = ReportFile(report_path)
    try:
        selection = select_cases(report.cases(), caps)
    finally:
        report.close()
    chosen = {case["id"]: case for case in selection.cases(caps)}
    streams = is_stream(cases_path) or is_stream(outputs_path)
    details = {} if streams else details_from_files(specs, cases_path, outputs_path, chosen)
    hint = (
        f"`toolscore show {run_id} --case ID` shows any case of the saved run."
        if run_id is not None
        else "`--json PATH` writes every case, or `--save` keeps the run for `toolscore show`."
    )
    provenance = Provenance(
        label=label,
        date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        inputs=(
            ("cases", cases_path, file_sha256(cases_path)),
            ("outputs", outputs_path, file_sha256(outputs_path)),
        ),
        rest_hint=hint,
        details_note="The inputs were streams, which cannot be read again for the plans and "
        "produced calls."
        if streams
        else "",
    )
    return report_html(report.head, selection, caps, details, provenance)


def _stored_provenance(run: dict[str, Any], path: str | None) -> Provenance:
    hint = f"`toolscore show {run.get('id')} --case ID` shows any case of the run"
    return Provenance(
        label=run.get("label"),
        date=run.get("created"),
        inputs=(
            ("cases", run.get("cases_path"), run.get("cases_sha256")),
            ("outputs", run.get("outputs_path"), run.get("outputs_sha256")),
        ),
        rest_hint=hint + (f"; every case is in {path}." if path else "."),
        details_note="A report JSON keeps each case's verdict and mismatches, not its plans "
        f"and produced calls: `toolscore report {run.get('id')} --html` shows them."
        if path
        else "",
    )
