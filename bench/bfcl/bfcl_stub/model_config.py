"""Stands in for `bfcl_eval.constants.model_config` when BFCL's checker is loaded.

The real module imports every model handler of BFCL, and with them the SDKs of every provider
(openai, anthropic, torch, ...). The AST checker reads one thing from it:
`MODEL_CONFIG_MAPPING[model].underscore_to_dot`, to rename dotted function names for models
whose API forbids dots. This stub answers `False` for any model name, which is BFCL's
behaviour for a model that keeps dots. `bench/bfcl/bfcl_checker.py` registers it in
`sys.modules` under the real module's name before the checker is imported.
"""

from __future__ import annotations


class _Config:
    """The one field of BFCL's `ModelConfig` that the checker reads."""

    underscore_to_dot = False


class _AnyModel(dict[str, _Config]):
    """Every model name maps to a config that keeps dotted names."""

    def __missing__(self, key: str) -> _Config:
        return _Config()


MODEL_CONFIG_MAPPING = _AnyModel()
