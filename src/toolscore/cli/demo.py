"""`toolscore demo`: the seed's point on the bundled support-desk example.

Six cases scored three ways: exact JSON comparison, the per-argument rules, and global
lower-casing. Exact punishes harmless formatting; lower-casing forgives a refund to the wrong
order; the rules do neither, and say why each failure failed.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolscore.core.diagnosis import mismatch_line
from toolscore.inputs.cases import read_cases
from toolscore.inputs.outputs import read_outputs
from toolscore.report.rich_view import rich_text
from toolscore.report.terminal import relaxations
from toolscore.scoring.case import exact_difference, score_case
from toolscore.specs.loading import load_specs

MARK = {True: Text("pass", style="green"), False: Text("FAIL", style="bold red")}


def run_demo(console: Console, directory: Path, version: str) -> None:
    """Score the example in `directory` and print the three scorers side by side."""
    specs = load_specs(directory / "tools.yaml")
    cases = list(read_cases(directory / "cases.jsonl", specs))
    outputs = {t.case_id: t for t in read_outputs(directory / "outputs.jsonl")}
    console.print(
        Text(f"toolscore {version} demo: a support desk with get_order and refund", style="bold")
    )
    console.print(f"example files: {directory}")
    console.print(rich_text(relaxations(specs)))
    table = Table(show_lines=True)
    for column in ("case", "prompt", "exact JSON", "rules", "lowercase"):
        table.add_column(column)
    totals = {"exact": 0, "rules": 0, "lowercase": 0}
    reasons: list[Text] = []
    for case in cases:
        trajectory = outputs[case.id]
        result = score_case(specs, case, trajectory)
        totals["exact"] += result.baselines["exact"]
        totals["rules"] += result.passed
        totals["lowercase"] += result.baselines["lowercase"]
        if result.passed:
            why = f"rules pass; exact JSON fails: {exact_difference(case.plans, trajectory.calls)}"
        else:
            why = "rules fail: " + "; ".join(mismatch_line(m) for m in result.mismatches)
            if result.baselines["lowercase"]:
                why += " (lower-casing forgives it)"
        reasons.append(Text(f"  {case.id}: {why}", style="" if result.passed else "red"))
        table.add_row(
            Text(case.id),
            Text(str(case.prompt or "")),
            MARK[result.baselines["exact"]],
            MARK[result.passed],
            MARK[result.baselines["lowercase"]],
        )
    console.print(table)
    console.print(Text("Why:", style="bold"))
    for reason in reasons:
        console.print(reason, soft_wrap=True)
    n = len(cases)
    console.print(
        Text(
            f"exact JSON {totals['exact']}/{n} · rules {totals['rules']}/{n} · "
            f"lowercase {totals['lowercase']}/{n}",
            style="bold",
        )
    )
    console.print(
        "Exact comparison fails harmless differences (an omitted default, swapped parallel "
        "calls, an alias, float noise). Lower-casing everything passes a refund to ORDER-77, "
        "which may be another order. The rules fail only the two real mistakes: the "
        "identifier with the wrong case and the needless call."
    )
