"""`toolscore import bfcl` and `toolscore import bfcl-outputs`: BFCL data and model outputs
in toolscore's formats.

The commands only parse options, call `toolscore.bfcl`, and turn its input errors into one
line on stderr with exit status 2; nothing is half-written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from toolscore.bfcl import convert_results, import_bfcl, write_import
from toolscore.bfcl.importer import read_records
from toolscore.bfcl.multiturn import import_multi_turn, is_multi_turn, write_multi_turn
from toolscore.bfcl.multiturn_results import convert_multi_turn_results, is_multi_turn_result
from toolscore.bfcl.results import dumps
from toolscore.cli.common import echo_written, input_errors
from toolscore.cli.options import outputs_out_option
from toolscore.files import write_output

F = TypeVar("F", bound=Callable[..., Any])


def register(group: click.Group) -> None:
    """Add the `import` command group (with `bfcl`, `bfcl-outputs`, and tau-bench's and
    tau2-bench's commands) to `group`."""
    from toolscore.cli import tau2, taubench  # noqa: PLC0415

    taubench.register(import_group)
    tau2.register(import_group)
    group.add_command(import_group)


@click.group("import")
def import_group() -> None:
    """Convert another benchmark's data and model outputs into toolscore's formats."""


@import_group.command("bfcl")
@click.argument("data_json")
@click.argument("possible_answer_json", required=False)
@click.option(
    "--out", "out_dir", required=True, help="Directory to write tools.yaml and cases.jsonl to."
)
@click.option(
    "--bfcl-strings",
    is_flag=True,
    help="Normalise expected strings as BFCL's checker does (lower case, no spaces or "
    ",./-_*^), for parity with BFCL; convert outputs with the same option.",
)
@click.option(
    "--underscore-names",
    is_flag=True,
    help="Write tool names with '.' as '_', for models whose API forbids dots in names.",
)
@click.option(
    "--classes-module",
    default="bfcl-eval",
    show_default=True,
    help="Multi-turn: where the state classes come from at replay (a module name, a .py "
    "path, or the installed bfcl-eval package's).",
)
@click.option(
    "--func-docs",
    default=None,
    help="Multi-turn: the folder of the classes' function docs (default: "
    "multi_turn_func_doc/ beside DATA_JSON).",
)
@click.option(
    "--per-turn",
    is_flag=True,
    help="Multi-turn: the older layout, a case per turn with calls holding the ground truth "
    "of the turns so far, instead of a conversation case per entry; convert outputs with "
    "the same option.",
)
@input_errors
def import_bfcl_command(
    data_json: str,
    possible_answer_json: str | None,
    out_dir: str,
    bfcl_strings: bool,
    underscore_names: bool,
    classes_module: str,
    func_docs: str | None,
    per_turn: bool,
) -> None:
    """Convert a BFCL category file and its possible answers into a spec and cases.

    DATA_JSON is a category file (e.g. BFCL_v4_simple_python.json), POSSIBLE_ANSWER_JSON the
    file of the same name under possible_answer/ (none for the irrelevance categories).
    A multi-turn category also gets a documents environment (bfcl_env.py) in the spec.
    """
    if is_multi_turn(data_json):
        multi, module_text = import_multi_turn(
            data_json, possible_answer_json, classes_module=classes_module,
            docs_dir=func_docs, out_dir=out_dir, per_turn=per_turn,
        )  # fmt: skip
        written = write_multi_turn(multi, module_text, out_dir)
        counts = multi.counts
        layout = "one per turn with calls" if per_turn else "conversations, one per entry"
        click.echo(
            f"{counts['entries']} multi-turn entries: {counts['cases']} cases ({layout}), "
            f"{counts['tools']} tools"
        )
        echo_written(written)
        return
    result = import_bfcl(
        data_json,
        possible_answer_json,
        bfcl_strings=bfcl_strings,
        underscore_names=underscore_names,
    )
    written = write_import(result, out_dir)
    counts = result.counts
    click.echo(
        f"{counts['cases']} cases ({counts['tool_cases']} with calls, "
        f"{counts['abstention_cases']} abstentions), {counts['tools']} tools "
        f"({counts['merged_tools']} merged from several docs), "
        f"{counts['several_plans']} cases with alternative plans for omittable arguments"
    )
    if counts["unused_answers"]:
        click.echo(f"{counts['unused_answers']} possible answers match no case and were skipped")
    echo_written(written, result.notes)


@import_group.command("bfcl-outputs")
@click.argument("result_json")
@outputs_out_option
@click.option(
    "--bfcl-strings",
    is_flag=True,
    help="Normalise produced strings as BFCL's checker does (for cases imported with it).",
)
@click.option(
    "--per-turn",
    is_flag=True,
    help="Multi-turn: the older layout, a line per turn with the calls of the turns so far "
    "(for cases imported with --per-turn).",
)
@input_errors
def import_bfcl_outputs_command(
    result_json: str, out_path: str, bfcl_strings: bool, per_turn: bool
) -> None:
    """Convert a BFCL result file (function-calling or prompting form) into an outputs file."""
    lines = []
    calls = malformed = empty = 0
    first = next((r.data for r in read_records(result_json)), {})
    converted = (
        convert_multi_turn_results(result_json, per_turn)
        if is_multi_turn_result(first)
        else convert_results(result_json, bfcl_strings)
    )
    for line in converted:
        lines.append(dumps(line) + "\n")
        turns = line.get("turns", [line])  # a multi-turn line holds its calls by turn
        made = [call for turn in turns for call in turn["calls"]]
        calls += len(made)
        malformed += sum(1 for c in made if isinstance(c, dict) and "error" in c)
        empty += not made
    write_output(out_path, "".join(lines))
    target = Path(out_path)
    click.echo(
        f"{len(lines)} outputs: {calls} calls ({malformed} unreadable, scored as failures), "
        f"{empty} without a call; wrote {target}"
    )
