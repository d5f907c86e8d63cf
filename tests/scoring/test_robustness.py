"""Whatever an agent sends, the scorer scores it and the report can be written."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from toolscore.inputs.cases import parse_case
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.case import score_case
from toolscore.specs.loading import parse_specs

SPEC = {
    "tools": {
        "t": {
            "args": {
                "id": "exact",
                "tags": {"kind": "list", "items": "exact", "order": "unordered"},
                "where": {"kind": "object", "args": {"city": "casefold"}},
                "n": {"kind": "integer", "coerce": True},
            }
        }
    }
}
DEEP = orjson.loads("[" * 1000 + "]" * 1000)
DEEP_OBJECT = orjson.loads('{"a":' * 500 + "1" + "}" * 500)


@pytest.mark.parametrize(
    "args",
    [
        {"id": DEEP},
        {"id": "x", "tags": [DEEP, DEEP]},
        {"id": "x", "where": {"city": DEEP_OBJECT}},
        {"id": "x", "where": DEEP_OBJECT},
        {"id": "x" * 1_000_000},
        {"id": "x", "n": "1e1000000"},
        {"id": "x", "n": "9" * 5000},
        '{"id": ' + "[" * 1000 + "]" * 1000 + "}",
        {"id": "x", "unknown": DEEP},
    ],
    ids=["deep list", "deep items", "deep nested value", "deep object", "huge string",
         "huge exponent", "huge integer", "deep JSON text", "deep unknown argument"],
)  # fmt: skip
def test_extreme_agent_output_is_scored_and_reported(args: Any) -> None:
    specs, problems = parse_specs(SPEC, "spec")
    assert specs is not None, problems
    case = parse_case({"id": "c", "plans": [[{"name": "t", "args": {"id": "x"}}]]}, specs)
    calls = [{"name": "t", "args": args}, {"name": "t", "args": args}]
    result = score_case(specs, case, parse_output({"id": "c", "calls": calls}))
    assert not result.passed
    assert result.mismatches
    assert all(m.message for m in result.mismatches)
    assert orjson.loads(orjson.dumps(case_to_json(result)))["id"] == "c"


def test_values_no_json_writer_can_write_are_scored_and_shown_short() -> None:
    specs, problems = parse_specs(SPEC, "spec")
    assert specs is not None, problems
    case = parse_case({"id": "c", "plans": [[{"name": "t", "args": {"id": "x"}}]]}, specs)
    trajectory = parse_output({"id": "c", "calls": [{"name": "t", "args": DEEP}], "response": DEEP})
    assert trajectory.response == "[...]"
    assert trajectory.calls[0].raw_args == "[...]"
    assert trajectory.calls[0].args_error == "a array, not an object"
    result = score_case(specs, case, trajectory)
    assert [m.code for m in result.mismatches] == ["arguments_unparseable"]
