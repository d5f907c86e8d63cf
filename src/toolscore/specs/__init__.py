"""Spec files: loading and validating the native YAML/JSON format (`loading`), tool
definitions in OpenAI, Anthropic, Gemini and MCP shapes (`tool_definitions`, with
`schema_rules` translating their JSON Schema), a side rules file adding rules to them
(`side_rules`), parsing YAML or JSON safely and within bounds (`parsing`), and where each
rule stands in its file, for messages that name it (`fields`)."""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from toolscore.specs.fields import RulePath
    from toolscore.specs.loading import (
        RELAXATIONS,
        Relaxation,
        SpecSet,
        check_specs,
        load_specs,
        parse_specs,
        read_mapping,
    )
    from toolscore.specs.parsing import parse_document

__getattr__, __dir__, _lazy = lazy_loader.attach(
    __name__,
    submod_attrs={
        "fields": ["RulePath"],
        "loading": [
            "RELAXATIONS",
            "Relaxation",
            "SpecSet",
            "check_specs",
            "load_specs",
            "parse_specs",
            "read_mapping",
        ],
        "parsing": ["parse_document"],
    },
)

__all__ = [
    "RELAXATIONS",
    "Relaxation",
    "RulePath",
    "SpecSet",
    "check_specs",
    "load_specs",
    "parse_document",
    "parse_specs",
    "read_mapping",
]
