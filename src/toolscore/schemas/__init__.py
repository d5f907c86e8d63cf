"""Editor JSON Schemas (draft 2020-12) of the spec, cases and outputs formats, generated
from the tables the loaders validate with, and the copies shipped in the package beside
this module (`spec.schema.json`, `cases.schema.json`, `outputs.schema.json`)."""

from toolscore.schemas.generate import NAMES, generate, render, shipped

__all__ = ["NAMES", "generate", "render", "shipped"]
