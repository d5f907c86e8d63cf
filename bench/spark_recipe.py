"""Run the README's Spark recipe and check that it writes the report `toolscore score` writes.

Spark needs Java and pyspark, which toolscore's test suite does not install, so the recipe is
checked here, by hand, where both are present (see bench/RESULTS.md):

    PYSPARK_PYTHON=.venv/bin/python PYTHONPATH=SITE_PACKAGES_WITH_PYSPARK \\
        .venv/bin/python bench/spark_recipe.py [--copies 50]

It copies the support example's cases and outputs `--copies` times (every other copy without
its first output), joins them as Parquet in parts of 40, scores them with `toolscore score`
and with the recipe, and compares the two reports byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support"


def spark_recipe() -> str:
    """The README's one Python block that runs on Spark."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", readme, re.S | re.M)
    (recipe,) = [block for block in blocks if "from pyspark" in block]
    return str(recipe)


def write_inputs(folder: Path, copies: int) -> None:
    cases = [json.loads(line) for line in (EXAMPLE / "cases.jsonl").read_text().splitlines()]
    outputs = [json.loads(line) for line in (EXAMPLE / "outputs.jsonl").read_text().splitlines()]
    with (folder / "cases.jsonl").open("w") as out:
        for k in range(copies):
            out.writelines(json.dumps({**c, "id": f"{c['id']}-{k}"}) + "\n" for c in cases)
    with (folder / "outputs.jsonl").open("w") as out:
        for k in range(copies):
            out.writelines(
                json.dumps({**o, "id": f"{o['id']}-{k}"}) + "\n" for o in outputs[k % 2 :]
            )
    (folder / "tools.yaml").write_bytes((EXAMPLE / "tools.yaml").read_bytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=50)
    args = parser.parse_args()
    toolscore = [sys.executable, "-m", "toolscore"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder, args.copies)
        files = ["--cases", "cases.jsonl", "--outputs", "outputs.jsonl"]
        join = [*toolscore, "join", *files, "--out", "joined", "--format", "parquet"]
        subprocess.run([*join, "--rows-per-part", "40"], cwd=folder, check=True)
        score = [*toolscore, "score", "--specs", "tools.yaml", *files, "--json", "score.json"]
        done = subprocess.run(score, cwd=folder, check=False, capture_output=True)
        if done.returncode not in (0, 1):  # 1: half the copies lack an output, on purpose
            raise SystemExit(done.stderr.decode(errors="replace")[-2000:])
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", spark_recipe()], cwd=folder, check=True, env=os.environ
        )
        took = time.perf_counter() - start
        same = (folder / "report.json").read_bytes() == (folder / "score.json").read_bytes()
    print(f"Spark recipe: {took:.1f} s, report identical to score's: {same}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
