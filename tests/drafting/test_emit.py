"""The draft's YAML reads back as written, whatever the names, descriptions and values:
`yaml.safe_load` of the emitted text is the draft's plain data, and it loads as a spec."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolscore.drafting.draft import Draft, DraftRule, DraftTool, draft_tool
from toolscore.drafting.emit import emit
from toolscore.specs.loading import parse_specs

TEXT = st.text(st.characters(codec="utf-8"), max_size=12)  # any character a UTF-8 file holds
SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | TEXT
    | st.floats(allow_nan=False, allow_infinity=False)
)
PROPERTY = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "number", "boolean"])},
    optional={"description": TEXT, "default": SCALAR, "format": st.sampled_from(["date", "uuid"])},
) | st.fixed_dictionaries({"enum": st.lists(SCALAR, min_size=1, max_size=4, unique_by=repr)})
SCHEMA = st.fixed_dictionaries(
    {"type": st.just("object"), "properties": st.dictionaries(TEXT, PROPERTY, max_size=4)}
)


def expected(draft: Draft) -> dict[str, Any]:
    """The plain data the emitted YAML must hold."""
    tools: dict[str, Any] = {}
    for tool in draft.tools:
        entry: dict[str, Any] = {"version": 1}
        if tool.description is not None:
            entry["description"] = tool.description
        entry["args"] = {name: rule.plain() for name, rule in tool.args.items()}
        tools[tool.name] = entry
    return {"version": 1, "tools": tools}


def normal(data: Any) -> Any:
    """A kind name alone (`name: exact`) as the mapping it stands for."""
    if isinstance(data, dict):
        return {k: normal(v) for k, v in data.items()}
    return data


def loose(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, dict) else {"kind": v} for k, v in args.items()}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tools=st.dictionaries(TEXT.filter(bool), st.tuples(TEXT | st.none(), SCHEMA), max_size=3),
    note=TEXT,
)
def test_the_yaml_reads_back_as_the_draft_and_loads(
    tools: dict[str, tuple[str | None, Any]], note: str
) -> None:
    drafted = [
        draft_tool(name, description, schema) for name, (description, schema) in tools.items()
    ]
    draft = Draft("x.json", "openai", drafted, [note, "line\nbreak"])
    text = emit(draft)
    data = yaml.safe_load(text)
    want = expected(draft)
    assert data["version"] == 1
    assert list(data["tools"]) == list(want["tools"])
    for name, entry in want["tools"].items():
        got = data["tools"][name]
        assert got.get("description") == entry.get("description")
        assert loose(got["args"] or {}) == loose(entry["args"]), text
    if drafted:
        specs, problems = parse_specs(data, "drafted.yaml")
        assert problems == [], text
        assert specs is not None


def test_nested_rules_and_comments_stay_in_their_places() -> None:
    inner = DraftRule({"kind": "exact", "reason": "draft: x"}, ["a guess", "two\nlines"])
    rule = DraftRule(
        {"kind": "list", "items": DraftRule({"kind": "object", "args": {"no": inner}})}
    )
    draft = Draft("x", "mcp", [DraftTool("on", None, {"yes": rule}, ["a tool note"])], ["top"])
    text = emit(draft)
    assert text == (
        "# top\n"
        "version: 1\n"
        "tools:\n"
        "  # a tool note\n"
        '  "on":\n'
        "    version: 1\n"
        "    args:\n"
        '      "yes":\n'
        "        kind: list\n"
        "        items:\n"
        "          kind: object\n"
        "          args:\n"
        "            # a guess\n"
        "            # two\n"
        "            # lines\n"
        '            "no": {kind: exact, reason: "draft: x"}\n'
    )
    assert yaml.safe_load(text)["tools"]["on"]["args"]["yes"]["items"]["args"]["no"] == {
        "kind": "exact",
        "reason": "draft: x",
    }
