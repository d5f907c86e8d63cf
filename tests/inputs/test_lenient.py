"""Values JSON does not allow in an outputs line: scored where the agent's values stand, an
input error in the line's structure, and still refused in specs and cases.

The verdicts are golden cases (tests/cases/junk.json); here the same lines go through the
command line on one process and on two, and the errors and helpers are checked."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.errors import OutputError, SpecError
from toolscore.inputs.lenient import Junk, first_junk, loads, text_of
from toolscore.inputs.outputs import read_outputs
from toolscore.specs.loading import load_specs

GOLDEN = json.loads((Path(__file__).parents[1] / "cases" / "junk.json").read_text(encoding="utf-8"))


def _write(path: Path, lines: list[str]) -> Path:
    path.write_bytes("".join(f"{line}\n" for line in lines).encode("utf-8", "surrogatepass"))
    return path


def _files(tmp_path: Path, id_last: bool) -> list[str]:
    """The golden junk cases as a spec, a cases file and an outputs file, case i as `c{i}`;
    with `id_last` each outputs line has its id at the end (so the join parses the line)."""
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps(GOLDEN["spec"]))
    cases, outputs = [], []
    for index, golden in enumerate(GOLDEN["cases"]):
        cases.append(json.dumps({"id": f"c{index}", "plans": golden["plans"]}))
        line = golden["produced_line"].replace('"id": "golden"', f'"id": "c{index}"')
        if id_last:
            line = '{"calls"' + line.split('"calls"', 1)[1][:-1] + f', "id": "c{index}"}}'
        outputs.append(line)
    return [
        "--specs", str(spec),
        "--cases", str(_write(tmp_path / "cases.jsonl", cases)),
        "--outputs", str(_write(tmp_path / "outputs.jsonl", outputs)),
    ]  # fmt: skip


@pytest.mark.parametrize("id_last", [False, True], ids=["leading id", "id last"])
def test_junk_is_scored_the_same_on_one_process_and_two(tmp_path: Path, id_last: bool) -> None:
    files = _files(tmp_path, id_last)
    reports = []
    for workers in ("1", "2"):
        report = tmp_path / f"report-{workers}.json"
        db = tmp_path / f"results-{workers}.db"
        args = ["score", *files, "--workers", workers, "--json", str(report), "--db", str(db)]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        reports.append(json.loads(report.read_text()))
    assert reports[0]["cases"] == reports[1]["cases"]
    for index, golden in enumerate(GOLDEN["cases"]):
        case = reports[0]["cases"][index]
        assert case["id"] == f"c{index}"
        assert case["passed"] is golden["passed"], golden["description"]
        assert sorted(m["code"] for m in case["mismatches"]) == sorted(golden["codes"])
        if "message" in golden:
            assert any(golden["message"] in m["message"] for m in case["mismatches"])


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('{"id": NaN, "calls": []}', "outputs.jsonl:1: id: NaN is not a JSON number"),
        ('{"calls": [], "id": "c\\ud800"}', 'outputs.jsonl:1: id: the string "c\\ud800" holds'),
        ('{"id": "c", "calls": Infinity}', "outputs.jsonl:1: calls: Infinity is not a JSON number"),
        ('{"id": "c", "format": "anthropic\\udc00", "messages": []}', "outputs.jsonl:1: format:"),
        ('{"id": "c", "messages": -Infinity}', "outputs.jsonl:1: messages: -Infinity is not"),
        ("NaN", "outputs.jsonl:1: not valid JSON: NaN is not a JSON number"),
        ('"\\ud800"', "outputs.jsonl:1: not valid JSON: the string"),
        ('{"id": "c", "\\ud800": 1}', 'outputs.jsonl:1: not valid JSON: the key "\\ud800" holds'),
        ("[NaN]", "outputs.jsonl:1: each line must be a JSON object"),
        ('{"id": "c", "calls": [NaN}', "outputs.jsonl:1: not valid JSON: unexpected character"),
        (
            '{"id": "c", "calls": [{"args": {"a": NaN}, "b": nan}]}',
            "outputs.jsonl:1: not valid JSON: unexp",
        ),
    ],
)
def test_junk_in_the_line_structure_is_one_input_error(
    tmp_path: Path, line: str, error: str
) -> None:
    path = _write(tmp_path / "outputs.jsonl", [line])
    with pytest.raises(OutputError) as raised:
        list(read_outputs(path))
    assert str(raised.value).startswith(str(path.parent) + "/" + error)
    assert "\n" not in str(raised.value)


def test_junk_in_a_structural_id_is_one_line_from_the_command_line(tmp_path: Path) -> None:
    files = _files(tmp_path, id_last=True)
    outputs = Path(files[5])
    outputs.write_text('{"calls": [], "id": NaN}\n')
    for workers in ("1", "2"):
        result = CliRunner().invoke(cli, ["score", *files, "--workers", workers])
        assert result.exit_code == 2
        assert result.output.strip().endswith("outputs.jsonl:1: id: NaN is not a JSON number")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400", "9" * 400, '"\\ud800"'])
def test_cases_stay_strict(tmp_path: Path, value: str) -> None:
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps(GOLDEN["spec"]))
    line = '{"id": "c", "plans": [[{"name": "refund", "args": {"order_id": "o", "amount": %s}}]]}'
    cases = _write(tmp_path / "cases.jsonl", [line % value])
    outputs = _write(tmp_path / "outputs.jsonl", ['{"id": "c", "calls": []}'])
    result = CliRunner().invoke(
        cli, ["score", "--specs", str(spec), "--cases", str(cases), "--outputs", str(outputs)]
    )
    assert result.exit_code == 2
    assert re.search(r"cases\.jsonl:1: not valid JSON: \w", result.output), result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e400", '"\\ud800"'])
def test_json_specs_stay_strict(tmp_path: Path, value: str) -> None:
    spec = tmp_path / "tools.json"
    rule = '{"kind": "exact", "default": ' + value + "}"
    spec.write_text('{"tools": {"t": {"args": {"a": ' + rule + "}}}}")
    with pytest.raises(SpecError, match="not valid JSON"):
        load_specs(spec)


def test_clean_json_and_broken_json_are_not_read_leniently() -> None:
    assert loads(b'{"a": [1, 2.5, "x"]}') is None  # nothing to excuse: orjson's reading stands
    assert loads(b'{"a": NaN') is None
    assert loads(b'{"a": "\xff"}') is None  # not UTF-8: an input error, not agent junk


def test_lenient_reading_finds_every_bad_value_in_document_order() -> None:
    read = loads(b'{"a": [NaN, {"b": 1e999}], "c": "\\udc00", "d": 18446744073709551615}')
    assert read is not None
    value, found = read
    assert [(path, junk.text) for path, junk in found] == [
        (("a", 0), "NaN"),
        (("a", 1, "b"), "1e999"),
        (("c",), '"\\udc00"'),
    ]
    assert value["d"] == 2**64 - 1  # within 64 bits: exact, as orjson reads it
    assert first_junk(value) == found[0]
    assert text_of(value) == '{"a":[NaN,{"b":1e999}],"c":"\\udc00","d":18446744073709551615}'


def test_text_of_writes_any_depth() -> None:
    deep: Any = [Junk("NaN", "NaN is not a JSON number", "number")]
    for _ in range(5000):
        deep = {"k": [deep]}
    text = text_of(deep)
    assert text.startswith('{"k":[' * 3)
    assert "[NaN]" in text
    assert first_junk(deep) is not None
    assert orjson.dumps(text)  # plain text: a report can hold it
