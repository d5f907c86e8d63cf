"""Parquet cases and outputs files: each row read as the JSON Lines line it stands for.

The fixtures in tests/parquet are written by pyarrow itself (make_parquet_fixtures.py), nested
and as JSON text, beside JSON Lines twins that must give the very same report.
"""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli
from toolscore.errors import CaseError, OutputError
from toolscore.inputs import parquet as parquet_input
from toolscore.inputs.converted import Conversion, Kind

FIXTURES = Path(__file__).parents[1] / "parquet"
SPECS = str(FIXTURES / "tools.yaml")
EXAMPLE = Path(__file__).parents[2] / "examples" / "parquet"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def report(cases: str, outputs: str, tmp_path: Path) -> dict[str, Any]:
    target = tmp_path / f"{cases}-{outputs}.json"
    done = run(
        "score", "--specs", SPECS, "--cases", str(FIXTURES / cases),
        "--outputs", str(FIXTURES / outputs), "--json", str(target),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    loaded: dict[str, Any] = json.loads(target.read_text())
    return loaded


def converted(table: pa.Table, tmp_path: Path, kind: Kind = "outputs") -> list[dict[str, Any]]:
    """The JSON Lines lines a table converts to (written to Parquet by pyarrow first)."""
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    out = io.BytesIO()
    parquet_input.convert(str(path), Conversion(kind), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def score_error(cases: Path, outputs: Path) -> Result:
    done = run("score", "--specs", SPECS, "--cases", str(cases), "--outputs", str(outputs))
    assert done.exit_code == 2, done.output
    return done


@pytest.mark.parametrize("cases", ["cases_nested.parquet", "cases_text.parquet"])
@pytest.mark.parametrize("outputs", ["outputs_nested.parquet", "outputs_text.parquet"])
def test_parquet_files_give_the_report_of_their_json_lines_twins(
    cases: str, outputs: str, tmp_path: Path
) -> None:
    twin = report("cases.jsonl", "outputs.jsonl", tmp_path)
    assert (twin["summary"]["cases"], twin["summary"]["passed"]) == (4, 3)
    assert report(cases, outputs, tmp_path) == twin
    assert report(cases, "outputs.jsonl", tmp_path) == twin
    assert report("cases.jsonl", outputs, tmp_path) == twin


def test_the_fixtures_are_what_the_script_writes(tmp_path: Path) -> None:
    sys.path.insert(0, str(FIXTURES))
    try:
        import make_parquet_fixtures  # noqa: PLC0415
    finally:
        sys.path.remove(str(FIXTURES))
    make_parquet_fixtures.build(tmp_path)
    for name in ("cases_nested", "cases_text", "outputs_nested", "outputs_text"):
        assert pq.read_table(tmp_path / f"{name}.parquet").equals(
            pq.read_table(FIXTURES / f"{name}.parquet")
        ), name
    for name in ("cases.jsonl", "outputs.jsonl"):
        assert (tmp_path / name).read_text() == (FIXTURES / name).read_text()
    make_parquet_fixtures.build_example(tmp_path)
    for name in ("cases", "outputs"):
        assert pq.read_table(tmp_path / f"{name}.parquet").equals(
            pq.read_table(EXAMPLE / f"{name}.parquet")
        ), name


def test_the_readme_example_scores_as_its_json_lines(tmp_path: Path) -> None:
    reports = []
    transcripts = EXAMPLE.parent / "transcripts"
    for cases, outputs in (
        (transcripts / "cases.jsonl", transcripts / "outputs-openai.jsonl"),
        (EXAMPLE / "cases.parquet", EXAMPLE / "outputs.parquet"),
    ):
        target = tmp_path / "r.json"
        done = run(
            "score", "--specs", str(transcripts / "tools.yaml"), "--cases", str(cases),
            "--outputs", str(outputs), "--json", str(target),
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        reports.append(json.loads(target.read_text()))
    assert reports[0] == reports[1]
    assert reports[0]["summary"]["passed"] == 3


def test_a_file_without_an_id_column_is_one_error_line() -> None:
    done = score_error(FIXTURES / "cases_no_id.parquet", FIXTURES / "outputs.jsonl")
    assert done.output.strip().endswith(
        "cases_no_id.parquet: id: the Parquet file has no 'id' column"
    )
    assert len(done.output.strip().splitlines()) == 1


def test_json_text_that_does_not_parse_names_the_row_and_the_column() -> None:
    done = score_error(FIXTURES / "cases_bad_json.parquet", FIXTURES / "outputs.jsonl")
    assert (
        "cases_bad_json.parquet: row 2: plans: a JSON text column that does not parse"
        in done.output
    )


def test_a_corrupt_file_is_one_error_line() -> None:
    done = score_error(FIXTURES / "cases.jsonl", FIXTURES / "outputs_cut.parquet")
    assert "outputs_cut.parquet: not a readable Parquet file" in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_an_error_found_after_conversion_names_the_row(tmp_path: Path) -> None:
    path = tmp_path / "outputs.parquet"
    pq.write_table(
        pa.table({"id": ["refund-1", None, "thanks"], "response": ["a", "b", "c"]}), path
    )
    done = score_error(FIXTURES / "cases.jsonl", path)
    assert "outputs.parquet: row 2: id: every line needs a non-empty string id" in done.output
    cases = tmp_path / "cases.parquet"
    plans = [json.dumps([[{"name": "refund", "args": {"order_id": "o"}}]]),
             json.dumps([[{"name": "cancel", "args": {}}]])]  # fmt: skip
    pq.write_table(pa.table({"id": ["a", "b"], "plans": plans}), cases)
    done = score_error(cases, FIXTURES / "outputs.jsonl")
    assert "cases.parquet: row 2: plans[0][0].name" in done.output


def test_a_plan_call_args_as_text_that_does_not_parse_names_the_call(tmp_path: Path) -> None:
    plans = [
        [[{"name": "refund", "args": '{"order_id": "o"}'}]],
        [[{"name": "refund", "args": "{"}]],
    ]
    with pytest.raises(CaseError, match=r"row 2: plans\[0\]\[0\]\.args: a JSON text column"):
        converted(pa.table({"id": ["a", "b"], "plans": plans}), tmp_path, "cases")


def test_nulls_are_absent_keys_except_in_lists_and_maps(tmp_path: Path) -> None:
    calls = pa.array(
        [[{"name": "refund", "args": {"order_id": "o", "amount": None}, "id": None}], None]
    )
    labels = pa.array([[("k", "v"), ("n", None)], []], pa.map_(pa.string(), pa.string()))
    table = pa.table(
        {"id": ["a", "b"], "calls": calls, "labels": labels, "tags": [["x", None], None]}
    )
    assert converted(table, tmp_path) == [
        {"id": "a", "calls": [{"name": "refund", "args": {"order_id": "o"}}],
         "labels": {"k": "v", "n": None}, "tags": ["x", None]},
        {"id": "b", "labels": {}},
    ]  # fmt: skip


def test_a_map_that_repeats_a_key_is_an_error(tmp_path: Path) -> None:
    labels = pa.array([[("k", "v"), ("k", "w")]], pa.map_(pa.string(), pa.string()))
    with pytest.raises(OutputError, match="row 1: labels: the map repeats the key 'k'"):
        converted(pa.table({"id": ["a"], "labels": labels}), tmp_path)


def test_string_columns_are_json_text_only_for_structured_keys(tmp_path: Path) -> None:
    table = pa.table({
        "id": ["a"], "calls": ['[{"name": "f", "args": "{\\"x\\": 1}"}]'],
        "response": ['["not", "parsed"]'], "note": ["{}"],
    })  # fmt: skip
    assert converted(table, tmp_path) == [
        {"id": "a", "calls": [{"name": "f", "args": '{"x": 1}'}],
         "response": '["not", "parsed"]', "note": "{}"},
    ]  # fmt: skip


def test_types_json_lacks_are_written_as_text_or_numbers(tmp_path: Path) -> None:
    import datetime  # noqa: PLC0415
    import decimal  # noqa: PLC0415

    table = pa.table({
        "id": ["a"],
        "at": pa.array([datetime.datetime(2026, 12, 1, 9, 30)], pa.timestamp("us")),
        "cost": pa.array([decimal.Decimal("1.50")], pa.decimal128(5, 2)),
        "kind": pa.array(["x"]).dictionary_encode(),
    })  # fmt: skip
    assert converted(table, tmp_path) == [
        {"id": "a", "at": "2026-12-01T09:30:00", "cost": 1.5, "kind": "x"}
    ]


def test_a_nan_argument_is_scored_as_json_lines_would(tmp_path: Path) -> None:
    calls = pa.array([[{"name": "refund", "args": {"order_id": "order-5", "amount": math.nan}}]])
    path = tmp_path / "outputs.parquet"
    pq.write_table(pa.table({"id": ["chat-4"], "calls": calls}), path)
    target = tmp_path / "r.json"
    done = run("score", "--specs", SPECS, "--cases", str(FIXTURES / "cases.jsonl"),
               "--outputs", str(path), "--json", str(target))  # fmt: skip
    assert done.exit_code == 1, done.output  # the other cases have no output
    entry = next(c for c in json.loads(target.read_text())["cases"] if c["id"] == "chat-4")
    assert [m["code"] for m in entry["mismatches"]] == ["arguments_unparseable"]


def test_rows_stream_batch_by_batch_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parquet_input, "BATCH_ROWS", 5)
    monkeypatch.setattr(parquet_input, "PYTHON_ROWS", 2)
    ids = [f"c{i}" for i in range(7)]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": ids, "response": ids}), path, row_group_size=3)
    out = io.BytesIO()
    parquet_input.convert(str(path), Conversion("outputs"), out)
    assert [json.loads(line)["id"] for line in out.getvalue().splitlines()] == ids


def test_without_pyarrow_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    done = score_error(FIXTURES / "cases_nested.parquet", FIXTURES / "outputs.jsonl")
    assert done.output.strip() == (
        f"toolscore: error: {FIXTURES / 'cases_nested.parquet'}: reading Parquet files needs "
        "pyarrow: pip install 'toolscore[parquet]'"
    )


def test_goal_state_and_setup_strings_are_json_only_when_they_look_it(tmp_path: Path) -> None:
    table = pa.table({
        "id": ["a", "b"], "plans": ["[]", "[]"],
        "goal_state": ["plan", '{"orders": []}'],
        "setup": ["DELETE FROM orders", '["DELETE FROM orders"]'],
    })  # fmt: skip
    assert converted(table, tmp_path, "cases") == [
        {"id": "a", "plans": [], "goal_state": "plan", "setup": "DELETE FROM orders"},
        {"id": "b", "plans": [], "goal_state": {"orders": []}, "setup": ["DELETE FROM orders"]},
    ]


def test_a_page_corrupt_mid_file_names_the_rows_read(tmp_path: Path) -> None:
    ids = [f"c{i}" for i in range(5000)]
    path = tmp_path / "outputs.parquet"
    pq.write_table(
        pa.table({"id": ids, "response": [i * 9 for i in ids]}), path, row_group_size=1000
    )
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 200] = bytes(b ^ 0xFF for b in data[middle : middle + 200])
    path.write_bytes(bytes(data))
    with pytest.raises(OutputError, match=r"cannot read the Parquet file after row \d+: "):
        parquet_input.convert(str(path), Conversion("outputs"), io.BytesIO())


def test_a_value_without_json_form_deep_in_a_column_is_named_by_its_path(
    tmp_path: Path,
) -> None:
    meta = pa.map_(pa.string(), pa.binary())
    calls = pa.array(
        [[{"name": "f", "meta": [("ok", b"fine")]}, {"name": "g", "meta": [("raw", b"\xff")]}]],
        pa.list_(pa.struct([("name", pa.string()), ("meta", meta)])),
    )
    with pytest.raises(OutputError) as failure:
        converted(pa.table({"id": ["a"], "calls": calls}), tmp_path)
    assert failure.value.field == "row 1: calls[1].meta.raw"
    assert "binary data that is not UTF-8 text" in failure.value.message


def test_two_columns_of_one_name_are_refused(tmp_path: Path) -> None:
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["x"]), pa.array(["y"])],
                                 names=["id", "response", "response"])  # fmt: skip
    with pytest.raises(OutputError, match="two columns of this name") as failure:
        converted(table, tmp_path)
    assert failure.value.field == "response"


def test_a_row_group_that_claims_a_bomb_ratio_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    """10 MB of one repeated response, unencoded, zstd-compressed to a few kilobytes: pyarrow
    would inflate it whole; toolscore refuses it from the footer's sizes, with one line."""
    response = "x" * 10_000
    table = pa.table({"id": [f"c{i}" for i in range(1_000)], "response": [response] * 1_000})
    bomb = tmp_path / "bomb.parquet"
    pq.write_table(table, bomb, compression="zstd", use_dictionary=False)
    group = pq.ParquetFile(bomb).metadata.row_group(0)
    assert group.total_byte_size > 1000 * group.column(1).total_compressed_size
    done = score_error(FIXTURES / "cases.jsonl", bomb)
    (line,) = done.output.strip().splitlines()
    assert line.startswith(f"toolscore: error: {bomb}: row group 0 claims ")
    assert line.endswith("a crafted file?)")
