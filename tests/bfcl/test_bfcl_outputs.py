"""BFCL model outputs: the function-calling form, and the prompting form read with `ast` (only
literals, never evaluated); whatever the model wrote is a scored result, never a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolscore import Case, SpecSet, parse_case, parse_output, parse_specs, score_case
from toolscore.bfcl import convert_result, convert_results, import_bfcl, parse_calls
from toolscore.bfcl.results import dumps
from toolscore.errors import InputError, OutputError

FIXTURES = Path(__file__).parents[1] / "bfcl"


def calls(text: str) -> list[dict[str, Any]]:
    return parse_calls(text).calls


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[get_weather(city='Paris')]", [{"name": "get_weather", "args": {"city": "Paris"}}]),
        ("get_weather(city='Paris')", [{"name": "get_weather", "args": {"city": "Paris"}}]),
        ("f(a=1), g(b=2)", [{"name": "f", "args": {"a": 1}}, {"name": "g", "args": {"b": 2}}]),
        ("[math.hypot(x=4, y=-5.5)]", [{"name": "math.hypot", "args": {"x": 4, "y": -5.5}}]),
        (
            "[f(a=[1, (2, 3)], b={'k': None}, c=True, d=+1)]",
            [{"name": "f", "args": {"a": [1, [2, 3]], "b": {"k": None}, "c": True, "d": 1}}],
        ),
        ("```python\n[f(a='x')]\n```", [{"name": "f", "args": {"a": "x"}}]),
        ("<TOOLCALL>[f()]</TOOLCALL>", [{"name": "f", "args": {}}]),
        ("  [ ]  ", []),
        ("", []),
    ],
)
def test_literal_calls_are_read(text: str, expected: list[dict[str, Any]]) -> None:
    assert calls(text) == expected


def test_prose_is_an_abstention_kept_as_the_response() -> None:
    read = parse_calls("I am sorry, none of the functions can do that.")
    assert read.calls == []
    assert read.response == "I am sorry, none of the functions can do that."


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[f(city=Paris)]", "the name 'Paris' is not a literal value"),
        ("[f(a=os.environ)]", "attribute access is not a literal value"),
        ("[f(a=g(b=1))]", "a call is not a literal value"),
        ("[f(a=__import__('os').system('true'))]", "a call is not a literal value"),
        ("[f(a=1+2)]", "an expression is not a literal value"),
        ("[f(a=lambda: 1)]", "a Lambda is not a literal value"),
        ("[f(a={1, 2})]", "a set is not a literal value"),
        ("[f(a={1: 2})]", "dict keys must be strings"),
        ("[f(a=1e999)]", "inf is not a finite number"),
        ("[f(a=b'x')]", "bytes is not a JSON value"),
        ("[f(1, 2)]", "positional arguments"),
        ("[f(**kw)]", "**arguments"),
    ],
)
def test_anything_but_a_literal_makes_a_call_that_fails_to_parse(text: str, reason: str) -> None:
    [call] = calls(text)
    assert call["name"] == "f"
    assert reason in call["error"]
    assert call["args"].startswith("f(")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[f(a=1", "not a Python call list: '(' was never closed"),
        ("[f(a=" + "[" * 300 + "]" * 300 + ")]", "not a Python call list: too many nested"),
        ("f(a=1) and more", "not a call or a list of calls"),
        ("[f(a=1, a=2)]", "argument 'a' is given twice"),
    ],
)
def test_malformed_call_text_is_one_broken_call(text: str, reason: str) -> None:
    [call] = calls(text)
    assert call["name"] == "f"
    assert call["error"].startswith(reason)


def test_elements_that_are_not_calls_have_no_name() -> None:
    assert calls("[f(a=1), 42]")[1]["name"] is None
    assert "is not a call" in calls("[f(a=1), 42]")[1]["error"]
    assert calls("[f(a=1)(b=2)]")[0]["name"] is None


def test_function_calling_form() -> None:
    line = convert_result(
        {"id": "x", "result": [{"f": '{"a": 1}'}, {"g": {"b": 2}, "h": {}}, "junk"]}
    )
    assert line == {
        "id": "x",
        "calls": [
            {"name": "f", "args": '{"a": 1}'},
            {"name": "g", "args": {"b": 2}},
            {"name": "h", "args": {}},
            "junk",
        ],
    }
    assert convert_result({"id": "x", "result": None}) == {"id": "x", "calls": []}


def test_a_result_line_without_id_or_result_is_an_input_error() -> None:
    with pytest.raises(OutputError, match="string id"):
        convert_result({"result": []})
    with pytest.raises(OutputError, match="no 'result'"):
        convert_result({"id": "x"})
    with pytest.raises(OutputError, match="multi-turn"):
        convert_result({"id": "x", "result": [[{"f": {}}], [{"g": {}}]]})


def test_duplicate_result_ids_are_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"id": "a", "result": []}\n{"id": "a", "result": []}\n')
    with pytest.raises(InputError, match="duplicate id 'a'"):
        list(convert_results(str(path)))


def test_non_finite_arguments_are_written_as_text() -> None:
    line = convert_result({"id": "x", "result": [{"f": {"a": float("nan")}}]})
    written = json.loads(dumps(line))
    assert written["calls"][0]["args"] == '{"a": NaN}'
    assert written["calls"][0]["error"] == "argument /a: nan is not a finite number"


def test_bfcl_strings_normalises_produced_strings() -> None:
    line = convert_result(
        {"id": "x", "result": [{"f": '{"city": "New York, NY", "tags": ["A-B"], "n": 1}'}]},
        bfcl_strings=True,
    )
    assert line["calls"][0]["args"] == {"city": "newyorkny", "tags": ["ab"], "n": 1}


def _scored(results: str) -> dict[str, Any]:
    cases: dict[str, tuple[SpecSet, Case]] = {}
    for data, answers in (("data.json", "possible_answer.json"), ("irrelevance.json", None)):
        converted = import_bfcl(str(FIXTURES / data), answers and str(FIXTURES / answers))
        specs, problems = parse_specs(converted.spec)
        assert specs is not None, problems
        cases.update({c["id"]: (specs, parse_case(c, specs)) for c in converted.cases})
    verdicts = {}
    for line in convert_results(str(FIXTURES / results)):
        specs, case = cases[line["id"]]
        result = score_case(specs, case, parse_output(line))
        verdicts[line["id"]] = (result.passed, [m.code for m in result.mismatches])
    return verdicts


def test_both_forms_score_and_broken_text_is_a_scored_failure() -> None:
    for results in ("results_fc.json", "results_prompting.json"):
        verdicts = _scored(results)
        assert verdicts["multiple_0"] == (True, [])
        assert verdicts["irrelevance_0"] == (True, [])
        assert verdicts["simple_python_0"] == (False, ["arguments_unparseable"])
    assert _scored("results_fc.json")["parallel_0"] == (True, [])  # order does not matter
    assert _scored("results_prompting.json")["parallel_0"] == (False, ["arguments_unparseable"])
