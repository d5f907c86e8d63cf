"""Berkeley Function-Calling Leaderboard (BFCL) data and model outputs in toolscore's formats.

`import_bfcl` turns a BFCL category file and its possible-answer file into a spec set and
cases (`write_import` writes them as `tools.yaml` and `cases.jsonl`); `convert_results` turns a
BFCL result file (function-calling or prompting form) into outputs lines. Every mapping choice
is documented in the module that makes it and in `bench/bfcl/PARITY.md`.
"""

from toolscore.bfcl.categories import category_of
from toolscore.bfcl.importer import BfclImport, import_bfcl, write_import
from toolscore.bfcl.pycall import CallText, parse_calls
from toolscore.bfcl.results import convert_result, convert_results
from toolscore.bfcl.strings import standardize

__all__ = [
    "BfclImport",
    "CallText",
    "category_of",
    "convert_result",
    "convert_results",
    "import_bfcl",
    "parse_calls",
    "standardize",
    "write_import",
]
