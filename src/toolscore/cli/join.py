"""`toolscore join`: a cases file and an outputs file joined by id into partitions, for an
engine that scores them (`score --engine ray --joined DIR`, or Dask or Spark)."""

from __future__ import annotations

import click

from toolscore.cli.common import console, input_errors
from toolscore.engines.partitions import FORMATS, ROWS_PER_PART, write_joined
from toolscore.escape import printable
from toolscore.inputs.converted import converted_inputs
from toolscore.inputs.paths import check_inputs


@click.command("join")
@click.option("--cases", "cases_path", required=True, help="Cases file ('-' for stdin).")
@click.option("--outputs", "outputs_path", required=True, help="Outputs file ('-' for stdin).")
@click.option("--out", "out_dir", required=True, metavar="DIR", help="Directory to write to.")
@click.option(
    "--rows-per-part",
    default=ROWS_PER_PART,
    show_default=True,
    type=click.IntRange(1),
    help="Joined records (cases) per part.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="jsonl",
    show_default=True,
    help="The parts' format (parquet needs pyarrow: the `parquet` extra).",
)
@input_errors
def join_command(
    cases_path: str, outputs_path: str, out_dir: str, rows_per_part: int, fmt: str
) -> None:
    """Join cases to outputs by id into parts of DIR, with DIR/join.json describing them."""
    check_inputs(("--cases", cases_path), ("--outputs", outputs_path))
    with converted_inputs(cases_path, outputs_path) as (cases, outputs):
        names = (cases_path, outputs_path)
        joined = write_joined(cases, outputs, out_dir, rows_per_part, fmt, names)
    out = console()
    out.print(
        printable(
            f"{joined.cases_count} cases in {len(joined.parts)} parts in {out_dir}; "
            f"{joined.missing_outputs} missing outputs, "
            f"{joined.unmatched_outputs} unmatched outputs"
        ),
        soft_wrap=True,
    )


def register(group: click.Group) -> None:
    """Add `join` to the `toolscore` command group."""
    group.add_command(join_command)
