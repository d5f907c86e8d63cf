"""`score --junit PATH`: JUnit XML that CI tools read, with the same verdicts as the report."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st
from junitparser import JUnitXml

from toolscore.cli.app import cli
from toolscore.report.junit import xml_attribute, xml_text

FIXTURES = Path(__file__).parents[1] / "parquet"
SPECS = FIXTURES / "tools.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def score(
    tmp_path: Path, cases: Path, outputs: Path, *extra: str, status: int = 0
) -> tuple[ET.Element, dict[str, Any]]:
    """The JUnit XML (parsed) and the report JSON of one run, which exits with `status`."""
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    done = run(
        "score", "--specs", str(SPECS), "--cases", str(cases), "--outputs", str(outputs),
        "--junit", str(junit), "--json", str(report), *extra,
    )  # fmt: skip
    assert done.exit_code == status, done.output
    loaded: dict[str, Any] = json.loads(report.read_text())
    return ET.parse(junit).getroot(), loaded


def test_one_testcase_per_case_with_the_report_verdicts(tmp_path: Path) -> None:
    root, report = score(tmp_path, FIXTURES / "cases.jsonl", FIXTURES / "outputs.jsonl")
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [e["id"] for e in report["cases"]]
    assert [c.find("failure") is None for c in cases] == [e["passed"] for e in report["cases"]]
    assert [c.get("classname") for c in cases] == [
        "tools.refunds", "tools.lookups", "tools", "tools"
    ]  # fmt: skip
    summary = report["summary"]
    for node in (root, suite):
        assert node.get("tests") == str(summary["cases"])
        assert node.get("failures") == str(summary["cases"] - summary["passed"])
        assert node.get("errors") == "0"
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["accuracy"] == str(summary["accuracy"])
    assert json.loads(properties["accuracy_ci95"] or "") == summary["accuracy_ci95"]
    assert properties["argument_accuracy.n"] == str(summary["argument_accuracy"]["n"])
    assert properties["specs.sha256"] == report["specs"]["sha256"]


def test_a_failure_lists_each_mismatch_with_its_values(tmp_path: Path) -> None:
    root, _ = score(tmp_path, FIXTURES / "cases.jsonl", FIXTURES / "outputs.jsonl")
    failure = root.find(".//testcase[@name='lookup-2']/failure")
    assert failure is not None
    assert failure.get("type") == "value_mismatch"
    assert failure.get("message") == "1 mismatch: value_mismatch"
    assert failure.text == (
        "value_mismatch call 0 /order_id [exact]: 'ORDER-9' does not equal 'order-9' exactly\n"
        '  expected: "order-9"\n'
        '  produced: "ORDER-9"'
    )


def test_a_case_without_output_says_so(tmp_path: Path) -> None:
    outputs = write_lines(tmp_path / "outputs.jsonl", [{"id": "thanks", "calls": []}])
    root, _ = score(tmp_path, FIXTURES / "cases.jsonl", outputs, status=1)
    failure = root.find(".//testcase[@name='refund-1']/failure")
    assert failure is not None
    assert failure.get("type") == "missing_output"
    assert failure.text == (
        "no output line for this case\nmissing_output: the outputs file has no line for this case"
    )
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert (properties["missing_outputs"], properties["missing_policy"]) == ("3", "fail")


def test_under_missing_exclude_a_case_without_output_is_no_testcase(tmp_path: Path) -> None:
    outputs = write_lines(tmp_path / "outputs.jsonl", [{"id": "thanks", "calls": []}])
    root, report = score(tmp_path, FIXTURES / "cases.jsonl", outputs, "--missing", "exclude")
    assert [c.get("name") for c in root.iter("testcase")] == ["thanks"]
    assert root.get("tests") == "1"
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert (properties["missing_outputs"], properties["missing_policy"]) == ("3", "exclude")
    assert [e["id"] for e in report["cases"]] == ["thanks"]


def test_hostile_text_is_escaped_and_parses(tmp_path: Path) -> None:
    nasty = 'x]]><a b="c">&amp;\x1b[31m\x00\ufffe\u2028'
    cases = write_lines(
        tmp_path / "cases.jsonl",
        [
            {
                "id": nasty,
                "tags": [nasty],
                "plans": [[{"name": "get_order", "args": {"order_id": "o"}}]],
            }
        ],
    )
    # a lone surrogate in the arguments, as an agent's harness may write it (read leniently)
    call = {"name": "get_order", "args": {"order_id": nasty + "SURROGATE"}}
    line = json.dumps({"id": nasty, "calls": [call]}).replace("SURROGATE", "\\ud800")
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(line + "\n")
    root, report = score(tmp_path, cases, outputs)
    (case,) = root.iter("testcase")
    shown = 'x]]><a b="c">&amp;\\x1b[31m\\x00\\ufffe\u2028'
    assert case.get("name") == shown
    assert case.get("classname") == f"tools.{shown}"
    failure = case.find("failure")
    assert failure is not None
    assert failure.text is not None
    assert "]]>" in failure.text
    assert "\\u001b" in failure.text  # values are shown as JSON writes them
    assert "\\ufffe" in failure.text  # a character XML forbids, written as its escape
    assert "\\ud800" in failure.text
    assert report["cases"][0]["passed"] is False


def test_escapes_keep_line_breaks_in_text_and_encode_them_in_attributes() -> None:
    assert xml_text("a\nb < c ]]> d\x07") == "a\nb &lt; c ]]&gt; d\\x07"
    assert xml_attribute('a\n"b"\t&') == '"a&#10;&quot;b&quot;&#9;&amp;"'
    quoted = xml_attribute("a\nb")
    assert ET.fromstring(f"<t v={quoted}/>").get("v") == "a\nb"


def test_trials_are_one_testcase_each(tmp_path: Path) -> None:
    rows = [
        {"id": "refund-1", "trial": 1, "calls": []},
        {"id": "refund-1", "trial": 2, "calls": []},
        {"id": "thanks", "trial": 1, "calls": []},
    ]
    outputs = write_lines(tmp_path / "outputs.jsonl", rows)
    root, report = score(tmp_path, FIXTURES / "cases.jsonl", outputs, status=1)  # absent trials
    names = [c.get("name") for c in root.iter("testcase")]
    assert names == [
        "refund-1 [trial 1]", "refund-1 [trial 2]", "lookup-2", "thanks [trial 1]", "chat-4"
    ]  # fmt: skip
    assert [e.get("trial") for e in report["cases"]] == [1, 2, None, 1, None]
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert properties["trials.n"] == "2"
    assert "pass_hat_k.2" in properties


def test_ci_parsers_read_the_required_attributes(tmp_path: Path) -> None:
    """What GitLab and Jenkins read: testsuite name, tests, failures, errors, time; testcase
    name, classname, time; failure message and type; property name and value."""
    score(tmp_path, FIXTURES / "cases.jsonl", FIXTURES / "outputs.jsonl")
    root = ET.parse(tmp_path / "junit.xml").getroot()
    for suite in root.iter("testsuite"):
        assert {"name", "tests", "failures", "errors", "time", "timestamp"} <= set(suite.attrib)
        float(suite.attrib["time"])
    for case in root.iter("testcase"):
        assert {"name", "classname", "time"} <= set(case.attrib)
    for failure in root.iter("failure"):
        assert {"message", "type"} <= set(failure.attrib)
    for prop in root.iter("property"):
        assert set(prop.attrib) == {"name", "value"}
    parsed = JUnitXml.fromfile(str(tmp_path / "junit.xml"))
    (read,) = list(parsed)
    assert (read.tests, read.failures, read.errors) == (4, 1, 0)
    verdicts = {case.name: case.is_passed for case in read}
    assert verdicts == {"refund-1": True, "lookup-2": False, "thanks": True, "chat-4": True}


def test_a_failed_run_leaves_an_earlier_file_untouched(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text("earlier")
    outputs = write_lines(tmp_path / "outputs.jsonl", [{"id": "thanks", "calls": 3}])
    done = run(
        "score", "--specs", str(SPECS), "--cases", str(FIXTURES / "cases.jsonl"),
        "--outputs", str(outputs), "--junit", str(junit),
    )  # fmt: skip
    assert done.exit_code == 2
    assert "calls: must be a list of calls" in done.output
    assert junit.read_text() == "earlier"
    assert [p.name for p in tmp_path.iterdir()] == ["junit.xml", "outputs.jsonl"]


@pytest.mark.parametrize("where", ["dir", "missing/junit.xml", "-"])
def test_a_target_that_cannot_be_written_is_refused_before_scoring(
    tmp_path: Path, where: str
) -> None:
    (tmp_path / "dir").mkdir()
    done = run(
        "score", "--specs", str(SPECS), "--cases", str(FIXTURES / "cases.jsonl"),
        "--outputs", str(FIXTURES / "outputs.jsonl"),
        "--junit", where if where == "-" else str(tmp_path / where),
    )  # fmt: skip
    assert done.exit_code == 2
    assert len(done.output.strip().splitlines()) == 1


def allowed(char: str) -> bool:
    """Whether XML 1.0 allows the character."""
    return (
        char in "\t\n\r"
        or "\x20" <= char <= "\ud7ff"
        or "\ue000" <= char <= "\ufffd"
        or char >= "\U00010000"
    )


@given(st.text())
def test_any_text_round_trips_through_the_escapes(text: str) -> None:
    node = ET.fromstring(f"<t v={xml_attribute(text)}>{xml_text(text)}</t>".encode())
    expected = "".join(
        c if allowed(c) else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
        for c in text
    )
    assert node.get("v") == expected
    # an XML parser reads a carriage return in element text as a line feed
    assert (node.text or "") == expected.replace("\r\n", "\n").replace("\r", "\n")


def test_the_file_is_the_same_on_several_worker_processes(tmp_path: Path) -> None:
    files = []
    for workers in ("1", "2"):
        junit = tmp_path / f"junit{workers}.xml"
        done = run(
            "score", "--specs", str(SPECS), "--cases", str(FIXTURES / "cases_text.parquet"),
            "--outputs", str(FIXTURES / "outputs.jsonl"), "--junit", str(junit),
            "--workers", workers,
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        files.append(re.sub(r' (time|timestamp)="[^"]*"', "", junit.read_text()))
    assert files[0] == files[1]
    assert 'classname="tools.refunds"' in files[0]
