"""Peak memory of `toolscore score` on files of long lines: N MB of cases and outputs whose
every line holds about 4 MB (one `refund` case a line, its prompt or its response carrying
the text), for each N given. Memory should not grow with N: chunks are bounded by bytes as
well as lines (issue 25).

The peak is the child's max RSS (`os.wait4`), as bench/run.py measures the CLI.

    PYTHONPATH=src python bench/line_bytes.py --mb 100 400
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from run import run_child

SPEC = """\
tools:
  refund:
    args:
      order_id: exact
      amount: {kind: number, tol: 0.005}
"""
LINE_MB = 4


def write(directory: Path, total_mb: int, line_mb: int = LINE_MB) -> int:
    """Write tools.yaml, cases.jsonl and outputs.jsonl of `total_mb` MB in all, each line
    about `line_mb` MB; the number of cases."""
    (directory / "tools.yaml").write_text(SPEC)
    count = max(1, total_mb // (2 * line_mb))
    text = "x" * (line_mb * 1_000_000)
    call = {"name": "refund", "args": {"order_id": "o-1", "amount": 5}}
    cases_path, outputs_path = directory / "cases.jsonl", directory / "outputs.jsonl"
    with cases_path.open("w") as cases, outputs_path.open("w") as outputs:
        for n in range(count):
            case = {"id": f"c{n}", "prompt": text, "plans": [[call]]}
            cases.write(json.dumps(case) + "\n")
            output = {"id": f"c{n}", "calls": [call], "response": text}
            outputs.write(json.dumps(output) + "\n")
    return count


def main() -> None:
    """Write each size's files, score them in a child process, print its time and peak."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--line-mb", type=int, default=LINE_MB)
    args = parser.parse_args()
    toolscore = str(Path(sys.executable).parent / "toolscore")
    for total in args.mb:
        with tempfile.TemporaryDirectory(prefix="toolscore-bench-") as work:
            directory = Path(work)
            count = write(directory, total, args.line_mb)
            command = [toolscore, "score", "--specs", str(directory / "tools.yaml")]
            command += ["--cases", str(directory / "cases.jsonl")]
            command += ["--outputs", str(directory / "outputs.jsonl"), "--workers", "1"]
            seconds, peak, _ = run_child(command)
            print(f"{total} MB ({count} cases, {args.line_mb} MB lines): {seconds:.2f} s, "
                  f"peak RSS {peak:.0f} MB", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
