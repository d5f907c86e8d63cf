"""BFCL's AST checker behind the leanest runner that uses it: the other side of speed.py's
end-to-end figure.

It reads BFCL's three JSON Lines files for one category (the prompt entries, their possible
answers and a model's result lines, each result already decoded: `[{name: {arg: value}}]`),
checks each result with `ast_checker`, and writes each verdict as a JSON line (`id` and the
checker's `valid`, `error`, `error_type`). No toolscore is imported: only what BFCL's own
evaluation would need to load, so that the comparison counts BFCL's start-up and nothing else.

Usage: bench/bfcl/.venv/bin/python bench/bfcl/lean_runner.py CATEGORY PROMPTS ANSWERS RESULTS OUT
"""

from __future__ import annotations

import json
import sys
from typing import Any

from bfcl_checker import MODEL, load_checker


def _by_id(path: str, field: str) -> dict[str, Any]:
    """One field of every line of a JSON Lines file, by the line's id."""
    with open(path, encoding="utf-8") as lines:
        entries = (json.loads(line) for line in lines if line.strip())
        return {entry["id"]: entry[field] for entry in entries}


def run(category: str, prompts: str, answers: str, results: str, out: str) -> tuple[int, int]:
    """Check every result line; write the verdicts to `out`; return (checked, valid)."""
    checker, _, python = load_checker()
    functions = _by_id(prompts, "function")
    truths = _by_id(answers, "ground_truth")
    checked = valid = 0
    with open(results, encoding="utf-8") as lines, open(out, "w", encoding="utf-8") as verdicts:
        for line in filter(str.strip, lines):
            entry = json.loads(line)
            case_id = entry["id"]
            verdict = checker.ast_checker(
                functions[case_id], entry["result"], truths[case_id], python, category, MODEL
            )
            verdicts.write(json.dumps({"id": case_id, **verdict}, default=repr) + "\n")
            checked += 1
            valid += bool(verdict["valid"])
    return checked, valid


def main() -> None:
    """Run on the command line's files and print how many results were checked and valid."""
    if len(sys.argv) != 6:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    checked, valid = run(*sys.argv[1:])
    print(f"{checked} checked, {valid} valid")


if __name__ == "__main__":
    main()
