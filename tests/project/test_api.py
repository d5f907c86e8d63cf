"""The public API is what `toolscore.__all__` says, pinned so that removing a name is a decision."""

from __future__ import annotations

import toolscore

PUBLIC = {
    "MISMATCH_CODES", "MISSING", "Call", "Case", "CaseError", "CaseResult", "InputError",
    "Mismatch", "OutputError", "Rule", "Scoring", "SpecError", "SpecSet", "Summary",
    "Trajectory", "__version__", "best_plan", "build_kind", "compile_rule", "iter_mismatches",
    "load_specs", "matches", "parse_case", "parse_output", "parse_specs", "read_cases",
    "read_outputs", "score", "score_case", "check", "assert_tool_calls",
}  # fmt: skip


def test_public_names_are_pinned() -> None:
    assert set(toolscore.__all__) == PUBLIC
    for name in PUBLIC:
        assert hasattr(toolscore, name), name


def test_mismatch_codes_are_the_closed_set_of_the_design() -> None:
    assert toolscore.MISMATCH_CODES == (
        "missing_call", "extra_call", "unknown_tool", "wrong_tool", "missing_argument",
        "unexpected_argument", "type_mismatch", "value_mismatch", "arguments_unparseable",
        "order_violation", "unresolved_ref", "transcript_unread", "missing_output",
        "forbidden_call", "too_many_calls", "missing_turn", "extra_turn",
    )  # fmt: skip
