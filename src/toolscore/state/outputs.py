"""The outputs check: strings, and values the agent's calls returned, that a case requires in
what the agent said (`required_outputs`; the values: `core.answers`).

Where the strings are looked for (`required_outputs_in`, a case key, else the environment's):

- `final` (the default): the final response (`response`, or the text of the transcript's
  last assistant message after the last user message);
- `any`: any assistant message of the transcript, in any turn, or the line's `response`
  (the tau-bench way). Each required string may be found in a different message, but one
  string must stand within one message.

How both sides are normalised before a substring test (`normalise`, a case key, else the
environment's):

- `default`: Unicode NFKC (full-width digits, ligatures and no-break spaces become plain
  characters); `str.casefold()`; a comma between a digit and exactly three digits is dropped,
  as a thousands separator ("1,000" -> "1000", "12,500.00" -> "12500.00"; "1,5" and "1,0000"
  are left alone); runs of whitespace become one space, and leading and trailing whitespace
  goes. Nothing else is forgiven: "12.5" does not match "12.50", "EUR" does not match "euros".
- `tau-bench`: as tau-bench's reward does it: the required string lower-cased
  (`str.lower()`), each message lower-cased with every comma deleted; nothing else.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolscore.core.answers import NO_CALLS, RequiredOutput, ScoredCalls, missing_ref_outputs
from toolscore.core.values import show
from toolscore.errors import InputError

PLACES = ("final", "any")
"""The values of `required_outputs_in`."""
NORMALISATIONS = ("default", "tau-bench")
"""The values of `normalise`."""
OPTION_KEYS = ("required_outputs_in", "normalise")
"""The keys, in a case or an environment block, that set how required outputs are found."""

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def normalise_text(text: str) -> str:
    """A text in the form the `default` outputs check compares (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_THOUSANDS.sub("", text).split())


def _tau_bench_said(text: str) -> str:
    return text.lower().replace(",", "")


_FORMS: Mapping[str, tuple[Callable[[str], str], Callable[[str], str]]] = {
    "default": (normalise_text, normalise_text),
    "tau-bench": (str.lower, _tau_bench_said),
}
"""Per normalisation: how a required string is normalised, and how a message is."""


def missing_outputs(
    required: Sequence[str],
    response: str | None,
    *,
    said: Sequence[str] = (),
    place: str = "final",
    normalise: str = "default",
) -> tuple[str, ...]:
    """The required strings (as written in the case) not found where `place` says: in the
    final `response`, or (`any`) in any of the assistant texts `said` or the `response`."""
    of_required, of_said = _FORMS[normalise]
    found = [of_said(text) for text in _texts(response, said, place)]
    return tuple(text for text in required if not any(of_required(text) in f for f in found))


def missing_required(
    required: Sequence[RequiredOutput],
    response: str | None,
    *,
    said: Sequence[str] = (),
    place: str = "final",
    normalise: str = "default",
    scored: ScoredCalls = NO_CALLS,
) -> tuple[str, ...]:
    """`missing_outputs` over strings and references alike, in the case's order: a string as
    written, a reference written with the value it held (`core.answers`), looked up in
    `scored`'s calls."""
    texts = _texts(response, said, place)
    of_required, of_said = _FORMS[normalise]
    found = [of_said(text) for text in texts]
    missing: list[str] = []
    for entry in required:
        if isinstance(entry, str):
            if not any(of_required(entry) in f for f in found):
                missing.append(entry)
        else:
            missing += missing_ref_outputs(
                (entry,), texts, scored, of_value=of_required, of_text=of_said
            )
    return tuple(missing)


def _texts(response: str | None, said: Sequence[str], place: str) -> Sequence[str]:
    """The texts required outputs are looked for in, as `place` says."""
    if place == "final":
        return (response or "",)
    return [*said, response] if response is not None and response not in said else said


def output_option(name: str, node: Any, fail: Callable[[str, str], InputError]) -> str:
    """A `required_outputs_in` or `normalise` value, checked (`fail(key, message)` makes the
    error naming where it stands)."""
    allowed = PLACES if name == "required_outputs_in" else NORMALISATIONS
    if node not in allowed:
        raise fail(name, f"must be one of {', '.join(allowed)}, got {show(node)}")
    return str(node)


def output_options(
    case_extra: Mapping[str, Any],
    env_config: Mapping[str, Any],
    fail: Callable[[str, str], InputError],
) -> tuple[str, str]:
    """(`required_outputs_in`, `normalise`) for one case: the case's keys, else the
    environment's, else `final` and `default`."""
    place = case_extra.get("required_outputs_in", env_config.get("required_outputs_in", "final"))
    normalise = case_extra.get("normalise", env_config.get("normalise", "default"))
    return (
        output_option("required_outputs_in", place, fail),
        output_option("normalise", normalise, fail),
    )
