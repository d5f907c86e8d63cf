"""The outputs check: strings a case requires in the agent's final response.

Both the required string and the response are normalised before a substring test, so that
the check does not fail on typography:

1. Unicode NFKC (full-width digits, ligatures and no-break spaces become plain characters);
2. `str.casefold()`;
3. a comma between a digit and exactly three digits is dropped, as a thousands separator
   ("1,000" -> "1000", "12,500.00" -> "12500.00"; "1,5" and "1,0000" are left alone);
4. runs of whitespace become one space, and leading and trailing whitespace goes.

Nothing else is forgiven: "12.5" does not match "12.50", and "EUR" does not match "euros".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def normalise_text(text: str) -> str:
    """A text in the form the outputs check compares (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_THOUSANDS.sub("", text).split())


def missing_outputs(required: Sequence[str], response: str | None) -> tuple[str, ...]:
    """The required strings (as written in the case) that the response does not contain."""
    found = normalise_text(response or "")
    return tuple(text for text in required if normalise_text(text) not in found)
