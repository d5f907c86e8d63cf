"""Spec files: loading and validating the native YAML/JSON format and tool-definition lists
(`loading`), parsing YAML or JSON safely and within bounds (`parsing`), and where each rule
stands in its file, for messages that name it (`fields`)."""

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
