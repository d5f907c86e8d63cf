"""What reading an Inspect eval log costs `toolscore score`, beside the same outputs as JSON Lines.

Usage: PYTHONPATH=src python bench/inspect_logs.py [--n N] [--repeat R]

Builds N samples from the log inspect_ai wrote (tests/inspect/fixtures/refunds.json, its first
epoch, each sample copied under a new id), and writes them three ways: JSON Lines outputs
(`format: inspect`), a `.eval` log (zstd members, as Inspect writes them: inspect_ai's own zip
patch does the writing) and a `.json` log (with every sample's events, as Inspect writes it).
Then times the whole `toolscore score --json` process on each, alternating, R times, and prints
the medians and their ratio to JSON Lines. The reports must agree.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "inspect" / "fixtures" / "refunds.json"
SPECS = ROOT / "examples" / "support" / "tools.yaml"
LOOKUP = [[{"name": "get_order", "args": {"order_id": "order-12"}}]]


def build(directory: Path, n: int) -> dict[str, Path]:
    """The cases file and the three outputs files of `n` samples."""
    import inspect_ai._util.zipfile  # noqa: F401, PLC0415  (zip method 93, zstd, for writing)

    log = json.loads(FIXTURE.read_text())
    first = [sample for sample in log["samples"] if sample["epoch"] == 1]
    samples = []
    for i in range(n):
        sample = copy.deepcopy(first[i % len(first)])
        sample["id"] = f"s{i}"
        samples.append(sample)
    files = {name: directory / name for name in ("cases.jsonl", "outputs.jsonl", "log.eval")}
    files["log.json"] = directory / "log.json"
    with files["cases.jsonl"].open("w") as cases, files["outputs.jsonl"].open("w") as outputs:
        for sample in samples:
            cases.write(json.dumps({"id": sample["id"], "plans": LOOKUP}) + "\n")
            line = {"id": sample["id"], "format": "inspect", "messages": sample["messages"]}
            outputs.write(json.dumps(line) + "\n")
    header = {key: value for key, value in log.items() if key != "samples"}
    with zipfile.ZipFile(files["log.eval"], "w", compression=93) as archive:
        archive.writestr("header.json", json.dumps(header))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))
    files["log.json"].write_text(json.dumps({**log, "samples": samples}, indent=2))
    return files


def run(files: dict[str, Path], outputs: str, report: Path) -> float:
    command = [
        sys.executable, "-m", "toolscore", "score", "--specs", str(SPECS),
        "--cases", str(files["cases.jsonl"]), "--outputs", str(files[outputs]),
        "--json", str(report),
    ]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        files = build(directory, options.n)
        kinds = ("outputs.jsonl", "log.eval", "log.json")
        times: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(options.repeat):
            for kind in kinds:
                times[kind].append(run(files, kind, directory / f"{kind}.report.json"))
        summaries = [json.loads((directory / f"{k}.report.json").read_text()) for k in kinds]
        assert all(s["summary"] == summaries[0]["summary"] for s in summaries)
        base = statistics.median(times["outputs.jsonl"])
        print(f"| outputs ({options.n} samples) | size | median s | all runs | vs JSON Lines |")
        print("|---|---|---|---|---|")
        for kind in kinds:
            median = statistics.median(times[kind])
            runs = " / ".join(f"{t:.2f}" for t in times[kind])
            size = files[kind].stat().st_size / 1e6
            print(f"| {kind} | {size:.1f} MB | {median:.2f} | {runs} | {median / base:.2f}x |")


if __name__ == "__main__":
    main()
