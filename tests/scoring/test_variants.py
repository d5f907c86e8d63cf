"""Variant groups (`variant_of`, `variant`), from the golden data in tests/variant_groups/:
each run's `variants` block in the report JSON, the same from one worker and from two (the
tallies merge), the same after a round trip through the summary's stored form, and the case
keys refused as input with the field named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolscore.errors import CaseError
from toolscore.inputs.cases import parse_case
from toolscore.run import RunOptions, score_files
from toolscore.specs.loading import parse_specs
from toolscore.store.restore import summary_from_json

GOLDEN = json.loads((Path(__file__).parents[1] / "variant_groups" / "groups.json").read_text())
RUNS = GOLDEN["runs"]


def _lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _score(tmp_path: Path, run: dict[str, Any], workers: int) -> dict[str, Any]:
    (tmp_path / "spec.json").write_text(json.dumps(GOLDEN["spec"]))
    (tmp_path / "cases.jsonl").write_text(_lines(run["cases"]))
    (tmp_path / "outputs.jsonl").write_text(_lines(run["outputs"]))
    options = RunOptions(
        specs_path=str(tmp_path / "spec.json"),
        cases_path=str(tmp_path / "cases.jsonl"),
        outputs_path=str(tmp_path / "outputs.jsonl"),
        json_target=str(tmp_path / "report.json"),
        workers=workers,
    )
    score_files(options)
    summary: dict[str, Any] = json.loads((tmp_path / "report.json").read_text())["summary"]
    return summary


def _comparable(block: dict[str, Any] | None) -> dict[str, Any] | None:
    """The block with each rate as its counts (the intervals are the stats module's job)."""
    if block is None:
        return None
    rates = {"all_variants_pass": block["all_variants_pass"], **block["per_variant"]}
    counts = {k: {"passed": r["passed"], "n": r["n"]} for k, r in rates.items()}
    return {
        **block,
        "all_variants_pass": counts.pop("all_variants_pass"),
        "per_variant": counts,
    }


@pytest.mark.parametrize("run", RUNS, ids=[r["description"][:50] for r in RUNS])
@pytest.mark.parametrize("workers", [1, 2])
def test_the_variants_block_is_the_golden_one(
    tmp_path: Path, run: dict[str, Any], workers: int
) -> None:
    summary = _score(tmp_path, run, workers)
    assert _comparable(summary.get("variants")) == run["variants"]


def test_the_variants_block_survives_the_stored_summary(tmp_path: Path) -> None:
    summary = _score(tmp_path, RUNS[0], 1)
    assert summary_from_json(summary).to_dict()["variants"] == summary["variants"]


def test_a_group_passes_whole_only_when_every_variant_passes(tmp_path: Path) -> None:
    """Adversarial: the one failing variant of a three-variant group fails the group."""
    summary = _score(tmp_path, RUNS[0], 1)
    assert summary["variants"]["all_variants_pass"]["value"] == 0.5
    assert summary["variants"]["per_variant"]["original"]["value"] == 1.0


@pytest.mark.parametrize(
    "entry", GOLDEN["load_errors"], ids=[e["description"] for e in GOLDEN["load_errors"]]
)
def test_malformed_variant_keys_are_refused_naming_the_field(entry: dict[str, Any]) -> None:
    specs, problems = parse_specs(GOLDEN["spec"], "spec.json")
    assert specs is not None, problems
    with pytest.raises(CaseError) as caught:
        parse_case(entry["case"], specs, "cases.jsonl", 1)
    assert caught.value.field == entry["field"]
    assert entry["message"] in str(caught.value)


def test_the_html_page_shows_the_groups_with_labels_escaped(tmp_path: Path) -> None:
    """The page's variants section holds every rate row and the differing group; a label
    that is markup stays text."""
    run = json.loads(json.dumps(RUNS[0]))
    run["cases"][1]["variant"] = "<script>alert(1)</script>"
    (tmp_path / "spec.json").write_text(json.dumps(GOLDEN["spec"]))
    (tmp_path / "cases.jsonl").write_text(_lines(run["cases"]))
    (tmp_path / "outputs.jsonl").write_text(_lines(run["outputs"]))
    page = tmp_path / "report.html"
    score_files(
        RunOptions(
            specs_path=str(tmp_path / "spec.json"),
            cases_path=str(tmp_path / "cases.jsonl"),
            outputs_path=str(tmp_path / "outputs.jsonl"),
            html_path=str(page),
            workers=1,
        )
    )
    html = page.read_text()
    assert 'id="variants" data-groups="2" data-differing="1"' in html
    assert 'data-metric="all_variants_pass" data-value="0.5"' in html
    assert 'data-variant-group="weather-paris"' in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
