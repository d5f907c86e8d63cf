"""Drafting a spec from what a team already has (`toolscore spec init`): tool definitions
in any format the spec loader reads, BFCL's function docs, or Python functions; each
argument's rule translated or guessed, each guess commented and marked `draft:` in its
reason for `lint` to report, and, from a cases file, proposals in comments."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolscore.drafting.draft import Draft, draft_tool
from toolscore.drafting.emit import emit
from toolscore.drafting.proposals import PROPOSAL, propose
from toolscore.drafting.sources import DRAFT_FORMATS, Source, read_source
from toolscore.specs.problems import DRAFT_PREFIX

__all__ = ["DRAFT_FORMATS", "DRAFT_PREFIX", "PROPOSAL", "Drafted", "draft_spec"]


@dataclass(frozen=True)
class Drafted:
    """A drafted spec: the YAML text, and what it holds."""

    text: str
    draft: Draft
    proposals: int


def draft_spec(
    path: str | Path | None = None,
    *,
    format: str | None = None,
    python: str | None = None,
    cases: str | Path | None = None,
) -> Drafted:
    """Draft a spec from the definitions file `path` (in `format`, None: told by its
    shape) or from the Python functions `python` (`MODULE:FUNC[,FUNC...]`); with `cases`,
    proposals from its plans' values are added as comments."""
    if python is not None:
        from toolscore.drafting.python_tools import python_definitions  # noqa: PLC0415

        source = Source("python", python_definitions(python))
        origin = f"the Python functions {python}"
    else:
        assert path is not None
        source = read_source(path, format)
        origin = f"{path} ({source.format} tool definitions)"
    tools = [draft_tool(d.name, d.description, d.schema) for d in source.definitions]
    for tool in tools:
        tool.comments += source.notes.get(tool.name, [])
    notes = [
        f"Drafted by `toolscore spec init` from {origin}.",
        'Each rule whose reason starts with "draft:" is a guess: check it against the tool,',
        "then reword the reason (or drop it); `toolscore lint` lists the guesses until then.",
    ]
    draft = Draft(str(path or python), source.format, tools, notes)
    proposals = 0
    if cases is not None:
        proposals = propose(draft, cases)
        draft.notes.append(
            f'Comments starting "{PROPOSAL}" suggest rules from {cases}; none is applied.'
        )
    return Drafted(emit(draft), draft, proposals)
