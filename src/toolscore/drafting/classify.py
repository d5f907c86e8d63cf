"""How `spec init` guesses the rule of a string argument from its name, `format` and
description: identifiers are `exact`, free text is `text`, anything else `exact` until a
person says the tool resolves it more leniently. Every guess carries its reason, starting
with `draft:`, which `lint` reports until someone confirms it (docs/formats.md 2.9)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from toolscore.specs.problems import DRAFT_PREFIX

REVIEW = "review: exact unless the tool resolves it case-insensitively"
IDENTIFIER_WORDS = frozenset({"id", "ids", "uuid", "guid", "code", "codes", "email", "url", "uri"})
"""Last words of an argument's name that make it an identifier (`order_id`, `countryCode`)."""
IDENTIFIER_FORMATS = frozenset(
    {"uuid", "email", "idn-email", "uri", "url", "iri", "uri-reference", "hostname", "ipv4", "ipv6"}
)
FREE_TEXT_WORDS = frozenset(
    {
        "note", "notes", "message", "messages", "body", "query", "description", "comment",
        "comments", "text", "content", "summary", "reason", "explanation", "feedback",
        "instructions", "prompt", "subject", "details", "remarks", "reply", "answer", "thought",
    }
)  # fmt: skip
"""Last words of an argument's name that make it free text (`note`, `email_body`)."""
_FREE_TEXT_PHRASES = ("free text", "free-text", "free-form", "freeform", "natural language")


@dataclass(frozen=True, slots=True)
class Guess:
    """A string argument's drafted kind and why (the reason, without `draft:`)."""

    kind: str
    why: str

    @property
    def reason(self) -> str:
        """The reason as the draft writes it."""
        return f"{DRAFT_PREFIX} {self.why}"


def words(name: str) -> list[str]:
    """An argument name's words, lower case: `orderId` and `order-id` are `order`, `id`."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word]


def classify_string(name: str, schema: Any) -> Guess:
    """The guess for a string argument called `name` with the JSON Schema `schema`."""
    prop = schema if isinstance(schema, dict) else {}
    form = prop.get("format")
    if isinstance(form, str) and form.lower() in IDENTIFIER_FORMATS:
        return Guess("exact", f"an identifier (format: {form}): compared exactly")
    named = words(name)
    last = named[-1] if named else ""
    if last in IDENTIFIER_WORDS:
        return Guess("exact", f"an identifier (its name ends in {last!r}): compared exactly")
    if last in FREE_TEXT_WORDS:
        return Guess(
            "text",
            f"free text (its name ends in {last!r}): never compared by the call scorer; "
            "add a rubric if what it says matters",
        )
    description = prop.get("description")
    if isinstance(description, str) and any(p in description.lower() for p in _FREE_TEXT_PHRASES):
        return Guess(
            "text",
            "free text (its description says so): never compared by the call scorer; "
            "add a rubric if what it says matters",
        )
    return Guess("exact", REVIEW)
