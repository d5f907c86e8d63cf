"""The `sdk_*.json` transcript fixtures are what the installed provider SDKs write today.

tests/formats/make_sdk_fixtures.py builds one conversation from anthropic, openai and
google-genai objects and dumps it in every spelling; this test runs it again and compares with
the committed files, so that a new SDK version that writes another shape is noticed (then run
the script, and check that the readers still read the new files: tests/inputs/test_formats.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixture_scripts import load_script

FORMATS_DIR = Path(__file__).parents[1] / "formats"


GENERATOR = load_script(FORMATS_DIR / "make_sdk_fixtures.py")
BUILT = GENERATOR.build()


def test_every_committed_sdk_fixture_is_generated() -> None:
    committed = {path.name for path in FORMATS_DIR.glob("sdk_*.json")}
    assert committed == set(BUILT)


def test_every_provider_and_spelling_is_covered() -> None:
    formats = {data["format"] for data in BUILT.values()}
    assert formats == {"anthropic", "openai-chat", "openai-responses", "gemini"}
    gemini = [data["line"]["contents"] for data in BUILT.values() if data["format"] == "gemini"]
    text = [str(contents) for contents in gemini]
    assert any("'function_call'" in t and "None" in t for t in text)  # snake_case, with nulls
    assert any("'function_call'" in t and "None" not in t for t in text)  # exclude_none
    assert any("'functionCall'" in t and "None" not in t for t in text)  # REST camelCase


@pytest.mark.parametrize("name", sorted(BUILT))
def test_sdk_fixture_matches_what_the_sdk_writes(name: str) -> None:
    committed = (FORMATS_DIR / name).read_text(encoding="utf-8")
    assert GENERATOR.text(BUILT[name]) == committed, (
        f"{name}: the installed SDK writes another shape; run tests/formats/make_sdk_fixtures.py"
    )
