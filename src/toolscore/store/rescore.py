"""Re-score a stored run under new specs, from the cases and outputs the store kept.

The old run stays as it was; the new one is stored beside it, linked by `rescored_from`, so
that the old number and the new one can be compared.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from toolscore import __version__
from toolscore.cases import may_hold_markers, parse_case
from toolscore.errors import CaseError, OutputError
from toolscore.jsonl import parse_line
from toolscore.model import Case, Trajectory
from toolscore.outputs import parse_output
from toolscore.scoring import score
from toolscore.specs import SpecSet, load_specs
from toolscore.store.meta import InputFile, RunMeta, git_revision, now

if TYPE_CHECKING:
    from toolscore.store.database import Store


def rescore(store: Store, run_id: int, specs_path: str | Path, label: str | None = None) -> int:
    """Score run `run_id`'s stored inputs under the specs at `specs_path`; return the new
    run's id. The label defaults to the old run's; a case the new specs cannot read (a tool
    they dropped) is an input error naming the stored file and line."""
    old = store.run(run_id)
    specs = load_specs(specs_path)
    meta = RunMeta(
        specs=specs,
        specs_file=InputFile(str(specs_path), specs.sha256),
        cases_file=InputFile(old.cases_path, old.cases_sha256, readable=False),
        outputs_file=InputFile(old.outputs_path, old.outputs_sha256, readable=False),
        label=old.label if label is None else label,
        toolscore_version=__version__,
        created=now(),
        git_revision=git_revision(),
        rescored_from=old.id,
    )
    sources = (
        f"{old.cases_path} (stored with run {old.id})",
        f"{old.outputs_path} (stored with run {old.id})",
    )
    with store.begin_run(meta) as writer:
        run = score(
            specs,
            _cases(store, old.cases_sha256, specs, sources[0]),
            _outputs(store, old.outputs_sha256, sources[1]),
            sources=sources,
        )
        for result in run:
            writer.add(result)
        return writer.finish(run.summary())


def _cases(store: Store, sha256: str, specs: SpecSet, source: str) -> Iterator[Case]:
    for number, raw in store.content_lines(sha256):
        data = parse_line(raw, source, number, CaseError)
        yield parse_case(data, specs, source, number, has_markers=may_hold_markers(raw))


def _outputs(store: Store, sha256: str, source: str) -> Iterator[Trajectory]:
    for number, raw in store.content_lines(sha256):
        yield parse_output(
            parse_line(raw, source, number, OutputError, lenient=True), source, number
        )
