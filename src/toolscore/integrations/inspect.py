"""An Inspect AI scorer that judges a sample's tool calls with toolscore's per-tool rules.

`tool_calls(specs)` reads the calls the model made in the sample's messages (after the last
user message, as `score` does for a transcript) and scores them against the sample's plans,
in its metadata or its target (inspect_plans.py). The score's value holds `passed`, `name`,
`arguments` and `abstention` (NaN where the sample has none of that kind, which Inspect leaves
out of the metric) and the argument pairs behind `arguments`; its answer is the calls made,
its explanation the mismatches as `toolscore score` prints them. The log's first metric, which
Inspect shows as the run's headline, is the case accuracy; argument accuracy over paired calls
follows, then the accuracy of each key of the value.

Inspect finds the scorer as `toolscore/tool_calls` through the `inspect_ai` entry point,
which imports this module. This module imports inspect_ai; `import toolscore` never does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from toolscore.core.diagnosis import mismatch_line
from toolscore.core.model import Call, Case, CaseResult
from toolscore.inputs.calls import json_text
from toolscore.inputs.cases import parse_case
from toolscore.inputs.formats import read_transcript
from toolscore.inputs.inspect_plans import PlansError, case_data
from toolscore.scoring.case import score_case
from toolscore.scoring.summary import SummaryBuilder
from toolscore.specs.loading import SpecSet, load_specs

__all__ = ["argument_accuracy", "case_accuracy", "tool_calls"]

NAN = float("nan")


@metric
def case_accuracy() -> Metric:
    """Passed samples over all samples: `score`'s accuracy, the scorer's first metric, so that
    Inspect shows it as the run's headline (the first metric of the first score)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [sample.score.value for sample in scores]
        passed = [_number(v.get("passed")) for v in values if isinstance(v, Mapping)]
        return sum(passed) / len(passed) if passed else NAN

    return compute


@metric
def argument_accuracy() -> Metric:
    """Passed argument pairs over all pairs, counted across samples as `score` counts them
    (a per-sample mean would weigh a one-call sample like a ten-call one)."""

    def compute(scores: list[SampleScore]) -> float:
        passed = total = 0.0
        for sample in scores:
            value = sample.score.value
            if isinstance(value, Mapping):
                passed += _number(value.get("arguments_passed"))
                total += _number(value.get("argument_pairs"))
        return passed / total if total else NAN

    return compute


@scorer(
    metrics=[
        case_accuracy(),
        argument_accuracy(),
        {"passed": [accuracy(), stderr()], "name": [accuracy()], "abstention": [accuracy()]},
    ]
)
def tool_calls(specs: str | Path | SpecSet, plans_key: str = "plans") -> Scorer:
    """Score each sample's tool calls against its plans under the tool specs `specs` (a spec
    file's path, as `inspect score ... -S specs=tools.yaml` passes it, or a loaded SpecSet).
    `plans_key` names the metadata key that holds the plans."""
    spec_set = specs if isinstance(specs, SpecSet) else load_specs(specs)

    async def score(state: TaskState, target: Target) -> Score:
        case_id = str(state.sample_id)
        case = _case(spec_set, case_id, state.metadata, target, plans_key)
        messages = [message.model_dump(mode="json") for message in state.messages]
        source = f"sample {case_id}"
        line = {"id": case_id, "format": "inspect", "messages": messages}
        result = score_case(spec_set, case, read_transcript(line, source))
        return _score(spec_set, case, result)

    return score


def _case(
    specs: SpecSet, case_id: str, metadata: Mapping[str, Any], target: Target, key: str
) -> Case:
    """The sample as a toolscore case: its plans from the metadata, else from the target."""
    try:
        data, where = case_data(target.target, metadata, key)
    except PlansError as error:
        raise ValueError(f"sample {case_id}: {error}") from None
    data["id"] = case_id
    return parse_case(data, specs, f"sample {case_id} ({where})")


def _score(specs: SpecSet, case: Case, result: CaseResult) -> Score:
    tally = SummaryBuilder(specs)
    tally.add(case, result)
    tool_case = result.kind == "tool"
    value: dict[str, float] = {
        "passed": float(result.passed),
        "name": float(result.name_ok) if tool_case else NAN,
        "arguments": tally.arg_ok / tally.arg_n if tally.arg_n else NAN,
        "abstention": NAN if tool_case else float(result.passed),
        "argument_pairs": float(tally.arg_n),
        "arguments_passed": float(tally.arg_ok),
    }
    lines = [mismatch_line(m) for m in result.mismatches]
    return Score(
        value=value,
        answer="\n".join(map(_call_text, result.calls)),
        explanation="\n".join(lines) if lines else "passed",
        metadata={
            "plan": result.plan,
            "mismatches": [m.code for m in result.mismatches],
            "notes": list(result.notes),
            "unread": list(result.unread),
        },
    )


def _call_text(call: Call) -> str:
    args = call.args if call.args is not None else call.raw_args
    return f"{call.name}({json_text(args)})"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not math.isnan(value) else 0.0
