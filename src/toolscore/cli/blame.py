"""`toolscore blame`: for each case whose verdict changed between two stored runs, the spec
change that flipped it."""

from __future__ import annotations

import click
import orjson

from toolscore.cli.common import console, input_errors
from toolscore.cli.options import db_option
from toolscore.escape import printable
from toolscore.files import write_output


@click.command("blame")
@click.argument("run_a")
@click.argument("run_b")
@click.argument("case", required=False)
@click.option("--json", "json_path", metavar="PATH", help="Also write the blame as JSON.")
@db_option
@input_errors
def blame_command(
    run_a: str, run_b: str, case: str | None, json_path: str | None, db_path: str | None
) -> None:
    """For each case whose verdict changed from stored run RUN_A to RUN_B (or CASE alone),
    the spec change that flipped it: tool, argument, old and new rule, tool versions, found by
    re-scoring the case under each single change between the two runs' specs."""
    from toolscore.audit.blame import blame  # noqa: PLC0415 - only `blame` needs it
    from toolscore.audit.terminal import render_blame  # noqa: PLC0415
    from toolscore.store import open_store  # noqa: PLC0415

    with open_store(db_path, read_only=True) as store:
        a, b, blames = blame(store, run_a, run_b, case)
    if json_path is not None:
        data = [entry.to_json() for entry in blames]
        write_output(json_path, orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    head = (
        f"blame run {a.id} (specs {a.specs_version or 'unversioned'} {a.specs_sha256[:8]}) -> "
        f"run {b.id} (specs {b.specs_version or 'unversioned'} {b.specs_sha256[:8]}): "
        f"{len(blames)} verdicts changed"
    )
    render_blame(console(), blames, head)
    if json_path is not None:
        console().print(printable(f"wrote {json_path}"))


def register(group: click.Group) -> None:
    """Add `blame` to the `toolscore` command group."""
    group.add_command(blame_command)
