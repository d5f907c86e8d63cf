"""`toolscore replay`: replay one case's calls against the store and show what they did."""

from __future__ import annotations

import sys

import click

from toolscore.cli.common import input_errors
from toolscore.cli.options import env_option, tool_timeout_option
from toolscore.core.model import Case
from toolscore.errors import InputError
from toolscore.escape import printable
from toolscore.inputs.paths import check_inputs
from toolscore.run import SPEC_ENVIRONMENT, environment
from toolscore.specs.loading import load_specs


@click.command("replay")
@click.option(
    "--specs",
    "specs_path",
    required=True,
    help="Spec file (its tools, and perhaps its environment).",
)
@env_option("The environment: the spec's own block (the default), or FILE's.", SPEC_ENVIRONMENT)
@click.option(
    "--outputs", "outputs_path", required=True, help="Outputs file (JSON Lines; '-' for stdin)."
)
@click.option("--case", "case_id", required=True, help="The id of the case to replay.")
@click.option("--cases", "cases_path", help="Cases file: its setup and goal state for the case.")
@click.option(
    "--choice",
    type=click.IntRange(0),
    metavar="N",
    help="The choice of a response object with several to replay (as score --choice).",
)
@tool_timeout_option
@input_errors
def replay_command(
    specs_path: str,
    env_path: str,
    outputs_path: str,
    case_id: str,
    cases_path: str | None,
    tool_timeout: float | None,
    choice: int | None = None,
) -> None:
    """Replay one case's calls against the store and print each call's outcome and the final
    state's difference from the goal (with --cases) or from the initial state."""
    import orjson  # noqa: PLC0415 - what only replay needs is imported here

    from toolscore.inputs.cases import read_cases  # noqa: PLC0415
    from toolscore.inputs.outputs import read_outputs  # noqa: PLC0415
    from toolscore.report.terminal import state_lines  # noqa: PLC0415
    from toolscore.scoring.case import score_case, scored_calls  # noqa: PLC0415
    from toolscore.state import check_state  # noqa: PLC0415
    from toolscore.state.replay import ReplayStoppedError  # noqa: PLC0415
    from toolscore.state.verdict import changes_from_start, replay_any  # noqa: PLC0415

    specs = load_specs(specs_path)
    check_inputs(("--outputs", outputs_path), ("--cases", cases_path))
    env = environment(specs, specs_path, env_path, tool_timeout)
    outputs = read_outputs(outputs_path, choice)
    trajectory = next((t for t in outputs if t.case_id == case_id), None)
    if trajectory is None:
        raise InputError(outputs_path, f"no output for case {case_id!r}", field="id")
    case = Case(case_id, ())
    if cases_path is not None:
        found = next((c for c in read_cases(cases_path, specs) if c.id == case_id), None)
        if found is None:
            raise InputError(cases_path, f"no case {case_id!r}", field="id")
        case = found
    out = sys.stdout
    try:
        final, outcomes = replay_any(env, case, trajectory.calls, cases_path or "<cases>")
    except ReplayStoppedError as stop:
        out.write(f"replay stopped at {stop}\n")
        return
    for outcome in outcomes:
        shown = (
            f"error: {outcome.error}" if outcome.error else orjson.dumps(outcome.result).decode()
        )
        out.write(printable(f"call {outcome.call} {outcome.name}: {shown}") + "\n")
    if "goal_state" in case.extra or "required_outputs" in case.extra:
        # the call verdict's pairing tells which call stands for a `$ref` output's label
        scored = scored_calls(case, trajectory, score_case(specs, case, trajectory))
        verdict = check_state(
            env,
            case,
            trajectory.calls,
            trajectory.response,
            source=cases_path or "",
            said=trajectory.said,
            scored=scored,
        )
        lines = state_lines(verdict) or ["nothing to check"]
    else:
        changes = changes_from_start(env, final)
        lines = ["changes from the initial state:"] + (changes or ["none"])
    out.write("".join(printable(line) + "\n" for line in lines))


def register(group: click.Group) -> None:
    """Add `replay` to the `toolscore` group."""
    group.add_command(replay_command)
