"""The compiled accelerator beside the pure-Python modules, measured in one run.

Usage: python bench/accel.py [--n N] [--inproc N] [--repeat R] [--build] [--record]

(a) in-process `score_case` throughput on generated single and parallel cases (parsed ahead,
as bench/run.py does), (b) `toolscore score` wall time on N generated cases, one worker and
two, and with `--build` (c) the wheel's build time and size with a C compiler and without
one (CC=/bin/false). Every timed figure alternates the two builds R times, each run in a
fresh process (TOOLSCORE_PURE_PYTHON=1 for the pure one), and keeps the best and the median.
The compiled build must be in place: `make build`, or with the shared venv
`python setup.py build_ext --inplace` and PYTHONPATH=src.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = BENCH / "data"
RESULTS = BENCH / "RESULTS.md"
BUILDS = ("pure-python", "compiled")
CHILD = """\
import sys, time
sys.path.insert(0, {bench!r})
import generate, yaml
from toolscore import build_kind, parse_case, parse_output, parse_specs, score_case
kind, n, repeat, expected = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if build_kind() != expected:
    sys.exit(f"build_kind() is {{build_kind()}}, not {{expected}}: build the accelerator first")
specs, errors = parse_specs(yaml.safe_load(generate.SPEC), "bench")
make = generate.KINDS[kind]
pairs = [
    (parse_case(case, specs), parse_output(output))
    for case, output in (make(generate.case_rng(i), i) for i in range(n))
]
best = float("inf")
for _ in range(repeat):
    start = time.perf_counter()
    for case, trajectory in pairs:
        score_case(specs, case, trajectory)
    best = min(best, time.perf_counter() - start)
print(n / best)
"""
"""One in-process measurement: the best of `repeat` passes of score_case over `n` cases."""


def environment(build: str) -> dict[str, str]:
    """The environment that runs `build`: TOOLSCORE_PURE_PYTHON set for the pure one."""
    env = {k: v for k, v in os.environ.items() if k != "TOOLSCORE_PURE_PYTHON"}
    return {**env, "TOOLSCORE_PURE_PYTHON": "1"} if build == "pure-python" else env


def inproc(kind: str, n: int, passes: int, build: str) -> float:
    """Cases per second of score_case under `build`, in a fresh process."""
    script = CHILD.format(bench=str(BENCH))
    done = subprocess.run(
        [sys.executable, "-c", script, kind, str(n), str(passes), build],
        env=environment(build),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr.strip().splitlines()[-1])
    return float(done.stdout)


def dataset(n: int) -> Path:
    """bench/data/accel-single-N, written by generate.py once."""
    out = DATA / f"accel-single-{n}"
    if not (out / "outputs.jsonl").exists():
        command = [sys.executable, str(BENCH / "generate.py"), "--kind", "single"]
        subprocess.run([*command, "--n", str(n), "--out", str(out)], check=True)
    return out


def cli_seconds(data: Path, workers: int, build: str) -> float:
    """Wall time of `toolscore score --workers W --json FILE` under `build`."""
    toolscore = str(Path(sys.executable).parent / "toolscore")
    with tempfile.TemporaryDirectory() as folder:
        command = [toolscore, "score", "--specs", str(data / "tools.yaml")]
        command += ["--cases", str(data / "cases.jsonl"), "--outputs", str(data / "outputs.jsonl")]
        command += ["--workers", str(workers), "--json", str(Path(folder, "report.json"))]
        start = time.perf_counter()
        done = subprocess.run(command, env=environment(build), capture_output=True, check=False)
        seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr.decode(errors="replace")[-2000:])
    return seconds


def wheel(build: str) -> tuple[float, int, int]:
    """Build time (s), wheel size (bytes) and extension count of a wheel built from a clean
    copy of the sources, with this interpreter's setuptools and Cython, offline; the pure one
    with CC=/bin/false, as on a machine without a C compiler."""
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder, "source"), Path(folder, "wheel")
        skip = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c", "*.egg-info")
        for name in ("pyproject.toml", "setup.py", "README.md"):
            source.mkdir(exist_ok=True)
            shutil.copy(ROOT / name, source / name)
        shutil.copytree(ROOT / "src", source / "src", symlinks=True, ignore=skip)
        shutil.copytree(ROOT / "examples", source / "examples", ignore=skip)
        env = environment("compiled")
        if build == "pure-python":
            env["CC"] = "/bin/false"
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        command += ["--no-index", "-q", "-w", str(out), str(source)]
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        seconds = time.perf_counter() - start
        (built,) = out.glob("*.whl")
        with zipfile.ZipFile(built) as archive:
            extensions = sum(name.endswith((".so", ".pyd")) for name in archive.namelist())
        return seconds, built.stat().st_size, extensions


def row(name: str, unit: str, samples: dict[str, list[float]], higher_is_better: bool) -> str:
    """A table row: best and median of each build, and the compiled build's speed-up."""
    pick = max if higher_is_better else min
    cells = []
    for build in BUILDS:
        values = samples[build]
        cells.append(f"{pick(values):,.2f} {unit} (median {statistics.median(values):,.2f})")
    ratio = pick(samples["compiled"]) / pick(samples["pure-python"])
    speedup = ratio if higher_is_better else 1 / ratio
    return f"| {name} | {cells[0]} | {cells[1]} | {speedup:.2f}x |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="cases for the CLI runs (b)")
    parser.add_argument("--inproc", type=int, default=20_000, help="cases for (a)")
    parser.add_argument("--repeat", type=int, default=5, help="alternating runs of each build")
    parser.add_argument("--build", action="store_true", help="also build both wheels (c)")
    parser.add_argument("--record", action="store_true", help="append the table to RESULTS.md")
    options = parser.parse_args()
    lines = [
        "| figure | pure-python: best (median) | compiled: best (median) | compiled speed-up |",
        "|---|---:|---:|---:|",
    ]

    def show(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    print("\n".join(lines), flush=True)
    for kind in ("single", "parallel"):
        samples: dict[str, list[float]] = {build: [] for build in BUILDS}
        for _ in range(options.repeat):
            for build in BUILDS:
                samples[build].append(inproc(kind, options.inproc, 3, build) / 1000)
        show(row(f"a. score_case, {kind} ({options.inproc:,} cases)", "k/s", samples, True))
    data = dataset(options.n)
    for workers in (1, 2):
        samples = {build: [] for build in BUILDS}
        for _ in range(options.repeat):
            for build in BUILDS:
                samples[build].append(cli_seconds(data, workers, build))
        name = f"b. `toolscore score --workers {workers} --json`, {options.n:,} cases"
        show(row(name, "s", samples, False))
    if options.build:
        built = {build: wheel(build) for build in BUILDS}
        for index, (name, unit) in enumerate((("wheel build time", "s"), ("wheel size", "KB"))):
            scale = 1 if index == 0 else 1 / 1000
            cells = [f"{built[build][index] * scale:,.1f} {unit}" for build in BUILDS]
            show(f"| c. {name} | {cells[0]} | {cells[1]} | - |")
        show(f"| c. extension modules in the wheel | {built['pure-python'][2]} | "
             f"{built['compiled'][2]} | - |")  # fmt: skip
    if options.record:
        record(lines, options)


def record(lines: list[str], options: argparse.Namespace) -> None:
    """Append a dated section with the table to RESULTS.md."""
    import platform  # noqa: PLC0415 - only the record needs it

    when = datetime.now(UTC).strftime("%Y-%m-%d")
    flags = f"--n {options.n} --inproc {options.inproc} --repeat {options.repeat}"
    flags += " --build" if options.build else ""
    section = [
        "",
        f"## {when}: `python bench/accel.py {flags}` (compiled accelerator vs pure Python)",
        "",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"CPython {platform.python_version()}",
        "",
        *lines,
    ]
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write("\n".join(section) + "\n")


if __name__ == "__main__":
    main()
