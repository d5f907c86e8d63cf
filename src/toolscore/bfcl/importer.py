"""Read a BFCL category file and its possible answers; build a spec set and cases from them.

The work is done in three passes over the (small) files: every case's function docs are merged
into one spec (`schema`); the answers are checked against that spec, and an argument whose
answers hold values of another type than its doc's gets the `exact` rule; then each case's
answers become plans (`answers`). The result is checked by toolscore's own loaders before it
is written, so a converted directory always loads: a record holding a value toolscore's
readers refuse (a lone surrogate, NaN or an infinity, an integer no double holds, nesting
deeper than 200 levels; see `jsonsafe`) is an input error naming its line and field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.bfcl.answers import (
    AnswerError,
    argument_options,
    fits,
    is_omit,
    plans,
)
from toolscore.bfcl.categories import ABSTENTION_CATEGORIES, category_of, refusal
from toolscore.bfcl.jsonsafe import escape_surrogates, json_problem, loads, pointer
from toolscore.bfcl.schema import Node, SchemaError, ToolDraft, parameters, tool_args
from toolscore.bfcl.strings import standardize_answer, standardize_produced
from toolscore.errors import InputError
from toolscore.files import write_files
from toolscore.inputs.import_check import check_loads, import_files

VARIABLE_REASON = (
    "BFCL's answers hold values of another type than the doc's here (a variable name, say); "
    "BFCL compares them with ==, so the whole value is compared as JSON"
)
UNDOCUMENTED_REASON = "BFCL's answers name this argument, which the function doc lacks"


@dataclass
class _Record:
    line: int
    data: dict[str, Any]


@dataclass
class BfclImport:
    """A converted BFCL file: the spec (as `tools.yaml` holds it), the cases, and what the
    conversion had to decide (`notes`), with the counts the command prints."""

    spec: dict[str, Any]
    cases: list[dict[str, Any]]
    notes: list[str]
    provenance: dict[str, Any]
    counts: dict[str, int] = field(default_factory=dict)


def read_records(path: str) -> Iterator[_Record]:
    """The objects of a BFCL file: JSON Lines (as BFCL ships them) or one JSON array."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise InputError(path, f"cannot read: {reason or error}") from None
    if text.lstrip().startswith("["):
        items = _parsed(text, path, None)
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise InputError(path, f"item {index} is not a JSON object")
            yield _Record(index + 1, item)
        return
    # Lines end at "\n" only: `str.splitlines` would also cut at U+2028 or U+0085, which
    # JSON strings may hold as they are.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        item = _parsed(line, path, number)
        if not isinstance(item, dict):
            raise InputError(path, "each line must be a JSON object", line=number)
        yield _Record(number, item)


def _parsed(text: str, path: str, line: int | None) -> Any:
    """JSON text as Python's reader reads it (NaN, lone surrogates and long integers kept for
    `json_problem` to name); an input error where it is not JSON or is nested too deeply."""
    try:
        return loads(text)
    except json.JSONDecodeError as error:
        where = line if line is not None else error.lineno
        raise InputError(path, f"not valid JSON: {error.msg}", line=where) from None
    except RecursionError:
        raise InputError(path, "lists and objects nested too deeply to read", line=line) from None


def check_record(record: _Record, path: str) -> None:
    """An input error when a record holds a value toolscore's readers refuse (`jsonsafe`)."""
    problem = json_problem(record.data)
    if problem is not None:
        where, reason = problem
        raise InputError(path, reason, line=record.line, field=pointer(where) or None)


def _case_id(record: _Record, path: str) -> str:
    case_id = record.data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise InputError(path, "every entry needs a string id", line=record.line, field="id")
    return case_id


def _functions(record: _Record, path: str) -> list[Mapping[str, Any]]:
    functions = record.data.get("function")
    if isinstance(functions, dict):
        functions = [functions]
    if not isinstance(functions, list) or not all(
        isinstance(f, dict) and isinstance(f.get("name"), str) for f in functions
    ):
        raise InputError(
            path,
            "must be a list of function docs with a 'name'",
            line=record.line,
            field="function",
        )
    return functions


def _rename(name: str, underscore_names: bool) -> str:
    return name.replace(".", "_") if underscore_names else name


def import_bfcl(
    data_path: str,
    answers_path: str | None = None,
    *,
    bfcl_strings: bool = False,
    underscore_names: bool = False,
) -> BfclImport:
    """Convert a BFCL category file (and its possible answers) into a spec and cases.

    `bfcl_strings` normalises expected strings as BFCL's checker does (see `strings`);
    `underscore_names` writes tool names with `.` as `_`, as BFCL expects of models whose API
    forbids dots in function names. Raises InputError naming the file, line and field.
    """
    records = list(read_records(data_path))
    for record in records:
        check_record(record, data_path)
    answers = _answers(answers_path) if answers_path else {}
    notes: list[str] = []
    drafts: dict[str, ToolDraft] = {}
    cases: list[tuple[_Record, str, str, list[Mapping[str, Any]]]] = []
    seen: set[str] = set()
    for record in records:
        case_id = _case_id(record, data_path)
        if case_id in seen:
            raise InputError(data_path, f"duplicate id {case_id!r}", line=record.line, field="id")
        seen.add(case_id)
        category = category_of(case_id) or "?"
        refused = refusal(category)
        if refused:
            raise InputError(data_path, refused, line=record.line, field="id")
        functions = _functions(record, data_path)
        for function in functions:
            name = _rename(function["name"], underscore_names)
            where = f"function[{name}].parameters"
            try:
                args = tool_args(function, name, notes)
            except SchemaError as error:
                raise InputError(data_path, str(error), line=record.line, field=where) from None
            doc = json.dumps(function.get("parameters"), sort_keys=True)
            if name not in drafts:
                drafts[name] = ToolDraft(name, _text(function.get("description")), {})
            drafts[name].add(args, doc)
        cases.append((record, case_id, category, functions))
    if not drafts:
        raise InputError(data_path, "no function docs: not a BFCL category file")
    converted = _convert_cases(
        cases, answers, drafts, data_path, answers_path, notes, underscore_names, bfcl_strings
    )
    for name, draft in drafts.items():
        if len(draft.definitions) > 1:
            notes.append(
                f"tool {name}: {len(draft.definitions)} different docs merged into one spec"
            )
        if draft.dropped:
            listed = ", ".join(sorted(draft.dropped))
            notes.append(f"tool {name}: docs disagree on the default of {listed}; none used")
    spec = {
        "version": f"bfcl:{Path(data_path).name}",
        "tools": {name: draft.to_spec() for name, draft in drafts.items()},
    }
    check_loads(spec, converted, data_path)
    provenance = {
        "data": _source(data_path),
        "possible_answer": _source(answers_path) if answers_path else None,
        "options": {"bfcl_strings": bfcl_strings, "underscore_names": underscore_names},
    }
    counts = {
        "cases": len(converted),
        "tool_cases": sum(1 for c in converted if c["plans"]),
        "abstention_cases": sum(1 for c in converted if not c["plans"]),
        "tools": len(drafts),
        "merged_tools": sum(1 for d in drafts.values() if len(d.definitions) > 1),
        "several_plans": sum(1 for c in converted if len(c["plans"]) > 1),
        "unused_answers": len(set(answers) - seen),
    }
    return BfclImport(spec, converted, list(dict.fromkeys(notes)), provenance, counts)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _source(path: str) -> dict[str, str]:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return {"path": escape_surrogates(path), "sha256": digest}  # a path may not be UTF-8


def _answers(path: str) -> dict[str, tuple[int, Any]]:
    found: dict[str, tuple[int, Any]] = {}
    for record in read_records(path):
        check_record(record, path)
        case_id = _case_id(record, path)
        truth = record.data.get("ground_truth")
        if not isinstance(truth, list):
            raise InputError(
                path, "must be a list of calls", line=record.line, field="ground_truth"
            )
        found[case_id] = (record.line, truth)
    return found


def _ground_truth_calls(
    truth: list[Any], path: str, line: int, underscore_names: bool
) -> list[tuple[str, Mapping[str, Any]]]:
    calls: list[tuple[str, Mapping[str, Any]]] = []
    for index, call in enumerate(truth):
        if not isinstance(call, dict) or not call:
            raise InputError(
                path, "a call must be {name: {argument: [values]}}", line=line,
                field=f"ground_truth[{index}]",
            )  # fmt: skip
        for name, args in call.items():
            if not isinstance(args, dict):
                raise InputError(
                    path, "arguments must be an object", line=line,
                    field=f"ground_truth[{index}].{name}",
                )  # fmt: skip
            calls.append((_rename(name, underscore_names), args))
    return calls


def _convert_cases(
    cases: list[tuple[_Record, str, str, list[Mapping[str, Any]]]],
    answers: Mapping[str, tuple[int, Any]],
    drafts: dict[str, ToolDraft],
    data_path: str,
    answers_path: str | None,
    notes: list[str],
    underscore_names: bool,
    bfcl_strings: bool,
) -> list[dict[str, Any]]:
    source = answers_path or data_path
    prepared: list[
        tuple[_Record, str, str, list[tuple[str, Mapping[str, Any], Mapping[str, Any]]]]
    ] = []
    for record, case_id, category, functions in cases:
        docs = {_rename(f["name"], underscore_names): f for f in functions}
        calls: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = []
        if category not in ABSTENTION_CATEGORIES:
            if case_id not in answers:
                where = answers_path or "(no possible-answer file given)"
                raise InputError(
                    data_path, f"no possible answer for this case in {where}",
                    line=record.line, field="id",
                )  # fmt: skip
            line, truth = answers[case_id]
            for name, args in _ground_truth_calls(truth, source, line, underscore_names):
                if name not in docs:
                    raise InputError(
                        source, f"calls {name!r}, which the case's functions do not define",
                        line=line, field="ground_truth",
                    )  # fmt: skip
                if bfcl_strings:
                    args = _standardized(args)  # noqa: PLW2901 - the same answer, normalised
                calls.append((name, args, docs[name]))
                _refine(drafts[name], args, docs[name], case_id, notes)
        prepared.append((record, case_id, category, calls))
    if bfcl_strings:
        for draft in drafts.values():
            for node in draft.args.values():
                if "default" in node:
                    node["default"] = standardize_produced(node["default"])
    converted = []
    for record, case_id, category, calls in prepared:
        try:
            case_plans = _case_plans(calls, drafts)
        except AnswerError as error:
            raise InputError(
                source, f"case {case_id}: {error}", line=answers[case_id][0], field="ground_truth"
            ) from None
        case: dict[str, Any] = {"id": case_id, "prompt": _prompt(record.data.get("question"))}
        case["plans"] = case_plans
        case["tags"] = [category]
        converted.append(case)
    return converted


def _standardized(args: Mapping[str, Any]) -> dict[str, Any]:
    return {
        a: [standardize_answer(v) for v in alts] if isinstance(alts, list) else alts
        for a, alts in args.items()
    }


def _refine(
    draft: ToolDraft,
    args: Mapping[str, Any],
    doc: Mapping[str, Any],
    case_id: str,
    notes: list[str],
) -> None:
    """Give `exact` to arguments whose answers their rule cannot hold (see the module doc)."""
    properties, _ = parameters(doc)
    for arg, alts in args.items():
        options = alts if isinstance(alts, list) else [alts]
        values = [a for a in options if not is_omit(a)]
        node = draft.args.get(arg)
        if node is None:
            if values and not any(is_omit(a) for a in options):
                draft.args[arg] = {"kind": "exact", "reason": UNDOCUMENTED_REASON}
                notes.append(f"{draft.name}.{arg}: {UNDOCUMENTED_REASON} (case {case_id}); exact")
            continue
        if node["kind"] != "exact" and not all(fits(node, v, properties.get(arg)) for v in values):
            replaced: Node = {"kind": "exact", "reason": VARIABLE_REASON}
            if "default" in node:
                replaced["default"] = node["default"]
            draft.args[arg] = replaced
            notes.append(
                f"{draft.name}.{arg}: {node['kind']} -> exact: "
                f"values of another type in case {case_id}"
            )


def _case_plans(
    calls: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]], drafts: Mapping[str, ToolDraft]
) -> list[list[dict[str, Any]]]:
    if not calls:
        return []
    shaped = []
    for name, args, doc in calls:
        properties, required = parameters(doc)
        tool = drafts[name]
        options = []
        for arg, alts in args.items():
            node = tool.args.get(arg, {"kind": "exact"})
            try:
                choice = argument_options(arg, alts, node, properties.get(arg), arg in required)
            except AnswerError as error:
                raise AnswerError(f"{name}.{arg}: {error}") from None
            options.append((arg, choice))
        shaped.append((name, options))
    return plans(shaped)


def _prompt(question: Any) -> Any:
    """BFCL's question is a list of turns, each a list of messages; one turn is the prompt."""
    if isinstance(question, list) and len(question) == 1 and isinstance(question[0], list):
        return question[0]
    return question


def write_import(
    result: BfclImport, out_dir: str | Path, extra: Mapping[str, str] | None = None
) -> list[Path]:
    """Write `tools.yaml`, `cases.jsonl` and `import.json` (provenance, counts, notes), and
    any `extra` files by name, into `out_dir`: nothing is half-written (`files.write_files`)."""
    report = {**result.provenance, "counts": result.counts, "notes": result.notes}
    files = import_files(_yaml_header(result), result.spec, result.cases, dict(extra or {}), report)
    return write_files(out_dir, files)


def _yaml_header(result: BfclImport) -> str:
    data = _one_line(result.provenance["data"]["path"])
    answers = result.provenance.get("possible_answer")
    lines = [
        f"# Converted from BFCL by `toolscore import bfcl`: {data}"
        + (f" and {_one_line(answers['path'])}" if answers else ""),
        "# Rules follow the function docs' types; see import.json for every merge and choice.",
    ]
    if result.provenance["options"]["bfcl_strings"]:
        lines.append(
            "# --bfcl-strings: expected strings are normalised as BFCL's checker does (spaces and"
        )
        lines.append(
            "# ,./-_*^ removed, lower case); convert outputs with "
            "`import bfcl-outputs --bfcl-strings`."
        )
    return "\n".join(lines) + "\n"


def _one_line(path: str) -> str:
    """A path for a YAML comment: line breaks in it would end the comment."""
    return path.replace("\r", "\\r").replace("\n", "\\n")
