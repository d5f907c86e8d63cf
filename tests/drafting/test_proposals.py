"""`spec init --cases`: proposals from the values the cases' plans use, written as comments
marked as proposals and never applied to the rules."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from toolscore.drafting import PROPOSAL, draft_spec

TOOLS = [
    {
        "name": "book",
        "input_schema": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "cabin": {"type": "string", "enum": ["Economy", "Business"]},
                "price": {"type": "number"},
                "seats": {"type": "integer"},
                "order_id": {"type": "string"},
            },
        },
    }
]
PLANS = [
    {"city": "Paris", "cabin": "economy", "price": 12.5, "seats": 1, "order_id": "A-1"},
    {"city": "PARIS", "cabin": {"$any": ["Business", "BUSINESS"]}, "price": 12.25, "seats": 2},
    {"city": "Lyon", "cabin": "first", "price": 3, "order_id": "a-1"},
]


def test_proposals_are_comments_and_the_rules_are_unchanged(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "\n".join(
            json.dumps({"id": f"c{i}", "plans": [[{"name": "book", "args": args}]]})
            for i, args in enumerate(PLANS)
        )
        + "\n"
        + json.dumps(
            {"id": "t", "turns": [{"plans": [[{"name": "book", "args": {"price": 1.125}}]]}]}
        )
        + "\n"
    )
    plain = draft_spec(tmp_path / "tools.json")
    proposed = draft_spec(tmp_path / "tools.json", cases=cases)
    assert yaml.safe_load(plain.text)["tools"] == yaml.safe_load(proposed.text)["tools"]
    comments = {
        name: [c.removeprefix(f"{PROPOSAL} ") for c in rule.comments if c.startswith(PROPOSAL)]
        for name, rule in proposed.draft.tools[0].args.items()
    }
    assert comments == {
        "city": [
            "the plans write one value in several letter cases ('PARIS', 'Paris'): casefold, "
            "with a reason, if the tool resolves it case-insensitively"
        ],
        "cabin": [
            "aliases {'BUSINESS': 'Business', 'economy': 'Economy'}, if the tool accepts these "
            "spellings",
            "the plans use values outside the enum: 'first'",
        ],
        "price": [
            "the plans write these numbers to 1 to 3 decimals: tol: 0.05, with a reason, if a "
            "value stands for any that rounds to it"
        ],
        "seats": [],
        "order_id": [
            "the plans write one value in several letter cases ('A-1', 'a-1'): casefold, with "
            "a reason, if the tool resolves it case-insensitively"
        ],
    }
    assert proposed.proposals == 5
    assert f"# {PROPOSAL} the plans write one value" in proposed.text
