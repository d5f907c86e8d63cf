"""The README's Dask recipe: the batch interface on Dask's `map_partitions` gives the report
`toolscore score` writes. The recipe is run as the README gives it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli

EXAMPLE = Path(__file__).parents[2] / "examples" / "support"

README = (Path(__file__).parents[2] / "README.md").read_text()


def dask_recipe() -> str:
    """The README's one Python block that runs on Dask."""
    recipes: list[str] = [
        body
        for body in re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)
        if "import dask.dataframe" in body
    ]
    (recipe,) = recipes
    return recipe


# Dask's own calls of pandas APIs that pandas has deprecated are Dask's to change.
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
def test_the_dask_recipe_gives_the_report_of_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("dask.dataframe")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools.yaml").write_bytes((EXAMPLE / "tools.yaml").read_bytes())
    cases = [json.loads(line) for line in (EXAMPLE / "cases.jsonl").read_text().splitlines()]
    outputs = [json.loads(line) for line in (EXAMPLE / "outputs.jsonl").read_text().splitlines()]
    with (tmp_path / "cases.jsonl").open("w") as out:
        for copy in range(30):
            out.writelines(json.dumps({**c, "id": f"{c['id']}-{copy}"}) + "\n" for c in cases)
    with (tmp_path / "outputs.jsonl").open("w") as out:
        for copy in range(30):
            out.writelines(
                json.dumps({**o, "id": f"{o['id']}-{copy}"}) + "\n" for o in outputs[copy % 2 :]
            )
    runner = CliRunner()
    files = ["--cases", "cases.jsonl", "--outputs", "outputs.jsonl"]
    joined = runner.invoke(
        cli, ["join", *files, "--out", "joined", "--format", "parquet", "--rows-per-part", "40"]
    )
    assert joined.exit_code == 0, joined.output
    scored = runner.invoke(cli, ["score", "--specs", "tools.yaml", *files, "--json", "score.json"])
    assert scored.exit_code == 1, scored.output  # half the copies lack an output
    exec(compile(dask_recipe(), "README.md", "exec"), {"__name__": "recipe"})  # our own README
    assert (tmp_path / "report.json").read_bytes() == (tmp_path / "score.json").read_bytes()
    summary = json.loads((tmp_path / "report.json").read_text())["summary"]
    assert summary["cases"] == 180
    assert summary["missing_outputs"] == 15
