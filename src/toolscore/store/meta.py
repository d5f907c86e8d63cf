"""What a stored run records about where it came from: inputs, versions, time, git revision."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolscore.errors import InputError
from toolscore.specs.loading import SpecSet
from toolscore.store.content import file_sha256

GIT_TIMEOUT_SECONDS = 5


@dataclass(frozen=True)
class InputFile:
    """A file a run was scored from: the path as the user gave it and its content hash.

    `readable` says the content can be read from `path` when the store does not have it
    yet; a re-scored run's cases and outputs come from the store itself. `copy` is where
    the content is read from instead when `path` was a stream (`-`), copied once.
    """

    path: str
    sha256: str
    readable: bool = True
    copy: str | None = None
    content: bytes | None = None
    """The bytes themselves, when they are no file's (a side rules file bundled with its
    definitions, `specs.side_rules`)."""

    @property
    def content_path(self) -> str:
        """The file to read the content from."""
        return self.copy or self.path


@dataclass(frozen=True)
class RunMeta:
    """Everything a run records besides its results: build it with `from_files`."""

    specs: SpecSet
    specs_file: InputFile
    cases_file: InputFile
    outputs_file: InputFile
    label: str | None
    toolscore_version: str
    created: str
    """When scoring started, ISO 8601 in UTC."""
    git_revision: str | None
    rescored_from: int | None = None

    @classmethod
    def from_files(
        cls,
        specs: SpecSet,
        specs_path: str | Path,
        cases_path: str | Path,
        outputs_path: str | Path,
        label: str | None,
        version: str,
        names: tuple[str, str] | None = None,
    ) -> RunMeta:
        """The provenance of a run about to be scored from these files (hashed here, so that
        `Store.previous_scores` can be asked before scoring). `names` are the cases and
        outputs files as the user gave them, when the paths are copies of streams."""
        return cls(
            specs=specs,
            specs_file=specs_input(specs, specs_path),
            cases_file=_input_file(cases_path, names[0] if names else None),
            outputs_file=_input_file(outputs_path, names[1] if names else None),
            label=label,
            toolscore_version=version,
            created=now(),
            git_revision=git_revision(),
        )


def specs_input(specs: SpecSet, specs_path: str | Path) -> InputFile:
    """The spec file as a run records it: its own bytes, or (a side rules file) the bundle
    of it and its definitions, whose hash is the spec set's."""
    if specs.content is not None:
        return InputFile(str(specs_path), specs.sha256, content=specs.content)
    specs_sha = file_sha256(specs_path)
    if specs.sha256 and specs.sha256 != specs_sha:
        raise InputError(str(specs_path), "the spec file changed after it was loaded")
    return InputFile(str(specs_path), specs_sha)


def _input_file(path: str | Path, name: str | None) -> InputFile:
    if name is None or name == str(path):
        return InputFile(str(path), file_sha256(path))
    return InputFile(name, file_sha256(path), copy=str(path))


def now() -> str:
    """The current time, ISO 8601 in UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def git_revision(cwd: str | Path | None = None) -> str | None:
    """The commit checked out in `cwd` (default: the current directory), or None when there
    is no git, no repository or no commit; never raises, since it must not fail a save."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    revision = done.stdout.strip()
    return revision if done.returncode == 0 and revision else None
