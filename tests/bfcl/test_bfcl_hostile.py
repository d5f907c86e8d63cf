"""Hostile BFCL answers and files (issue 11, item 5): every answer converts or becomes a
malformed call scored `arguments_unparseable`, what the importers write always loads in
`toolscore score`, and a bad BFCL data file is one error naming its line and field."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from toolscore.bfcl import convert_result, convert_results, import_bfcl, parse_calls, write_import
from toolscore.bfcl.jsonsafe import MAX_DEPTH, json_problem
from toolscore.bfcl.results import dumps
from toolscore.cli.app import cli
from toolscore.errors import InputError

SPEC = """\
version: "hostile"
tools:
  get_weather:
    version: 1
    args:
      city: exact
      n: {kind: integer, default: 0}
  f:
    version: 1
    args:
      a: {kind: exact, default: 0}
"""

LONG = "x" * 2_000_000


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def weather(**args: Any) -> list[list[dict[str, Any]]]:
    return [[{"name": "get_weather", "args": args}]]


UNPARSEABLE = ["arguments_unparseable"]
F_NO_ARGS = [[{"name": "f", "args": {}}]]
P = weather(city="P")
X = weather(city="x")

# id -> (BFCL result, expected plans, the case's mismatch codes, None for a pass)
ANSWERS: dict[str, tuple[Any, list[Any], list[str] | None]] = {
    "surrogate-char": ("[get_weather(city='\ud800')]", X, UNPARSEABLE),
    "surrogate-escape": ("[get_weather(city='\\ud800')]", X, UNPARSEABLE),
    # Python does not join a pair of \u escapes into one character (JSON does): two surrogates.
    "surrogate-pair": ("[get_weather(city='\\ud83d\\ude00')]", X, UNPARSEABLE),
    "astral-escape": ("[get_weather(city='\\U0001f600')]", weather(city="\U0001f600"), None),
    "surrogate-prose": ("Sorry \ud800, I cannot.", [], None),
    "surrogate-key": ("[f(a={'\\udfff': 1})]", F_NO_ARGS, UNPARSEABLE),
    "int-400": (f"[get_weather(city='P', n={'9' * 400})]", P, UNPARSEABLE),
    "int-5000": (f"[get_weather(city='P', n={'9' * 5000})]", P, UNPARSEABLE),
    "int-30": (f"[get_weather(city='P', n={10**30})]", weather(city="P", n=10**30), None),
    "inf": ("[get_weather(city='P', n=-1e999)]", P, UNPARSEABLE),
    "deep-150": (
        f"[f(a={json.dumps(nested(150))})]",
        [[{"name": "f", "args": {"a": nested(150)}}]],
        None,
    ),
    "deep-250": (f"[f(a={json.dumps(nested(250))})]", F_NO_ARGS, UNPARSEABLE),
    "giant-string": (f"[get_weather(city='{LONG}')]", weather(city=LONG), None),
    "many-calls": (
        "[" + ", ".join(f"get_weather(city='c{i}')" for i in range(2000)) + "]",
        weather(city="c0"),
        ["extra_call"] * 1999,
    ),
    "half-broken": (
        "[get_weather(city='P'), get_weather(city='\ud800')]",
        [[{"name": "get_weather", "args": {"city": "P"}}] * 2],
        UNPARSEABLE,
    ),
    "syntax": ("[get_weather(city='P'", P, UNPARSEABLE),
    "fc-nan": ([{"get_weather": {"city": "P", "n": float("nan")}}], P, UNPARSEABLE),
    "fc-inf-key": ([{"f": {"a": {"b": float("-inf")}}}], F_NO_ARGS, UNPARSEABLE),
    "fc-int-400": ([{"get_weather": {"city": "P", "n": 10**400}}], P, UNPARSEABLE),
    "fc-int-30": ([{"get_weather": {"city": "P", "n": 10**30}}], weather(city="P", n=10**30), None),
    "fc-surrogate": ([{"get_weather": {"city": "\udc80"}}], X, UNPARSEABLE),
    "fc-surrogate-text": ([{"get_weather": '{"city": "\ud800"}'}], X, UNPARSEABLE),
    "fc-surrogate-name": ([{"get\ud800": {}}], X, ["unknown_tool", "missing_call"]),
    "fc-deep": ([{"f": {"a": nested(MAX_DEPTH + 10)}}], F_NO_ARGS, UNPARSEABLE),
    "fc-junk": ([float("nan"), "\ud800"], [], ["unknown_tool", "unknown_tool"]),
}


def write_results(path: Path, answers: dict[str, tuple[Any, list[Any], Any]]) -> None:
    # Python's json writes NaN, huge integers and (escaped) lone surrogates, as a harness would.
    lines = [json.dumps({"id": case_id, "result": a[0]}) for case_id, a in answers.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_import_then_score_never_rejects_the_file(tmp_path: Path) -> None:
    results, outputs = tmp_path / "results.json", tmp_path / "outputs.jsonl"
    write_results(results, ANSWERS)
    (tmp_path / "tools.yaml").write_text(SPEC)
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": i, "plans": a[1]}) + "\n" for i, a in ANSWERS.items())
    )
    runner = CliRunner()
    imported = runner.invoke(cli, ["import", "bfcl-outputs", str(results), "--out", str(outputs)])
    assert imported.exit_code == 0, imported.output
    score = runner.invoke(
        cli,
        ["score", "--specs", str(tmp_path / "tools.yaml"), "--cases", str(tmp_path / "cases.jsonl"),
         "--outputs", str(outputs), "--json", str(tmp_path / "report.json")],
    )  # fmt: skip
    assert score.exit_code == 0, score.output
    report = json.loads((tmp_path / "report.json").read_text())
    codes = {c["id"]: sorted(m["code"] for m in c["mismatches"]) for c in report["cases"]}
    passed = {c["id"]: c["passed"] for c in report["cases"]}
    for case_id, (_, _, expected) in ANSWERS.items():
        assert passed[case_id] is (expected is None), (case_id, codes[case_id])
        assert codes[case_id] == sorted(expected or []), case_id


def test_a_malformed_call_keeps_its_text_and_says_why() -> None:
    [call] = parse_calls("[get_weather(city='\\ud800')]").calls
    assert call == {
        "name": "get_weather",
        "args": "get_weather(city='\\ud800')",
        "error": "argument 'city': a lone surrogate (half of a UTF-16 pair) is not Unicode text",
    }
    [call] = parse_calls(f"[f(a=[[{'9' * 400}]])]").calls
    too_large = "digits is too large for a JSON number"
    assert call["error"] == f"argument 'a' at /0/0: an integer of 400 {too_large}"
    line = convert_result({"id": "x", "result": [{"f": {"a": [1, 10**400]}}]})
    assert line["calls"][0]["args"] == '{"a": [1, ' + "1" + "0" * 400 + "]}"
    assert line["calls"][0]["error"] == f"argument /a/1: an integer of 401 {too_large}"


def test_a_literal_surrogate_in_the_text_is_escaped_before_parsing() -> None:
    [call] = parse_calls("[f(a='ok'), f(a=\ud800)]").calls  # a backslash outside a string
    assert call == {
        "name": "f",
        "args": "[f(a='ok'), f(a=\\ud800)]",
        "error": "not a Python call list: unexpected character after line continuation character",
    }
    assert parse_calls("Sorry \ud800").response == "Sorry \\ud800"


@pytest.mark.parametrize(
    "text",
    [
        "[f(a=x),\r g(b=x),\r\n h(c='é', d=y), k(d=y)]",
        "[f(a='日本', b=x),\n  g(b=x, c='''multi\nline'''),\rh(e=z)]",
        "[\n f(a=q)\n ,\n\n g(b=[1,\n 2], c=q)]",
    ],
)
def test_each_call_keeps_exactly_its_own_text(text: str) -> None:
    elements = ast.parse(text, mode="eval").body.elts  # type: ignore[attr-defined]
    expected = [ast.get_source_segment(text, element) for element in elements]
    assert [call["args"] for call in parse_calls(text).calls] == expected


def test_toolcall_tags_without_an_end_are_prose() -> None:
    assert parse_calls("<TOOLCALL>" * 5 + "[f(a=1)]").calls == []
    assert parse_calls("</TOOLCALL><TOOLCALL>[f(a=1)]</TOOLCALL>").calls == [
        {"name": "f", "args": {"a": 1}}
    ]
    assert parse_calls("x<TOOLCALL>[f(a=1)]</TOOLCALL>y<TOOLCALL>[g()]</TOOLCALL>").calls == [
        {"name": "f", "args": {"a": 1}}
    ]


def test_every_converted_line_is_read_back_by_orjson() -> None:
    for case_id, (result, _, _) in ANSWERS.items():
        line = convert_result(json.loads(json.dumps({"id": case_id, "result": result})))
        assert orjson.loads(dumps(line).encode("utf-8"))["id"] == case_id
        assert all(json_problem(c) is None for c in line["calls"])


def test_line_separators_inside_answers_do_not_end_the_line(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    answers = ["[f(a='x\u2028y')]", "[f(a='x\x85y')]\r", "Sorry,\u2029no."]
    path.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "result": answer}, ensure_ascii=False) + "\n"
            for i, answer in enumerate(answers)
        ),
        encoding="utf-8",
    )
    lines = list(convert_results(str(path)))
    assert [line["calls"] for line in lines[:2]] == [
        [{"name": "f", "args": {"a": "x\u2028y"}}],
        [{"name": "f", "args": {"a": "x\x85y"}}],
    ]
    assert lines[2]["response"] == "Sorry,\u2029no."


def test_a_result_id_with_a_lone_surrogate_is_an_input_error() -> None:
    with pytest.raises(InputError, match="id: the id holds a lone surrogate"):
        convert_result({"id": "a\ud800", "result": []})


def test_results_too_deep_for_any_reader_are_one_input_error(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    deep = "[" * 5000 + "]" * 5000
    path.write_text('{"id": "a", "result": []}\n{"id": "b", "result": ' + deep + "}\n")
    out = str(tmp_path / "o.jsonl")
    result = CliRunner().invoke(cli, ["import", "bfcl-outputs", str(path), "--out", out])
    assert result.exit_code == 2
    assert f"{path}:2: lists and objects nested too deeply to read" in result.stderr
    assert not list(tmp_path.glob("*o.jsonl*"))


# The cases side: `import bfcl` on data and possible-answer files.


class Raw:
    """An answer given as JSON text (too deep for Python's writer)."""

    def __init__(self, text: str) -> None:
        self.text = text


def doc(**properties: Any) -> dict[str, Any]:
    return {"name": "f", "parameters": {"type": "dict", "required": [], "properties": properties}}


def bfcl_files(
    tmp_path: Path, answer: Any, question: Any = "q", function: dict[str, Any] | None = None
) -> tuple[str, str]:
    """A category file of one case calling `f`, and its possible answer for `a` (JSON text
    when `answer` is a `Raw`)."""
    data, answers = tmp_path / "data.json", tmp_path / "answers.json"
    entry = {"id": "simple_python_0", "question": [[{"role": "user", "content": question}]],
             "function": [function or doc(a={"type": "any"})]}  # fmt: skip
    data.write_text(json.dumps(entry) + "\n")
    value = answer.text if isinstance(answer, Raw) else json.dumps(answer)
    answers.write_text(
        '{"id": "simple_python_0", "ground_truth": [{"f": {"a": [' + value + "]}}]}\n"
    )
    return str(data), str(answers)


@pytest.mark.parametrize(
    ("answer", "question", "where", "message"),
    [
        ("\ud800", "q", "answers.json:1: /ground_truth/0/f/a/0", "a lone surrogate"),
        (1, "\udfff", "data.json:1: /question/0/0/content", "a lone surrogate"),
        (float("nan"), "q", "answers.json:1: /ground_truth/0/f/a/0", "nan is not a finite number"),
        (10**400, "q", "answers.json:1: /ground_truth/0/f/a/0", "401 digits is too large"),
        (
            Raw("1" + "0" * 5000),
            "q",
            "answers.json:1: /ground_truth/0/f/a/0",
            "5,001 digits is too large",
        ),
        (nested(MAX_DEPTH), "q", "answers.json:1: /ground_truth/0/f/a/0/0/0", "nested deeper"),
        (Raw("[" * 5000 + "]" * 5000), "q", "answers.json:1", "nested too deeply to read"),
    ],
    ids=["surrogate", "surrogate-question", "nan", "int-400", "int-5000", "deep", "too-deep"],
)
def test_values_no_reader_accepts_are_one_input_error(
    tmp_path: Path, answer: Any, question: str, where: str, message: str
) -> None:
    data, answers = bfcl_files(tmp_path, answer, question)
    with pytest.raises(InputError) as raised:
        import_bfcl(data, answers)
    assert where in str(raised.value)
    assert message in str(raised.value)


def test_imported_files_with_giant_values_load_and_score(tmp_path: Path) -> None:
    function = doc(a={"type": "any"}, b={"type": "integer", "default": 10**30})
    data, answers = bfcl_files(tmp_path, LONG, question=LONG, function=function)
    values = [LONG, *range(20_000), *range(100), LONG]  # duplicates dropped in linear time
    truth = [{"f": {"a": values}}, *({"f": {"a": [i]}} for i in range(1, 300))]
    Path(answers).write_text(json.dumps({"id": "simple_python_0", "ground_truth": truth}) + "\n")
    written = write_import(import_bfcl(data, answers), tmp_path / "out")
    calls = [{"name": "f", "args": {"a": i}} for i in range(300)]  # 0 fits the first call only
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(json.dumps({"id": "simple_python_0", "calls": calls[::-1]}) + "\n")
    score = CliRunner().invoke(
        cli,
        ["score", "--specs", str(written[0]), "--cases", str(written[1]), "--outputs",
         str(outputs), "--json", str(tmp_path / "report.json")],
    )  # fmt: skip
    assert score.exit_code == 0, score.output
    [case] = json.loads((tmp_path / "report.json").read_text())["cases"]
    assert case["passed"] is True
    [plan] = import_bfcl(data, answers).cases[0]["plans"]
    assert plan[0]["args"]["a"]["$any"] == [LONG, *range(20_000)]


def test_combinations_are_refused_before_they_are_built(tmp_path: Path) -> None:
    answer = {f"k{i}": ["x", ""] for i in range(40)}  # 2**40 whole-object alternatives
    data, answers = bfcl_files(tmp_path, answer, function=doc(a={"type": "dict"}))
    with pytest.raises(InputError, match="more than 1024 whole-value alternatives"):
        import_bfcl(data, answers)


def test_a_failed_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, answers = bfcl_files(tmp_path, 1)
    result = import_bfcl(data, answers)
    original = Path.write_text

    def failing(self: Path, text: str, *args: Any, **kwargs: Any) -> int:
        if self.name == ".cases.jsonl.tmp":
            raise OSError(28, "No space left on device")
        return original(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(InputError, match="cannot write: No space left on device"):
        write_import(result, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []
