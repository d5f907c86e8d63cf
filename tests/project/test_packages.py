"""Each package's public surface, pinned like the top level's (tests/project/test_api.py): the
`__all__` of its `__init__`, every name of which resolves. A lazily imported package lists its
modules; importing it imports none of them."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import toolscore

PACKAGE = Path(toolscore.__file__).parent

SURFACES: dict[str, list[str]] = {
    "toolscore.bfcl": [
        "BfclImport",
        "CallText",
        "category_of",
        "convert_result",
        "convert_results",
        "import_bfcl",
        "parse_calls",
        "standardize",
        "write_import",
    ],
    "toolscore.calibration": ["report_block"],
    "toolscore.cli": ["cli", "main"],
    "toolscore.core": [
        "AnyOf",
        "Call",
        "Case",
        "CaseResult",
        "Efficiency",
        "MISMATCH_CODES",
        "MISSING",
        "Mismatch",
        "OMITTED",
        "Partial",
        "Plan",
        "Ref",
        "Retry",
        "Rule",
        "RuleError",
        "Trajectory",
        "assign",
        "best_plan",
        "compile_args",
        "compile_rule",
        "first_options",
        "iter_mismatches",
        "json_equal",
        "matches",
        "mismatch_line",
        "names_match",
        "partial_credit",
        "plan_calls",
        "plan_passes",
        "show",
        "substitute",
        "topological",
    ],
    "toolscore.core.rules": [
        "BooleanRule",
        "CasefoldRule",
        "DateRule",
        "DatetimeRule",
        "EnumRule",
        "ExactRule",
        "IgnoredRule",
        "IntegerRule",
        "KINDS",
        "ListRule",
        "LowercaseRule",
        "NormalizedRule",
        "NumberRule",
        "ObjectRule",
        "OneOfRule",
        "PatternRule",
        "Rule",
        "RuleError",
        "TextRule",
        "Verdict",
        "compile_args",
        "compile_rule",
        "parse_timezone",
    ],
    "toolscore.engines": ["batch", "local", "partitions", "ray"],
    "toolscore.html_report": [
        "build",
        "charts",
        "compare_html",
        "embed",
        "html",
        "page",
        "sink",
        "sources",
    ],
    "toolscore.inputs": [
        "MISSING_POLICIES",
        "check_inputs",
        "close_input",
        "converted_inputs",
        "iter_lines",
        "join",
        "join_groups_by_id",
        "missing_result",
        "one_each",
        "open_input",
        "ordered_trials",
        "parse_case",
        "parse_output",
        "pass_at",
        "pass_hat",
        "produced_call",
        "read_cases",
        "read_jsonl",
        "read_outputs",
    ],
    "toolscore.inputs.formats": ["FORMATS", "has_transcript", "read_transcript"],
    "toolscore.integrations": ["evaluators", "inspect", "pytest_plugin"],
    "toolscore.audit": [
        "AuditReport",
        "BAD_KINDS",
        "Blame",
        "BlamedChange",
        "Coverage",
        "HARMLESS_KINDS",
        "Item",
        "Planted",
        "Suggestion",
        "Suggestions",
        "audit_cases",
        "audit_files",
        "blame",
        "coverage",
        "coverage_files",
        "coverage_of_run",
        "planted_answers",
        "suggest_run",
    ],
    "toolscore.drafting": ["DRAFT_FORMATS", "DRAFT_PREFIX", "Drafted", "PROPOSAL", "draft_spec"],
    "toolscore.lint": ["Finding", "lint_cases", "lint_files"],
    "toolscore.schemas": ["NAMES", "generate", "render", "shipped"],
    "toolscore.report": [
        "absent",
        "json_report",
        "junit",
        "lenient",
        "otel_events",
        "printable",
        "sink",
        "terminal",
    ],
    "toolscore.rubrics": [
        "backtrack",
        "base",
        "cache",
        "checks",
        "endpoint",
        "entries",
        "jobs",
        "judge_prompt",
        "remote",
        "spec",
        "summary",
    ],
    "toolscore.scoring": [
        "RubricRunner",
        "Scoring",
        "Summary",
        "SummaryBuilder",
        "assert_tool_calls",
        "check",
        "exact_baseline",
        "exact_difference",
        "run_remote",
        "score",
        "score_case",
        "score_trials",
    ],
    "toolscore.specs": [
        "RELAXATIONS",
        "Relaxation",
        "RulePath",
        "SpecSet",
        "check_specs",
        "load_specs",
        "parse_document",
        "parse_specs",
        "read_mapping",
    ],
    "toolscore.state": [
        "AnyEnvironment",
        "COMPARE_MODES",
        "CallOutcome",
        "Change",
        "DocumentDiff",
        "DocumentEnvironment",
        "Environment",
        "ErrorPolicy",
        "RowChange",
        "Snapshot",
        "StateDiff",
        "StateVerdict",
        "TableDiff",
        "TableState",
        "Tool",
        "ToolContext",
        "check_state",
        "diff_documents",
        "diff_states",
        "load_environment",
        "missing_outputs",
        "normalise_text",
        "replay_case",
        "state_hash",
        "validate_case",
    ],
    "toolscore.stats": [
        "PairedTest",
        "Rate",
        "cluster_test",
        "clustered_se",
        "interval_json",
        "interval_percents",
        "mcnemar_exact",
        "normal_interval",
        "paired_test",
        "percent",
        "wilson",
    ],
    "toolscore.store": [
        "Cause",
        "Change",
        "Comparison",
        "DEFAULT_PATH",
        "ENV_VAR",
        "Flip",
        "InputFile",
        "Metric",
        "PreviousScore",
        "RunInfo",
        "RunMeta",
        "RunWriter",
        "SCHEMA_VERSION",
        "Store",
        "StoreSink",
        "compare",
        "describe_previous",
        "open_store",
        "spec_diff",
        "store_path",
    ],
    "toolscore.taubench": ["TauBenchImport", "convert_results", "import_taubench", "write_import"],
    "toolscore.tau2": ["Tau2Import", "convert_results", "import_tau2", "write_import"],
}
"""Each package and its `__all__`. Change one on purpose, here and in its `__init__`."""

LAZY = ("toolscore.engines", "toolscore.html_report", "toolscore.integrations", "toolscore.report")
"""Packages whose modules are imported only by the command that needs them."""


def packages() -> list[str]:
    found = (p.parent.relative_to(PACKAGE) for p in PACKAGE.rglob("__init__.py"))
    return sorted("toolscore." + ".".join(p.parts) for p in found if p.parts)


def test_every_package_is_pinned() -> None:
    assert packages() == sorted(SURFACES)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_the_surface_is_as_pinned_and_resolves(name: str) -> None:
    package = importlib.import_module(name)
    assert sorted(package.__all__) == SURFACES[name]
    for item in package.__all__:
        if not hasattr(package, item):
            importlib.import_module(f"{name}.{item}")  # a module of a lazily imported package


@pytest.mark.parametrize("name", LAZY)
def test_a_lazy_package_imports_none_of_its_modules(name: str) -> None:
    probe = f"import sys, {name}; print(sorted(m for m in sys.modules if m.startswith('{name}.')))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
