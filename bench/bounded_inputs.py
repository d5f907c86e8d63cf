"""Measure that a hostile setup statement and a hostile judge endpoint cost bounded memory and
time (issue 25, items 1 and 4), each `toolscore score` in its own process, its peak RSS read
from that process alone.

Item 1, the replay's size cap: examples/support/env scored under `--env` with one case's
`setup` growing the database. The issue's reproducer (`CREATE TABLE big(b)` and three
`INSERT INTO big SELECT randomblob(900000000)`) reached 2.67 GB and 15.9 s before the cap;
ten 100 MB blobs show the memory following `max_size_mb` (the default 256, then 1024).

Item 4, the judge's answer size: the support example's refund notes judged by an endpoint on
127.0.0.1 that answers every request with a 300 MB body sent as fast as the socket takes it.
Before the cap the client read it whole (983 MB for one answer); with it, reading stops at
`max_answer_bytes` (4 MiB by default).

Usage: python bench/bounded_inputs.py [--record]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from run import machine, record, revision
from toolscore import __version__

SUPPORT = Path(__file__).resolve().parents[1] / "src" / "toolscore" / "examples" / "support"
PEAK = (
    "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)
"""Runs a command and prints its peak RSS in KiB: the children's figure holds only it."""
ANSWER_BYTES = 300_000_000


def measure(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one command, in a process of its own."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *command], capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    return wall, int(done.stdout.strip().splitlines()[-1]) / 1024


def score(folder: Path, *extra: str) -> list[str]:
    """The `toolscore score` command on the folder's spec, cases and outputs."""
    return [
        sys.executable, "-m", "toolscore", "score", "--workers", "1",
        "--specs", str(folder / "tools.yaml"), "--cases", str(folder / "cases.jsonl"),
        "--outputs", str(folder / "outputs.jsonl"), "--json", str(folder / "report.json"),
        *extra,
    ]  # fmt: skip


def env_folder(folder: Path, setup: list[str], max_size_mb: int | None) -> None:
    """examples/support/env with `setup` on its first case and the cap in its spec."""
    for name in ("tools.py", "store.sql", "outputs.jsonl"):
        shutil.copy(SUPPORT / "env" / name, folder / name)
    spec = yaml.safe_load((SUPPORT / "env" / "tools.yaml").read_text())
    if max_size_mb is not None:
        spec["environment"]["max_size_mb"] = max_size_mb
    (folder / "tools.yaml").write_text(yaml.safe_dump(spec))
    lines = [json.loads(x) for x in (SUPPORT / "env" / "cases.jsonl").read_text().splitlines()]
    if setup:
        lines[0]["setup"] = setup
    (folder / "cases.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def first_state_error(folder: Path) -> str:
    """The first case's state error in the report, or a dash."""
    case = json.loads((folder / "report.json").read_text())["cases"][0]
    error: str = (case.get("state") or {}).get("error", "-")
    return error


def replay_rows() -> list[str]:
    """Item 1's scenarios, a row each."""
    create = "CREATE TABLE big(b)"
    huge = "INSERT INTO big SELECT randomblob(900000000)"
    blob = "INSERT INTO big SELECT randomblob(100000000)"
    scenarios: list[tuple[str, list[str], int | None]] = [
        ("no setup", [], None),
        ("the reproducer: 3 x 900 MB blobs, default cap", [create, *[huge] * 3], None),
        ("10 x 100 MB blobs, default cap (256 MB)", [create, *[blob] * 10], None),
        ("10 x 100 MB blobs, max_size_mb: 1024", [create, *[blob] * 10], 1024),
    ]  # fmt: skip
    rows = []
    for name, setup, cap in scenarios:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            env_folder(folder, setup, cap)
            wall, peak = measure(score(folder, "--env"))
            error = first_state_error(folder).replace("|", "\\|")
        rows.append(f"| {name} | {wall:.1f} | {peak:,.0f} | {error} |")
        print(rows[-1], flush=True)
    return rows


class _Flood(BaseHTTPRequestHandler):
    """An OpenAI-style endpoint whose every answer is ANSWER_BYTES of one JSON string."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b"a" * 1_000_000
        try:
            self.wfile.write(b'{"id": "x", "choices": [{"message": {"content": "')
            for _ in range(ANSWER_BYTES // len(chunk)):
                self.wfile.write(chunk)
            self.wfile.write(b'"}}]}')
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def flood_server() -> Iterator[str]:
    """The flooding endpoint on 127.0.0.1, its base URL while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flood)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def with_notes(outputs: Path) -> str:
    """The outputs file with a note on every refund call whose arguments are an object."""
    lines = []
    for line in outputs.read_text().splitlines():
        output = json.loads(line)
        for call in output.get("calls") or []:
            if call.get("name") == "refund" and isinstance(call.get("args"), dict):
                call["args"]["note"] = "Refunded as asked."
        lines.append(json.dumps(output) + "\n")
    return "".join(lines)


def judge_rows() -> list[str]:
    """Item 4: the support example's notes judged by the flooding endpoint."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp, flood_server() as url:
        folder = Path(tmp)
        shutil.copy(SUPPORT / "cases.jsonl", folder / "cases.jsonl")
        (folder / "outputs.jsonl").write_text(with_notes(SUPPORT / "outputs.jsonl"))
        spec = yaml.safe_load((SUPPORT / "tools.yaml").read_text())
        judge = {"kind": "judge", "text": "The note is courteous.", "base_url": url,
                 "model": "m", "retries": 0, "timeout": 30}  # fmt: skip
        spec.setdefault("rubrics", {})["courteous"] = judge
        spec["tools"]["refund"]["args"]["note"] = {"kind": "text", "rubric": "courteous"}
        (folder / "tools.yaml").write_text(yaml.safe_dump(spec))
        wall, peak = measure(score(folder))
        summary = json.loads((folder / "report.json").read_text())["summary"]["rubrics"]
        unscored = summary["per_rubric"]["courteous"]["unscored"]
        reasons = "; ".join(f"{count} x {reason}" for reason, count in unscored["reasons"].items())
    name = "300 MB answers, default max_answer_bytes"
    rows.append(f"| {name} | {wall:.1f} | {peak:,.0f} | {reasons} |")
    print(rows[-1], flush=True)
    return rows


def main() -> None:
    """Run both items, print the tables, and append them to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    header = ["| scenario | wall s | peak RSS MiB | what the report says |", "|---|---|---|---|"]
    rows = [*replay_rows(), *judge_rows()]
    print("\n".join([*header, *rows]))
    elapsed = time.perf_counter() - clock
    print(f"\n{machine()}; toolscore {__version__} ({revision()}); run took {elapsed:.0f} s")
    if args.record:
        command = " ".join(["python", "bench/bounded_inputs.py", *sys.argv[1:]])
        notes = [
            "before the caps (the issue's figures): the reproducer reached 2.67 GB and 15.9 s; "
            "one 300 MB answer took 983 MB",
            "each row is one `toolscore score --workers 1` process; its peak RSS alone",
        ]
        record(command, started, elapsed, notes, [*header, *rows])


if __name__ == "__main__":
    main()
