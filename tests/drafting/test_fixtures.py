"""The committed tool-definition fixtures are what their sources write today: the MCP one
by the `mcp` package's own types (compared only where `mcp` imports), the tau-bench retail
one by toolscore's reader of the tau-bench fixture."""

from __future__ import annotations

import json

import pytest

from make_definition_fixtures import DEFINITIONS, build_mcp_tools_list, build_taubench_retail


def test_the_taubench_retail_fixture_is_what_its_tool_classes_return() -> None:
    committed = json.loads((DEFINITIONS / "taubench_retail.json").read_text())
    assert committed == build_taubench_retail()


def test_the_mcp_fixture_is_what_the_mcp_package_writes() -> None:
    pytest.importorskip("mcp", reason="the mcp package is not installed")
    committed = json.loads((DEFINITIONS / "mcp_tools_list.json").read_text())
    assert committed == build_mcp_tools_list()
