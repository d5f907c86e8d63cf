"""The one-file HTML report of a run: what its page shows, built from a report JSON.

`report_html` takes the report's header and summary (`head`, as `score --json` writes them),
the chosen cases (`embed.select_cases`) and, where they could be found, each chosen case's
plans and produced calls (`sources`); it returns the page. Every number on the page is read
from the summary as it is; the cases are data for the page's script, which lists and filters
them and lays a case out beside its plan (the labelling page's layout, with the verdicts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from markupsafe import Markup

from toolscore.calibration.page import case_layout, top_key
from toolscore.html_report import charts
from toolscore.html_report.coverage_view import coverage_view
from toolscore.html_report.embed import NAIVE_SCORERS, Caps, Selection
from toolscore.html_report.page import json_bytes, render, script_json

RATES = (
    ("accuracy", "case accuracy", "cases"),
    ("name_accuracy", "name accuracy", "tool cases"),
    ("argument_accuracy", "argument accuracy", "paired calls"),
    ("abstention_accuracy", "abstention accuracy", "abstention cases"),
)
CALL_RATES = (
    ("unknown_tool_rate", "unknown tool", "produced calls"),
    ("missing_argument_rate", "missing argument", "paired calls"),
    ("unexpected_argument_rate", "unexpected argument", "paired calls"),
)
"""The named call rates (docs/formats.md 7.6): shares of calls with a fault, lower is better;
a report JSON written before them has none, and the page then shows no table of them."""
COUNTS = (
    ("missed_calls", "missed calls (tool cases with no call)"),
    ("missing_outputs", "missing outputs"),
    ("unmatched_outputs", "outputs matching no case"),
    ("unread_cases", "cases with an unread transcript part"),
)
SCORERS = (("exact", "exact JSON"), ("lowercase", "lowercase"), ("nothing", "do nothing"))
SHOWN_NOTHING_IDS = 20
"""Ids of tool cases the do-nothing baseline passes that the page names."""
MAX_RUBRIC_ROWS = 200
"""Rubric rows listed at most in each table (per rubric, per argument)."""
TOP_REASONS = 3
"""Unscored reasons shown beside each rubric row (the report JSON keeps them all)."""
MAX_CASE_BYTES = 200_000
"""A case whose page JSON is larger is embedded without its values (`slimmed`)."""
MAX_LIST_ITEMS = 100
MAX_TEXT = 500


@dataclass(frozen=True)
class Provenance:
    """What the report JSON does not say about a run: where it came from and when, and how
    to see the cases the page leaves out."""

    label: str | None = None
    date: str | None = None
    date_note: str = ""
    inputs: tuple[tuple[str, str | None, str | None], ...] = ()
    """(role, path, sha256) of the cases and outputs files, where known."""
    rest_hint: str = ""
    details_note: str = ""
    """Why cases show no plans and produced calls, when they do not (empty when they do)."""
    extra: Mapping[str, Any] = field(default_factory=dict)


def report_html(
    head: Mapping[str, Any],
    selection: Selection,
    caps: Caps,
    details: Mapping[str, Mapping[str, Any]],
    provenance: Provenance,
) -> str:
    """The page of a run: `head` holds its header and summary, `details` the view of each
    chosen case whose plans and produced calls could be found (by id)."""
    summary = head["summary"]
    chosen = selection.cases(caps)
    spec: dict[str, dict[str, Any]] = {}
    cases_json, embedded = _embedded(chosen, details, caps.max_bytes, spec)
    per_tool, tools_left = charts.heat_rows(summary.get("per_tool", {}))
    per_argument, arguments_left = charts.heat_rows(summary.get("per_argument", {}))
    state = summary.get("state")
    required = state.get("required_outputs") if state else None
    failed = summary["cases"] - summary["passed"]
    return render(
        "report.html",
        title=f"toolscore report{': ' + provenance.label if provenance.label else ''}",
        head=head,
        provenance=provenance,
        rates=_rates(summary),
        call_rates=_call_rates(summary),
        partial=partial_view(summary.get("partial"), summary.get("efficiency")),
        forbidden=forbidden_view(summary.get("forbidden_calls")),
        counts=_counts(summary),
        clustered=summary.get("accuracy_clustered"),
        scorers=_scorers(summary),
        nothing=_nothing(summary),
        codes=charts.bar_chart(summary.get("codes", {})),
        per_tool=per_tool,
        tools_left=tools_left,
        per_argument=per_argument,
        arguments_left=arguments_left,
        outcomes=charts.outcomes(state) if state else None,
        state=state,
        state_checks=_state_checks(summary),
        required=required,
        required_bar=charts.whisker(required["value"], required["ci95"]) if required else None,
        embedded=embedded,
        total=summary["cases"],
        failed=failed,
        embedded_failing=sum(1 for case in chosen[:embedded] if not case.get("passed")),
        caps=caps,
        has_details=bool(details),
        calibration=_calibration(head.get("calibration")),
        coverage=coverage_view(head.get("coverage")),
        rubrics=_rubrics(summary.get("rubrics")),
        turns=turns_view(summary),
        variants=variants_view(summary),
        cases_json=cases_json,
        spec_json=script_json(spec),
        bar_width=charts.BAR_WIDTH,
        row_height=charts.ROW_HEIGHT,
    )


MAX_TURN_BARS = 50
"""First failing turns drawn one bar each at most; later ones are added up in one bar."""


def turns_view(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The summary's conversation figures (docs/formats.md 7.10) for the page: the turn
    accuracy row with its clustered interval, how many conversations passed every turn, and
    a bar per first failing turn in turn order; None when the run has no conversation."""
    rate = summary.get("turn_accuracy")
    if not isinstance(rate, Mapping) or "conversations" not in summary:
        return None
    first = summary.get("first_failed_turn") or {}
    ordered = sorted(((int(turn), int(count)) for turn, count in first.items()))
    failed = sum(count for _, count in ordered)
    counts = {f"turn {turn}": count for turn, count in ordered[:MAX_TURN_BARS]}
    if len(ordered) > MAX_TURN_BARS:
        counts["a later turn"] = sum(count for _, count in ordered[MAX_TURN_BARS:])
    clustered = rate.get("clustered") or {}
    return {
        "conversations": summary["conversations"],
        "passed": summary["conversations"] - failed,
        "failed": failed,
        "rate": {
            "key": "turn_accuracy",
            "label": "turn accuracy",
            "unit": "turns",
            **rate,
            "bar": charts.whisker(rate["value"], rate.get("ci95")),
        },
        "clustered": clustered,
        "clustered_bar": charts.whisker(rate["value"], clustered.get("ci95")),
        "first_failed": charts.ordered_bar_chart(list(counts.items())),
        "first_failed_counts": ordered,
    }


def variants_view(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The summary's variant groups (docs/formats.md 7.11) for the page: the share of groups
    whose every variant passed and each variant label's accuracy, as rate rows, with the
    spread and the groups whose verdicts differ; None when no case names a group."""
    block = summary.get("variants")
    if not isinstance(block, Mapping):
        return None
    rates = [("all_variants_pass", "every variant passes", "groups", block["all_variants_pass"])]
    for label, rate in block["per_variant"].items():
        rates.append((f"variant:{label}", f"variant {label}", "cases", rate))
    rows = [
        {"key": key, "label": label, "unit": unit, **rate,
         "bar": charts.whisker(rate["value"], rate.get("ci95"))}
        for key, label, unit, rate in rates
    ]  # fmt: skip
    return {**block, "rows": rows}


def _state_checks(summary: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The summary's state checks, failing most first (most failures, then the lowest
    pass rate, then by name: the order of `state_checks_most_failed`)."""
    rates: Mapping[str, Mapping[str, Any]] = summary.get("state_checks", {})
    return sorted(
        rates.items(),
        key=lambda item: (item[1]["passed"] - item[1]["n"], item[1]["value"] or 0, item[0]),
    )


def _rates(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for key, label, unit in RATES:
        if key == "accuracy":
            node = {
                "value": summary["accuracy"],
                "n": summary["cases"],
                "passed": summary["passed"],
                "ci95": summary.get("accuracy_ci95"),
            }
        else:
            node = summary[key]
        rows.append(
            {
                "key": key,
                "label": label,
                "unit": unit,
                **node,
                "bar": charts.whisker(node["value"], node.get("ci95")),
            }
        )
    return rows


def _call_rates(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The named call rates the summary has, as the metrics table's rows are made."""
    return [
        {
            "key": key,
            "label": label,
            "unit": unit,
            **summary[key],
            "bar": charts.whisker(summary[key]["value"], summary[key].get("ci95")),
        }
        for key, label, unit in CALL_RATES
        if key in summary
    ]


MAX_PARTIAL_TOOLS = 200
"""Tools listed at most in the per-tool partial credit table (the report JSON has all)."""


def partial_view(
    partial: Mapping[str, Any] | None, efficiency: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The summary's partial credit (micro and macro rows, the per-tool table) and
    efficiency for the page; None for a report written before them."""
    if partial is None or efficiency is None:
        return None
    tools = sorted(
        partial.get("per_tool", {}).items(),
        key=lambda item: (item[1].get("f1") is None, item[1].get("f1") or 0.0, item[0]),
    )
    return {
        "cases": partial.get("cases"),
        "rows": [
            {"key": key, "label": label, **partial[key]}
            for key, label in (("precision", "precision"), ("recall", "recall"), ("f1", "F1"))
        ],
        "per_tool": [{"tool": name, **row} for name, row in tools[:MAX_PARTIAL_TOOLS]],
        "tools_left": max(len(tools) - MAX_PARTIAL_TOOLS, 0),
        "efficiency": efficiency,
    }


def forbidden_view(forbidden: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The forbidden calls for the critical failures box, most called tool first; None when
    no call was forbidden (or the report predates them)."""
    if not forbidden or not forbidden.get("calls"):
        return None
    tools = sorted(forbidden.get("per_tool", {}).items(), key=lambda item: (-item[1], item[0]))
    return {**forbidden, "tools": tools[:MAX_PARTIAL_TOOLS]}


def _counts(summary: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """The counts of the summary the page lists, as (key, label, value)."""
    left_out = summary.get("missing_policy") == "exclude"
    labels = {"missing_outputs": "missing outputs (left out of every rate)"} if left_out else {}
    return [(key, labels.get(key, label), summary[key]) for key, label in COUNTS if key in summary]


def _nothing(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tool cases the do-nothing baseline passes (count and first ids), when any."""
    node = summary.get("baselines", {}).get("nothing")
    if not isinstance(node, Mapping) or not node.get("tool_cases_passed"):
        return None
    ids = [str(case_id) for case_id in node.get("tool_case_ids", ())[:SHOWN_NOTHING_IDS]]
    return {"count": node["tool_cases_passed"], "ids": ids}


def _scorers(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {
            "key": "rules",
            "label": "rules",
            "passed": summary["passed"],
            "accuracy": summary["accuracy"],
            "ci95": summary.get("accuracy_ci95"),
            "disagreements": None,
        }
    ]
    for key, label in SCORERS:
        node = summary.get("baselines", {}).get(key)
        if node is None:
            continue
        rows.append(
            {
                "key": key,
                "label": label,
                "passed": node["passed"],
                "accuracy": node["accuracy"],
                "ci95": node.get("accuracy_ci95"),
                "disagreements": node.get("disagreements"),
                "only_rules_pass": node.get("only_rules_pass"),
                "only_baseline_passes": node.get("only_baseline_passes"),
            }
        )
    for row in rows:
        row["bar"] = charts.whisker(row["accuracy"], row["ci95"])
    return rows


def _rubrics(block: Any) -> dict[str, Any] | None:
    """The summary's `rubrics` block as the page's tables read it: per rubric and per
    `tool.argument`, the numbers as the report JSON has them, a bar for the pass rate and its
    interval, and the commonest unscored reasons; None when the run has no rubric results."""
    if not isinstance(block, Mapping):
        return None
    tables: dict[str, Any] = {}
    for group in ("per_rubric", "per_argument"):
        rows = []
        for name, stats in sorted(block.get(group, {}).items()):
            rate = stats["pass_rate"]
            reasons = stats["unscored"]["reasons"]
            rows.append(
                {
                    "name": name,
                    "n": stats["n"],
                    "mean_score": stats["mean_score"],
                    "rate": rate,
                    "bar": charts.whisker(rate["value"], rate.get("ci95")),
                    "unscored": stats["unscored"]["count"],
                    "reasons": list(reasons.items())[:TOP_REASONS],
                    "more_reasons": max(len(reasons) - TOP_REASONS, 0),
                }
            )
        tables[group] = rows[:MAX_RUBRIC_ROWS]
        tables[group + "_left"] = max(len(rows) - MAX_RUBRIC_ROWS, 0)
    return {**tables, "tokens": block.get("tokens", 0)}


def _calibration(block: Any) -> dict[str, Any] | None:
    """The calibration block (`{"labellers", "metrics"}`) as the page's table reads it; None
    when there is none or it has another shape. A metric without a known `unit` is a share."""
    if not isinstance(block, Mapping):
        return None
    labellers = [str(name) for name in block.get("labellers", ()) if name is not None]
    metrics = []
    for metric in block.get("metrics", ()):
        if not isinstance(metric, Mapping):
            continue
        ci = metric.get("ci95")
        metrics.append(
            {
                "name": str(metric.get("name", "")),
                "unit": unit if (unit := metric.get("unit")) in ("kappa", "count") else "share",
                "value": metric.get("value"),
                "n": metric.get("n"),
                "ci95": ci if isinstance(ci, list | tuple) and len(ci) == 2 else None,
                "note": str(metric.get("note", "")),
            }
        )
    return {"labellers": labellers, "metrics": metrics}


def _embedded(
    chosen: Sequence[dict[str, Any]],
    details: Mapping[str, Mapping[str, Any]],
    max_bytes: int,
    spec: dict[str, dict[str, Any]],
) -> tuple[Markup, int]:
    """The chosen cases as the page's JSON, stopping before `max_bytes`; and how many. A case
    whose JSON is over `MAX_CASE_BYTES` (an agent can send megabytes) is embedded slimmed.
    The arguments' rule lines go to `spec` (`lift_spec`), once for the page."""
    parts: list[bytes] = []
    size = 0
    for case in chosen:
        record = case_record(case, details.get(case.get("id", "")))
        if "layout" in record:
            lift_spec(record["layout"], spec)
        part = json_bytes(record)
        if len(part) > MAX_CASE_BYTES:
            part = json_bytes(slimmed(record, len(part)))
        if size + len(part) > max_bytes:
            break
        parts.append(part)
        size += len(part) + 1
    return Markup((b"[" + b",".join(parts) + b"]").decode()), len(parts)


def slimmed(record: Mapping[str, Any], size: int) -> dict[str, Any]:
    """A case too large to embed whole: its verdict, facets and mismatches without their
    values, each list and text cut short; `slimmed` says how large it was."""
    cut = MAX_LIST_ITEMS
    kept = {
        key: record[key]
        for key in ("id", "passed", "kind", "plan", "baselines", "partial", "efficiency")
        if key in record
    }
    for key in ("codes", "disagree", "tools", "args", "tags"):
        value = record.get(key)
        kept[key] = [str(item)[:MAX_TEXT] for item in value[:cut]] if value is not None else None
    kept["mismatches"] = [_slim_mismatch(m) for m in record.get("mismatches", ())[:cut]]
    if record.get("rubrics"):
        kept["rubrics"] = [
            {**entry, "reason": str(entry.get("reason", ""))[:MAX_TEXT]}
            | ({"unscored": str(entry["unscored"])[:MAX_TEXT]} if entry.get("unscored") else {})
            for entry in record["rubrics"][:cut]
        ]
    if record.get("turns"):
        kept["first_failed_turn"] = record.get("first_failed_turn")
        kept["turns"] = [
            {key: turn.get(key) for key in ("index", "passed", "plan", "calls", "first")}
            | {"mismatches": [_slim_mismatch(m) for m in turn.get("mismatches", ())[:cut]]}
            for turn in record["turns"][:cut]
        ]
    kept["slimmed"] = size
    return kept


def _slim_mismatch(m: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "code": m.get("code"),
        "call": m.get("call"),
        "plan_call": m.get("plan_call"),
        "path": str(m.get("path", ""))[:MAX_TEXT],
        "rule": m.get("rule"),
        "message": str(m.get("message", ""))[:MAX_TEXT],
    }


def lift_spec(layout: dict[str, Any], spec: dict[str, dict[str, Any]]) -> None:
    """Move each argument's rule lines (`calibration.page.spec_lines`) from a case's layout
    to the page's `spec` table, by tool and argument, leaving `null`: a run repeats the same
    tools in thousands of cases, and the page holds one copy of their rules. Lines that name
    no rule of the spec (an argument or a tool it does not have) stay with the case."""
    rules = layout.pop("rules", None) or {}
    for row in layout["rows"]:
        tool = row["expected_name"] if row["expected_name"] is not None else row["produced_name"]
        known = rules.get(tool, {}).get("args", {})
        for arg in row["args"]:
            if arg["spec"] and arg["key"] in known:
                spec.setdefault(tool, {})[arg["key"]] = arg["spec"]
                arg["spec"] = None


def case_record(case: Mapping[str, Any], view: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the page's script reads of one case: its report entry, the facets it is filtered
    by (tools, arguments, codes, tags, the baselines that disagree), and its layout beside
    the plan when its view is known."""
    mismatches = [m for m in case.get("mismatches", ()) if isinstance(m, Mapping)]
    record: dict[str, Any] = {key: value for key, value in case.items() if key != "mismatches"}
    record["mismatches"] = mismatches
    record["codes"] = sorted({str(m.get("code")) for m in mismatches})
    passed = bool(case.get("passed"))
    baselines = case.get("baselines") or {}
    record["disagree"] = sorted(
        name for name in NAIVE_SCORERS if name in baselines and bool(baselines[name]) != passed
    )
    tools, arguments = _facets(mismatches, view)
    record["tools"], record["args"] = sorted(tools), sorted(arguments)
    record["tags"] = [str(tag) for tag in view.get("tags", ())] if view is not None else None
    if view is not None:
        layout = asdict(case_layout(view, revealed=True))
        layout["mismatches"] = []  # the record has them
        layout["exact_reason"] = view.get("exact_reason")
        layout["rules"] = view.get("rules")  # read by lift_spec, then dropped
        record["layout"] = layout
    if isinstance(case.get("turns"), list):
        record["turns"] = turn_blocks(case, record.get("layout"), view)
    return record


def turn_blocks(
    case: Mapping[str, Any], layout: Mapping[str, Any] | None, view: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """A conversation case's turns as the page shows them, from its report entry: each
    turn's entry (index, verdict, plan, calls range, mismatches, and any `state`/`checks`),
    `first` on the first failing turn, and when the layout is known, `rows`, the layout rows
    of the turn (its produced calls by the `calls` range, its missing plan calls by the
    turn's span of the one plan, `plan_offset` its start)."""
    spans = view.get("turn_plan_calls") if view is not None else None
    rows = list(layout["rows"]) if layout is not None else []
    first = case.get("first_failed_turn")
    blocks = []
    for k, entry in enumerate(case["turns"]):
        if not isinstance(entry, Mapping):
            continue
        block = dict(entry)
        block["mismatches"] = [m for m in entry.get("mismatches", ()) if isinstance(m, Mapping)]
        block["first"] = entry.get("index") == first and first is not None
        if layout is not None and isinstance(spans, list) and k < len(spans):
            start, end = _span(entry.get("calls"))
            plan_start, plan_end = _span(spans[k])
            block["plan_offset"] = plan_start
            block["rows"] = [
                number
                for number, row in enumerate(rows)
                if (row["call"] is not None and start <= row["call"] < end)
                or (row["call"] is None and row["plan_call"] is not None
                    and plan_start <= row["plan_call"] < plan_end)
            ]  # fmt: skip
        blocks.append(block)
    return blocks


def _span(value: Any) -> tuple[int, int]:
    """A `[start, end)` pair as two ints; (0, 0) for anything else."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(type(v) is int for v in value):
        return value[0], value[1]
    return 0, 0


def _facets(
    mismatches: Sequence[Mapping[str, Any]], view: Mapping[str, Any] | None
) -> tuple[set[str], set[str]]:
    """The tools and the `tool.argument`s a case involves: every call of its compared plan
    and of what the agent produced (when the view is known), and every mismatch's."""
    tools: set[str] = set()
    arguments: set[str] = set()
    plan: list[Any] = []
    produced: list[Any] = []
    if view is not None:
        plans = view.get("plans") or []
        index = view.get("plan")
        plan = plans[index] if isinstance(index, int) and 0 <= index < len(plans) else []
        produced = list(view.get("produced") or [])
        for call in [*plan, *produced]:
            tools.add(str(call.get("name")))
            args = call.get("args")
            if isinstance(args, Mapping):
                arguments.update(f"{call.get('name')}.{key}" for key in args)
    for m in mismatches:
        tool = _mismatch_tool(m, plan, produced)
        if tool is None:
            continue
        tools.add(tool)
        key = top_key(str(m.get("path", "")))
        if key is not None:
            arguments.add(f"{tool}.{key}")
    return tools, arguments


def _mismatch_tool(
    m: Mapping[str, Any], plan: Sequence[Any], produced: Sequence[Any]
) -> str | None:
    code, call, plan_call = m.get("code"), m.get("call"), m.get("plan_call")
    if isinstance(plan_call, int) and 0 <= plan_call < len(plan):
        return str(plan[plan_call].get("name"))
    if isinstance(call, int) and 0 <= call < len(produced):
        return str(produced[call].get("name"))
    if code in ("missing_call", "wrong_tool") and isinstance(m.get("expected"), str):
        return str(m["expected"])
    if code in ("extra_call", "unknown_tool") and isinstance(m.get("produced"), str):
        return str(m["produced"])
    return None


__all__ = ["Provenance", "case_record", "report_html"]
