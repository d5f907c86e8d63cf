"""The README's tour works as written: its files, scored, give the verdicts it describes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from toolscore.cli import cli

README = (Path(__file__).parent.parent / "README.md").read_text()


def heredoc(name: str) -> str:
    match = re.search(rf"cat > {re.escape(name)} <<'EOF'\n(.*?)\nEOF\n", README, re.S)
    assert match, f"README has no heredoc for {name}"
    return match.group(1) + "\n"


def test_the_tour_scores_as_the_readme_says(tmp_path: Path) -> None:
    spec = re.search(r"\*\*1\. .*?```yaml\n(.*?)```", README, re.S)
    assert spec, "README has no tour spec"
    (tmp_path / "tools.yaml").write_text(spec.group(1))
    (tmp_path / "cases.jsonl").write_text(heredoc("cases.jsonl"))
    (tmp_path / "outputs.jsonl").write_text(heredoc("outputs.jsonl"))
    report = tmp_path / "report.json"
    command = re.search(r"\n(toolscore score --specs tools.yaml [^\n]*)\n", README)
    assert command, "README has no tour score command"
    args = command.group(1).split()[1:]
    args[args.index("report.json")] = str(report)
    for name in ("tools.yaml", "cases.jsonl", "outputs.jsonl"):
        args[args.index(name)] = str(tmp_path / name)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    cases = {c["id"]: c for c in json.loads(report.read_text())["cases"]}
    assert {i for i, c in cases.items() if c["passed"]} == {"paris", "two-cities", "hello"}
    (mismatch,) = cases["week"]["mismatches"]
    line = (
        f"{mismatch['code']} call 0 {mismatch['path']} [{mismatch['rule']}]: {mismatch['message']}"
    )
    assert f"`{line}`" in README
    lint = CliRunner().invoke(cli, ["lint", "--specs", str(tmp_path / "tools.yaml"),
                                    "--cases", str(tmp_path / "cases.jsonl")])  # fmt: skip
    assert lint.exit_code == 0, lint.output


def test_the_transcript_commands_run() -> None:
    for outputs in ("outputs-anthropic.jsonl", "outputs-openai.jsonl"):
        assert f"--outputs examples/transcripts/{outputs}" in README
        root = Path(__file__).parent.parent / "examples" / "transcripts"
        result = CliRunner().invoke(cli, ["score", "--specs", str(root / "tools.yaml"),
                                          "--cases", str(root / "cases.jsonl"),
                                          "--outputs", str(root / outputs)])  # fmt: skip
        assert result.exit_code == 0, result.output
