"""Inspect AI eval logs as outputs files, read without inspect_ai: the `.eval` and `.json`
logs that inspect_ai itself wrote (tests/inspect/make_logs.py), a hand-written twin, and
malformed logs that get one line naming the file, the sample and the field (exit 2)."""

from __future__ import annotations

import io
import json
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutate
from toolscore.cli.app import cli
from toolscore.errors import InputError
from toolscore.inputs.converted import Conversion, layout_of
from toolscore.inputs.inspect_logs import _messages, convert
from toolscore.inputs.layouts import inspect_log as sniff

ROOT = Path(__file__).parents[2]
HERE = Path(__file__).parents[1] / "inspect"
FIXTURES = HERE / "fixtures"
SPECS = ROOT / "src" / "toolscore" / "examples" / "support" / "tools.yaml"
CASES = ROOT / "examples" / "inspect" / "cases.jsonl"


def score(outputs: Path, *extra: str) -> Result:
    args = ["score", "--specs", str(SPECS), "--cases", str(CASES), "--outputs", str(outputs)]
    return CliRunner().invoke(cli, [*args, *extra])


def report(tmp_path: Path, outputs: Path) -> dict[str, Any]:
    path = tmp_path / f"{outputs.name}.report.json"
    result = score(outputs, "--json", str(path))
    assert result.exit_code == 0, result.output
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def lines_of(path: Path, kind: str = "outputs") -> list[dict[str, Any]]:
    out = io.BytesIO()
    convert(str(path), Conversion(kind), out)  # type: ignore[arg-type]
    return [json.loads(line) for line in out.getvalue().splitlines()]


def verdicts(data: dict[str, Any]) -> dict[tuple[str, Any], bool]:
    return {(case["id"], case.get("trial")): case["passed"] for case in data["cases"]}


def test_the_logs_are_claimed_by_their_first_bytes() -> None:
    for name in ("refunds.eval", "refunds.json", "twin.json"):
        path = FIXTURES / name
        converter = layout_of(str(path))
        assert converter is not None
        assert converter.name == "inspect-log", name


def test_no_json_lines_file_of_the_repository_is_claimed() -> None:
    files = [*ROOT.glob("tests/**/*.jsonl"), *ROOT.glob("src/toolscore/examples/**/*.jsonl")]
    assert len(files) >= 10
    for path in files:
        assert not sniff(str(path), path.read_bytes()[:65536]), path
    for path in (ROOT / "tests" / "formats").glob("*.json"):  # transcripts, as outputs lines
        line = json.dumps(json.loads(path.read_text())["line"]).encode() + b"\n"
        assert not sniff("outputs.jsonl", line), path


def test_a_json_lines_line_that_starts_like_a_log_is_not_claimed() -> None:
    line = b'{"version": 2, "id": "c1", "status": "success", "eval": {}}\n'
    assert not sniff("outputs.jsonl", line)


def test_the_eval_and_json_logs_inspect_wrote_score_the_same(tmp_path: Path) -> None:
    zipped, plain = (
        report(tmp_path, FIXTURES / "refunds.eval"),
        report(tmp_path, FIXTURES / "refunds.json"),
    )
    assert zipped["summary"] == plain["summary"]
    assert zipped["cases"] == plain["cases"]
    assert verdicts(zipped) == {
        (case_id, trial): case_id != "2"
        for case_id in ("refund-1", "2", "thanks", "lookup")
        for trial in (1, 2)
    }
    wrong = next(case for case in zipped["cases"] if case["id"] == "2")
    assert wrong["mismatches"][0]["produced"] == "order-13"
    assert wrong["tool_errors"] == [
        {"call": 0, "name": "get_order", "result": "unknown: no order order-13"}
    ]
    assert wrong["format"] == "inspect"


def test_the_readme_example_is_the_log_inspect_wrote() -> None:
    example = ROOT / "examples" / "inspect" / "refunds.eval"
    assert example.read_bytes() == (FIXTURES / "refunds.eval").read_bytes()


def test_the_hand_written_twin_scores_as_the_first_epoch(tmp_path: Path) -> None:
    twin = report(tmp_path, FIXTURES / "twin.json")
    logged = report(tmp_path, FIXTURES / "refunds.json")
    first = {key[0]: passed for key, passed in verdicts(logged).items() if key[1] == 1}
    assert {key[0]: passed for key, passed in verdicts(twin).items()} == first
    assert all("trial" not in case for case in twin["cases"])
    assert twin["summary"]["name_accuracy"]["value"] == logged["summary"]["name_accuracy"]["value"]


def test_each_sample_is_one_line_and_its_epochs_come_together_as_trials() -> None:
    path = FIXTURES / "refunds.eval"
    with zipfile.ZipFile(path) as archive:  # samples are written as they finish
        names = [n for n in archive.namelist() if n.startswith("samples/")]
    order = list(dict.fromkeys(n.removeprefix("samples/").rsplit("_epoch_", 1)[0] for n in names))
    assert sorted(order) == ["2", "lookup", "refund-1", "thanks"]
    lines = lines_of(path)
    assert [(line["id"], line["trial"]) for line in lines] == [
        (case_id, trial) for case_id in order for trial in (1, 2)
    ]
    assert {line["format"] for line in lines} == {"inspect"}


def test_ids_become_strings_and_attachments_are_put_back() -> None:
    lines = lines_of(FIXTURES / "twin.json")
    assert [line["id"] for line in lines] == ["refund-1", "2", "thanks", "lookup"]
    assert all("trial" not in line for line in lines)
    result = lines[0]["messages"][3]["content"]
    assert json.loads(result)["refund_id"] == "rf-901"


def test_a_deflated_eval_log_is_read_too(tmp_path: Path) -> None:
    """Older Inspect versions (and Python's zipfile) write deflated members, not zstd."""
    path = write_eval(tmp_path / "deflated.eval", twin()["samples"])
    assert lines_of(path) == lines_of(FIXTURES / "twin.json")


def twin() -> dict[str, Any]:
    data = json.loads((FIXTURES / "twin.json").read_text())
    assert isinstance(data, dict)
    return data


def write_eval(path: Path, samples: list[Any], header: bool = True) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        if header:
            archive.writestr("header.json", json.dumps({"version": 2, "status": "success"}))
        for i, sample in enumerate(samples):
            name = sample.get("id", i) if isinstance(sample, dict) else i
            archive.writestr(f"samples/{name}_epoch_1.json", json.dumps(sample))
    return path


def without(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda sample: sample.pop(key)


def nameless_call(sample: dict[str, Any]) -> None:
    del sample["messages"][2]["tool_calls"][0]["function"]


def roleless(sample: dict[str, Any]) -> None:
    del sample["messages"][1]["role"]


BROKEN_SAMPLES = [
    (without("id"), "samples[0].id: every sample needs an id"),
    (lambda sample: sample.update(id=1.5), "samples[0].id: every sample needs an id"),
    (lambda sample: sample.update(epoch="1"), "samples[0].epoch: must be an integer"),
    (without("messages"), "samples[0].messages: must be a list of messages"),
    (roleless, "samples[0].messages[1].role: every message needs a role"),
    (nameless_call, "samples[0].messages[2].tool_calls[0].function: every tool call needs"),
]


@pytest.mark.parametrize(("breaks", "expected"), BROKEN_SAMPLES)
def test_a_broken_sample_of_a_json_log_is_one_line(
    tmp_path: Path, breaks: Callable[[dict[str, Any]], None], expected: str
) -> None:
    data = twin()
    breaks(data["samples"][0])
    path = tmp_path / "log.json"
    path.write_text(json.dumps(data, indent=2))
    assert one_error_line(score(path)).startswith(f"{path}: {expected}")


@pytest.mark.parametrize(("breaks", "expected"), BROKEN_SAMPLES)
def test_a_broken_sample_of_an_eval_log_is_one_line_naming_its_member(
    tmp_path: Path, breaks: Callable[[dict[str, Any]], None], expected: str
) -> None:
    samples = twin()["samples"]
    breaks(samples[0])
    path = write_eval(tmp_path / "log.eval", samples)
    member = f"samples/{samples[0].get('id', 0)}_epoch_1.json"
    in_member = expected.replace("samples[0].", f"{member}: ", 1)
    assert one_error_line(score(path)).startswith(f"{path}: {in_member}")


def test_messages_nested_too_deep_are_an_input_error() -> None:
    sample = twin()["samples"][0]
    deep: Any = "attachment://5f2b"
    for _ in range(sys.getrecursionlimit() + 10):
        deep = [deep]
    sample["messages"][1]["content"] = deep
    with pytest.raises(InputError) as failure:
        _messages("log.json", "samples[0]", sample)
    assert str(failure.value) == "log.json: samples[0].messages: nested too deep to be read"


def test_a_log_without_samples_is_one_line(tmp_path: Path) -> None:
    data = twin()
    del data["samples"]
    path = tmp_path / "header-only.json"
    path.write_text(json.dumps(data, indent=2))
    line = one_error_line(score(path))
    assert line.startswith(f"{path}: samples: the log holds no samples")
    empty = write_eval(tmp_path / "empty.eval", [])
    assert one_error_line(score(empty)).startswith(f"{empty}: the log holds no samples")


def test_a_bad_zip_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.eval"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    assert one_error_line(score(path)).startswith(f"{path}: not a readable Inspect eval log")


def test_a_corrupt_zstd_member_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.eval"
    data = bytearray((FIXTURES / "refunds.eval").read_bytes())
    with zipfile.ZipFile(FIXTURES / "refunds.eval") as archive:
        info = archive.getinfo("samples/thanks_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 8
    data[start : start + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    line = one_error_line(score(path))
    assert line.startswith(f"{path}: samples/thanks_epoch_1.json: ")


def test_a_log_is_its_own_cases_file(tmp_path: Path) -> None:
    for log in (FIXTURES / "refunds.eval", FIXTURES / "twin.json"):
        args = ["--cases", str(log), "--outputs", str(log), "--json", str(tmp_path / "own.json")]
        result = CliRunner().invoke(cli, ["score", "--specs", str(SPECS), *args])
        assert result.exit_code == 0, result.output
        own = json.loads((tmp_path / "own.json").read_text())
        assert own["summary"] == report(tmp_path, log)["summary"]
    cases = {line["id"]: line for line in lines_of(FIXTURES / "twin.json", "cases")}
    assert cases["2"]["plans"] == [[{"name": "get_order", "args": {"order_id": "order-12"}}]]
    assert cases["thanks"] == {"id": "thanks", "plans": [], "prompt": "thanks, that is all"}
    assert cases["lookup"]["prompt"] == [{"role": "user", "content": "Has order-12 shipped?"}]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (
            "",
            "samples[1].target: no plans: give them in the target (JSON text) or in metadata.plans",
        ),
        ("order-12", "samples[1].target: plans must be JSON text (Expecting value)"),
        (7, "samples[1].target: must be a string or a list of strings"),
        ('[{"name": "refnd"}]', "sample 2: plans[0][0].name: "),
    ],
)
def test_a_sample_without_readable_plans_is_one_line_as_cases(
    tmp_path: Path, target: Any, expected: str
) -> None:
    data = twin()
    data["samples"][1]["target"] = target
    path = tmp_path / "log.json"
    path.write_text(json.dumps(data, indent=2))
    args = ["score", "--specs", str(SPECS), "--cases", str(path), "--outputs", str(path)]
    assert one_error_line(CliRunner().invoke(cli, args)).startswith(f"{path}: {expected}")


def test_an_error_found_after_conversion_names_the_log_and_the_sample(tmp_path: Path) -> None:
    data = twin()
    data["samples"][1]["id"] = "refund-1"  # two lines of one case without trials
    data["samples"][1]["epoch"] = 1
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(data, indent=2))
    line = one_error_line(score(path))
    assert line.startswith(f"{path}: sample 2: trial: ")


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    assert lines[0].startswith("toolscore: error: ")
    return lines[0].removeprefix("toolscore: error: ")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_logs_convert_or_fail_with_one_line(data: st.DataObject) -> None:
    """Whatever a broken harness makes of a log, it converts (both ways) or is one input error
    naming the file; never another exception."""
    raw = mutate.line(twin(), lambda n: data.draw(st.integers(0, n - 1)))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "mutated.json"
        path.write_bytes(raw)
        for kind in ("outputs", "cases"):
            try:
                lines_of(path, kind)
            except InputError as error:
                one_line(error, str(path))


def one_line(error: InputError, source: str) -> None:
    text = str(error)
    assert text.startswith(source), text
    assert "\n" not in text, text


@pytest.mark.parametrize("log", ["refunds.eval", "deflated"])
def test_a_member_that_claims_too_much_is_refused_before_it_is_decompressed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: str
) -> None:
    """A crafted member (a zip bomb) must not be decompressed into memory: the bounds are
    lowered here so that an ordinary log crosses them, zstd and deflated members alike."""
    path = (
        FIXTURES / log
        if log.endswith(".eval")
        else write_eval(tmp_path / "d.eval", twin()["samples"])
    )
    monkeypatch.setattr("toolscore.inputs.zip_members.MAX_RATIO", 1)
    result = score(path)
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"toolscore: error: {path}: samples/")
    assert "a zip bomb?" in line
