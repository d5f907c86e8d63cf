"""`toolscore import tau2-bench` and `toolscore import tau2-bench-results`: a tau2-bench
checkout's domain, and its saved simulations, in toolscore's formats.

The commands only parse options, call `toolscore.tau2` (imported when a command runs) and
print; input errors are one line on stderr with exit status 2 (`input_errors`).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from toolscore.cli.common import echo_written, input_errors
from toolscore.cli.options import outputs_out_option
from toolscore.files import write_output


def register(group: click.Group) -> None:
    """Add `tau2-bench` and `tau2-bench-results` to the `import` group."""
    group.add_command(import_tau2_command)
    group.add_command(import_results_command)


@click.command("tau2-bench")
@click.argument("repo")
@click.option("--domain", required=True, help="The domain: airline, retail or telecom.")
@click.option(
    "--tasks",
    "tasks_file",
    default="tasks.json",
    show_default=True,
    help="The task file of the domain's data folder (telecom also has tasks_small.json).",
)
@click.option(
    "--out", "out_dir", required=True, help="Directory to write the spec, cases and modules to."
)
@click.option(
    "--judge-url",
    default=None,
    help="An OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1) to judge the tasks' "
    "nl_assertions as response rubrics; with --judge-model.",
)
@click.option("--judge-model", default=None, help="The model that judges the nl_assertions.")
@click.option(
    "--judge-key-env",
    default=None,
    help="The environment variable holding the judge endpoint's key (none for a local server).",
)
@input_errors
def import_tau2_command(
    repo: str,
    domain: str,
    tasks_file: str,
    out_dir: str,
    judge_url: str | None,
    judge_model: str | None,
    judge_key_env: str | None,
) -> None:
    """Convert a domain of the tau2-bench checkout REPO into a spec with a documents
    environment, cases, and the modules that call the checkout's own tools under --env.
    With --judge-url and --judge-model the tasks' nl_assertions become judge rubrics on the
    agent's response, reported apart from the verdict; without, they are kept unscored.

    Nothing of REPO runs here (its tools are read with ast, its tasks as JSON)."""
    from toolscore.tau2 import import_tau2, write_import  # noqa: PLC0415
    from toolscore.tau2.importer import Judge  # noqa: PLC0415

    judge = None
    if (judge_url is None) != (judge_model is None):
        given, missing = ("--judge-url", "--judge-model")[:: 1 if judge_model is None else -1]
        raise click.UsageError(f"{given} needs {missing} too")
    if judge_key_env is not None and judge_url is None:
        raise click.UsageError("--judge-key-env needs --judge-url and --judge-model")
    if judge_url is not None and judge_model is not None:
        judge = Judge(judge_url, judge_model, judge_key_env)
    result = import_tau2(repo, domain, tasks_file, judge)
    written = write_import(result, out_dir)
    counts = result.counts
    click.echo(
        f"{counts['cases']} cases ({counts['actions']} agent actions, {counts['user_actions']} "
        f"user actions left out; {counts['cases_with_goal_state']} with a goal state, "
        f"{counts['cases_with_outputs']} with required outputs), {counts['tools']} tools"
    )
    if counts["nl_assertions_judged"]:
        click.echo(
            f"{counts['nl_assertions_judged']} nl assertions as response rubrics of the judge "
            f"tau2_nl_assertion ({counts['cases_nl_in_reward_basis']} cases score them in tau2), "
            "reported apart from the verdict"
        )
    click.echo(
        f"kept, not scored: {counts['nl_assertions_unscored']} nl assertions"
        + (
            ""
            if counts["nl_assertions_judged"]
            else f" ({counts['cases_nl_in_reward_basis']} cases score them in tau2;"
            " --judge-url and --judge-model judge them)"
        )
        + ", "
        f"{counts['env_assertions_kept']} env assertions "
        f"({counts['cases_env_assertion_in_reward_basis']} cases), communicate_info outside the "
        f"reward basis in {counts['cases_unscored_communicate_info']} cases, ACTION basis in "
        f"{counts['cases_action_in_reward_basis']} cases"
    )
    echo_written(written, result.notes)


@click.command("tau2-bench-results")
@click.argument("results_json")
@outputs_out_option
@input_errors
def import_results_command(results_json: str, out_path: str) -> None:
    """Convert a tau2-bench results file (its saved simulations, every trial) into an
    outputs file."""
    from toolscore.tau2.results import Counts, convert_results  # noqa: PLC0415

    counts = Counts()
    lines = [json.dumps(line) + "\n" for line in convert_results(results_json, counts)]
    write_output(out_path, "".join(lines))
    click.echo(
        f"{counts.lines} outputs ({counts.calls} agent tool calls; {counts.user_calls} user "
        f"tool calls left out; {counts.premature} ended early, which tau2 gives reward 0); "
        f"wrote {Path(out_path)}"
    )
