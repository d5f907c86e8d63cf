"""`toolscore schema spec|cases|outputs [--out PATH]`: the JSON Schema of a format, for
editors (completion and validation as you type), printed or written."""

from __future__ import annotations

import click

from toolscore.cli.common import input_errors
from toolscore.files import write_output


@click.command("schema")
@click.argument("name", type=click.Choice(["spec", "cases", "outputs"]))
@click.option("--out", "out_path", metavar="PATH", help="Write the schema here, not to stdout.")
@input_errors
def schema_command(name: str, out_path: str | None) -> None:
    """Print the JSON Schema (draft 2020-12) of the spec, cases or outputs format: a spec
    file, one case, one outputs line. The same file ships in the package
    (toolscore/schemas/NAME.schema.json)."""
    from toolscore.schemas import generate, render  # noqa: PLC0415

    text = render(generate(name))
    if out_path is None:
        click.echo(text, nl=False)
    else:
        write_output(out_path, text)
        click.echo(f"wrote {out_path}", err=True)


def register(group: click.Group) -> None:
    """Add `schema` to the `toolscore` command group."""
    group.add_command(schema_command)
