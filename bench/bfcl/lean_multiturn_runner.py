"""BFCL's multi-turn checker behind the leanest runner that uses it: the other side of
speed_multiturn.py's process-against-process figure.

It reads BFCL's prompt entries and possible answers for one multi-turn category and a results
file (JSON Lines: `id`, the entry's id; `model`, the name BFCL keeps the replay's instances
under, distinct for results of the same entry; `result`, the decoded calls per turn and step:
`[[["f(a=1)", ...], ...], ...]`), checks each result with BFCL's `multi_turn_checker`, and
writes each verdict as a JSON line (`id`, `model`, `valid`). No toolscore is imported: only
what BFCL's own evaluation loads, so that the comparison counts BFCL's start-up and nothing
else.

Usage: bench/bfcl/.venv/bin/python bench/bfcl/lean_multiturn_runner.py PROMPTS ANSWERS RESULTS OUT
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

CHECKER = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"


def _by_id(path: str) -> dict[str, dict[str, Any]]:
    """Every line of a JSON Lines file, by the line's id."""
    with open(path, encoding="utf-8") as lines:
        entries = (json.loads(line) for line in lines if line.strip())
        return {entry["id"]: entry for entry in entries}


def run(prompts: str, answers: str, results: str, out: str) -> tuple[int, int]:
    """Check every result line; write the verdicts to `out`; return (checked, valid)."""
    checker = importlib.import_module(CHECKER).multi_turn_checker
    entries = _by_id(prompts)
    truths = {key: line["ground_truth"] for key, line in _by_id(answers).items()}
    checked = valid = 0
    with open(results, encoding="utf-8") as lines, open(out, "w", encoding="utf-8") as verdicts:
        for line in filter(str.strip, lines):
            found = json.loads(line)
            entry_id, model = found["id"], found["model"]
            decoded = [[step for step in turn if step] for turn in found["result"]]
            verdict = checker(
                decoded, truths[entry_id], dict(entries[entry_id]), "multi_turn", model
            )
            passed = bool(verdict["valid"])
            verdicts.write(json.dumps({"id": entry_id, "model": model, "valid": passed}) + "\n")
            checked += 1
            valid += passed
    return checked, valid


def main() -> None:
    """Run on the command line's files and print how many results were checked and valid."""
    if len(sys.argv) != 5:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    checked, valid = run(*sys.argv[1:])
    print(f"{checked} checked, {valid} valid")


if __name__ == "__main__":
    main()
