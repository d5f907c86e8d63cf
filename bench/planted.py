"""Plant each bug of issue 11's list, one at a time, in a copy of the tree; each must fail a test.

Usage: python bench/planted.py [NAME ...]

A bug is one line of the core changed the way a plausible mistake would change it; the tests
named beside it must then fail. The copy lives in a temporary folder, so the working tree is
never modified. Prints one line a bug (CAUGHT or MISSED, and the first failing test) and exits
with status 1 when one is missed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


class Bug(NamedTuple):
    """One planted bug: where, the line as it is and as the mistake makes it, and the tests."""

    name: str
    file: str
    right: str
    wrong: str
    tests: tuple[str, ...]


GOLDEN = ("tests/scoring/test_golden.py",)
BUGS = (
    Bug("an infinite tol is accepted", "core/rules/compile.py",
        "if not math.isfinite(value) or value < 0:", "if value < 0:",
        ("tests/specs/test_specs.py",)),
    Bug("an alias may be a value", "core/rules/compile.py",
        "if enum_key(alias) in keys:", "if False:", ("tests/specs/test_specs.py",)),
    Bug("an explicit null is taken for a match", "core/arguments.py",
        "        if expected is not produced:\n",
        "        if expected is not produced and expected is not None:\n", GOLDEN),
    Bug("a longer ordered list passes", "core/arguments.py",
        "        if len(expected) != len(produced):", "        if len(expected) > len(produced):",
        GOLDEN),
    Bug("names compared as a set", "core/plans.py",
        "return any(sorted(call.name for call in plan) == names for plan in plans)",
        "return any(set(c.name for c in plan) == set(names) for plan in plans)", GOLDEN),
    Bug("baseline disagreement counters swapped", "scoring/tallies.py",
        "            if rules:\n                self.only_rules_pass",
        "            if not rules:\n                self.only_rules_pass",
        ("tests/scoring/test_summary.py",)),
    Bug("score_turns all ignored", "scoring/case.py",
        'case.extra.get("score_turns") == "all"', 'case.extra.get("score_turns") == "every"',
        GOLDEN),
    Bug("a mismatched pair counted as argument-accurate", "scoring/summary.py",
        "self.arg_ok += not found", "self.arg_ok += 1", ("tests/scoring/test_summary.py",)),
    Bug("no goal state fails the outcome", "scoring/case.py",
        "state.passed is not False and", "state.passed is True and",
        ("tests/scoring/test_summary.py",)),
    Bug("the search orders a call after its first source only", "core/dataflow.py",
        "earliest = max((assigned[d]", "earliest = min((assigned[d]", GOLDEN),
    Bug("the report checks a call's first source only", "core/dataflow.py",
        "        for d in sorted(deps[i]):\n            source = partner.get(d)",
        "        for d in sorted(deps[i])[:1]:\n            source = partner.get(d)", GOLDEN),
    Bug("pointer escapes undone in the wrong order", "core/dataflow.py",
        'token.replace("~1", "/").replace("~0", "~")',
        'token.replace("~0", "~").replace("~1", "/")', GOLDEN),
    Bug("a leading-zero index resolves", "core/dataflow.py",
        'key.isdigit() and (key == "0" or key[0] != "0")', "key.isdigit()", GOLDEN),
    Bug("unknown_args also excuses extra calls", "specs/loading.py",
        'if r.allow == "extra_calls" for t', 'if r.allow != "" for t', GOLDEN),
    Bug("a whitespace reason is a reason", "specs/loading.py",
        "or not reason.strip():", "or not reason:", ("tests/specs/test_specs.py",)),
    Bug("a plan argument the spec lacks is kept", "inputs/cases.py",
        "        if not args.keys() <= tool.args.args.keys():", "        if False:", GOLDEN),
    Bug("a nested key the spec lacks is kept", "inputs/cases.py",
        "            if not rule.scalar:\n                _known_keys(",
        "            if False:\n                _known_keys(", GOLDEN),
    Bug("after is dropped on a line without $", "inputs/cases.py",
        "if not (has_markers or labels):", "if not has_markers:", ("tests/inputs/test_cases.py",)),
    Bug("duplicate labels accepted", "inputs/cases.py",
        "labels.count(label) > 1", "labels.count(label) > 2", GOLDEN),
)  # fmt: skip


def plant(bug: Bug, tree: Path) -> str | None:
    """Plant `bug` in the copy at `tree`, run its tests; the first failing test, or None."""
    path = tree / "src" / "toolscore" / bug.file
    text = path.read_text(encoding="utf-8")
    if text.count(bug.right) != 1:
        return f"(the line to change is not in {bug.file} exactly once: update this script)"
    path.write_text(text.replace(bug.right, bug.wrong), encoding="utf-8")
    try:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-rf",
                "-p",
                "no:cacheprovider",
                *bug.tests,
            ],
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree / "src")},
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        path.write_text(text, encoding="utf-8")
    if run.returncode == 0:
        return None
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAILED")]
    return failed[0].removeprefix("FAILED ") if failed else "(the tests did not run)"


def main() -> None:
    wanted = set(sys.argv[1:])
    missed = 0
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch)
        for part in ("src", "tests", "examples", "pyproject.toml"):
            source = ROOT / part
            if source.is_dir():
                shutil.copytree(source, tree / part)
            else:
                shutil.copy2(source, tree / part)
        for bug in BUGS:
            if wanted and bug.name not in wanted:
                continue
            failing = plant(bug, tree)
            missed += failing is None
            print(f"{'MISSED' if failing is None else 'CAUGHT'}  {bug.name}: {failing or ''}")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
