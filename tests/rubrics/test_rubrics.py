"""Rubrics end to end: spec load errors, scoring apart from the calls, `--no-rubrics`, the
remote rubrics' batch (through a fake scorer), worker merging, and the results store."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli
from toolscore.engines.local import ALL_RUBRICS, LOCAL_RUBRICS, ParallelScoring
from toolscore.rubrics.base import JudgeRubric, RubricTarget, RubricVerdict, SimilarityRubric
from toolscore.rubrics.remote import check_keys
from toolscore.specs.loading import load_specs, parse_specs
from toolscore.store.judgments import StoredJudgments

SPEC = """\
version: "r1"
rubrics:
  names_order:
    version: 2
    checks:
      - {kind: mentions, argument: order_id}
      - {kind: length, max: 60}
  dear: {kind: regex, pattern: "^Dear "}
tools:
  refund:
    version: 1
    args:
      order_id: exact
      note: {kind: text, rubric: names_order}
      letter: {kind: object, args: {body: {kind: text, rubric: dear}}}
  lookup:
    args:
      order_id: exact
"""

JUDGE = """\
  polite:
    kind: judge
    version: 1
    text: "Is the note polite?"
    base_url: http://127.0.0.1:9/v1
    model: tiny
    api_key_env: TOOLSCORE_TEST_KEY
    scale: [1, 5]
    threshold: 4
"""

CASES: list[dict[str, Any]] = [
    {"id": "ok", "prompt": "Refund o-1", "plans": [[
        {"name": "refund", "args": {"order_id": "o-1", "note": "Refund for o-1"}}]]},
    {"id": "vague", "prompt": "Refund o-2", "plans": [[
        {"name": "refund", "args": {"order_id": "o-2"}}]]},
    {"id": "absent", "prompt": "Refund o-3", "plans": [[
        {"name": "refund", "args": {"order_id": "o-3"}}]]},
    {"id": "unpaired", "prompt": "Refund o-4", "plans": [[
        {"name": "refund", "args": {"order_id": "o-4"}}]]},
    {"id": "wrong-id", "prompt": "Refund o-5", "plans": [[
        {"name": "lookup", "args": {"order_id": "o-5"}},
        {"name": "refund", "args": {"order_id": "o-5"}}]]},
    {"id": "thanks", "prompt": "thanks", "plans": []},
]  # fmt: skip

OUTPUTS: list[dict[str, Any]] = [
    {"id": "ok", "calls": [{"name": "refund", "args": {
        "order_id": "o-1", "note": "Refunded O-1 today", "letter": {"body": "Dear Ann, done"}}}]},
    {"id": "vague", "calls": [{"name": "refund", "args": {
        "order_id": "o-2", "note": "Refunded the order", "letter": {"body": "Hi"}}}]},
    {"id": "absent", "calls": [{"name": "refund", "args": {"order_id": "o-3", "note": 7}}]},
    {"id": "unpaired", "calls": []},
    {"id": "wrong-id", "calls": [
        {"name": "lookup", "args": {"order_id": "o-5"}},
        {"name": "refund", "args": {"order_id": "O-5", "note": "Refund o-5 " + "x" * 60}}]},
    {"id": "thanks", "calls": []},
]  # fmt: skip


def _write(directory: Path, spec: str = SPEC, cases: Sequence[Any] = CASES) -> Path:
    (directory / "tools.yaml").write_text(spec)
    (directory / "cases.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in cases))
    (directory / "outputs.jsonl").write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in OUTPUTS))
    return directory


def run(directory: Path, *extra: str) -> Result:
    args = [
        "score",
        "--specs", str(directory / "tools.yaml"),
        "--cases", str(directory / "cases.jsonl"),
        "--outputs", str(directory / "outputs.jsonl"),
        "--json", str(directory / "report.json"),
        *extra,
    ]  # fmt: skip
    return CliRunner().invoke(cli, args)


def _report(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "report.json").read_text())
    return data


def _by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["id"]: case for case in report["cases"]}


def _calls_only(report: dict[str, Any]) -> dict[str, Any]:
    """The report without anything a rubric adds."""
    report = json.loads(json.dumps(report))
    report["summary"].pop("rubrics", None)
    report["specs"].pop("rubrics", None)
    report["specs"].pop("sha256")
    for case in report["cases"]:
        case.pop("rubrics", None)
    return report


# --- scoring ---------------------------------------------------------------------------


def test_rubrics_are_reported_per_case_and_call(tmp_path: Path) -> None:
    result = run(_write(tmp_path))
    assert result.exit_code == 0, result.output
    cases = _by_id(_report(tmp_path))
    ok = cases["ok"]["rubrics"]
    assert ok == [
        {"call": 0, "plan_call": 0, "tool": "refund", "argument": "letter.body", "rubric": "dear",
         "score": 1.0, "passed": True, "reason": "passed", "cached": False, "unscored": None},
        {"call": 0, "plan_call": 0, "tool": "refund", "argument": "note",
         "rubric": "names_order", "score": 1.0, "passed": True, "reason": "passed all 2 checks",
         "cached": False, "unscored": None},
    ]  # fmt: skip
    vague = {e["argument"]: e for e in cases["vague"]["rubrics"]}
    assert (vague["note"]["score"], vague["note"]["passed"]) == (0.5, False)
    assert "does not mention order_id 'o-2'" in vague["note"]["reason"]
    assert (vague["letter.body"]["score"], vague["letter.body"]["passed"]) == (0.0, False)
    absent = {e["argument"]: e["unscored"] for e in cases["absent"]["rubrics"]}
    assert absent == {
        "letter.body": "the produced call does not send this argument",
        "note": "the produced value is number, not text",
    }
    unpaired = cases["unpaired"]["rubrics"]
    assert {e["call"] for e in unpaired} == {None}
    assert {e["unscored"] for e in unpaired} == {
        "the plan call has no produced call paired with it"
    }
    # The refund of "wrong-id" fails its call verdict, yet is paired: its note is scored,
    # on the produced call's position (1) and the plan call's (1).
    assert cases["wrong-id"]["passed"] is False
    note = next(e for e in cases["wrong-id"]["rubrics"] if e["argument"] == "note")
    assert (note["call"], note["plan_call"], note["passed"]) == (1, 1, False)
    assert "more than 60" in note["reason"]
    assert "rubrics" not in cases["thanks"]


def test_the_summary_counts_rubrics_apart(tmp_path: Path) -> None:
    result = run(_write(tmp_path))
    assert result.exit_code == 0, result.output
    rubrics = _report(tmp_path)["summary"]["rubrics"]
    note = rubrics["per_argument"]["refund.note"]
    # Scored: ok (1.0), vague (0.5), wrong-id (0.5); unscored: absent (a number), unpaired.
    assert note["n"] == 3
    assert note["mean_score"] == round(2 / 3, 4)
    assert note["pass_rate"] == {"value": 0.3333, "n": 3, "passed": 1, "ci95": [0.0615, 0.7923]}
    assert note["unscored"] == {
        "count": 2,
        "reasons": {
            "the produced value is number, not text": 1,
            "the plan call has no produced call paired with it": 1,
        },
    }
    assert rubrics["per_rubric"]["names_order"] == note
    assert rubrics["per_rubric"]["dear"]["n"] == 2
    assert rubrics["tokens"] == 0
    assert "Rubrics (apart from the call score)" in result.output
    assert "rubric names_order" in result.output


def test_no_rubrics_skips_them_and_changes_no_call_field(tmp_path: Path) -> None:
    directory = _write(tmp_path)
    assert run(directory).exit_code == 0
    with_rubrics = _report(directory)
    result = run(directory, "--no-rubrics")
    assert result.exit_code == 0, result.output
    without = _report(directory)
    assert "rubrics" not in without["summary"]
    assert all("rubrics" not in case for case in without["cases"])
    assert "Rubrics (apart" not in result.output
    assert _calls_only(with_rubrics) == _calls_only(without)


def test_a_spec_without_rubrics_gives_the_report_it_gave_before(tmp_path: Path) -> None:
    plain = (
        SPEC.split("tools:")[1].replace(", rubric: names_order", "").replace(", rubric: dear", "")
    )
    directory = _write(tmp_path, 'version: "r1"\ntools:' + plain)
    assert run(directory).exit_code == 0
    report = _report(directory)
    assert "rubrics" not in report["summary"]
    assert "rubrics" not in report["specs"]
    assert all("rubrics" not in case for case in report["cases"])


def test_workers_merge_rubric_tallies_to_the_same_summary(tmp_path: Path) -> None:
    cases = [dict(c, id=f"{c['id']}-{i}") for i in range(7) for c in CASES]
    outputs = [dict(o, id=f"{o['id']}-{i}") for i in range(7) for o in OUTPUTS]
    (tmp_path / "cases.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in cases))
    (tmp_path / "outputs.jsonl").write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in outputs))
    (tmp_path / "tools.yaml").write_text(SPEC)
    specs = load_specs(tmp_path / "tools.yaml")
    summaries, lines = [], []
    # A run without report or store counts its rubric results without keeping entries.
    for workers, report in ((1, True), (2, True), (1, False), (2, False)):
        run_ = ParallelScoring(
            specs, str(tmp_path / "cases.jsonl"), str(tmp_path / "outputs.jsonl"), workers,
            want_report=report, chunk_size=5, rubrics=LOCAL_RUBRICS,
        )  # fmt: skip
        lines.append([line for outcome in run_ for line in outcome.report_lines])
        summaries.append(run_.summary().finish().to_dict())
    assert summaries[0] == summaries[1] == summaries[2] == summaries[3]
    assert lines[0] == lines[1]
    assert lines[2] == lines[3] == []
    assert summaries[0]["rubrics"]["per_argument"]["refund.note"]["n"] == 3 * 7


# --- remote rubrics, through a fake scorer ---------------------------------------------


NOT_JSON = "judge answer was not JSON"


class FakeRemote:
    """Stands in for `toolscore.rubrics.remote.score_remote`: records each batch, and
    answers a score of 5 for polite notes, an unscored verdict for the others."""

    def __init__(self, fail: Exception | None = None, short: bool = False) -> None:
        self.batches: list[tuple[str, list[RubricTarget], Any]] = []
        self.fail = fail
        self.short = short

    def __call__(
        self, rubric: JudgeRubric | SimilarityRubric, targets: Sequence[RubricTarget], cache: Any
    ) -> list[RubricVerdict]:
        self.batches.append((rubric.name, list(targets), cache))
        if self.fail is not None:
            raise self.fail
        verdicts = [
            RubricVerdict(rubric.name, 5.0, True, "polite", tokens=11)
            if "Refunded" in t.produced
            else RubricVerdict(rubric.name, None, None, NOT_JSON, unscored=NOT_JSON)
            for t in targets
        ]  # fmt: skip
        return verdicts[:-1] if self.short else verdicts


@pytest.fixture
def remote(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeRemote:
    fake = FakeRemote()
    module = types.ModuleType("toolscore.rubrics.remote")
    module.score_remote = fake  # type: ignore[attr-defined]
    module.check_keys = check_keys  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toolscore.rubrics.remote", module)
    monkeypatch.setenv("TOOLSCORE_TEST_KEY", "secret-key-value")
    # Judgments are kept in the default store when no --db is given: one of the test's own.
    monkeypatch.setenv("TOOLSCORE_DB", str(tmp_path / "default-store" / "results.db"))
    return fake


def _judged(directory: Path) -> Path:
    spec = SPEC.replace("rubrics:\n", "rubrics:\n" + JUDGE).replace(
        "note: {kind: text, rubric: names_order}", "note: {kind: text, rubric: polite}"
    )
    return _write(directory, spec)


def test_the_remote_scorer_gets_the_targets_and_its_verdicts_are_reported(
    tmp_path: Path, remote: FakeRemote
) -> None:
    directory = _judged(tmp_path)
    result = run(directory, "--db", str(tmp_path / "results.db"))
    assert result.exit_code == 0, result.output
    assert len(remote.batches) == 1  # one batch per rubric, after scoring
    name, targets, cache = remote.batches[0]
    assert name == "polite"
    assert isinstance(cache, StoredJudgments)  # the store's judgments, named by --db
    assert [t.case_id for t in targets] == ["ok", "vague", "wrong-id"]
    first = targets[0]
    assert first == RubricTarget(
        case_id="ok", tool="refund", argument="note", call=0, plan_call=0,
        produced="Refunded O-1 today", expected="Refund for o-1", prompt="Refund o-1",
        arguments={"order_id": "o-1", "note": "Refunded O-1 today",
                   "letter": {"body": "Dear Ann, done"}},
    )  # fmt: skip
    assert targets[1].expected is None  # the plan gives no note
    assert (targets[2].call, targets[2].plan_call) == (1, 1)
    report = _report(directory)
    cases = _by_id(report)
    # Remote entries join the deterministic ones, in order (plan call, argument).
    assert [(e["argument"], e["rubric"]) for e in cases["ok"]["rubrics"]] == [
        ("letter.body", "dear"),
        ("note", "polite"),
    ]
    polite = cases["ok"]["rubrics"][1]
    assert (polite["score"], polite["passed"], polite["reason"]) == (5.0, True, "polite")
    unscored = next(e for e in cases["wrong-id"]["rubrics"] if e["rubric"] == "polite")
    assert unscored["unscored"] == "judge answer was not JSON"
    summary = report["summary"]["rubrics"]
    assert summary["per_rubric"]["polite"]["n"] == 2
    assert summary["per_rubric"]["polite"]["unscored"]["count"] == 3  # 1 answer, absent, unpaired
    assert summary["tokens"] == 22
    assert report["specs"]["rubrics"] == {"dear": None, "polite": "1"}
    assert "secret-key-value" not in (directory / "report.json").read_text()
    # The store keeps them: `show --json` gives the same cases back.
    shown = CliRunner().invoke(
        cli, ["show", "latest", "--db", str(tmp_path / "results.db"), "--json"]
    )
    assert shown.exit_code == 0, shown.output
    stored = json.loads(shown.output)
    assert stored["cases"] == report["cases"]
    assert stored["specs"] == report["specs"]
    assert stored["summary"] == report["summary"]


def test_a_remote_batch_that_fails_leaves_its_texts_unscored_and_the_run_completes(
    tmp_path: Path, remote: FakeRemote
) -> None:
    remote.fail = ConnectionError("endpoint unreachable")
    result = run(_judged(tmp_path))
    assert result.exit_code == 0, result.output
    cases = _by_id(_report(tmp_path))
    entry = next(e for e in cases["ok"]["rubrics"] if e["rubric"] == "polite")
    assert entry["unscored"] == "the rubric could not be run: ConnectionError: endpoint unreachable"
    assert next(e for e in cases["ok"]["rubrics"] if e["rubric"] == "dear")["passed"] is True


def test_a_remote_scorer_that_answers_too_few_verdicts_is_unscored(
    tmp_path: Path, remote: FakeRemote
) -> None:
    remote.short = True
    result = run(_judged(tmp_path))
    assert result.exit_code == 0, result.output
    polite = _report(tmp_path)["summary"]["rubrics"]["per_rubric"]["polite"]
    assert polite["n"] == 0
    assert polite["unscored"]["reasons"]["the rubric gave 2 verdicts for 3 texts"] == 3


def test_a_missing_key_variable_stops_before_anything_is_sent(
    tmp_path: Path, remote: FakeRemote, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLSCORE_TEST_KEY")
    directory = _judged(tmp_path)
    result = run(directory)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"toolscore: error: {directory / 'tools.yaml'}: rubrics.polite.api_key_env: rubric "
        "'polite' reads its endpoint's key from the environment variable TOOLSCORE_TEST_KEY, "
        "which is not set"
    ]
    assert remote.batches == []
    assert not (directory / "report.json").exists()
    skipped = run(directory, "--no-rubrics")
    assert skipped.exit_code == 0, skipped.output
    assert remote.batches == []


def test_remote_rubrics_are_not_asked_with_no_rubrics(tmp_path: Path, remote: FakeRemote) -> None:
    assert run(_judged(tmp_path), "--no-rubrics").exit_code == 0
    assert remote.batches == []


def test_without_remote_rubrics_the_remote_module_is_never_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "toolscore.rubrics.remote", None)  # importing it fails
    assert run(_write(tmp_path)).exit_code == 0


def test_parallel_scoring_leaves_remote_targets_pending_in_case_order(tmp_path: Path) -> None:
    directory = _judged(tmp_path)
    specs = load_specs(directory / "tools.yaml")
    run_ = ParallelScoring(
        specs, str(directory / "cases.jsonl"), str(directory / "outputs.jsonl"), 1,
        chunk_size=2, rubrics=ALL_RUBRICS,
    )  # fmt: skip
    list(run_)
    assert [(p.rubric, p.target.case_id) for p in run_.pending] == [
        ("polite", "ok"), ("polite", "vague"), ("polite", "wrong-id"),
    ]  # fmt: skip


# --- load errors -----------------------------------------------------------------------


def _spec_with(argument: str, extra: str = "") -> str:
    return (
        f'version: "e"\nrubrics:\n  short: {{kind: length, max: 10}}\n{extra}'
        f"tools:\n  refund:\n    args:\n      order_id: exact\n      note: {argument}\n"
    )


LOAD_ERRORS = [
    ("{kind: text, rubric: shrot}", "", "tools.refund.args.note.rubric",
     "unknown rubric 'shrot' (did you mean 'short'?)"),
    ("{kind: exact, rubric: short}", "", "tools.refund.args.note",
     "a rubric scores only a 'text' argument, not one of kind 'exact'"),
    ("{kind: text, rubric: {kind: sentiment}}", "", "tools.refund.args.note.rubric.kind",
     "unknown kind 'sentiment'"),
    ("{kind: text, rubric: {kind: contains, phrases: [a], case_fold: true}}", "",
     "tools.refund.args.note.rubric.case_fold",
     "unknown key for kind 'contains' (did you mean 'casefold'?)"),
    ("{kind: text, rubric: {kind: regex, pattern: '(a'}}", "",
     "tools.refund.args.note.rubric.pattern",
     "not a valid regular expression: missing ), unterminated subpattern at position 0"),
    ("{kind: text, rubric: {kind: judge, text: polite?, base_url: 'http://h/v1'}}", "",
     "tools.refund.args.note.rubric.model", "must name the model to ask"),
    ("{kind: text, rubric: {kind: judge, text: polite?, model: m}}", "",
     "tools.refund.args.note.rubric.base_url", "must be the endpoint's URL"),
    ("{kind: text, rubric: {kind: similarity, model: m}}", "",
     "tools.refund.args.note.rubric.base_url", "must be the endpoint's URL"),
    ("{kind: text, rubric: {kind: mentions, argument: order}}", "",
     "tools.refund.args.note.rubric",
     "rubric 'refund.note' mentions 'order', which 'refund' has no argument of that name"),
    ("{kind: list, items: {kind: text, rubric: short}}", "", "tools.refund.args.note.[].rubric",
     "not the items of a list"),
    ("{kind: text, rubric: short}", "  long: {kind: length, min: 5, max: 2}\n",
     "rubrics.long.min", "min 5 is above max 2"),
    ("{kind: text, rubric: short}", "  odd: {kind: length}\n", "rubrics.odd",
     "length needs 'min', 'max' or both"),
    ("{kind: text, rubric: short}", "  j: {kind: judge, text: t, base_url: u, model: m, "
     "scale: [5, 1]}\n", "rubrics.j.scale", "two integers with low < high"),
    ("{kind: text, rubric: short}", "  p: {kind: contains, phrases: []}\n", "rubrics.p.phrases",
     "must be a non-empty list of non-empty strings"),
    ("{kind: text, rubric: short}", "  c: {checks: [{kind: judge}]}\n", "rubrics.c.checks[0].kind",
     "unknown kind 'judge'"),
]  # fmt: skip


@pytest.mark.parametrize(("argument", "extra", "where", "words"), LOAD_ERRORS)
def test_bad_rubrics_are_load_errors_naming_file_and_path(
    tmp_path: Path, argument: str, extra: str, where: str, words: str
) -> None:
    (tmp_path / "tools.yaml").write_text(_spec_with(argument, extra))
    (tmp_path / "cases.jsonl").write_text("")
    (tmp_path / "outputs.jsonl").write_text("")
    result = run(tmp_path)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"toolscore: error: {tmp_path / 'tools.yaml'}: {where}: ")
    assert words in lines[0]


def test_an_inline_rubric_is_named_after_its_argument() -> None:
    specs, errors = parse_specs(
        {"tools": {"t": {"args": {"a": {"kind": "text", "rubric": {"kind": "not_empty"}}}}}}
    )
    assert not errors
    assert specs is not None
    assert [use.rubric for use in specs.rubric_uses["t"]] == ["t.a"]
    assert specs.describe()["rubrics"] == {"t.a": None}


def test_an_openai_tool_list_takes_inline_rubrics_in_x_compare() -> None:
    tool = {"name": "t", "parameters": {"type": "object", "properties": {
        "note": {"type": "string", "x-compare": {"kind": "text", "rubric": {"kind": "not_empty"}}},
    }}}  # fmt: skip
    specs, errors = parse_specs([tool])
    assert not errors
    assert specs is not None
    assert specs.rubric_uses["t"][0].argument == "note"


def test_store_show_prints_rubric_results(tmp_path: Path) -> None:
    directory = _write(tmp_path)
    db = str(tmp_path / "results.db")
    assert run(directory, "--db", db).exit_code == 0
    shown = CliRunner().invoke(cli, ["show", "latest", "--db", db])
    assert shown.exit_code == 0, shown.output
    assert "Rubrics (apart from the call score)" in shown.output
    assert "the plan call has no produced call paired with it" in shown.output
    case = CliRunner().invoke(cli, ["show", "latest", "--db", db, "--case", "vague"])
    assert "rubric names_order on refund.note (plan call 0): 0.5 failed" in case.output
    # rescore and compare still work on a run with rubric results.
    rescored = CliRunner().invoke(
        cli, ["rescore", "latest", "--specs", str(directory / "tools.yaml"), "--db", db]
    )
    assert rescored.exit_code == 0, rescored.output
    compared = CliRunner().invoke(cli, ["compare", "1", "2", "--db", db])
    assert compared.exit_code == 0, compared.output


@pytest.mark.parametrize("workers", ["1", "2"])
def test_remote_entries_reach_a_report_on_stdout_from_any_number_of_workers(
    tmp_path: Path, remote: FakeRemote, workers: str
) -> None:
    directory = _judged(tmp_path)
    args = [
        "score", "--specs", str(directory / "tools.yaml"),
        "--cases", str(directory / "cases.jsonl"), "--outputs", str(directory / "outputs.jsonl"),
        "--json", "-", "--workers", workers,
    ]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    polite = [
        e for case in report["cases"] for e in case.get("rubrics", ()) if e["rubric"] == "polite"
    ]
    assert [(e["call"], e["plan_call"], e["score"]) for e in polite] == [
        (0, 0, 5.0), (0, 0, 5.0), (0, 0, None), (None, 0, None), (1, 1, None),
    ]  # fmt: skip
    assert len(remote.batches) == 1
