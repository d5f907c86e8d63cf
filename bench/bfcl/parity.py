"""toolscore and BFCL's own checker on the same BFCL cases and the same model outputs.

For every single-turn Python category, each case's first possible answer and systematic
perturbations of it (see `perturb`) are scored by BFCL's `ast_checker` (the irrelevance
categories: BFCL's `is_empty_output`, as its runner uses it) and by toolscore on the cases
`toolscore.bfcl` converted, the outputs going through `toolscore.bfcl.convert_result` in BFCL's
function-calling form (and once in the prompting form). Every disagreement is classified; the
tables replace the results section of PARITY.md (between its markers).

Usage: bench/bfcl/.venv/bin/python bench/bfcl/parity.py [--write]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bfcl_checker import HERE
from bfcl_env import (
    ABSTENTION_CATEGORIES,
    CALL_CATEGORIES,
    BfclVerdict,
    Category,
    bfcl_verdict,
    bfcl_version,
    load_category,
    machine,
    revision,
    toolscore_verdict,
)
from perturb import ABSTENTION_PERTURBATIONS, PERTURBATIONS, Perturbation, answer, as_python

from toolscore import __version__

ORDER_SEARCH = "parallel calls in an order BFCL fails (all orders tried)"
MAX_ORDERED_CALLS = 5
"""Cases with more calls are not searched (6! orders and more)."""
SEARCH = Perturbation(ORDER_SEARCH, lambda entry, truth: None)
"""Marks the order search in the perturbation loop (it needs BFCL's verdict, not only data)."""

PARITY = HERE / "PARITY.md"
DETAILS = HERE / "data" / "parity-disagreements.jsonl"
"""Every disagreement with its output (derived from BFCL's data, so git-ignored)."""
BEGIN, END = "<!-- results: begin -->", "<!-- results: end -->"
PROSE = "I cannot do that with the functions I have."
"""The prompting-form answer of a model that abstains."""

IDENTIFIER = re.compile(
    r"(^|_)(id|ids|code|key|name|username|email|url|path|file|symbol|ticker)$|Id$|ID$", re.I
)
"""Argument names that hold identifiers (a heuristic, used only to split the string class)."""


@dataclass(frozen=True)
class Explanation:
    """A class of disagreement: who is right, and why."""

    verdict: str
    text: str


CLASSES: dict[str, Explanation] = {
    "bfcl-greedy": Explanation(
        "BFCL wrong",
        "BFCL pairs parallel calls greedily (each expected call takes the first produced call "
        "that fits, never reconsidered), so correct calls in another order fail when an "
        "earlier expected call is more lenient (accepts the value a later one needs). "
        "toolscore matches the calls as a multiset (maximum bipartite matching).",
    ),
    "bfcl-case-identifier": Explanation(
        "BFCL wrong",
        "BFCL lower-cases every string before comparing, identifiers included: an upper-cased "
        "id, code, name or path passes. toolscore compares strings exactly unless the spec "
        "says otherwise (`--bfcl-strings` reproduces BFCL).",
    ),
    "bfcl-case-text": Explanation(
        "documented difference",
        "BFCL lower-cases every string; for values that are not identifiers (city names, "
        "free-form queries) that is often harmless, but toolscore only forgives case where "
        "the spec says so per argument (`casefold` with a reason), and the import cannot know "
        "which BFCL strings are which; `--bfcl-strings` reproduces BFCL.",
    ),
    "json-integer": Explanation(
        "documented difference",
        "An integer parameter given as a float (`5.0`): BFCL checks Python types and fails "
        "it; toolscore compares JSON numbers, where `5.0` is 5 (the `integer` kind).",
    ),
    "bfcl-nested-float": Explanation(
        "BFCL wrong",
        "An integer inside a list of floats (`[1, 2.5]` for `[1.0, 2.5]`): BFCL accepts an "
        "int for a float parameter but not for a float inside a list (its nested type check "
        "has no int-for-float allowance); toolscore compares the numbers.",
    ),
    "documented-default": Explanation(
        "documented difference",
        "An optional argument given explicitly at the default its doc states: BFCL fails it "
        "when its possible answer does not list that value (the answer expects the argument "
        "omitted); toolscore takes the documented default as the rule's `default`, so giving "
        "it and omitting it are the same call.",
    ),
    "default-not-omittable": Explanation(
        "documented difference",
        'An argument omitted where BFCL\'s possible answer does not mark it omittable (`""`) '
        "but lists the default the doc states: BFCL fails the omission; toolscore takes "
        "the documented default, so the omission means an acceptable value.",
    ),
    "bfcl-data-error": Explanation(
        "documented difference (BFCL data error)",
        "BFCL's possible answer names an argument the case's function doc lacks (BFCL rejects "
        "it as an unexpected parameter) or leaves out a required one (BFCL rejects the "
        "missing parameter): no output can pass BFCL. The import keeps the answer as written "
        "(the argument gets `exact`, and import.json notes it), so toolscore passes a model "
        "that gives exactly the answer.",
    ),
    "bfcl-empty-string": Explanation(
        "documented difference",
        'BFCL\'s omission marker `""` is also the empty string, so an omittable string '
        'argument given as `""` passes BFCL. toolscore treats `""` as a value: it passes '
        "only where the spec's default is `\"\"` (here the tool's docs disagree across cases "
        "about the default, so the merged spec has none).",
    ),
    "bfcl-strings-variable": Explanation(
        "documented difference",
        "With `--bfcl-strings`, every string at BFCL's levels is normalised, also a string "
        "standing for a variable in a non-string parameter (`data['sales']` for an array), "
        "which BFCL compares with `==` unnormalised.",
    ),
    "bfcl-type-lenient": Explanation(
        "BFCL wrong",
        "BFCL compares with Python's `==` after its type check, where `True == 1` and "
        "`1 == 1.0`: a boolean for an integer inside a dict or list passes. toolscore keeps "
        "JSON types apart.",
    ),
}


@dataclass
class Tally:
    """Counts for one perturbation over one category."""

    cases: int = 0
    toolscore: int = 0
    bfcl: int = 0
    only_toolscore: int = 0
    only_bfcl: int = 0


@dataclass
class Run:
    """Everything one parity run found."""

    tallies: dict[tuple[str, str], Tally] = field(default_factory=lambda: defaultdict(Tally))
    classes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    details: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Seen:
    """One disagreement, with what classifying it needs."""

    perturbation: str
    toolscore_passed: bool
    bfcl_error: str
    bfcl_text: str
    codes: Sequence[str]
    changed: Sequence[str]
    added: Sequence[Any]
    bfcl_passes_first: bool
    bfcl_strings: bool


ANSWERS = ("first possible answer", "first possible answer, prompting form", "last possible answer")
ORDERS = ("parallel calls reversed", ORDER_SEARCH)


def classify(seen: Seen) -> str:
    """The class of one disagreement (`unexplained: ...` when no rule covers it)."""
    name, text = seen.perturbation, seen.bfcl_text
    if seen.toolscore_passed:
        if name in ORDERS and seen.bfcl_passes_first:
            return "bfcl-greedy"
        if name == "integers as floats" and ("Incorrect type" in text or "Nested type" in text):
            return "json-integer"
        if name == "integral floats as integers" and "Nested type checking failed" in text:
            return "bfcl-nested-float"
        if name == "optional args at their documented defaults":
            return "documented-default"
        if name == "omittable args omitted" or "missing_optional" in seen.bfcl_error:
            return "default-not-omittable"
        if name in ANSWERS and seen.bfcl_error in _DATA_ERRORS:
            return "bfcl-data-error"
        if seen.bfcl_strings and name == "strings upper-cased" and seen.bfcl_error in _DATA_ERRORS:
            return "bfcl-data-error"
        if seen.bfcl_strings and name == "strings upper-cased":
            return "bfcl-strings-variable"
    elif name == "strings upper-cased":
        if any(IDENTIFIER.search(arg) for arg in seen.changed):
            return "bfcl-case-identifier"
        return "bfcl-case-text"
    elif name == "optional args at their documented defaults" and "" in seen.added:
        return "bfcl-empty-string"
    return f"unexplained: {name}; toolscore {list(seen.codes)}; BFCL {seen.bfcl_error or 'pass'}"


_DATA_ERRORS = (
    "simple_function_checker:unexpected_param",
    "simple_function_checker:missing_required",
)


def _orders(output: list[dict[str, Any]], bfcl: BfclVerdict, entry: dict[str, Any]) -> Any:
    """An order of the calls that BFCL fails, searched over every order (None if none)."""
    if not 2 <= len(output) <= MAX_ORDERED_CALLS:
        return None
    for order in itertools.permutations(output):
        if not bfcl(entry, list(order))[0]:
            return list(order)
    return None


def run_category(category: Category, bfcl_strings: bool, run: Run) -> None:
    """Score every perturbation of every case of one category both ways."""
    bfcl = bfcl_verdict(category)
    perturbations = ABSTENTION_PERTURBATIONS if category.abstention else PERTURBATIONS
    for entry in category.entries:
        case_id = entry["id"]
        truth = category.truths.get(case_id, [])
        first_ok = False
        for perturbation in (*perturbations, *(() if category.abstention else (SEARCH,))):
            if perturbation is SEARCH:
                order = _orders(answer(entry, truth), bfcl, entry) if first_ok else None
                made: Any = None if order is None else (order, [])
            else:
                made = perturbation.make(entry, truth)
            if made is None:
                continue
            output, changed = made
            bfcl_passed, bfcl_error, bfcl_text = bfcl(entry, output)
            if perturbation.name == "first possible answer":
                first_ok = bfcl_passed
            result = _as_result(output, perturbation)
            passed, codes = toolscore_verdict(category, case_id, result, bfcl_strings)
            tally = run.tallies[perturbation.name, category.name]
            tally.cases += 1
            tally.toolscore += passed
            tally.bfcl += bfcl_passed
            if passed == bfcl_passed:
                continue
            tally.only_toolscore += passed
            tally.only_bfcl += bfcl_passed
            added = [v for call in output for v in call_args(call).values()] if changed else []
            seen = Seen(
                perturbation.name, passed, bfcl_error, bfcl_text, codes, changed,
                [call_args(c).get(a) for c in output for a in changed] or added,
                first_ok, bfcl_strings,
            )  # fmt: skip
            kind = classify(seen)
            run.classes[kind] += 1
            if case_id not in run.examples[kind] and len(run.examples[kind]) < 4:
                run.examples[kind].append(case_id)
            run.details.append(
                {
                    "strings": "bfcl" if bfcl_strings else "exact",
                    "case": case_id,
                    "perturbation": perturbation.name,
                    "toolscore": passed,
                    "bfcl": bfcl_passed,
                    "class": kind,
                    "toolscore_codes": codes,
                    "bfcl_error": bfcl_error,
                    "output": result,
                }
            )


def call_args(call: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a decoded call `{name: arguments}`."""
    return dict(next(iter(call.values())))


def _as_result(output: list[dict[str, Any]], perturbation: Perturbation) -> Any:
    if not perturbation.prompting:
        return output
    return as_python(output) if output else PROSE


def tally_table(run: Run, categories: Sequence[str]) -> list[str]:
    """Per perturbation: cases, passes by each scorer, and disagreements (over all categories)."""
    lines = [
        "| output | categories | cases | toolscore passes | BFCL passes | only toolscore "
        "| only BFCL |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    names = [p.name for p in (*PERTURBATIONS, SEARCH, *ABSTENTION_PERTURBATIONS)]
    for name in names:
        rows = [(c, run.tallies[name, c]) for c in categories if (name, c) in run.tallies]
        if not rows:
            continue
        total = Tally()
        for _, t in rows:
            total.cases += t.cases
            total.toolscore += t.toolscore
            total.bfcl += t.bfcl
            total.only_toolscore += t.only_toolscore
            total.only_bfcl += t.only_bfcl
        which = "irrelevance" if all(c in ABSTENTION_CATEGORIES for c, _ in rows) else "tool cases"
        lines.append(
            f"| {name} | {which} | {total.cases:,} | {total.toolscore:,} | {total.bfcl:,} | "
            f"{total.only_toolscore:,} | {total.only_bfcl:,} |"
        )
    return lines


def class_table(run: Run) -> list[str]:
    """Every class of disagreement with its count, verdict and examples."""
    lines = ["| class | verdict | disagreements | examples |", "|---|---|---:|---|"]
    for kind, count in run.classes.most_common():
        verdict = CLASSES[kind].verdict if kind in CLASSES else "**unexplained**"
        examples = ", ".join(f"`{e}`" for e in run.examples[kind])
        lines.append(f"| {kind} | {verdict} | {count:,} | {examples} |")
    return lines


def category_table(run: Run, name: str, categories: Sequence[str]) -> list[str]:
    """One perturbation, category by category."""
    lines = [
        f"`{name}`, by category:",
        "",
        "| category | cases | toolscore | BFCL | only toolscore | only BFCL |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in categories:
        t = run.tallies.get((name, c))
        if t is not None:
            lines.append(
                f"| {c} | {t.cases:,} | {t.toolscore:,} | {t.bfcl:,} | {t.only_toolscore:,} | "
                f"{t.only_bfcl:,} |"
            )
    return lines


def main() -> None:
    """Run both string modes over every category; print, and with --write update PARITY.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update PARITY.md and the details")
    parser.add_argument("--category", action="append", help="only these categories")
    args = parser.parse_args()
    categories = args.category or [*CALL_CATEGORIES, *ABSTENTION_CATEGORIES]
    started, clock = datetime.now(UTC), time.perf_counter()
    runs = {}
    for bfcl_strings in (False, True):
        run = Run()
        for name in categories:
            run_category(load_category(name, bfcl_strings), bfcl_strings, run)
        runs[bfcl_strings] = run
    elapsed = time.perf_counter() - clock
    sections = [
        f"Run {started:%Y-%m-%d %H:%M} UTC with `bench/bfcl/.venv/bin/python bench/bfcl/parity.py "
        f"--write` ({elapsed:.0f} s): bfcl-eval {bfcl_version()}, toolscore {__version__} "
        f"(commit {revision()}), {machine()}.",
    ]
    for bfcl_strings, title in (
        (False, "default import (strings `exact`)"),
        (True, "`--bfcl-strings`"),
    ):
        run = runs[bfcl_strings]
        sections += ["", f"### {title}", "", *tally_table(run, categories), "", *class_table(run)]
        if not bfcl_strings:
            sections += ["", *category_table(run, "first possible answer", categories)]
    text = "\n".join(sections)
    print(text)
    unexplained = sum(n for k, n in runs[False].classes.items() if k not in CLASSES)
    unexplained += sum(n for k, n in runs[True].classes.items() if k not in CLASSES)
    if args.write:
        page = PARITY.read_text(encoding="utf-8")
        head, _, rest = page.partition(BEGIN)
        _, _, tail = rest.partition(END)
        PARITY.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")
        DETAILS.parent.mkdir(exist_ok=True)
        with open(DETAILS, "w", encoding="utf-8") as details:
            for run in runs.values():
                for item in run.details:
                    details.write(json.dumps(item, ensure_ascii=False) + "\n")
        print(f"\nwrote {PARITY} and {DETAILS}")
    if unexplained:
        print(f"\n{unexplained} disagreements are unexplained", file=sys.stderr)


if __name__ == "__main__":
    main()
