"""Fuzz `spec init`'s readers with mutated real definition files (every format, BFCL's
docs, tau-bench's and MCP's tools): only a one-line spec error may come out, and every draft
that comes out loads as a spec."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutate
from toolscore.drafting import draft_spec
from toolscore.errors import SpecError
from toolscore.specs.loading import parse_specs
from toolscore.specs.parsing import parse_document

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [
    json.loads(path.read_text())
    for folder in (
        ROOT / "tests" / "drafting" / "definitions",
        ROOT / "tests" / "specs" / "definitions",
    )
    for path in sorted(folder.glob("*.json"))
] + [
    [json.loads(line)["function"][0]]
    for line in (ROOT / "tests/bfcl/data.json").read_text().splitlines()[:3]
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), format_name=st.sampled_from([None, None, "openai", "mcp", "bfcl"]))
def test_mutated_definitions_draft_or_fail_with_one_line(
    data: st.DataObject, format_name: str | None, tmp_path_factory: object
) -> None:
    seed = data.draw(st.sampled_from(SEEDS))
    raw = mutate.line(seed, lambda n: data.draw(st.integers(0, n - 1)))
    folder = Path(str(tmp_path_factory.mktemp("fuzz")))  # type: ignore[attr-defined]
    path = folder / "tools.json"
    path.write_bytes(raw)
    try:
        drafted = draft_spec(path, format=format_name)
    except SpecError as error:
        text = str(error)
        assert text.startswith(str(path)), text
        assert "\n" not in text, text
        return
    document = parse_document(drafted.text.encode("utf-8"), "draft.yaml")
    specs, problems = parse_specs(document, "draft.yaml")
    assert problems == [], drafted.text
    assert specs is not None
