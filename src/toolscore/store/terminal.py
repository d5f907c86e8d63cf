"""The readable forms of stored runs, comparisons and spec changes, rendered with rich."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolscore.core.diagnosis import mismatch_line
from toolscore.report.cells import percent
from toolscore.report.printable import printable, safe_text
from toolscore.report.terminal import LINES_PER_CASE, capped
from toolscore.stats.intervals import points
from toolscore.store.compare import COUNT, Cause, Comparison, RateMove
from toolscore.store.compare_turns import TurnComparison
from toolscore.store.database import RunInfo
from toolscore.store.restore import result_from_json
from toolscore.store.rubric_compare import RubricComparison
from toolscore.store.specdiff import Change


def run_line(run: RunInfo) -> Text:
    """One line naming a stored run (`RunInfo.heading`), in bold."""
    return safe_text(run.heading(), style="bold")


def runs_table(runs: Sequence[RunInfo]) -> Table:
    """The stored runs with their spec version and the four metrics (accuracy, then name,
    argument and abstention accuracy)."""
    table = Table(title="Runs", title_justify="left")
    for column in ("id", "time (UTC)", "label", "specs"):
        table.add_column(column, justify="right" if column == "id" else "left")
    for column in ("acc.", "name", "args", "abst.", "cases", "from"):
        table.add_column(column, justify="right", no_wrap=True)
    for run in runs:
        table.add_row(
            str(run.id),
            run.created[:16].replace("T", " "),
            safe_text(run.label or ""),
            safe_text(f"{run.specs_version or '-'} {run.specs_sha256[:8]}"),
            percent(run.accuracy),
            percent(run.name_accuracy),
            percent(run.argument_accuracy),
            percent(run.abstention_accuracy),
            str(run.cases),
            "" if run.rescored_from is None else str(run.rescored_from),
        )
    return table


def case_lines(case: Mapping[str, Any]) -> list[Text]:
    """One stored case as `score` shows a failing case: verdict, then each mismatch."""
    result = result_from_json(case)
    plan = "" if result.plan is None else f" (plan {result.plan})"
    verdict = "passed" if result.passed else "FAILED"
    baselines = ", ".join(f"{k} {'pass' if v else 'fail'}" for k, v in result.baselines.items())
    lines = [
        safe_text(
            f"{result.id}{plan}: {verdict} ({result.kind} case; baselines: {baselines})",
            style="green" if result.passed else "red",
        )
    ]
    detail = [mismatch_line(m) for m in result.mismatches[: LINES_PER_CASE + 1]]
    lines += [Text("  " + line) for line in capped(detail, len(result.mismatches), "mismatches")]
    if "state_passed" in case:
        lines.append(Text(f"  state {'passed' if case['state_passed'] else 'FAILED'}"))
    notes = [printable(f"note: {note}") for note in result.notes[: LINES_PER_CASE + 1]]
    lines += [Text("  " + line) for line in capped(notes, len(result.notes), "notes")]
    rubrics = case.get("rubrics", [])
    shown = [rubric_line(entry) for entry in rubrics[: LINES_PER_CASE + 1]]
    lines += [Text("  " + line) for line in capped(shown, len(rubrics), "rubric results")]
    return lines


def rubric_line(entry: Mapping[str, Any]) -> str:
    """One rubric result of a stored case, apart from its verdict: `rubric names_order on
    refund.note (plan call 0): 0.5 failed - does not mention ...`."""
    where = f"{entry['tool']}.{entry['argument']} (plan call {entry['plan_call']})"
    if entry["unscored"] is not None:
        outcome = "unscored"
    else:
        outcome = f"{entry['score']:g} {'passed' if entry['passed'] else 'failed'}"
    return printable(f"rubric {entry['rubric']} on {where}: {outcome} - {entry['reason']}")


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{points(value)} pts"


def render_comparison(console: Console, comparison: Comparison, limit: int) -> None:
    """Metrics side by side, flips grouped by rule, the first `limit` flips, spec changes."""
    a, b = comparison.a, comparison.b
    console.print(Text("A: ") + run_line(a))
    console.print(Text("B: ") + run_line(b))
    table = Table(title="Metrics", title_justify="left")
    for column in ("metric", f"A (run {a.id})", f"B (run {b.id})", "B - A"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for metric in comparison.metrics:
        if metric.unit == COUNT:
            table.add_row(
                metric.name, str(metric.a), str(metric.b), _count_difference(metric.a, metric.b)
            )
            continue
        table.add_row(
            metric.name,
            f"{percent(metric.a)} of {metric.a_n}",
            f"{percent(metric.b)} of {metric.b_n}",
            _signed(metric.difference),
        )
    console.print(table)
    _render_paired(console, comparison)
    if comparison.rubrics is not None:
        render_rubric_moves(console, comparison.rubrics)
    flips = comparison.flips
    down = sum(1 for f in flips if f.before)
    console.print(
        f"{len(flips)} cases flipped: {down} pass -> fail, {len(flips) - down} fail -> pass"
        + (
            f"; {comparison.only_in_a} cases only in A, {comparison.only_in_b} only in B"
            if comparison.only_in_a or comparison.only_in_b
            else ""
        )
    )
    groups = comparison.by_rule()
    if groups:
        rules = Table(title="Flips by the rule that decided them", title_justify="left")
        for column in ("rule", "kind", "code", "direction", "cases", "spec change"):
            rules.add_column(column, justify="right" if column == "cases" else "left")
        for where, kind, code, direction, count, change in groups:
            rules.add_row(
                safe_text(where),
                safe_text(kind or "-"),
                code,
                direction,
                str(count),
                safe_text(change.description if change else "-"),
            )
        console.print(rules)
    if comparison.blame_command is not None:
        console.print(
            printable(f"{len(flips)} verdicts changed: {comparison.blame_command}"),
            "(the spec change that flipped each)",
        )
    if flips:
        console.print(
            Text(f"Flipped cases (first {min(limit, len(flips))} of {len(flips)}):", style="bold")
        )
    for flip in flips[:limit]:
        arrow = "pass -> fail" if flip.before else "fail -> pass"
        console.print(
            safe_text(f"  {flip.case_id}: {arrow}", style="red" if flip.before else "green")
        )
        for line in capped(_cause_lines(flip.causes), len(flip.causes), "causes"):
            console.print(Text("    " + line), soft_wrap=True)
    if comparison.arguments:
        moved = Table(title="Arguments whose counts moved", title_justify="left")
        for column in ("argument", "A passed/failed", "B passed/failed"):
            moved.add_column(column, justify="left" if column == "argument" else "right")
        for name, counts_a, counts_b in comparison.arguments:
            moved.add_row(
                safe_text(name), "/".join(map(str, counts_a)), "/".join(map(str, counts_b))
            )
        console.print(moved)
    if comparison.spec_changes:
        console.print(Text("Spec changes from A to B:", style="bold"))
        render_changes(console, comparison.spec_changes)
    elif a.specs_sha256 == b.specs_sha256:
        console.print("Both runs used the same spec file.")


TOP_MOVES = 5
"""How many tools and arguments `compare` prints with their pass-rate moves."""


def _render_paired(console: Console, comparison: Comparison) -> None:
    """The paired tests on the shared cases, each with its sentence, then the tools and
    arguments whose pass rates moved most."""
    if not comparison.paired:
        console.print("No case is in both runs: no paired comparison.")
    else:
        table = Table(
            title=f"Paired on the {comparison.shared} cases in both runs "
            f"(bootstrap seed {comparison.paired[0].seed}, "
            f"{comparison.paired[0].resamples} resamples)",
            title_justify="left",
        )
        for column in ("metric", "n", "A", "B", "B - A", "95% interval", "n01", "n10", "p"):
            table.add_column(column, justify="left" if column == "metric" else "right")
        for test in comparison.paired:
            interval = (
                "-"
                if test.low is None or test.high is None
                else f"[{_signed(test.low)}, {_signed(test.high)}]"
            )
            table.add_row(
                test.metric,
                str(test.n),
                percent(test.a),
                percent(test.b),
                _signed(test.difference),
                interval,
                str(test.n01),
                str(test.n10),
                f"{test.p_value:.3g}",
            )
        console.print(table)
        console.print(
            "n01: failed in A, passed in B; n10: passed in A, failed in B; p: McNemar exact."
        )
        for test in comparison.paired:
            console.print(Text(test.sentence()), soft_wrap=True)
    _render_partial(console, comparison)
    if comparison.turns is not None:
        render_turns(console, comparison.turns)
    for title, moves in (
        ("Tools", comparison.tool_rates),
        ("Arguments", comparison.argument_rates),
    ):
        moved = [m for m in moves if m.difference]
        if moved:
            console.print(_moves_table(f"{title} whose pass rate moved most", moved))


def _render_partial(console: Console, comparison: Comparison) -> None:
    """Macro F1, precision and recall of both runs on the shared cases, B - A with its
    bootstrap interval; or why there is none (a run saved before partial credit)."""
    for note in comparison.partial_notes:
        console.print(Text(note), soft_wrap=True)
    if not comparison.partial:
        return
    table = Table(title="Partial credit paired on the shared cases", title_justify="left")
    for column in ("metric", "n", "A", "B", "B - A", "95% interval"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for test in comparison.partial:
        interval = (
            "-" if test.low is None or test.high is None
            else f"[{test.low:+.3f}, {test.high:+.3f}]"
        )  # fmt: skip
        table.add_row(
            test.metric, str(test.n), f"{test.a:.3f}", f"{test.b:.3f}",
            f"{test.difference:+.3f}", interval,
        )  # fmt: skip
    console.print(table)
    console.print(Text(comparison.partial[0].sentence()), soft_wrap=True)


def render_turns(console: Console, turns: TurnComparison) -> None:
    """The turn accuracy paired turn by turn on the shared conversations (B - A, its
    interval resampling cases, McNemar's counts of turns), and the cases whose first failing
    turn changed, the first of them by id."""
    test = turns.test
    if test is None:
        console.print("No conversation turn is in both runs: no paired turn accuracy.")
    else:
        table = Table(
            title=f"Turns paired on the {turns.cases} conversations in both runs "
            f"(bootstrap over cases, seed {test.seed}, {test.resamples} resamples)",
            title_justify="left",
        )
        for column in ("metric", "n (turns)", "A", "B", "B - A", "95% interval", "n01", "n10", "p"):
            table.add_column(column, justify="left" if column == "metric" else "right")
        table.add_row(
            test.metric, str(test.n), percent(test.a), percent(test.b), _signed(test.difference),
            "-" if test.low is None or test.high is None
            else f"[{_signed(test.low)}, {_signed(test.high)}]",
            str(test.n01), str(test.n10), f"{test.p_value:.3g}",
        )  # fmt: skip
        console.print(table)
        console.print(Text(test.sentence()), soft_wrap=True)
    if turns.unpaired:
        console.print(
            f"{turns.unpaired} shared cases are conversations in one run only, or have other "
            "numbers of turns: left out of the paired turn accuracy."
        )
    if not turns.changed:
        console.print("No conversation's first failing turn changed.")
        return
    shown = len(turns.changes)
    console.print(
        Text(
            f"First failing turn changed in {turns.changed} conversations"
            + (f" (first {shown}):" if shown < turns.changed else ":"),
            style="bold",
        )
    )
    for change in turns.changes:
        console.print(
            safe_text(f"  {change.case_id}: {_first_turn(change.a)} -> {_first_turn(change.b)}"),
            soft_wrap=True,
        )


def _first_turn(turn: int | None) -> str:
    return "passed" if turn is None else f"turn {turn}"


def render_rubric_moves(console: Console, rubrics: RubricComparison) -> None:
    """Per rubric and per `tool.argument`: pass rates on the entries both runs scored, B - A
    with its interval over cases, the mean score moved, McNemar's counts, unscored entries."""
    for title, moves in (
        ("Rubrics", rubrics.per_rubric),
        ("Rubrics per argument", rubrics.per_argument),
    ):
        table = Table(
            title=f"{title} (apart from the call score), paired on the entries both runs scored "
            f"(bootstrap over cases, seed {rubrics.seed}, {rubrics.resamples} resamples)",
            title_justify="left",
        )
        columns = ("name", "n (cases)", "A", "B", "B - A", "95% interval (pts)",
                   "score B - A", "n01", "n10", "p", "unscored A/B")  # fmt: skip
        for column in columns:
            table.add_column(
                column, justify="left" if column == "name" else "right", no_wrap=column != "name"
            )
        for move in moves:
            test = move.test
            table.add_row(
                safe_text(move.name),
                "0" if test is None else f"{test.n} ({move.cases})",
                "-" if test is None else percent(test.a),
                "-" if test is None else percent(test.b),
                "-" if test is None else _signed(test.difference),
                "-"
                if test is None or test.low is None or test.high is None
                else f"[{points(test.low)}, {points(test.high)}]",
                "-" if move.score_difference is None else f"{move.score_difference:+.3f}",
                "-" if test is None else str(test.n01),
                "-" if test is None else str(test.n10),
                "-" if test is None else f"{test.p_value:.3g}",
                f"{move.unscored[0]}/{move.unscored[1]}",
            )
        console.print(table)
    for move in rubrics.per_rubric:
        console.print(safe_text(move.sentence(f"rubric {move.name}")), soft_wrap=True)


def _moves_table(title: str, moves: Sequence[RateMove]) -> Table:
    """The first `TOP_MOVES` pass-rate moves, with a count of the rest."""
    shown = moves[:TOP_MOVES]
    more = len(moves) - len(shown)
    table = Table(
        title=title + (f" (first {len(shown)} of {len(moves)})" if more else ""),
        title_justify="left",
    )
    for column in ("name", "A", "B", "B - A"):
        table.add_column(column, justify="left" if column == "name" else "right")
    for move in shown:
        table.add_row(
            safe_text(move.name),
            _rate_cell(move.a),
            _rate_cell(move.b),
            _signed(move.difference),
        )
    return table


def _rate_cell(counts: tuple[int, int]) -> str:
    return f"{percent(RateMove.rate(counts))} of {counts[0] + counts[1]}"


def _cause_lines(causes: Sequence[Cause]) -> Iterator[str]:
    """Why a case flipped, printable, a line per cause (and its spec change below it)."""
    for cause in causes:
        kind = f" [{cause.kind}]" if cause.kind else ""
        line = printable(f"{cause.where}{kind} {cause.code}: {cause.message}")
        if cause.change is not None:
            line += "\n      spec change: " + printable(cause.change.description)
        yield line


def _count_difference(a: Any, b: Any) -> str:
    return f"{b - a:+d}" if isinstance(a, int) and isinstance(b, int) else "-"


def render_changes(console: Console, changes: Sequence[Change]) -> None:
    """Each spec change on a line with what it can do to verdicts; warnings last."""
    if not changes:
        console.print("no changes")
        return
    for change in changes:
        marker = "warning" if change.warning else change.verdicts
        style = (
            "yellow"
            if change.warning
            else {"can fail": "red", "can pass": "green"}.get(change.verdicts, "")
        )
        console.print(Text(f"  [{marker}] ", style=style) + safe_text(change), soft_wrap=True)
