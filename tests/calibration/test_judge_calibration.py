"""Calibrating a rubric (issue 14, item 4): `disagreements --rubric` samples a stored run's
rubric results by score stratum into a batch, the labelling page shows the texts and hides
the rubric's verdict until labelled, and `calibrate` measures the rubric against the person.

The run is scored through the CLI with a judge rubric whose endpoint is a fake (the judge's
score is written into each produced note as `[k]`), and a deterministic rubric beside it."""

from __future__ import annotations

import json
import math
import re
import sqlite3
import sys
import types
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result
from starlette.testclient import TestClient

from toolscore.calibration.batches import Batches, Label
from toolscore.calibration.rubric_sample import score_stratum
from toolscore.calibration.web import TOKEN_HEADER, create_app
from toolscore.cli.app import cli
from toolscore.rubrics.base import RubricTarget, RubricVerdict
from toolscore.store import open_store

SCRIPT = "<script>alert(1)</script>"
TOKEN = "test-token-0123456789"
BASE = "http://127.0.0.1:8123"
SPEC = f"""\
version: "j1"
rubrics:
  tone:
    kind: judge
    version: 1
    text: "Is the note polite? {SCRIPT}"
    base_url: http://127.0.0.1:9/v1
    model: tiny
    api_key_env: TOOLSCORE_TEST_KEY
    scale: [1, 5]
    threshold: 4
  short: {{kind: length, max: 30}}
tools:
  refund:
    args:
      order_id: exact
      note: {{kind: text, rubric: tone}}
  answer:
    args:
      text: {{kind: text, rubric: short}}
"""
SCORES: list[int | None] = [5] * 12 + [4] * 8 + [2] * 6 + [1] * 2 + [None] * 2
"""The judge's score of each case's note (None: its answer is not JSON, unscored)."""
NOT_JSON = "the judge's answer is not JSON"


def judge(rubric: Any, targets: Sequence[RubricTarget], cache: Any) -> list[RubricVerdict]:
    """Stands in for `score_remote`: the score written in the note, pass from 4 up."""
    verdicts = []
    for target in targets:
        found = re.search(r"\[(\d)\]", target.produced)
        if found is None:
            verdicts.append(RubricVerdict(rubric.name, None, None, NOT_JSON, unscored=NOT_JSON))
            continue
        score = int(found.group(1))
        reason = f"REASON-{score} {SCRIPT}"
        verdicts.append(RubricVerdict(rubric.name, float(score), score >= 4, reason, tokens=3))
    return verdicts


def _cases() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    cases, outputs = [], []
    for number, score in enumerate(SCORES):
        case_id = f"c{number:02d}"
        prompt = f"Refund o-{number}" + (f" {SCRIPT}" if number == 0 else "")
        cases.append({"id": case_id, "prompt": prompt, "plans": [[
            {"name": "refund", "args": {"order_id": f"o-{number}",
                                        "note": f"EXPECTED refund for o-{number}"}}]]})  # fmt: skip
        note = f"Refunded o-{number}" + ("garbled" if score is None else f" [{score}]")
        if number == 0:
            note += f" {SCRIPT}"
        outputs.append({"id": case_id, "calls": [
            {"name": "refund", "args": {"order_id": f"o-{number}", "note": note}}]})  # fmt: skip
    for number, text in enumerate(["short", "a text well over thirty characters long", "ok"]):
        cases.append({"id": f"a{number}", "prompt": "Answer", "plans": [[
            {"name": "answer", "args": {"text": "fine"}}]]})  # fmt: skip
        outputs.append({"id": f"a{number}", "calls": [{"name": "answer", "args": {"text": text}}]})
    return cases, outputs


def _write(directory: Path, spec: str = SPEC) -> None:
    cases, outputs = _cases()
    (directory / "tools.yaml").write_text(spec)
    (directory / "cases.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in cases))
    (directory / "outputs.jsonl").write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in outputs))


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from toolscore.rubrics import remote  # noqa: PLC0415 - its key check, before the stand-in

    module = types.ModuleType("toolscore.rubrics.remote")
    module.score_remote = judge  # type: ignore[attr-defined]
    module.check_keys = remote.check_keys  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toolscore.rubrics.remote", module)
    monkeypatch.setenv("TOOLSCORE_TEST_KEY", "secret-key-value")
    _write(tmp_path)
    path = tmp_path / "results.db"
    result = invoke(
        "score", "--specs", str(tmp_path / "tools.yaml"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--db", str(path),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return path


def sample(db: Path, *extra: str) -> dict[str, Any]:
    result = invoke(
        "disagreements", "latest", "--rubric", "tone", "--db", str(db), "--json", *extra
    )
    assert result.exit_code == 0, result.output
    info: dict[str, Any] = json.loads(result.stdout)
    return info


def items(db: Path, batch: int) -> list[Any]:
    with open_store(db, create=False) as store:
        return Batches.of(store).cases(batch)


# --- sampling ------------------------------------------------------------------------------


def test_the_batch_is_stratified_by_score_and_records_the_run_per_stratum(db: Path) -> None:
    info = sample(db, "--n", "8", "--seed", "3")
    assert info["kind"] == "rubric"
    assert info["rubric"]["name"] == "tone"
    assert info["rubric"]["kind"] == "judge"
    assert info["rubric"]["definition"]["text"] == f"Is the note polite? {SCRIPT}"
    assert info["rubric"]["definition"]["scale"] == [1, 5]
    assert info["strata"] == {"score 1": 2, "score 2": 6, "score 4": 8, "score 5": 12}
    assert info["scored"] == 28
    assert info["rubric"]["unscored"] == 2  # counted, never sampled
    assert info["rubric"]["unscored_reasons"] == {NOT_JSON: 2}
    assert info["size"] == 8
    found = items(db, info["id"])
    # Strata take turns: four strata, two items each.
    assert Counter(item.stratum for item in found) == dict.fromkeys(
        ["score 1", "score 2", "score 4", "score 5"], 2
    )
    for item in found:
        entry = item.entry
        assert item.stratum == f"score {entry['score']:g}"
        assert entry["passed"] == (entry["score"] >= 4) == item.verdicts["rubric"]
        assert (entry["tool"], entry["argument"], entry["plan_call"]) == ("refund", "note", 0)
        assert item.case_id == f"{entry['case_id']}/0/note"
        number = int(entry["case_id"][1:])
        assert SCORES[number] == entry["score"]
        view = item.view
        assert view["expected"] == f"EXPECTED refund for o-{number}"
        assert view["produced"].startswith(f"Refunded o-{number} [{SCORES[number]}]")
        assert view["prompt"].startswith(f"Refund o-{number}")
        assert "score" not in view  # the verdict is kept apart from what the page shows
        assert "passed" not in view


def test_the_sample_depends_on_the_seed_only(db: Path) -> None:
    first = [item.case_id for item in items(db, sample(db, "--n", "8", "--seed", "3")["id"])]
    again = [item.case_id for item in items(db, sample(db, "--n", "8", "--seed", "3")["id"])]
    other = [item.case_id for item in items(db, sample(db, "--n", "8", "--seed", "4")["id"])]
    assert first == again
    assert first != other
    assert len(set(first)) == 8


def test_a_small_stratum_drops_out_and_the_others_fill_the_batch(db: Path) -> None:
    info = sample(db, "--n", "20", "--seed", "1")
    counts = Counter(item.stratum for item in items(db, info["id"]))
    # score 1 has only 2 entries: the other strata go on taking turns (2 + 6 + 6 + 6).
    assert counts == {"score 1": 2, "score 2": 6, "score 4": 6, "score 5": 6}


def test_a_deterministic_rubric_can_be_sampled_too(db: Path) -> None:
    result = invoke("disagreements", "latest", "--rubric", "short", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["rubric"]["definition"] == {
        "kind": "checks", "checks": [{"check": "length", "min": None, "max": 30}], "version": None
    }  # fmt: skip
    assert info["strata"] == {"score 0": 1, "score 1": 2}


def test_similarity_scores_are_binned_by_tenths() -> None:
    assert score_stratum(0.83, binned=True)[1] == "score 0.8-0.9"
    assert score_stratum(0.8, binned=True)[1] == "score 0.8-0.9"
    assert score_stratum(1.0, binned=True)[1] == "score 0.9-1.0"  # the last bin is closed
    assert score_stratum(-0.05, binned=True)[1] == "score -0.1-0.0"
    assert score_stratum(0.7999, binned=True) < score_stratum(0.8, binned=True)
    assert score_stratum(4.0, binned=False) == (4.0, "score 4")


@pytest.mark.parametrize(
    ("rubric", "message"),
    [
        ("nope", "--rubric: run 1's spec has no rubric 'nope' (rubrics: short, tone)"),
    ],
)
def test_an_unknown_rubric_is_one_line_and_exit_2(db: Path, rubric: str, message: str) -> None:
    result = invoke("disagreements", "latest", "--rubric", rubric, "--db", str(db))
    assert result.exit_code == 2
    assert result.stderr == f"toolscore: error: {message}\n"


def test_a_run_without_rubric_results_is_one_line_and_exit_2(db: Path, tmp_path: Path) -> None:
    result = invoke(
        "score", "--specs", str(tmp_path / "tools.yaml"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), "--db", str(db), "--no-rubrics",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    refused = invoke("disagreements", "latest", "--rubric", "tone", "--db", str(db))
    assert refused.exit_code == 2
    assert (
        refused.stderr
        == "toolscore: error: --rubric: run 2 has no scored results of rubric 'tone'\n"
    )


def test_a_rubric_batch_takes_no_agreements(db: Path) -> None:
    result = invoke(
        "disagreements", "latest", "--rubric", "tone", "--agreements", "3", "--db", str(db)
    )
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1


# --- the labelling page --------------------------------------------------------------------


@contextmanager
def client_for(db: Path, batch: int) -> Iterator[TestClient]:
    with TestClient(create_app(db, batch, "alice", TOKEN), base_url=BASE) as client:
        assert client.get(f"/done?token={TOKEN}").status_code == 200
        yield client


def test_the_page_hides_the_verdict_until_labelled_and_escapes_agent_text(db: Path) -> None:
    info = sample(db, "--n", "100")
    found = {item.entry["case_id"]: item for item in items(db, info["id"])}
    evil = found["c00"]  # its prompt and produced note carry a script; so does the rubric
    with client_for(db, info["id"]) as client:
        before = client.get(f"/case/{evil.position}").text
        assert "Is the note polite?" in before
        assert "EXPECTED refund for o-0" in before
        assert "Refunded o-0 [5]" in before
        assert 'Argument <code>note</code> of <code class="tool">refund</code>' in before
        assert "meets the rubric" in before
        assert "REASON-5" not in before
        assert 'id="verdicts"' not in before
        assert 'id="score"' not in before
        assert "appear here once you label this item" in before
        assert SCRIPT not in before
        assert before.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3  # rubric, prompt, note
        saved = client.post(
            "/api/label",
            json={"position": evil.position, "label": "incorrect"},
            headers={TOKEN_HEADER: TOKEN},
        )
        assert saved.status_code == 200
        after = client.get(f"/case/{evil.position}").text
        assert 'id="verdicts"' in after
        assert "REASON-5" in after
        assert '<td id="score">5.0</td>' in after
        assert "disagrees" in after  # the judge passed a text the person said does not meet it
        assert "score 5" in after
        assert SCRIPT not in after
        assert after.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 4  # and the reason
        # Labelling one item reveals that item only.
        other = next(i for i in found.values() if i.position != evil.position)
        assert "REASON-" not in client.get(f"/case/{other.position}").text
        done = client.get("/done").text
        assert "1 of 28 items labelled" in done
        assert "measures the rubric against your labels" in done
        assert "the produced text meets the rubric" in done  # the keys' help


# --- calibrate -----------------------------------------------------------------------------

LABELS_BY_STRATUM = {
    "score 5": ["correct", "correct"],
    "score 4": ["correct", "incorrect"],
    "score 2": ["incorrect", "incorrect"],
    "score 1": ["correct", "unsure"],
}


def labelled_batch(db: Path) -> int:
    info = sample(db, "--n", "8", "--seed", "3")
    given: dict[str, list[str]] = {k: list(v) for k, v in LABELS_BY_STRATUM.items()}
    labels = [
        Label(item.case_id, "alice", given[item.stratum].pop(0), "a note")
        for item in items(db, info["id"])
    ]
    with open_store(db, create=False) as store:
        Batches.of(store).set_labels(info["id"], labels)
    return int(info["id"])


def wilson(k: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_calibrate_gives_the_hand_computed_numbers(db: Path) -> None:
    batch = labelled_batch(db)
    result = invoke("calibrate", str(batch), "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["rubric"] == "tone"
    assert found["labels"] == {"correct": 4, "incorrect": 3, "unsure": 1}
    assert found["unlabelled"] == 0
    # (person meets, judge passed): 5: TT TT; 4: TT FT; 2: FF FF; 1: TF (unsure left out)
    agreement = found["agreement"]
    assert (agreement["n"], agreement["agreed"]) == (7, 5)
    assert agreement["rate"] == pytest.approx(5 / 7)
    assert agreement["interval"] == pytest.approx(list(wilson(5, 7)))
    # p_o = 5/7; p_e = (4 * 4 + 3 * 3) / 49 = 25/49; kappa = (35 - 25) / (49 - 25)
    assert agreement["kappa"] == pytest.approx(10 / 24)
    assert found["confusion"] == {
        "correct": {"passed": 3, "failed": 1},
        "incorrect": {"passed": 1, "failed": 2},
        "unsure": {"passed": 0, "failed": 1},
    }
    assert found["per_stratum"] == [
        {"stratum": "score 1", "in_run": 2, "labelled": 1, "agreed": 0, "rate": 0.0},
        {"stratum": "score 2", "in_run": 6, "labelled": 2, "agreed": 2, "rate": 1.0},
        {"stratum": "score 4", "in_run": 8, "labelled": 2, "agreed": 1, "rate": 0.5},
        {"stratum": "score 5", "in_run": 12, "labelled": 2, "agreed": 2, "rate": 1.0},
    ]
    accuracy = found["run_accuracy"]
    # p = (2 * 0 + 6 * 1 + 8 * 0.5 + 12 * 1) / 28 = 22/28; only score 4 varies:
    # v = 8^2 * (1 - 2/8) * 0.25 / 2 / 28^2 = 6/784, effective size p (1 - p) / v = 22
    assert accuracy["value"] == pytest.approx(22 / 28)
    assert accuracy["interval"] == pytest.approx(list(wilson(22 / 28 * 22, 22)))
    assert (accuracy["labelled"], accuracy["right"], accuracy["run_cases"]) == (7, 5, 28)
    text = invoke("calibrate", str(batch), "--db", str(db))
    assert text.exit_code == 0, text.output
    assert "5/7 agreed (71.4%" in text.stdout
    assert "Cohen's kappa 0.42" in text.stdout
    assert "about 78.6%" in text.stdout


def test_kappa_is_undefined_with_its_reason_when_the_judge_passed_every_labelled_item(
    db: Path,
) -> None:
    batch = labelled_batch(db)
    with open_store(db, create=False) as store:
        failed = [c.case_id for c in Batches.of(store).cases(batch) if not c.verdicts["rubric"]]
        Batches.of(store).set_labels(batch, [Label(c, "alice", "unsure") for c in failed])
    found = json.loads(invoke("calibrate", str(batch), "--db", str(db), "--json").stdout)
    assert found["agreement"]["kappa"] is None
    assert "the rubric tone gave the same verdict" in found["agreement"]["kappa_undefined"]


def test_labels_export_and_import_round_trip_on_a_rubric_batch(db: Path, tmp_path: Path) -> None:
    batch = labelled_batch(db)
    out = tmp_path / "labels.csv"
    assert invoke("labels", "export", str(batch), "--out", str(out), "--db", str(db)).exit_code == 0
    text = out.read_text()
    assert "/0/note" in text
    sample(db, "--n", "8", "--seed", "3")  # the same items in a new batch
    copied = invoke("labels", "import", str(batch + 1), str(out), "--db", str(db))
    assert copied.exit_code == 0, copied.output
    before = json.loads(invoke("calibrate", str(batch), "--db", str(db), "--json").stdout)
    after = json.loads(invoke("calibrate", str(batch + 1), "--db", str(db), "--json").stdout)
    assert after["agreement"] == before["agreement"]
    assert after["confusion"] == before["confusion"]


def test_the_batch_lists_and_out_file_carry_the_rubric(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "batch.jsonl"
    info = sample(db, "--n", "4", "--out", str(out))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4
    assert all("population" not in line for line in lines)  # a call batch's notion
    assert all(set(line["entry"]) >= {"case_id", "plan_call", "argument", "score", "passed"}
               for line in lines)  # fmt: skip
    listed = invoke("batches", "--db", str(db))
    assert f"batch {info['id']}: run 1, rubric tone, 4 items" in listed.stdout


def test_a_call_batch_made_before_rubric_batches_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript((Path(__file__).parents[1] / "store" / "schema-3.sql").read_text())
    old.close()
    with open_store(path) as store:
        info = Batches.of(store).info(1)
        assert info.rubric is None
        assert "kind" not in info.to_json()
        assert "rubric" not in info.to_json()
        assert {case.entry for case in Batches.of(store).cases(1)} == {None}
    found = json.loads(invoke("calibrate", "1", "--db", str(path), "--json").stdout)
    assert "scorer_bug_rate" in found  # the call batch's calibration, not a rubric's
    assert "per_stratum" not in found
