"""`toolscore.check`: one case from plain Python data, in every shape it accepts, gives the
verdict `score` gives from files; input it cannot use raises the library's input errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutate
from toolscore import (
    CaseError,
    CaseResult,
    InputError,
    OutputError,
    SpecError,
    assert_tool_calls,
    check,
    load_specs,
    read_cases,
    read_outputs,
    score,
)
from toolscore.scoring.check import failure_message

ROOT = Path(__file__).parents[2]
TRANSCRIPTS = ROOT / "examples" / "transcripts"

SPECS: dict[str, Any] = {
    "version": "1",
    "tools": {
        "get_weather": {
            "args": {
                "city": {"kind": "casefold", "reason": "the service ignores case"},
                "unit": {"kind": "enum", "values": ["celsius", "fahrenheit"], "default": "celsius"},
                "days": {"kind": "integer", "default": 1},
            }
        },
        "get_time": {"args": {"city": "exact"}},
    },
}
PARIS = {"name": "get_weather", "args": {"city": "Paris"}}
PARIS_WEEK = {"name": "get_weather", "args": {"city": "Paris", "days": 7}}
TIME = {"name": "get_time", "args": {"city": "Paris"}}
OPENAI_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "paris"}'},
}

OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]

EXAMPLES: list[dict[str, Any]] = [
    {
        "description": "one plan as a list of calls; produced calls with arguments as JSON text",
        "plans": [PARIS],
        "produced": [{"name": "get_weather", "args": '{"city": "PARIS", "unit": "celsius"}'}],
        "passed": True,
        "codes": [],
    },
    {
        "description": "a list of plans: the second fits",
        "plans": [[TIME], [PARIS]],
        "produced": [{"name": "get_weather", "args": {"city": "paris"}}],
        "passed": True,
        "codes": [],
    },
    {
        "description": "no plan ([]): the right answer is no call, and a call fails it",
        "plans": [],
        "produced": [PARIS],
        "passed": False,
        "codes": ["extra_call"],
    },
    {
        "description": "no plan, no call: abstaining passes",
        "plans": [],
        "produced": [],
        "passed": True,
        "codes": [],
    },
    {
        "description": "a case mapping with its other keys",
        "plans": {"id": "week", "plans": [[PARIS_WEEK]], "tags": ["weather"]},
        "produced": [{"name": "get_weather", "args": {"city": "Paris", "days": "7"}}],
        "passed": False,
        "codes": ["type_mismatch"],
    },
    {
        "description": "an outputs line with calls",
        "plans": [PARIS, TIME],
        "produced": {"calls": [TIME, {"name": "get_weather", "args": {"city": "paris"}}]},
        "passed": True,
        "codes": [],
    },
    {
        "description": "an OpenAI Chat transcript as a list of messages, detected",
        "format": "openai-chat",
        "plans": [PARIS],
        "produced": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [OPENAI_CALL]},
        ],
        "passed": True,
        "codes": [],
    },
    {
        "description": "an Anthropic transcript as a list of messages, detected",
        "format": "anthropic",
        "plans": [PARIS_WEEK],
        "produced": [
            {"role": "user", "content": "Paris this week"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "get_weather",
                        "input": {"city": "Paris", "days": 7},
                    },
                ],
            },
        ],
        "passed": True,
        "codes": [],
    },
    {
        "description": "an OpenAI Responses transcript (items) as a list, detected",
        "format": "openai-responses",
        "plans": [PARIS],
        "produced": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "get_weather",
                "arguments": '{"city": "Rome"}',
            },
        ],
        "passed": False,
        "codes": ["value_mismatch"],
    },
    {
        "description": "a Gemini transcript (contents) as a list, detected",
        "format": "gemini",
        "plans": [PARIS],
        "produced": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "paris"}}}],
            },
        ],
        "passed": True,
        "codes": [],
    },
    {
        "description": "an outputs line naming its transcript's format",
        "plans": [PARIS],
        "produced": {
            "format": "openai-chat",
            "messages": [{"role": "assistant", "tool_calls": [OPENAI_CALL]}],
        },
        "passed": True,
        "codes": [],
    },
    {
        "description": "only the calls after the last user message count",
        "plans": [TIME],
        "produced": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "tool_calls": [OPENAI_CALL]},
            {"role": "user", "content": "And the time?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
        ],
        "passed": True,
        "codes": [],
    },
    {
        "description": "arguments that are not JSON: a scored failure, not an error",
        "plans": [PARIS],
        "produced": [{"name": "get_weather", "args": "{city: Paris"}],
        "passed": False,
        "codes": ["arguments_unparseable"],
    },
    {
        "description": "a call that is not an object fails as a call",
        "plans": [PARIS],
        "produced": ["get_weather(Paris)"],
        "passed": False,
        "codes": ["unknown_tool", "missing_call"],
    },
]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["description"] for e in EXAMPLES])
def test_each_accepted_shape(example: dict[str, Any]) -> None:
    result = check(SPECS, example["plans"], example["produced"])
    assert isinstance(result, CaseResult)
    assert result.passed is example["passed"]
    assert sorted(m.code for m in result.mismatches) == sorted(example["codes"])
    if "format" in example:
        assert result.format == example["format"]


@pytest.mark.parametrize("kind", ["mapping", "path", "str", "specset", "openai-list"])
def test_specs_in_each_shape(kind: str, tmp_path: Path) -> None:
    spec_file = tmp_path / "tools.json"
    spec_file.write_text(json.dumps(SPECS))
    specs: Any = {
        "mapping": SPECS,
        "path": spec_file,
        "str": str(spec_file),
        "specset": load_specs(spec_file),
        "openai-list": OPENAI_TOOLS,
    }[kind]
    result = check(specs, [PARIS], [{"name": "get_weather", "args": {"city": "Paris"}}])
    assert result.passed
    wrong = check(specs, [PARIS], [{"name": "get_weather", "args": {"city": "Lyon"}}])
    assert [m.code for m in wrong.mismatches] == ["value_mismatch"]


def test_the_case_id_names_the_result() -> None:
    assert check(SPECS, [PARIS], [], case_id="paris").id == "paris"
    assert check(SPECS, {"id": "from-case", "plans": []}, []).id == "from-case"
    assert check(SPECS, {"id": "from-case", "plans": []}, [], case_id="given").id == "given"
    assert check(SPECS, [], []).id == "case"
    outputs_line = {"id": "paris", "calls": [PARIS]}
    assert check(SPECS, [PARIS], outputs_line, case_id="paris").passed


@pytest.mark.parametrize(
    ("specs", "plans", "produced", "error", "message"),
    [
        ({"tools": 5}, [], [], SpecError, "<specs>: tools: "),
        (42, [], [], SpecError, "<specs>: expected a SpecSet, a path or spec data, got int"),
        ("/nonexistent/tools.yaml", [], [], SpecError, "/nonexistent/tools.yaml: cannot read"),
        (SPECS, "Paris", [], CaseError, "<plans>: expected a plan, a list of plans or a case"),
        (SPECS, [PARIS, [PARIS]], [], CaseError, "<plans>: give one plan (a list of calls)"),
        (
            SPECS,
            [{"name": "get_wether", "args": {}}],
            [],
            CaseError,
            "<plans>: plans[0][0].name: 'get_wether' is not a tool in the spec",
        ),
        (
            SPECS,
            [{"name": "get_time", "args": {"town": "x"}}],
            [],
            CaseError,
            "<plans>: plans[0][0].args.town: tool 'get_time' has no argument 'town'",
        ),
        (SPECS, {"plans": 3}, [], CaseError, "<plans>: plans: must be a list of plans"),
        (SPECS, [], "calls", OutputError, "<produced>: expected a list of calls, a transcript"),
        (SPECS, [], {"calls": 5}, OutputError, "<produced>: calls: must be a list of calls"),
        (
            SPECS,
            [],
            {"id": "other", "calls": []},
            OutputError,
            "<produced>: id: the output is for case 'other', not 'case'",
        ),
        (
            SPECS,
            [],
            {"format": "gemini", "messages": [{"role": "assistant", "tool_calls": []}]},
            OutputError,
            "<produced>: messages[0].tool_calls: written as openai-chat",
        ),
    ],
)
def test_input_it_cannot_use_raises_one_clear_input_error(
    specs: Any, plans: Any, produced: Any, error: type[InputError], message: str
) -> None:
    with pytest.raises(error) as raised:
        check(specs, plans, produced)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_assert_tool_calls_returns_the_result_or_lists_every_mismatch() -> None:
    result = assert_tool_calls([{"name": "get_weather", "args": {"city": "PARIS"}}], [PARIS],
                               specs=SPECS)  # fmt: skip
    assert result.passed
    produced = [
        {"name": "get_weather", "args": {"city": "Paris", "days": "7"}},
        {"name": "get_time", "args": {"city": "Oslo"}},
    ]
    with pytest.raises(AssertionError) as raised:
        assert_tool_calls(produced, [PARIS_WEEK], specs=SPECS, case_id="week")
    assert str(raised.value).splitlines() == [
        "tool calls of case 'week' do not match the plans (closest plan 0; 2 mismatches):",
        "  type_mismatch call 0 /days [integer]: expected an integer, got string '7'",
        "  extra_call call 1: call to 'get_time' is not in the plan",
    ]


def test_a_long_failure_is_cut_and_counted() -> None:
    produced = [{"name": "get_time", "args": {"city": str(i)}} for i in range(60)]
    result = check(SPECS, [], produced)
    lines = failure_message(result).splitlines()
    assert len(lines) == 1 + 50 + 1
    assert lines[-1] == "  ... and 10 more (the result's mismatches list all)"


# --- check() agrees with score() ------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Synthetic data of every kind bench/generate.py writes, 30 cases each."""
    folders = []
    for kind in ("single", "parallel", "overlap", "chains"):
        folder = tmp_path_factory.mktemp(kind)
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "generate.py"), "--kind", kind, "--n", "30",
             "--out", str(folder), "--seed", "7"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        folders.append(folder)
    return folders


def lines(path: Path) -> list[Any]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_check_agrees_with_score_on_generated_cases(generated: list[Path]) -> None:
    verdicts = set()
    for folder in generated:
        specs = load_specs(folder / "tools.yaml")
        run = score(
            specs, read_cases(folder / "cases.jsonl", specs), read_outputs(folder / "outputs.jsonl")
        )
        expected = {result.id: result for result in run}
        outputs = {line["id"]: line for line in lines(folder / "outputs.jsonl")}
        for case in lines(folder / "cases.jsonl"):
            got = check(specs, case, outputs[case["id"]])
            assert got == expected[case["id"]]
            verdicts.add(got.passed)
    assert verdicts == {True, False}  # the data holds both, so the comparison means something


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_check_agrees_with_score_on_transcripts(provider: str) -> None:
    specs = load_specs(TRANSCRIPTS / "tools.yaml")
    outputs_path = TRANSCRIPTS / f"outputs-{provider}.jsonl"
    run = score(specs, read_cases(TRANSCRIPTS / "cases.jsonl", specs), read_outputs(outputs_path))
    expected = {result.id: result for result in run}
    for line in lines(outputs_path):
        case = next(c for c in lines(TRANSCRIPTS / "cases.jsonl") if c["id"] == line["id"])
        assert check(specs, case, line) == expected[line["id"]]
        if "format" not in line and line.keys() <= {"id", "messages"}:
            # the bare list of messages reads the same as the line holding it
            assert check(specs, case, line["messages"]) == expected[line["id"]]


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_check_agrees_with_score_on_mutated_outputs(
    generated: list[Path], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    folder = data.draw(st.sampled_from(generated))
    specs = load_specs(folder / "tools.yaml")
    cases = lines(folder / "cases.jsonl")
    case = data.draw(st.sampled_from(cases))
    original = next(o for o in lines(folder / "outputs.jsonl") if o["id"] == case["id"])

    def pick(n: int) -> int:
        return data.draw(st.integers(0, n - 1))

    text = mutate.line(original, pick)
    try:
        produced = orjson.loads(text)
    except orjson.JSONDecodeError:
        return  # not JSON: Python data cannot hold it, so check() never sees it
    target = tmp_path_factory.getbasetemp() / "mutated.jsonl"
    target.write_bytes(text + b"\n")
    cases_file = tmp_path_factory.getbasetemp() / "one-case.jsonl"
    cases_file.write_bytes(orjson.dumps(case) + b"\n")
    from_files: list[CaseResult] | InputError
    try:
        from_files = list(score(specs, read_cases(cases_file, specs), read_outputs(target)))
    except InputError as error:
        from_files = error
    if not isinstance(produced, dict) or produced.get("id") != case["id"]:
        return  # a line for no case (or no line at all): check() is told its case
    try:
        got: CaseResult | InputError = check(specs, case, produced)
    except InputError as error:
        got = error
    if isinstance(from_files, InputError):
        assert isinstance(got, InputError), (from_files, got)
        assert (got.field, got.message) == (from_files.field, from_files.message)
    else:
        assert not isinstance(got, InputError), got
        assert [got] == from_files
