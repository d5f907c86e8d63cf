"""`toolscore import tau-bench` and `toolscore import tau-bench-results`: a tau-bench
checkout's domain, and its saved trajectories, in toolscore's formats.

The commands only parse options, call `toolscore.taubench` (imported when a command runs;
with `--as-checks`, `lint.suggest` on the written import too) and print; input errors are
one line on stderr with exit status 2 (`input_errors`).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from toolscore.cli.common import echo_written, input_errors
from toolscore.cli.options import outputs_out_option
from toolscore.files import write_output


def register(group: click.Group) -> None:
    """Add `tau-bench` and `tau-bench-results` to the `import` group."""
    group.add_command(import_taubench_command)
    group.add_command(import_results_command)


@click.command("tau-bench")
@click.argument("repo")
@click.option("--domain", required=True, help="The domain: retail or airline.")
@click.option(
    "--split", default="test", show_default=True, help="The task split: test, dev or train."
)
@click.option(
    "--out", "out_dir", required=True, help="Directory to write the spec, cases and modules to."
)
@click.option(
    "--as-checks",
    is_flag=True,
    help="Write each task's goal as state checks on the paths its annotated actions change "
    "(replayed on the checkout's data), where that can be said.",
)
@input_errors
def import_taubench_command(
    repo: str, domain: str, split: str, out_dir: str, as_checks: bool
) -> None:
    """Convert a domain of the tau-bench checkout REPO into a spec with a documents
    environment, cases, and the modules that call the checkout's own tools under --env.

    Nothing of REPO runs here (its schemas and tasks are read as literals), except with
    --as-checks, which replays each task's actions through the checkout's tools."""
    from toolscore.taubench import import_taubench, write_import  # noqa: PLC0415

    result = import_taubench(repo, domain, split)
    written = write_import(result, out_dir)
    if as_checks:
        from toolscore.lint.suggest import suggest_file  # noqa: PLC0415
        from toolscore.run import SPEC_ENVIRONMENT, environment  # noqa: PLC0415
        from toolscore.taubench.importer import with_checks  # noqa: PLC0415

        specs_path = str(Path(out_dir) / "tools.yaml")
        found = {
            s.case_id: (s.checks, s.notes)
            for s in suggest_file(
                specs_path,
                Path(out_dir) / "cases.jsonl",
                lambda specs: environment(specs, specs_path, SPEC_ENVIRONMENT),
            )
        }
        result = with_checks(result, found)
        written = write_import(result, out_dir)
    counts = result.counts
    click.echo(
        f"{counts['cases']} cases ({counts['actions']} annotated actions, "
        f"{counts['cases_with_outputs']} with required outputs, "
        f"{counts['cases_without_actions']} without actions), {counts['tools']} tools"
    )
    if as_checks:
        click.echo(
            f"goals as state checks: {counts['cases_as_checks']} cases "
            f"({counts['state_checks']} checks); goal_state plan kept for "
            f"{counts['cases_kept_plan_unchanged']} whose actions change nothing and "
            f"{counts['cases_kept_plan_not_checks']} whose changes checks cannot say"
        )
    echo_written(written, result.notes)


@click.command("tau-bench-results")
@click.argument("results_json")
@outputs_out_option
@input_errors
def import_results_command(results_json: str, out_path: str) -> None:
    """Convert a tau-bench results file (its saved trajectories, every trial) into an
    outputs file."""
    from toolscore.taubench.results import Counts, convert_results  # noqa: PLC0415

    counts = Counts()
    lines = [json.dumps(line) + "\n" for line in convert_results(results_json, counts)]
    write_output(out_path, "".join(lines))
    target = Path(out_path)
    click.echo(
        f"{counts.lines} outputs ({counts.calls} tool calls; {counts.dropped_texts} assistant "
        f"texts beside a tool call dropped, as tau-bench's reward never reads them); wrote {target}"
    )
