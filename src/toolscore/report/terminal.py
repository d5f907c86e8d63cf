"""The readable summary of a scoring run: what it shows, as `report.layout`'s neutral tables
and lines; `report.rich_view` draws them for a terminal, `report.plain_view` as plain text.

This is the one place that decides what the summary says; it imports no rich, so that a
summary written to a pipe or a file (or none at all) never loads it."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from toolscore.core.diagnosis import mismatch_line
from toolscore.core.model import CaseResult
from toolscore.escape import printable
from toolscore.report.absent import join_rows, nothing_lines
from toolscore.report.cells import interval, percent, rate_row
from toolscore.report.group_tables import turns_table, variants_table
from toolscore.report.layout import Block, Line, Table, safe_line
from toolscore.report.lenient import lenient_rules
from toolscore.scoring.summary import Summary
from toolscore.scoring.tallies import OutcomeTally, Tally
from toolscore.specs.loading import SpecSet
from toolscore.stats.intervals import Rate, wilson

if TYPE_CHECKING:
    from rich.console import Console

    from toolscore.rubrics.summary import RubricTally

LINES_PER_CASE = 20
"""Lines printed under one case at most (mismatches, then outcome lines); the rest are
counted, and the report JSON keeps every one."""


def provenance(specs: SpecSet, version: str, cases: int) -> Line:
    """One line naming the scorer, the spec set and how many cases were scored."""
    label = specs.version or "unversioned"
    digest = specs.sha256[:12] if specs.sha256 else "-"
    if specs.version_from_sha:  # tool definitions without a version label
        label = "from its sha256, no label"
    return safe_line(
        f"toolscore {version} · specs {specs.source} (version {label}, sha256 {digest}) · "
        f"{cases} cases",
        style="bold",
        soft_wrap=False,
    )


def critical_line(summary: Summary) -> Line | None:
    """The forbidden calls of the run, first and in bold red: the critical failures, with
    the share of cases that made any (95% interval) and the tools they called; None when
    no call was forbidden."""
    forbidden = summary.forbidden
    if not forbidden.calls:
        return None
    rate = Rate(forbidden.cases, summary.cases)
    calls = f"{forbidden.calls} forbidden call{'s' if forbidden.calls != 1 else ''}"
    cases = f"{forbidden.cases} case{'s' if forbidden.cases != 1 else ''}"
    tools = ", ".join(f"{name} x{count}" for name, count in forbidden.per_tool.most_common())
    return safe_line(
        f"critical failures: {calls} in {cases} (rate {percent(rate.value)} of "
        f"{rate.n} cases, 95% interval {interval(wilson(rate.passed, rate.n))}; {tools})",
        style="bold red",
    )


LENIENT_LINES = 12
"""Lenient rules printed before the rest are only counted (the report JSON lists them all)."""


def relaxations(specs: SpecSet) -> Line:
    """The relaxations in force and the lenient rules, each with its reason (every report
    lists them). A spec set without tools stands in for a stored run's specs: its rules are
    unknown, so only its relaxations are listed."""
    if not specs.relaxations:
        lines = ["Relaxations in force: none"]
    else:
        lines = ["Relaxations in force:"]
        lines += [
            printable(f"  allow {r.allow} for {', '.join(r.tools)} - {r.reason}")
            for r in specs.relaxations
        ]
    if specs.tools:
        lenient = lenient_rules(specs)
        if not lenient:
            lines.append("Lenient rules in force: none (every argument compared as written)")
        else:
            lines.append("Lenient rules in force (what each argument accepts beyond its value):")
            lines += [printable(f"  {rule.line()}") for rule in lenient[:LENIENT_LINES]]
            if len(lenient) > LENIENT_LINES:
                lines.append(
                    f"  ... and {len(lenient) - LENIENT_LINES} more, all listed under "
                    "lenient_rules in the report JSON (--json)"
                )
    return Line("\n".join(lines), soft_wrap=False)


def metric_rows(summary: Summary) -> list[tuple[str, str, str, str]]:
    """The four metrics as (label, value, passed/n, 95% interval) texts, shared by the
    metrics table and plain-text reports (the pytest plugin's summary)."""
    return [
        rate_row("accuracy", Rate(summary.passed, summary.cases)),
        rate_row("name accuracy (tool cases)", summary.name),
        rate_row("argument accuracy (paired calls)", summary.arguments),
        rate_row("abstention accuracy", summary.abstention),
    ]


def metrics_table(summary: Summary) -> Table:
    """The four metrics with their denominators and 95% intervals (Wilson; clustered too
    under `--cluster-by`), and the counts beside them."""
    table = Table("Metrics")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("passed/n", justify="right")
    table.add_column("95% interval", justify="right")
    accuracy, *metrics = metric_rows(summary)
    table.add_row(*accuracy)
    clustered = summary.clustered
    if clustered is not None:
        bounds = None if clustered.low is None or clustered.high is None else (
            clustered.low, clustered.high
        )  # fmt: skip
        table.add_row(
            printable(f"  clustered by {clustered.field} ({clustered.clusters} clusters)"),
            "", "", interval(bounds),
        )  # fmt: skip
    for row in metrics:
        table.add_row(*row)
    table.add_row("missed calls (tool cases, no call)", "", str(summary.missed_calls))
    for joined in join_rows(summary):
        table.add_row(*joined)
    if summary.unread_cases:
        parts = f"{summary.unread_parts} part{'s' if summary.unread_parts != 1 else ''}"
        table.add_row("transcripts not fully read (failed)", parts, str(summary.unread_cases))
    return table


CALL_RATES = (
    ("unknown_tool_rate", "unknown tool (of produced calls)"),
    ("missing_argument_rate", "missing argument (of paired calls)"),
    ("unexpected_argument_rate", "unexpected argument (of paired calls)"),
)
"""The named call rates of the summary (docs/formats.md 7.6), by key, and how they read."""


def call_rates_table(summary: Summary) -> Table | None:
    """The named call rates: the share of produced calls naming a tool the spec lacks and of
    paired calls missing or giving an unknown argument, each with its count over its
    denominator and 95% interval; None for a stored run saved before them."""
    if summary.call_rates is None:
        return None
    rates = summary.call_rates.rates()
    table = Table("Call error rates (lower is better)")
    table.add_column("rate")
    table.add_column("value", justify="right")
    table.add_column("calls/n", justify="right")
    table.add_column("95% interval", justify="right")
    for key, label in CALL_RATES:
        table.add_row(*rate_row(label, rates[key]))
    return table


def _share(value: float | None) -> str:
    """A partial-credit figure in [0, 1] to two places, or a dash when it is not measured."""
    return "-" if value is None else f"{value:.2f}"


def partial_table(summary: Summary) -> Table | None:
    """Partial credit: precision, recall and F1, micro from the summed counts and macro the
    mean over cases with its 95% interval; None for a stored run saved before it."""
    partial = summary.partial
    if partial is None:
        return None
    table = Table(f"Partial credit ({partial['cases']} cases)")
    table.add_column("measure")
    table.add_column("micro", justify="right")
    table.add_column("macro", justify="right")
    table.add_column("macro 95% interval", justify="right")
    for key in ("precision", "recall", "f1"):
        node = partial[key]
        bounds = node["macro_ci95"]
        table.add_row(
            "F1" if key == "f1" else key, _share(node["micro"]), _share(node["macro"]),
            "-" if bounds is None else f"{bounds[0]:.2f} - {bounds[1]:.2f}",
        )  # fmt: skip
    return table


def efficiency_table(summary: Summary) -> Table | None:
    """Efficiency: extra calls (and how many a relaxation excused), repeated calls and calls
    per expected call; None for a stored run saved before it."""
    efficiency = summary.efficiency
    if efficiency is None:
        return None
    table = Table("Efficiency (lower is better)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("extra calls (left unpaired)", str(efficiency["extra"]))
    table.add_row("  of which excused by a relaxation", str(efficiency["excused"]))
    table.add_row("repeated calls (same tool and arguments)", str(efficiency["repeated"]))
    table.add_row(
        "calls per expected call (tool cases)", _share(efficiency["calls_per_expected_call"])
    )
    if "retries" in efficiency:  # absent from a run stored before retries were counted
        table.add_row("retries (an error, then the same tool again)", str(efficiency["retries"]))
        retries = summary.retries or {}
        if retries.get("excused"):
            table.add_row("  of which excused by a relaxation", str(retries["excused"]))
        for tool, count in sorted(retries.get("per_tool", {}).items())[:MAX_RETRY_TOOLS]:
            table.add_row(printable(f"  retried {tool}"), str(count))
    return table


MAX_RETRY_TOOLS = 20
"""Tools whose retries the efficiency table lists one by one (by name)."""


def case_partial(result: CaseResult) -> str:
    """A case's F1 and matched calls for its header line ("f1 0.67, 2 of 3 calls
    matched"), or nothing when the result carries no partial credit."""
    partial = result.partial
    if partial is None:
        return ""
    if not partial.expected:  # abstention: any call made is the fault
        calls = "call" if partial.produced == 1 else "calls"
        return f", f1 {partial.f1:.2f}, {partial.produced} {calls} made where none was expected"
    calls = "call" if partial.expected == 1 else "calls"
    return f", f1 {partial.f1:.2f}, {partial.matched} of {partial.expected} {calls} matched"


IGNORED_KEYS_SHOWN = 12
"""Ignored keys the terminal names before it only counts the rest (the report JSON has all)."""


def ignored_keys_line(summary: Summary) -> Line | None:
    """The outputs lines' keys that no reader uses, most common first, with how many lines
    had each; None when every key was read."""
    if not summary.ignored_keys:
        return None
    ranked = sorted(summary.ignored_keys.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{key} ({count})" for key, count in ranked[:IGNORED_KEYS_SHOWN])
    rest = len(ranked) - IGNORED_KEYS_SHOWN
    more = f", and {rest} more (ignored_keys in the report JSON)" if rest > 0 else ""
    return safe_line(f"Outputs keys no reader uses, ignored (lines with each): {shown}{more}")


def baselines_table(summary: Summary) -> Table:
    """The rules beside exact JSON, global lower-casing and doing nothing, with where they
    disagree."""
    table = Table("Scorers side by side")
    for column in ("scorer", "passed", "accuracy", "95% interval", "disagrees with rules"):
        table.add_column(column, justify="left" if column == "scorer" else "right")
    table.add_row(
        "rules", f"{summary.passed}/{summary.cases}", percent(summary.accuracy),
        interval(wilson(summary.passed, summary.cases)), "-",
    )  # fmt: skip
    names = {"exact": "exact JSON", "lowercase": "lowercase", "nothing": "do nothing"}
    for key, tally in summary.baselines.items():
        accuracy = tally.passed / summary.cases if summary.cases else None
        disagree = tally.only_rules_pass + tally.only_baseline_passes
        detail = (
            f"{disagree} ({tally.only_rules_pass} only rules pass, "
            f"{tally.only_baseline_passes} only {names.get(key, key)} passes)"
        )
        table.add_row(
            names.get(key, key), f"{tally.passed}/{summary.cases}", percent(accuracy),
            interval(wilson(tally.passed, summary.cases)), detail,
        )  # fmt: skip
    return table


def outcomes_table(outcomes: OutcomeTally) -> Table:
    """State accuracy beside call accuracy, and where the two disagree (a run that judged no
    state, as one without `--env`, judged required outputs alone: its title says so)."""
    what = "calls replayed against the store" if outcomes.state_n else "required outputs"
    table = Table(f"Outcomes ({what})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("passed/n", justify="right")
    table.add_column("95% interval", justify="right")
    table.add_row(*rate_row("state accuracy", Rate(outcomes.state_ok, outcomes.state_n)))
    table.add_row(*rate_row("required outputs", Rate(outcomes.outputs_ok, outcomes.outputs_n)))
    table.add_row("calls passed, state failed", "", str(outcomes.calls_passed_state_failed), "")
    table.add_row("calls failed, state passed", "", str(outcomes.calls_failed_state_passed), "")
    return table


STATE_CHECK_ROWS = 20
"""State check rows printed, failing most first; the rest are only counted."""


def state_checks_table(outcomes: OutcomeTally, limit: int = STATE_CHECK_ROWS) -> Table | None:
    """Each state check's pass rate, the checks failing most first (None without checks);
    names come from the cases file and are printed inert."""
    rates = outcomes.check_rates()
    if not rates:
        return None
    failing = outcomes.most_failed(limit=len(rates))
    listed = [*failing, *((name, rate) for name, rate in rates.items() if rate.passed == rate.n)]
    table = Table("State checks (failing most first)")
    table.add_column("check")
    table.add_column("pass rate", justify="right")
    table.add_column("passed/n", justify="right")
    table.add_column("95% interval", justify="right")
    for name, rate in listed[:limit]:
        table.add_row(printable(name), *rate_row("", rate)[1:])
    if len(listed) > limit:
        table.add_row(f"... {len(listed) - limit} more checks", "", "", "")
    return table


RUBRIC_ROWS = 20
"""Rubric rows (per rubric, then per argument) printed before the rest are only counted."""


def rubrics_table(tally: RubricTally) -> Table:
    """Rubric results per rubric and per tool.argument: texts scored, mean score, pass rate
    with its 95% interval, and how many could not be scored."""
    table = Table("Rubrics (apart from the call score)")
    for column in (
        "rubric / argument",
        "scored",
        "mean score",
        "passed",
        "95% interval",
        "unscored",
    ):
        table.add_column(column, justify="left" if column.startswith("rubric") else "right")
    rows = [(f"rubric {name}", stats) for name, stats in sorted(tally.per_rubric.items())]
    rows += [(f"argument {key}", stats) for key, stats in sorted(tally.per_argument.items())]
    for label, stats in rows[:RUBRIC_ROWS]:
        mean = "-" if stats.mean is None else f"{stats.mean:.3f}"
        rate = Rate(stats.passed, stats.n)
        table.add_row(
            printable(label), str(stats.n), mean, f"{percent(rate.value)} ({rate.passed}/{rate.n})",
            interval(wilson(rate.passed, rate.n)), str(sum(stats.unscored.values())),
        )  # fmt: skip
    notes = []
    if len(rows) > RUBRIC_ROWS:
        notes.append(f"... and {len(rows) - RUBRIC_ROWS} more rows in the report JSON (--json)")
    if tally.tokens:
        notes.append(f"tokens spent: {tally.tokens:,}")
    if notes:
        table.caption = "; ".join(notes)
    return table


def rubric_unscored_lines(tally: RubricTally, limit: int = 5) -> list[str]:
    """Why rubric targets were left unscored: the commonest reasons of each rubric."""
    lines = []
    for name, stats in sorted(tally.per_rubric.items()):
        for reason, count in stats.unscored.most_common(limit):
            lines.append(printable(f"  {name}: {count} unscored - {reason}"))
    if not lines:
        return []
    return ["Unscored rubric targets:", *lines[: 4 * limit]]


TRIAL_ROWS = 10
"""Values of k the trials table shows at most (1 to 9 and n beyond that)."""


def trials_table(block: dict[str, Any]) -> Table:
    """pass^k and pass@k for each k (the summary's `trials` block), on calls and, when the
    run judged outcomes, on outcome (state and required outputs)."""
    n, missing = block["n"], block["missing_trials"]
    title = f"Trials ({n} per case, {block['cases']} cases"
    title += f"; {missing} missing, counted as failures)" if missing else ")"
    table = Table(title)
    table.add_column("k", justify="right")
    sides = [(name, block[name]) for name in ("calls", "state") if block.get(name)]
    for name, _ in sides:
        table.add_column(f"{name} pass^k", justify="right")
        table.add_column("95% interval", justify="right")
        table.add_column(f"{name} pass@k", justify="right")
    ks = range(1, n + 1) if n <= TRIAL_ROWS else [*range(1, TRIAL_ROWS), n]
    for k in ks:
        row = [str(k)]
        for _, curve in sides:
            hat, at = curve["pass_hat_k"][k - 1], curve["pass_at_k"][k - 1]
            bounds = hat["ci95"]
            row += [percent(hat["value"]), interval(bounds and (bounds[0], bounds[1]))]
            row += [percent(at["value"])]
        table.add_row(*row)
    return table


def state_lines(state: Any, limit: int = 8) -> list[str]:
    """What the outcome verdict says about one case, a line each (the diff cut at `limit`),
    made printable (a tool's error or a stored value is anything an agent caused)."""
    lines: list[str] = []
    if state.passed is not None:
        checks = state.checks
        failed = sum(not check.passed for check in checks)
        tested = f"; checks: {failed} of {len(checks)} failed" if checks else ""
        goal = state.goal or "none"
        lines.append(f"state {'passed' if state.passed else 'FAILED'} (goal: {goal}{tested})")
    if state.diff is not None and not state.diff.passed:
        diff = state.diff.lines()
        lines += diff[:limit] + ([f"... {len(diff) - limit} more"] if len(diff) > limit else [])
    if state.error is not None:
        lines.append(f"replay stopped at {state.error}")
    lines += state.notes()
    lines += [f"error in call {c.call} ({c.name}): {c.error}" for c in state.calls if c.error]
    lines += [f"required output missing from the response: {m!r}" for m in state.missing_outputs]
    lines += [f"state check {c.name!r} failed: {c.reason}" for c in state.checks if not c.passed]
    return [printable(line) for line in lines]


def worst_table(title: str, tallies: dict[str, Tally], limit: int = 5) -> Table | None:
    """The entries with the highest failure rate (failures only), most failures first."""
    failing = [(name, t) for name, t in tallies.items() if t.failed or t.extra]
    if not failing:
        return None
    failing.sort(
        key=lambda item: (
            -(item[1].failed / max(1, item[1].passed + item[1].failed)),
            -item[1].failed,
            item[0],
        )
    )
    table = Table(title)
    for column in ("name", "passed", "failed", "extra", "most common codes"):
        table.add_column(
            column, justify="left" if column in ("name", "most common codes") else "right"
        )
    for name, tally in failing[:limit]:
        codes = ", ".join(f"{code} x{count}" for code, count in tally.codes.most_common(3))
        table.add_row(
            printable(name), str(tally.passed), str(tally.failed), str(tally.extra or ""), codes
        )
    return table


def capped(lines: Iterable[str], total: int, what: str, limit: int = LINES_PER_CASE) -> list[str]:
    """The first `limit` of `total` lines, then one line counting the rest (`what` names
    them: "mismatches"), so that one case with 10,000 extra calls prints 21 lines."""
    shown = [line for _, line in zip(range(limit), lines, strict=False)]
    if total > len(shown):
        shown.append(f"... and {total - len(shown)} more ({total} {what}; --json lists all)")
    return shown


def case_detail(result: CaseResult, limit: int = LINES_PER_CASE) -> list[str]:
    """A failing case's mismatch lines, then its outcome lines, capped at `limit`."""
    state = state_lines(result.state) if result.state is not None else []
    mismatches: Iterable[str] = (mismatch_line(m) for m in result.mismatches)
    if result.turns:
        mismatches = _turn_lines(result)
        if result.state is not None:
            state = conversation_state_lines(result)
    total = len(result.mismatches) + len(state)
    what = "mismatches" if not state else "mismatch and outcome lines"
    return capped(itertools.chain(mismatches, state), total, what, limit)


def conversation_state_lines(result: CaseResult) -> list[str]:
    """A conversation's outcome lines: the case's verdict, then each turn whose outcome
    failed with its own lines (`turn k: ...`), then the case's own goal and checks."""
    state = result.state
    lines = state_lines(state)[:1] if state.passed is not None else []
    in_turns = 0
    for turn in result.turns:
        verdict = turn.state
        if verdict is None:
            continue
        in_turns += len(verdict.checks)
        if verdict.outcome_passed is False:
            lines += [f"turn {turn.turn}: {line}" for line in state_lines(verdict)]
    own = state._replace(
        passed=None, calls=(), checks=state.checks[in_turns:], error=None, not_replayed=0
    )
    return lines + state_lines(own)


def _turn_lines(result: CaseResult) -> Iterable[str]:
    """A conversation's mismatch lines, each after the turn it failed (`turn k:`); those of
    no case turn (`extra_turn`) come last, as the case lists them."""
    in_turns = 0
    for turn in result.turns:
        for mismatch in turn.mismatches:
            yield f"turn {turn.turn}: {mismatch_line(mismatch)}"
        in_turns += len(turn.mismatches)
    yield from (mismatch_line(m) for m in result.mismatches[in_turns:])


def failures(results: Sequence[CaseResult], total_failed: int) -> list[Line]:
    """The first failing cases with the mismatches that decided them, a line each."""
    if not results:
        return []
    lines: list[Line] = [
        Line(f"Failing cases (first {len(results)} of {total_failed}):", style="bold")
    ]
    for result in results:
        plan = "" if result.plan is None else f" (plan {result.plan})"
        missing = " [no output line]" if result.missing_output else ""
        trial = "" if result.trial is None else f" trial {result.trial}"
        calls = "calls passed" if result.passed else "calls failed"
        if result.first_failed_turn is not None:
            calls += f" (first at turn {result.first_failed_turn})"
        calls += case_partial(result)
        lines.append(safe_line(f"  {result.id}{trial}{plan}{missing}: {calls}", style="red"))
        lines += [Line("    " + detail) for detail in case_detail(result)]
    return lines


def summary_blocks(
    specs: SpecSet,
    version: str,
    summary: Summary,
    failed: Sequence[CaseResult],
) -> list[Block]:
    """The whole readable summary of a run, in order: what each view prints."""
    blocks: list[Block | None] = [
        critical_line(summary),
        provenance(specs, version, summary.cases),
        relaxations(specs),
        metrics_table(summary),
        call_rates_table(summary),
        partial_table(summary),
        efficiency_table(summary),
        ignored_keys_line(summary),
        baselines_table(summary),
        *nothing_lines(summary),
    ]
    if summary.outcomes is not None:
        blocks += [outcomes_table(summary.outcomes), state_checks_table(summary.outcomes)]
    if summary.rubrics is not None:
        blocks.append(rubrics_table(summary.rubrics))
        blocks += [Line(unscored) for unscored in rubric_unscored_lines(summary.rubrics)]
    if summary.trials is not None:
        blocks.append(trials_table(summary.trials.to_json()))
    if summary.turns is not None:
        blocks.append(turns_table(summary.turns))
    if summary.variants is not None:
        blocks += variants_table(summary.variants)
    blocks += [
        worst_table("Weakest tools", summary.per_tool),
        worst_table("Weakest arguments", summary.per_argument),
    ]
    # Long values stay whole, for copying.
    blocks += failures(failed, len(failed) if summary.outcomes else summary.cases - summary.passed)
    return [block for block in blocks if block is not None]


def render_summary(
    console: Console,
    specs: SpecSet,
    version: str,
    summary: Summary,
    failed: Sequence[CaseResult],
) -> None:
    """Print the whole readable summary of a run on a rich console (the tables' view)."""
    from toolscore.report.rich_view import print_blocks  # noqa: PLC0415 - rich, when drawn

    print_blocks(console, summary_blocks(specs, version, summary, failed))
