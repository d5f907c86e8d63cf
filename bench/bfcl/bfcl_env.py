"""What the BFCL benchmarks share: BFCL's data and checker (from the benchmark's own venv),
the converted cases, and one verdict from each scorer.

BFCL's checker itself is loaded by `bfcl_checker`, which imports no toolscore, so that the
lean runner (`lean_runner.py`) pays for BFCL's imports only.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import platform
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bfcl_checker import MODEL, load_checker

from toolscore import Case, SpecSet, parse_case, parse_output, parse_specs, score_case
from toolscore.bfcl import convert_result, import_bfcl

CALL_CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
ABSTENTION_CATEGORIES = ("irrelevance", "live_irrelevance")
SPEED_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")


def data_dir() -> Path:
    """BFCL's data as the installed bfcl-eval package ships it (or $BFCL_DATA)."""
    override = os.environ.get("BFCL_DATA")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bfcl_eval is not installed here: run bench/bfcl/setup.sh")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def files(category: str) -> tuple[Path, Path | None]:
    """The category file and its possible-answer file (None for irrelevance)."""
    data = data_dir() / f"BFCL_v4_{category}.json"
    answers = data_dir() / "possible_answer" / f"BFCL_v4_{category}.json"
    return data, answers if answers.exists() else None


def read_lines(path: Path) -> list[dict[str, Any]]:
    """A BFCL JSON Lines file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class Category:
    """One BFCL category, raw (for BFCL's checker) and converted (for toolscore)."""

    name: str
    entries: list[dict[str, Any]]
    truths: dict[str, list[Any]]
    specs: SpecSet
    cases: dict[str, Case]

    @property
    def abstention(self) -> bool:
        """True for the irrelevance categories (the right answer is no call)."""
        return self.name in ABSTENTION_CATEGORIES


def load_category(name: str, bfcl_strings: bool = False) -> Category:
    """Read a category and convert it with `toolscore.bfcl` (in memory)."""
    data, answers = files(name)
    converted = import_bfcl(str(data), str(answers) if answers else None, bfcl_strings=bfcl_strings)
    specs, problems = parse_specs(json.loads(json.dumps(converted.spec)), name)
    if specs is None:
        raise SystemExit(f"{name}: converted spec does not load: {problems[0]}")
    cases = {c["id"]: parse_case(c, specs) for c in converted.cases}
    truths = {t["id"]: t["ground_truth"] for t in read_lines(answers)} if answers else {}
    return Category(name, read_lines(data), truths, specs, cases)


BfclVerdict = Callable[[dict[str, Any], list[dict[str, Any]]], tuple[bool, str, str]]
"""(entry, decoded output) -> (passed, BFCL's error type, BFCL's error messages as JSON)."""


def bfcl_verdict(category: Category) -> BfclVerdict:
    """BFCL's verdict on one decoded model output (see `BfclVerdict`)."""
    checker, utils, python = load_checker()
    if category.abstention:

        def abstains(entry: dict[str, Any], output: list[dict[str, Any]]) -> tuple[bool, str, str]:
            made = not utils.is_empty_output(output)
            return not made, "irrelevance_error:decoder_success" if made else "", ""

        return abstains

    def check(entry: dict[str, Any], output: list[dict[str, Any]]) -> tuple[bool, str, str]:
        result = checker.ast_checker(
            entry["function"], output, category.truths[entry["id"]], python, category.name, MODEL
        )
        if result["valid"]:
            return True, "", ""
        text = json.dumps(result.get("error", ""), default=repr)
        return False, str(result.get("error_type", "")), text

    return check


def toolscore_verdict(
    category: Category, case_id: str, result: Any, bfcl_strings: bool = False
) -> tuple[bool, list[str]]:
    """toolscore's verdict on one BFCL result (either form) and its mismatch codes."""
    line = convert_result({"id": case_id, "result": result}, bfcl_strings=bfcl_strings)
    trajectory = parse_output(json.loads(json.dumps(line)))
    verdict = score_case(category.specs, category.cases[case_id], trajectory)
    return verdict.passed, [m.code for m in verdict.mismatches]


def machine() -> str:
    """Architecture, CPU model, core count and Python version, for the record."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    python = f"{platform.python_implementation()} {platform.python_version()}"
    return f"{platform.machine()}, {model}, {os.cpu_count()} cores, {python}"


def revision(src: Path | None = None) -> str:
    """The git commit of the tree holding `src` (default: ./src), marked when `src` has
    uncommitted changes."""
    where = str(src or Path("src"))
    try:
        head = subprocess.run(
            ["git", "-C", where, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", where, "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{f' + uncommitted changes in {where}' if dirty else ''}"


def bfcl_version() -> str:
    """The installed bfcl-eval version."""
    metadata = importlib.import_module("importlib.metadata")
    try:
        return str(metadata.version("bfcl-eval"))
    except metadata.PackageNotFoundError:
        return "not installed"


def doc_params(entry: Mapping[str, Any], name: str) -> tuple[Mapping[str, Any], list[str]]:
    """A function's parameter schemas and required names in one BFCL entry."""
    for function in entry["function"]:
        if function["name"] == name:
            params = function.get("parameters", {})
            return params.get("properties", {}), list(params.get("required", []))
    return {}, []
