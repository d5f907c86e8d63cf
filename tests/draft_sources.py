"""The real tool definitions `spec init` is tested on (tests/drafting/), each with the
golden draft it writes (tests/drafting/golden/NAME.yaml; `python tests/draft_sources.py`
rewrites them after a deliberate change)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "drafting" / "golden"

SOURCES: dict[str, dict[str, Any]] = {
    "support_example": {
        "python": "src/toolscore/examples/support/env/tools.py:get_order,list_orders,refund,"
        "cancel_order"
    },
    "bfcl_simple_multiple": {"path": "tests/bfcl/data.json"},
    "taubench_retail": {"path": "tests/drafting/definitions/taubench_retail.json"},
    "taubench_airline": {"path": "tests/drafting/definitions/taubench_airline.json"},
    "mcp_tools_list": {"path": "tests/drafting/definitions/mcp_tools_list.json"},
    "python_sample": {"python": "tests/drafting/definitions/python_sample.py:book,search"},
    "gemini_openapi": {"path": "tests/specs/definitions/gemini_openapi.json"},
    "anthropic": {"path": "tests/specs/definitions/anthropic.json"},
    "openai_responses": {"path": "tests/specs/definitions/openai_responses.json"},
}
"""Each source by name: the arguments of `draft_spec` (paths relative to the repository)."""
FORMATS = {
    "support_example": "python",
    "bfcl_simple_multiple": "bfcl",
    "taubench_retail": "openai",
    "taubench_airline": "openai",
    "mcp_tools_list": "mcp",
    "python_sample": "python",
    "gemini_openapi": "gemini",
    "anthropic": "anthropic",
    "openai_responses": "openai",
}


def draft_text(name: str) -> str:
    """The draft of one source, as `spec init` writes it (run from the repository root)."""
    from toolscore.drafting import draft_spec  # noqa: PLC0415

    return draft_spec(**SOURCES[name]).text


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    for source in SOURCES:
        (GOLDEN / f"{source}.yaml").write_text(draft_text(source), encoding="utf-8")
