"""Errors about the user's input (specs, cases, outputs files): each names file, line and field.

They are distinct from anything an agent produced: bad produced output is a scored failure,
never an exception. `OptionsError` is about a run's options rather than a file.
`ReplayInterrupted` lives here too, beside them, because the command line reports it as one
line without importing the replay machinery.
"""

from __future__ import annotations

from toolscore.escape import printable


class InputError(Exception):
    """A file the user gave cannot be used; the message is one line naming where and why."""

    def __init__(
        self, source: str, message: str, *, line: int | None = None, field: str | None = None
    ) -> None:
        self.source = source
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt field by field when it crosses from a worker process to the main one.
        return (_rebuild, (type(self), self.source, self.message, self.line, self.field))

    def __str__(self) -> str:
        source = "<stdin>" if self.source == "-" else self.source  # `--outputs -`
        where = source if self.line is None else f"{source}:{self.line}"
        text = (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )
        return printable(text)  # a key or a value quoted from the file may hold a newline


class SpecError(InputError):
    """A spec file that is not a valid spec; `field` is the dotted path to the bad node."""


class CaseError(InputError):
    """A cases file line that is not a valid case."""


class OutputError(InputError):
    """An outputs file line whose structure (not the agent's content) is broken."""


class OptionsError(ValueError):
    """Options of a run that do not go together, or a value of one that cannot be used
    (`--address` without `--engine ray`, say): the command line shows the message as a
    usage error, about `option` when one is named."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.option = option


class ReplayInterrupted(KeyboardInterrupt):
    """A KeyboardInterrupt (Ctrl-C, or raised by tool code) during a replay, with where."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where

    def __str__(self) -> str:
        return f"interrupted during {self.where}"


def _rebuild(
    kind: type[InputError], source: str, message: str, line: int | None, field: str | None
) -> InputError:
    return kind(source, message, line=line, field=field)
