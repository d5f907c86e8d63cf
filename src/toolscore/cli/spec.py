"""`toolscore spec`: commands about spec files; `spec init` drafts one from tool
definitions or Python functions (the drafting is `toolscore.drafting`'s)."""

from __future__ import annotations

import click

from toolscore.cli.common import input_errors
from toolscore.escape import printable


@click.group("spec")
def spec_group() -> None:
    """Draft and manage spec files."""


@spec_group.command("init")
@click.argument("file", required=False)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(["openai", "anthropic", "gemini", "mcp", "bfcl"]),
    help="The format of FILE's tool definitions (default: told by its shape).",
)
@click.option("--out", "out_path", help="Write the draft here (default: stdout).")
@click.option(
    "--python",
    "python_ref",
    metavar="MODULE:FUNC[,FUNC...]",
    help="Draft from Python functions instead of FILE (the module is imported, nothing run).",
)
@click.option(
    "--cases",
    "cases_path",
    help="Also propose aliases and tolerances, in comments, from the values these cases use.",
)
@input_errors
def init_command(
    file: str | None,
    format_name: str | None,
    out_path: str | None,
    python_ref: str | None,
    cases_path: str | None,
) -> None:
    """Draft a spec from the tool definitions in FILE (OpenAI, Anthropic, Gemini, MCP
    tools/list, BFCL function docs), or from Python functions: every guess is commented and
    marked `draft:` for `toolscore lint` to list."""
    from toolscore.drafting import draft_spec  # noqa: PLC0415 - only `spec init` needs it
    from toolscore.files import write_output  # noqa: PLC0415

    if (file is None) == (python_ref is None):
        raise click.UsageError("give FILE or --python MODULE:FUNC (one of them)")
    if python_ref is not None and format_name is not None:
        raise click.UsageError("--format describes FILE; --python reads functions")
    drafted = draft_spec(file, format=format_name, python=python_ref, cases=cases_path)
    if out_path is None:
        click.echo(drafted.text, nl=False)
    else:
        write_output(out_path, drafted.text)
    draft = drafted.draft
    summary = (
        f"drafted {len(draft.tools)} tools from {draft.format} definitions; "
        f"{draft.guesses()} guesses to review (`toolscore lint` lists them)"
    )
    if cases_path is not None:
        summary += f"; {drafted.proposals} proposals from the cases, in comments"
    if out_path is not None:
        summary += f"; wrote {out_path}"
    click.echo(printable(summary), err=True)


def register(group: click.Group) -> None:
    """Add `spec` to the `toolscore` command group."""
    group.add_command(spec_group)
