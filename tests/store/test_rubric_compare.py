"""`toolscore compare A B` on rubric results: per rubric and per `tool.argument`, the pass
rates of the entries both runs scored, B - A with a bootstrap interval over cases, McNemar's
counts, the mean score moved, unscored entries each side; in `--json`, the terminal and the
compare page. The numbers are checked against a small example computed by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from html_pages import Page
from toolscore.cli.app import cli
from toolscore.stats.paired import Clusters, Table, cluster_test, table_test

SPEC = """\
version: "g1"
rubrics:
  greet:
    checks:
      - {kind: regex, pattern: "^Dear "}
      - {kind: length, max: 20}
tools:
  mail:
    args:
      to: exact
      body: {kind: text, rubric: greet}
"""
"""`greet` scores the share of its two checks passed and passes when both do."""

IDS = ["c1", "c2", "c3", "c4", "c5", "c6"]
LONG = "Dear Di, this is far too long a text"
A: dict[str, list[Any]] = {
    "c1": ["Dear Ann"], "c2": ["Hi Ann"], "c3": ["Hi"], "c4": ["Dear Cy"], "c5": ["Hi", "Hi"],
    "c6": ["Dear Ed"],
}  # fmt: skip
B: dict[str, list[Any]] = {
    "c1": ["Dear Ann"], "c2": ["Dear Ann"], "c3": ["Dear Bo"], "c4": ["Yo Cy"],
    "c5": ["Dear Di", LONG], "c6": [7],
}  # fmt: skip
# By hand (score, passed) of each entry, A -> B:
#   c1 (1, P) -> (1, P)        both pass
#   c2 (.5, F) -> (1, P)       n01
#   c3 (.5, F) -> (1, P)       n01
#   c4 (1, P) -> (.5, F)       n10
#   c5 call 1 (.5, F) -> (1, P)   n01 ; c5 call 2 (.5, F) -> (.5, F)   neither
#   c6 (1, P) -> unscored (a number is not text): not shared; B leaves 1 unscored
# Shared scored entries n = 6 in 5 cases; A passes 2/6, B passes 4/6, B - A = 2/6;
# n01 = 3, n10 = 1, McNemar exact p = 2 * P(X >= 3 | 4, 1/2) = 2 * 5/16 = 0.625;
# mean score A (1 + .5 + .5 + 1 + .5 + .5) / 6 = 4/6, B (1 + 1 + 1 + .5 + 1 + .5) / 6 = 5/6.


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200"})


def outputs(texts: dict[str, list[Any]]) -> bytes:
    """An outputs file: each case's calls to `mail` with these bodies."""
    lines = []
    for i in IDS:
        calls = [{"name": "mail", "args": {"to": "x", "body": text}} for text in texts[i]]
        lines.append(orjson.dumps({"id": i, "calls": calls}) + b"\n")
    return b"".join(lines)


def write(folder: Path, cases_order: list[str] = IDS, name: str = "cases.jsonl") -> Path:
    plans = {i: [[{"name": "mail", "args": {"to": "x"}}] * len(A[i])] for i in IDS}
    (folder / name).write_bytes(
        b"".join(
            orjson.dumps({"id": i, "prompt": "p", "plans": plans[i]}) + b"\n" for i in cases_order
        )
    )
    (folder / "tools.yaml").write_text(SPEC)
    for label, texts in (("a", A), ("b", B)):
        (folder / f"{label}.jsonl").write_bytes(outputs(texts))
    return folder


def save(folder: Path, outputs_name: str, cases: str = "cases.jsonl", *extra: str) -> None:
    args = ["score", "--specs", str(folder / "tools.yaml"), "--cases", str(folder / cases),
            "--outputs", str(folder / outputs_name), "--db", str(folder / "r.db"),
            *extra]  # fmt: skip
    result = invoke(*args)
    assert result.exit_code == 0, result.output


def compared(folder: Path, *extra: str) -> dict[str, Any]:
    result = invoke("compare", "1", "2", "--db", str(folder / "r.db"), "--json", *extra)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = orjson.loads(result.stdout)
    return data


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    write(tmp_path)
    save(tmp_path, "a.jsonl")
    save(tmp_path, "b.jsonl")
    return tmp_path


def check_hand_computed(row: dict[str, Any]) -> None:
    assert row["entries"] == {"a": 7, "b": 7}
    assert row["unscored"] == {"a": 0, "b": 1}
    assert (row["n"], row["cases"]) == (6, 5)
    assert (row["a"], row["b"], row["difference"]) == (0.3333, 0.6667, 0.3333)
    assert row["mcnemar"] == {"n01": 3, "n10": 1, "p_value": 0.625}
    assert row["mean_score"] == {"a": 0.6667, "b": 0.8333, "difference": 0.1667}
    low, high = row["interval"]
    assert low <= 1 / 3 <= high
    assert low < 0 < high  # 5 cases cannot tell: the sentence says so
    assert row["method"] == "bootstrap"
    assert not row["detectable"]
    assert "no detectable difference: B - A = +33.3 pts over 6 shared entries" in row["sentence"]
    assert "McNemar exact p = 0.625 (n01=3, n10=1)" in row["sentence"]


def test_compare_json_gives_the_hand_computed_rubric_numbers(two_runs: Path) -> None:
    data = compared(two_runs)
    rubrics = data["rubrics"]
    assert (rubrics["seed"], rubrics["resamples"]) == (0, 10_000)
    [greet] = rubrics["per_rubric"]
    assert greet["rubric"] == "greet"
    check_hand_computed(greet)
    [body] = rubrics["per_argument"]
    assert body["argument"] == "mail.body"
    check_hand_computed(body)
    # Rubrics never move a call verdict: accuracy is paired as before, with no flip.
    assert data["flipped"] == 0


def test_the_seed_and_resamples_decide_the_rubric_interval(two_runs: Path) -> None:
    first = compared(two_runs)["rubrics"]["per_rubric"][0]
    again = compared(two_runs)["rubrics"]["per_rubric"][0]
    assert first == again
    other = compared(two_runs, "--seed", "7", "--resamples", "500")["rubrics"]
    assert (other["seed"], other["resamples"]) == (7, 500)
    assert other["per_rubric"][0]["difference"] == first["difference"]


def test_runs_of_differently_ordered_cases_pair_rubric_entries_by_case_id(tmp_path: Path) -> None:
    write(tmp_path)
    write(tmp_path, list(reversed(IDS)), "reversed.jsonl")
    save(tmp_path, "a.jsonl")
    save(tmp_path, "b.jsonl", "reversed.jsonl")
    check_hand_computed(compared(tmp_path)["rubrics"]["per_rubric"][0])


def test_the_terminal_shows_the_rubric_table_and_sentence(two_runs: Path) -> None:
    shown = invoke("compare", "1", "2", "--db", str(two_runs / "r.db"))
    assert shown.exit_code == 0, shown.output
    assert "Rubrics (apart from the call score), paired on the entries" in shown.output
    assert "rubric greet pass rate: no detectable difference" in shown.output
    [line] = [line for line in shown.output.splitlines() if line.startswith("│ greet")]
    cells = [cell.strip() for cell in line.strip("│").split("│")]
    assert cells == ["greet", "6 (5)", "33.3%", "66.7%", "+33.3 pts", "[-40.0, +83.3]",
                     "+0.167", "3", "1", "0.625", "0/1"]  # fmt: skip


def test_no_shared_scored_entry_is_a_row_without_a_test(tmp_path: Path) -> None:
    """Run B leaves every text unscored (numbers, not text): nothing to pair, the unscored
    counts still show."""
    write(tmp_path)
    (tmp_path / "n.jsonl").write_bytes(outputs({i: [1] * len(A[i]) for i in IDS}))
    save(tmp_path, "a.jsonl")
    save(tmp_path, "n.jsonl")
    [row] = compared(tmp_path)["rubrics"]["per_rubric"]
    assert row["unscored"] == {"a": 0, "b": 7}
    assert (row["n"], row["cases"], row["a"], row["interval"], row["mcnemar"]) == (
        0,
        0,
        None,
        None,
        None,
    )
    assert row["sentence"] == "rubric greet: no entry scored in both runs: nothing to pair"


def test_runs_without_rubric_results_have_no_rubrics_key(tmp_path: Path) -> None:
    write(tmp_path)
    save(tmp_path, "a.jsonl", "cases.jsonl", "--no-rubrics")
    save(tmp_path, "b.jsonl", "cases.jsonl", "--no-rubrics")
    assert "rubrics" not in compared(tmp_path)
    shown = invoke("compare", "1", "2", "--db", str(tmp_path / "r.db"))
    assert "Rubrics" not in shown.output
    page = tmp_path / "c.html"
    assert (
        invoke("compare", "1", "2", "--db", str(tmp_path / "r.db"), "--html", str(page)).exit_code
        == 0
    )
    assert "Neither run has rubric results." in page.read_text()  # fmt: skip


def test_the_compare_page_shows_the_rubric_numbers_of_compare_json(two_runs: Path) -> None:
    page_path = two_runs / "c.html"
    data = compared(two_runs, "--html", str(page_path))
    page = Page(page_path.read_text())
    for key, group in (("rubric", "per_rubric"), ("argument", "per_argument")):
        rows = page.with_attr(f"data-rubric-{key}")
        assert [r[f"data-rubric-{key}"] for r in rows] == [
            row[key] for row in data["rubrics"][group]
        ]
        for attrs, row in zip(rows, data["rubrics"][group], strict=True):
            assert orjson.loads(attrs["data-difference"] or "") == row["difference"]
            assert orjson.loads(attrs["data-lo"] or "") == row["interval"][0]
            assert orjson.loads(attrs["data-hi"] or "") == row["interval"][1]
            assert orjson.loads(attrs["data-n01"] or "") == row["mcnemar"]["n01"]
            assert orjson.loads(attrs["data-p"] or "") == row["mcnemar"]["p_value"]
            assert orjson.loads(attrs["data-score-b"] or "") == row["mean_score"]["b"]
            assert orjson.loads(attrs["data-unscored-b"] or "") == row["unscored"]["b"]


def test_one_entry_per_case_gives_the_case_level_table_test() -> None:
    """With one entry in each case, resampling cases is resampling entries: the clustered
    test is the 2x2 table's, interval and all (both ways of drawing)."""
    table = Table(both=5, a_only=2, b_only=6, neither=7)
    clusters = Clusters(7, 11, 6, 2, ((-1, 1, 2), (0, 1, 12), (1, 1, 6)))
    for budget in (10**9, 1):
        by_case = table_test("x", table, budget=budget)
        by_entry = cluster_test("x", clusters, budget=budget)
        assert by_case is not None
        assert by_entry is not None
        assert by_entry[:-1] == by_case[:-1]  # all but the unit
        assert (by_case.unit, by_entry.unit) == ("case", "entry")


def test_clusters_with_the_same_difference_per_entry_have_no_spread() -> None:
    same = cluster_test("x", Clusters(0, 3, 3, 0, ((1, 1, 1), (2, 2, 1))))
    assert same is not None
    assert (same.low, same.high, same.method) == (1.0, 1.0, "none")
    one = cluster_test("x", Clusters(2, 0, 0, 2, ((-2, 2, 1),)))  # one case of two entries
    assert one is not None
    assert (one.n, one.difference, one.low, one.high, one.method) == (2, -1.0, None, None, "none")
    assert cluster_test("x", Clusters(0, 0, 0, 0, ())) is None
