"""`score --html PATH`: the one-file HTML page of a run, as one of the run's outputs.

The page is made from the report JSON once that is written, so the report goes to a file:
`--json`'s own, or a temporary one (then copied to stdout or the device `--json` names, if
any). The sink must therefore be finished after the report's. jinja2 is imported only when
the page is made.
"""

from __future__ import annotations

import secrets
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from toolscore.errors import InputError

if TYPE_CHECKING:
    from toolscore.report.sink import Late, Scored
    from toolscore.scoring.summary import Summary
    from toolscore.specs.loading import SpecSet


class HtmlSink:
    """The page at `path` (a `report.sink.Sink`), made from the report at `spool` with the
    run's specs, inputs (`cases`, `outputs`) and label; `json_target` is where the report
    JSON was asked for (None: nowhere, the report is a temporary file)."""

    def __init__(
        self,
        path: str,
        json_target: str | None,
        specs: SpecSet,
        inputs: tuple[str, str],
        label: str | None,
    ) -> None:
        if Path(path).is_dir():
            raise InputError(path, "is a directory, not an HTML file")
        if not Path(path).parent.is_dir():  # found before scoring, not after
            raise InputError(path, "cannot write: its directory does not exist")
        self.path = path
        self.specs = specs
        self.inputs = inputs
        self.label = label
        self.copy_to: str | None = None
        self.temporary: Path | None = None
        target = Path(json_target) if json_target and json_target != "-" else None
        if target is not None and (not target.exists() or target.is_file()):
            self.spool = str(target)
        else:
            # Only named here: the report writer creates it once scoring has finished.
            self.copy_to = json_target
            name = f"toolscore-report-{secrets.token_hex(8)}.json"
            self.temporary = Path(tempfile.gettempdir()) / name
            self.spool = str(self.temporary)

    def add(self, outcome: Scored) -> None:
        """Nothing to take: the page is made from the finished report."""

    def finish(self, summary: Summary, late: Late, run_id: int | None) -> None:
        """Copy the report where `--json` wanted it, then write the page."""
        from toolscore.html_report.build import html_from_score  # noqa: PLC0415 - jinja2 here
        from toolscore.html_report.embed import Caps  # noqa: PLC0415
        from toolscore.html_report.page import write_page  # noqa: PLC0415

        try:
            if self.copy_to is not None:
                self._copy_report(self.copy_to)
            cases, outputs = self.inputs
            page = html_from_score(
                self.spool, self.specs, cases, outputs, Caps(), self.label, run_id
            )
            write_page(self.path, page)
        finally:
            self.discard()

    def _copy_report(self, target: str) -> None:
        with open(self.spool, "rb") as source:
            if target == "-":
                shutil.copyfileobj(source, sys.stdout.buffer)
                sys.stdout.buffer.flush()
            else:
                with open(target, "wb") as out:
                    shutil.copyfileobj(source, out)

    def discard(self) -> None:
        """Remove the temporary report, if one was made."""
        if self.temporary is not None:
            self.temporary.unlink(missing_ok=True)
