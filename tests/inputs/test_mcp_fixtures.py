"""The `mcp_sdk_*.json` fixtures and `mcp/sdk_sessions.jsonl` are what the installed `mcp`
package's client and server exchange today.

tests/formats/make_mcp_fixtures.py runs one session with the SDK's `Client` and `MCPServer` over
its in-memory transport and records every message; this test runs it again (when `mcp` is
installed: it is a dev extra) and compares with the committed files, so that an SDK version that
writes other messages is noticed (then run the script, and check that the reader still reads
them: tests/inputs/test_formats.py and test_mcp.py read the committed files without `mcp`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixture_scripts import load_script

FORMATS_DIR = Path(__file__).parents[1] / "formats"

pytest.importorskip("mcp")
GENERATOR = load_script(FORMATS_DIR / "make_mcp_fixtures.py")
BUILT = GENERATOR.build()


def test_every_committed_mcp_sdk_fixture_is_generated() -> None:
    committed = {path.name for path in FORMATS_DIR.glob("mcp_sdk_*.json")}
    assert committed | {"mcp/sdk_sessions.jsonl"} == set(BUILT)


def test_both_protocol_eras_are_covered() -> None:
    texts = {name: GENERATOR.text(data) for name, data in BUILT.items()}
    assert '"method": "initialize"' in texts["mcp_sdk_2025_11_25.json"]
    assert '"method": "server/discover"' in texts["mcp_sdk_2026_07_28.json"]
    assert '"resultType": "complete"' in texts["mcp_sdk_2026_07_28.json"]


@pytest.mark.parametrize("name", sorted(BUILT))
def test_mcp_fixture_matches_what_the_sdk_writes(name: str) -> None:
    committed = (FORMATS_DIR / name).read_text(encoding="utf-8")
    assert GENERATOR.text(BUILT[name]) == committed, (
        f"{name}: the installed mcp package writes other messages; run "
        "tests/formats/make_mcp_fixtures.py"
    )
