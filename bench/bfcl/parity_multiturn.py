"""toolscore and BFCL's multi-turn checker on the same multi-turn entries and results.

For each entry of a multi-turn category (default: base), the ground truth as a model result
and perturbations of it (a call dropped, duplicated, two calls of a turn swapped, an argument
altered, a turn emptied, a call moved to the turn before) are judged by BFCL's own
`multi_turn_checker` (the real state classes of the installed bfcl-eval) and by `toolscore
score --env` on what `toolscore import bfcl` and `import bfcl-outputs` write: one conversation
case per entry, which passes when the case passes on state (every turn's state and results),
and, for comparison, the older layout (`--per-turn`: a case per turn with calls; the entry
passes when all its cases pass on state). Each is timed; every disagreement with BFCL, and
every entry whose verdict differs between the two layouts, is listed.

Usage: PYTHONPATH=src bench/bfcl/.venv/bin/python bench/bfcl/parity_multiturn.py
       [--category base miss_func miss_param long_context] [--limit N] [--write]
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from bfcl_env import data_dir, machine, read_lines, revision

from toolscore.bfcl.multiturn import import_multi_turn, parse_call, write_multi_turn
from toolscore.bfcl.multiturn_results import convert_multi_turn

Result = list[list[list[str]]]  # turns, steps, call texts
START, END = "<!-- multi-turn results start -->", "<!-- multi-turn results end -->"


def _turns_with_calls(truth: list[list[str]]) -> list[int]:
    return [t for t, calls in enumerate(truth) if calls]


def _as_result(truth: list[list[str]]) -> Result:
    return [[list(calls)] if calls else [] for calls in truth]


def _flat(result: Result) -> list[list[str]]:
    return [[call for step in turn for call in step] for turn in result]


def drop(truth: list[list[str]]) -> Result | None:
    turns = _turns_with_calls(truth)
    if not turns:
        return None
    out = copy.deepcopy(truth)
    out[turns[-1]].pop(0)
    return _as_result(out)


def duplicate(truth: list[list[str]]) -> Result | None:
    turns = _turns_with_calls(truth)
    if not turns:
        return None
    out = copy.deepcopy(truth)
    out[turns[0]].append(out[turns[0]][-1])
    return _as_result(out)


def reorder(truth: list[list[str]]) -> Result | None:
    for t, calls in enumerate(truth):
        if len(calls) >= 2 and calls[0] != calls[1]:
            out = copy.deepcopy(truth)
            out[t][0], out[t][1] = out[t][1], out[t][0]
            return _as_result(out)
    return None


def _altered(text: str) -> str | None:
    name, args = parse_call(text)
    for key, value in args.items():
        if isinstance(value, bool):
            args[key] = not value
        elif isinstance(value, int | float):
            args[key] = value + 1
        elif isinstance(value, str):
            args[key] = value + "x"
        else:
            continue
        positional = args.pop("*", [])
        parts = [repr(v) for v in positional] + [f"{k}={v!r}" for k, v in args.items()]
        return f"{name}({', '.join(parts)})"
    return None


def alter(truth: list[list[str]]) -> Result | None:
    for t in reversed(_turns_with_calls(truth)):
        for i, call in enumerate(truth[t]):
            changed = _altered(call)
            if changed is not None:
                out = copy.deepcopy(truth)
                out[t][i] = changed
                return _as_result(out)
    return None


def empty_turn(truth: list[list[str]]) -> Result | None:
    turns = _turns_with_calls(truth)
    if not turns:
        return None
    out = copy.deepcopy(truth)
    out[turns[-1]] = []
    return _as_result(out)


def move_earlier(truth: list[list[str]]) -> Result | None:
    for t in range(1, len(truth)):
        if len(truth[t]) >= 2:
            out = copy.deepcopy(truth)
            out[t - 1].append(out[t].pop(0))
            return _as_result(out)
    return None


PERTURBATIONS: dict[str, Callable[[list[list[str]]], Result | None]] = {
    "correct": _as_result,
    "drop": drop,
    "duplicate": duplicate,
    "reorder": reorder,
    "alter": alter,
    "empty_turn": empty_turn,
    "move_earlier": move_earlier,
}


def bfcl_verdicts(
    entries: list[dict[str, Any]],
    truths: dict[str, Any],
    variants: dict[str, dict[str, Result]],
    run: str = "",
) -> tuple[dict[tuple[str, str], bool], tuple[float, float]]:
    """BFCL's verdict per (entry, variant), and the time its checker took (wall, CPU).

    BFCL keeps each replay's instances in its module's globals, by model name and entry id,
    and goes on from them when checked again: a repeated run names itself by `run`."""
    checker = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    multi_turn_checker = checker.multi_turn_checker

    verdicts = {}
    started, cpu = time.perf_counter(), time.process_time()
    for entry in entries:
        for variant, result in variants[entry["id"]].items():
            decoded = [[step for step in turn if step] for turn in result]
            checked = multi_turn_checker(
                decoded, truths[entry["id"]], dict(entry), "multi_turn", f"parity_{variant}{run}"
            )
            verdicts[entry["id"], variant] = bool(checked["valid"])
    return verdicts, (time.perf_counter() - started, time.process_time() - cpu)


def prepare(
    data: Path, answers: Path, variants: dict[str, dict[str, Result]], work: Path,
    per_turn: bool = False,
) -> float:  # fmt: skip
    """Write the converted cases (one set per variant: `<entry>~<variant>`, then `/turn-<t>`
    in the per-turn layout) and the outputs into `work`; the conversion's time."""
    started = time.perf_counter()
    converted, module = import_multi_turn(str(data), str(answers), out_dir=work, per_turn=per_turn)
    cases = []
    for case in converted.cases:
        entry, _, turn = case["id"].partition("/")
        for variant in variants.get(entry, {}):
            cases.append({**case, "id": f"{entry}~{variant}" + (f"/{turn}" if turn else "")})
    converted.cases = cases
    write_multi_turn(converted, module, work)
    lines = []
    for entry, by_variant in variants.items():
        for variant, result in by_variant.items():
            named = {"id": f"{entry}~{variant}", "result": result}
            lines += convert_multi_turn(named, "-", 0, per_turn=per_turn)
    (work / "outputs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return time.perf_counter() - started


def score(work: Path, src: Path | None = None) -> tuple[float, float]:
    """Run `toolscore score --env --workers 1` on what `prepare` wrote (the sources in `src`
    first on the path, when given); its wall time and CPU time."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
    started, before = time.perf_counter(), children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "toolscore", "score", "--specs", str(work / "tools.yaml"),
         "--cases", str(work / "cases.jsonl"), "--outputs", str(work / "outputs.jsonl"),
         "--env", "--json", str(work / "report.json"), "--show-failures", "0",
         "--workers", "1"],
        check=False, stdout=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    if done.returncode not in (0, 1):  # 1: some case failed; else nothing was scored
        raise SystemExit(f"toolscore score exited with {done.returncode} on {work}")
    return time.perf_counter() - started, children_cpu() - before


def read_verdicts(
    work: Path, variants: dict[str, dict[str, Result]]
) -> dict[tuple[str, str], bool]:
    """toolscore's verdict per (entry, variant) from the report `score` wrote: an entry
    passes when its conversation case (or all its per-turn cases) passes on state."""
    report = json.loads((work / "report.json").read_text())
    verdicts: dict[tuple[str, str], bool] = {}
    for case in report["cases"]:
        key = tuple(case["id"].split("/")[0].split("~"))
        verdicts[key] = verdicts.get(key, True) and case["state_passed"] is True
    for entry, by_variant in variants.items():
        for variant in by_variant:
            verdicts.setdefault((entry, variant), True)  # no turn with calls: nothing to fail
    return verdicts


def toolscore_verdicts(
    data: Path, answers: Path, variants: dict[str, dict[str, Result]], work: Path,
    per_turn: bool = False,
) -> tuple[dict[tuple[str, str], bool], float, tuple[float, float]]:  # fmt: skip
    """toolscore's verdict per (entry, variant), the conversion's time and the scoring's
    (wall, and the CPU time of the scoring process)."""
    converting = prepare(data, answers, variants, work, per_turn)
    scoring = score(work)
    return read_verdicts(work, variants), converting, scoring


def children_cpu() -> float:
    """The CPU time (user and system) of this process's ended children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Loaded(NamedTuple):
    """A category's files and entries, their ground truths, and the results judged."""

    data: Path
    answers: Path
    entries: list[dict[str, Any]]
    truths: dict[str, Any]
    variants: dict[str, dict[str, Result]]
    """By entry id, each perturbation's result (the ground truth itself as "correct")."""


def load(category: str, limit: int = 0) -> Loaded:
    """A multi-turn category's first `limit` entries (all with 0) and their results."""
    name = f"BFCL_v4_multi_turn_{category}.json"
    data, answers = data_dir() / name, data_dir() / "possible_answer" / name
    entries = read_lines(data)
    truths = {line["id"]: line["ground_truth"] for line in read_lines(answers)}
    if limit:
        entries = entries[:limit]
    variants: dict[str, dict[str, Result]] = {}
    for entry in entries:
        made = {v: f(truths[entry["id"]]) for v, f in PERTURBATIONS.items()}
        variants[entry["id"]] = {v: r for v, r in made.items() if r is not None}
    return Loaded(data, answers, entries, truths, variants)


def compare(category: str, limit: int) -> str:
    """Both scorers on one category; the results as Markdown."""
    data, answers, entries, truths, variants = load(category, limit)
    with tempfile.TemporaryDirectory() as folder:
        ours, converting, scoring = toolscore_verdicts(data, answers, variants, Path(folder))
    with tempfile.TemporaryDirectory() as folder:
        older, _, older_scoring = toolscore_verdicts(
            data, answers, variants, Path(folder), per_turn=True
        )
    theirs, checking = bfcl_verdicts(entries, truths, variants)
    table: Counter[tuple[str, bool, bool]] = Counter()
    disagreements = []
    for key, verdict in theirs.items():
        agree = ours[key] == verdict
        table[key[1], verdict, agree] += 1
        if not agree:
            disagreements.append((key, verdict, ours[key]))
    layouts = [(key, older[key], ours[key]) for key in theirs if older[key] != ours[key]]
    total = len(theirs)
    agreed = total - len(disagreements)
    lines = [
        f"### multi_turn_{category}",
        "",
        f"{len(entries)} entries, {total} results (the ground truth and its perturbations). "
        f"Agreement: {agreed}/{total} ({100 * agreed / total:.2f}%). Verdicts per entry, "
        f"conversation layout against the per-turn one: {total - len(layouts)}/{total} the same.",
        "",
        "| result | BFCL passes | BFCL fails | disagreements |",
        "|---|---:|---:|---:|",
    ]
    for variant in PERTURBATIONS:
        passes = sum(n for (v, ok, _), n in table.items() if v == variant and ok)
        fails = sum(n for (v, ok, _), n in table.items() if v == variant and not ok)
        off = sum(n for (v, _, agree), n in table.items() if v == variant and not agree)
        lines.append(f"| {variant} | {passes} | {fails} | {off} |")
    lines += [
        "",
        f"Time (CPU; wall in brackets): BFCL's multi_turn_checker {checking[1]:.2f} s "
        f"[{checking[0]:.2f}]; toolscore {scoring[1]:.2f} s [{scoring[0]:.2f}] (per-turn "
        f"layout {older_scoring[1]:.2f} s [{older_scoring[0]:.2f}]); the conversion "
        f"{converting:.2f} s more. Ratio BFCL/toolscore {checking[1] / scoring[1]:.2f} "
        f"[{checking[0] / scoring[0]:.2f}].",
    ]
    if layouts:
        lines += ["", "Layouts differing (entry, result, per-turn, conversation):", ""]
        lines += [f"- {k[0]} {k[1]}: per-turn {a}, conversation {b}" for k, a, b in layouts[:50]]
    if disagreements:
        lines += ["", "Disagreements (entry, result, BFCL, toolscore):", ""]
        lines += [f"- {k[0]} {k[1]}: BFCL {b}, toolscore {t}" for k, b, t in disagreements[:50]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", nargs="+", default=["base"])
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--write", action="store_true", help="update bench/bfcl/PARITY.md")
    options = parser.parse_args()
    parts = [compare(category, options.limit) for category in options.category]
    parts.append(
        f"toolscore: `score --env --workers 1`, one process, start-up and call scoring "
        f"included. Machine: {machine()}; toolscore {revision()}; date "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}."
    )
    text = "\n\n".join(parts)
    print(text)
    if options.write:
        page = Path(__file__).parent / "PARITY.md"
        current = page.read_text()
        block = f"{START}\n{text}\n{END}"
        if START in current and END in current:
            head, rest = current.split(START, 1)
            current = head + block + rest.split(END, 1)[1]
        else:
            current += f"\n{block}\n"
        page.write_text(current)


if __name__ == "__main__":
    main()
