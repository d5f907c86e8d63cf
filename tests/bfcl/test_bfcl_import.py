"""Importing BFCL-shaped data (fixtures written for these tests from BFCL's documented formats):
types to kinds, acceptable values to `$any`, the omission marker, merged docs, irrelevance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolscore import load_specs, parse_output, read_cases, score_case
from toolscore.bfcl import convert_result, import_bfcl, write_import
from toolscore.bfcl.importer import UNDOCUMENTED_REASON, VARIABLE_REASON
from toolscore.errors import InputError

FIXTURES = Path(__file__).parents[1] / "bfcl"
DATA = str(FIXTURES / "data.json")
ANSWERS = str(FIXTURES / "possible_answer.json")


def plans_of(case_id: str, **options: bool) -> list[list[dict[str, Any]]]:
    result = import_bfcl(DATA, ANSWERS, **options)
    return next(c["plans"] for c in result.cases if c["id"] == case_id)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def weather_doc(**unit: Any) -> dict[str, Any]:
    return {
        "name": "get_weather",
        "parameters": {
            "type": "dict",
            "required": ["city"],
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", **unit}},
        },
    }


def test_types_become_kinds() -> None:
    args = import_bfcl(DATA, ANSWERS).spec["tools"]["geometry.area"]["args"]
    assert args["base"] == "integer"
    assert args["height"] == "number"
    assert args["unit"] == "exact"
    assert args["exact"] == {"kind": "boolean", "default": False}
    assert args["sides"] == {"kind": "list", "items": "number"}
    assert args["origin"] == {"kind": "list", "items": "integer"}  # a tuple is an ordered list
    assert args["style"] == {"kind": "object", "args": {"color": "exact", "width": "integer"}}
    assert args["extra"] == "exact"  # any


def test_several_acceptable_values_become_any() -> None:
    plan = plans_of("multiple_0")[0]
    assert plan[0]["args"]["city"] == {"$any": ["Paris", "Paris, France"]}


def test_omittable_arguments_without_default_take_omitted_as_an_alternative() -> None:
    plans = plans_of("simple_python_0")
    assert len(plans) == 1  # one plan, however many arguments may be omitted
    args = plans[0][0]["args"]
    # unit ["units", ""] and origin [[0, 0], ""]: BFCL's first answer first, then omission
    assert args["unit"] == {"$any": ["units", {"$omitted": True}]}
    assert args["origin"] == {"$any": [[0, 0], {"$omitted": True}]}
    assert "extra" not in args  # [""] only: always omitted


def test_an_omittable_argument_whose_documented_default_is_acceptable_needs_no_plan() -> None:
    plans = plans_of("simple_python_0")
    assert all(p[0]["args"]["exact"] is False for p in plans)  # omitted means the default


def test_leading_omission_marker_puts_the_omitting_plan_first() -> None:
    plans = plans_of("multiple_0")  # unit ["", "celsius"], no usable default (docs disagree)
    assert plans[0][0]["args"]["unit"] == {"$any": [{"$omitted": True}, "celsius"]}


def test_dict_answers_become_object_alternatives() -> None:
    args = plans_of("simple_python_0")[0][0]["args"]
    assert args["style"] == {
        "color": {"$any": ["red", "RED"]},
        "width": {"$any": [2, {"$omitted": True}]},
    }
    book = plans_of("parallel_multiple_0")[0][1]["args"]
    # a dict without properties is compared whole: every combination is an alternative
    assert book["prefs"] == {"$any": [{"view": "sea", "floor": 2}, {"view": "sea"}]}
    # a list of dicts: each item is a per-key answer
    assert book["guests"] == [{"name": "Ann", "age": {"$any": [30, {"$omitted": True}]}}]


def test_parallel_answers_are_calls_of_one_plan() -> None:
    plans = plans_of("parallel_0")
    assert len(plans) == 1
    assert [c["args"]["city"] for c in plans[0]] == ["Paris", "Rome"]


def test_docs_of_one_tool_merge_and_disagreeing_defaults_are_dropped() -> None:
    result = import_bfcl(DATA, ANSWERS)
    weather = result.spec["tools"]["get_weather"]["args"]
    assert weather == {"city": "exact", "unit": "exact", "days": "integer"}
    assert "tool get_weather: docs disagree on the default of unit; none used" in result.notes
    assert result.counts["merged_tools"] == 1


def test_irrelevance_becomes_abstention(tmp_path: Path) -> None:
    result = import_bfcl(str(FIXTURES / "irrelevance.json"))
    assert [c["plans"] for c in result.cases] == [[], []]
    assert result.counts["abstention_cases"] == 2
    assert [c["tags"] for c in result.cases] == [["irrelevance"], ["live_irrelevance"]]


def test_other_categories_are_refused_with_the_reason() -> None:
    with pytest.raises(InputError, match="Java categories are not supported") as error:
        import_bfcl(str(FIXTURES / "java.json"))
    assert error.value.line == 1


def test_a_case_without_answer_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no possible answer for this case"):
        import_bfcl(DATA)


def test_values_of_another_type_make_the_argument_exact(tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "d.json",
        [{"id": "simple_0", "function": [{"name": "f", "parameters": {"type": "dict",
          "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]}],
    )  # fmt: skip
    answers = write_jsonl(
        tmp_path / "a.json", [{"id": "simple_0", "ground_truth": [{"f": {"n": ["count"]}}]}]
    )
    result = import_bfcl(data, answers)
    assert result.spec["tools"]["f"]["args"]["n"] == {"kind": "exact", "reason": VARIABLE_REASON}


def test_an_answer_argument_the_doc_lacks(tmp_path: Path) -> None:
    doc = {"name": "f", "parameters": {"type": "dict", "properties": {}, "required": []}}
    data = write_jsonl(
        tmp_path / "d.json",
        [{"id": "simple_0", "function": [doc]}, {"id": "simple_1", "function": [doc]}],
    )
    answers = write_jsonl(
        tmp_path / "a.json",
        [{"id": "simple_0", "ground_truth": [{"f": {"x": [1, ""]}}]},
         {"id": "simple_1", "ground_truth": [{"f": {"y": [2]}}]}],
    )  # fmt: skip
    result = import_bfcl(data, answers)
    assert result.cases[0]["plans"] == [[{"name": "f", "args": {}}]]  # only omitting passes BFCL
    assert result.spec["tools"]["f"]["args"]["y"] == {
        "kind": "exact",
        "reason": UNDOCUMENTED_REASON,
    }


def test_empty_string_on_a_required_argument_is_a_value(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.json", [{"id": "simple_0", "function": [weather_doc()]}])
    answers = write_jsonl(
        tmp_path / "a.json", [{"id": "simple_0", "ground_truth": [{"get_weather": {"city": [""]}}]}]
    )
    assert import_bfcl(data, answers).cases[0]["plans"] == [
        [{"name": "get_weather", "args": {"city": ""}}]
    ]


def test_bfcl_strings_normalises_expected_strings() -> None:
    plan = plans_of("multiple_0", bfcl_strings=True)[0]
    assert plan[0]["args"]["city"] == {"$any": ["paris", "parisfrance"]}


def test_underscore_names() -> None:
    result = import_bfcl(DATA, ANSWERS, underscore_names=True)
    assert "geometry_area" in result.spec["tools"]
    assert result.cases[0]["plans"][0][0]["name"] == "geometry_area"


def test_written_directory_loads_and_scores(tmp_path: Path) -> None:
    written = write_import(import_bfcl(DATA, ANSWERS), tmp_path / "out")
    assert [p.name for p in written] == ["tools.yaml", "cases.jsonl", "import.json"]
    specs = load_specs(tmp_path / "out" / "tools.yaml")
    cases = {c.id: c for c in read_cases(tmp_path / "out" / "cases.jsonl", specs)}
    outputs = {
        "simple_python_0": [{"geometry.area": {"base": 10, "height": 5, "sides": [1.5, 2.0],
                                               "style": {"color": "red"}}}],
        "multiple_0": [{"get_weather": {"city": "Paris, France"}}],
        "parallel_0": [{"get_weather": {"city": "Rome", "unit": "fahrenheit"}},
                       {"get_weather": {"city": "Paris"}}],
        "parallel_multiple_0": [{"book_room": {"guests": [{"name": "Ann", "age": 30}],
                                               "prefs": {"view": "sea"}}},
                                {"get_weather": {"city": "Oslo", "days": 3}}],
    }  # fmt: skip
    for case_id, result in outputs.items():
        trajectory = parse_output(convert_result({"id": case_id, "result": result}))
        verdict = score_case(specs, cases[case_id], trajectory)
        assert verdict.passed, (case_id, verdict.mismatches)
    wrong = parse_output(
        convert_result({"id": "multiple_0", "result": [{"get_weather": {"city": "paris"}}]})
    )
    assert not score_case(specs, cases["multiple_0"], wrong).passed  # strings are exact
    report = json.loads((tmp_path / "out" / "import.json").read_text())
    assert report["counts"]["cases"] == 4
    assert report["options"] == {"bfcl_strings": False, "underscore_names": False}


def test_a_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('{"id": "simple_0", "function": []}\n{not json\n')
    with pytest.raises(InputError) as error:
        import_bfcl(str(path))
    assert error.value.line == 2
    assert "not valid JSON" in str(error.value)


def test_a_json_array_file_is_read_too(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in Path(DATA).read_text().splitlines()]
    path = tmp_path / "d.json"
    path.write_text(json.dumps(rows))
    assert len(import_bfcl(str(path), ANSWERS).cases) == 4
