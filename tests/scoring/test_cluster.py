"""`score --cluster-by FIELD`: the clustered interval of the accuracy (Miller 2024), by hand,
the same on any number of workers, kept by a saved run, and absent without the option."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.engines.local import ParallelScoring
from toolscore.inputs.cases import read_cases
from toolscore.inputs.outputs import read_outputs
from toolscore.scoring.stream import score
from toolscore.specs.loading import load_specs
from toolscore.stats.intervals import Z95

SPEC = "tools:\n  get: {args: {id: exact}}\n"


def _call(value: str) -> list[dict[str, Any]]:
    return [{"name": "get", "args": {"id": value}}]


def _files(tmp_path: Path, groups: list[tuple[dict[str, Any], list[bool]]]) -> list[str]:
    """A spec, cases and outputs: per group, the extra keys of its cases and their verdicts."""
    cases, outputs = [], []
    for group, (extra, verdicts) in enumerate(groups):
        for index, passes in enumerate(verdicts):
            case_id = f"g{group}-{index}"
            cases.append({"id": case_id, "plans": [_call("a")], **extra})
            outputs.append({"id": case_id, "calls": _call("a" if passes else "b")})
    paths = [tmp_path / "tools.yaml", tmp_path / "cases.jsonl", tmp_path / "outputs.jsonl"]
    paths[0].write_text(SPEC)
    paths[1].write_text("".join(json.dumps(c) + "\n" for c in cases))
    paths[2].write_text("".join(json.dumps(o) + "\n" for o in outputs))
    return ["--specs", str(paths[0]), "--cases", str(paths[1]), "--outputs", str(paths[2])]


THREE = [
    ({"tags": ["refunds"]}, [True, True, False, True]),
    ({"tags": ["lookups", "easy"]}, [False, False, False]),
    ({"tags": ["easy", "lookups"]}, []),  # the same tags in another order: the same cluster
    ({"tags": ["dates"]}, [True, True]),
]


def _summary(tmp_path: Path, *options: str, groups: Any = THREE) -> dict[str, Any]:
    report = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli, ["score", *_files(tmp_path, groups), "--json", str(report), *options]
    )
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(report.read_text())["summary"]
    return summary


def test_three_clusters_by_hand(tmp_path: Path) -> None:
    summary = _summary(tmp_path, "--cluster-by", "tag")
    # clusters (4 cases, 3 passed), (3, 0), (2, 2): mean 5/9, SE sqrt(338/81) / 9
    se = math.sqrt(338) / 81
    assert summary["accuracy_clustered"] == {
        "field": "tag",
        "clusters": 3,
        "se": round(se, 6),
        "ci95": [round(5 / 9 - Z95 * se, 4), 1.0],
    }
    assert summary["accuracy_ci95"] == [0.2667, 0.8112]  # the plain Wilson interval beside it


def test_a_case_lacking_the_field_is_a_cluster_of_its_own(tmp_path: Path) -> None:
    groups = [({"task": "t1"}, [True, False]), ({}, [True, False, False])]
    summary = _summary(tmp_path, "--cluster-by", "task", groups=groups)
    # clusters (2, 1), (1, 1), (1, 0), (1, 0): mean 2/5; deviations 0.2, 0.6, -0.4, -0.4
    se = math.sqrt(0.2**2 + 0.6**2 + 0.4**2 + 0.4**2) / 5
    assert summary["accuracy_clustered"]["clusters"] == 4
    assert summary["accuracy_clustered"]["se"] == round(se, 6)
    low, high = 0.4 - Z95 * se, 0.4 + Z95 * se
    assert summary["accuracy_clustered"]["ci95"] == [round(low, 4), round(high, 4)]


@pytest.mark.parametrize("field", ["tag", "task"])
def test_two_workers_give_what_one_gives(tmp_path: Path, field: str) -> None:
    groups = [({"tags": [f"t{i % 7}"], "task": i % 5}, [i % 3 != 0] * (i % 4 + 1))
              for i in range(40)] + [({}, [True, False])]  # fmt: skip
    one = _summary(tmp_path, "--cluster-by", field, "--workers", "1", groups=groups)
    two = _summary(tmp_path, "--cluster-by", field, "--workers", "2", groups=groups)
    assert one == two
    assert one["accuracy_clustered"]["clusters"] == (7 if field == "tag" else 5) + 2


def test_without_cluster_by_the_summary_has_no_clustered_block(tmp_path: Path) -> None:
    plain = _summary(tmp_path)
    assert "accuracy_clustered" not in plain
    clustered = _summary(tmp_path, "--cluster-by", "tag")
    clustered.pop("accuracy_clustered")
    assert clustered == plain


def test_the_terminal_shows_the_clustered_interval(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["score", *_files(tmp_path, THREE), "--cluster-by", "tag"])
    assert result.exit_code == 0, result.output
    assert "95% interval" in result.output
    assert "26.7% - 81.1%" in result.output  # accuracy, Wilson
    assert "clustered by tag (3 clusters)" in result.output
    assert f"{100 * (5 / 9 - Z95 * math.sqrt(338) / 81):.1f}% - 100.0%" in result.output


def test_a_saved_run_keeps_the_clustered_interval(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    summary = _summary(tmp_path, "--cluster-by", "tag", "--db", str(db))
    shown = CliRunner().invoke(cli, ["show", "--db", str(db), "1"])
    assert shown.exit_code == 0, shown.output
    assert "clustered by tag (3 clusters)" in shown.output
    assert summary["accuracy_clustered"]["clusters"] == 3


@pytest.mark.parametrize("field", ["id", "plans"])
def test_fields_that_cannot_group_cases_are_refused(tmp_path: Path, field: str) -> None:
    result = CliRunner().invoke(cli, ["score", *_files(tmp_path, THREE), "--cluster-by", field])
    assert result.exit_code == 2
    assert "--cluster-by" in result.output


def test_a_key_nested_too_deep_is_one_clear_error(tmp_path: Path) -> None:
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    args = _files(tmp_path, [({"task": deep}, [True])])
    result = CliRunner().invoke(cli, ["score", *args, "--cluster-by", "task"])
    assert result.exit_code == 2
    assert "cases.jsonl:1" in result.output
    assert "task" in result.output


@pytest.mark.parametrize("chunk_size", [1, 3, 7])
def test_clusters_split_across_chunks_are_merged(tmp_path: Path, chunk_size: int) -> None:

    _files(tmp_path, [*THREE, ({}, [True, False])])
    specs = load_specs(tmp_path / "tools.yaml")
    cases, outputs = str(tmp_path / "cases.jsonl"), str(tmp_path / "outputs.jsonl")
    serial = score(specs, read_cases(cases, specs), read_outputs(outputs), cluster_by="tag")
    expected = serial.summary().to_dict()
    assert expected["accuracy_clustered"]["clusters"] == 5
    for workers in (1, 2):
        run = ParallelScoring(
            specs, cases, outputs, workers, chunk_size=chunk_size, cluster_by="tag"
        )
        assert len(list(run)) == -(-11 // chunk_size)
        assert run.summary().finish().to_dict() == expected
