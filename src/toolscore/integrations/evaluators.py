"""Evaluator functions in the shapes LangSmith's and Langfuse's experiment runners call, with
no dependency on either SDK: each scores one example's tool calls with `toolscore.check`.

Where the data lives, for both:
- the produced calls: the run's output, a mapping holding `calls`, a transcript
  (`messages`, `items`, `contents`, `spans`, `resourceSpans`, `mcp`) or a `stream`, with an
  optional `format`, `response` (text, or a provider's response object) and `choice`;
  other keys are ignored; or a provider's response object itself (its `model_dump()`), or
  holding any of these under `output` (LangSmith wraps a target's non-mapping return value
  so); a list of calls, messages or stream events is taken as is;
- the plans: the reference (LangSmith's `reference_outputs`, Langfuse's `expected_output`),
  a mapping with `plans` (and `score_turns` when the case has one), or for Langfuse also a
  plan or a list of plans as such, or `metadata["plans"]` when there is no expected output.

An example whose plans cannot be used raises the library's `CaseError`: the runner records
the evaluator's error, and the example is left unscored, not scored wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolscore.core.model import CaseResult
from toolscore.errors import CaseError, OutputError
from toolscore.inputs.formats import TRANSCRIPT_KEYS
from toolscore.inputs.formats.responses import shape_of
from toolscore.scoring.check import as_specs, check, failure_message

KEY = "tool_calls"
"""The name of the main result: 1 when the calls pass the case, else 0."""

PRODUCED_KEYS = ("calls", "stream", *TRANSCRIPT_KEYS)
"""Keys of a run's output that hold what the agent did (and `response`, a response object)."""
LINE_KEYS = (*PRODUCED_KEYS, "format", "response", "choice")
"""Keys of a run's output read as an outputs line; the others are the harness's own."""
CASE_KEYS = ("plans", "score_turns")
"""Keys of a reference read as a case."""


def tool_calls_evaluator(
    specs: Any, *, per_metric: bool = False
) -> Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]:
    """A LangSmith evaluator `(outputs, reference_outputs) -> dict`: `{"key": "tool_calls",
    "score": 1 or 0, "comment": why}`; with `per_metric`, `{"results": [that, and the
    name, argument or abstention result of the case]}`. `specs` is read once, here."""
    spec_set = as_specs(specs)

    def tool_calls(
        outputs: Mapping[str, Any], reference_outputs: Mapping[str, Any]
    ) -> dict[str, Any]:
        result = check(
            spec_set, case_of(reference_outputs, "reference_outputs"), produced_of(outputs)
        )
        main = {"key": KEY, "score": int(result.passed), "comment": comment(result)}
        if not per_metric:
            return main
        extra = [{"key": key, "score": value} for key, value in metrics(result).items()]
        return {"results": [main, *extra]}

    return tool_calls


class Evaluation(dict[str, Any]):
    """One result for Langfuse: a dict with the keys of Langfuse's `Evaluation` (name, value,
    comment, metadata, data_type, config_id), readable as its attributes too, which is how
    Langfuse's experiment runner reads what an evaluator returns."""

    @property
    def name(self) -> str:
        return str(self["name"])

    @property
    def value(self) -> float:
        return float(self["value"])

    @property
    def comment(self) -> str | None:
        comment: str | None = self.get("comment")
        return comment

    @property
    def metadata(self) -> dict[str, Any] | None:
        metadata: dict[str, Any] | None = self.get("metadata")
        return metadata

    @property
    def data_type(self) -> str | None:
        return None  # numeric, Langfuse's default

    @property
    def config_id(self) -> str | None:
        return None


def langfuse_evaluator(
    specs: Any, *, per_metric: bool = False
) -> Callable[..., Evaluation | list[Evaluation]]:
    """A Langfuse evaluator `(*, input, output, expected_output, metadata, **kwargs)`
    returning an `Evaluation` named `tool_calls` (value 1.0 or 0.0, the mismatches as its
    comment); with `per_metric`, a list: that one, then the case's name, argument or
    abstention result. `specs` is read once, here."""
    spec_set = as_specs(specs)

    def tool_calls(
        *,
        input: Any = None,
        output: Any,
        expected_output: Any = None,
        metadata: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Evaluation | list[Evaluation]:
        plans = expected_output
        if plans is None and metadata is not None and "plans" in metadata:
            plans = {"plans": metadata["plans"]}
        result = check(spec_set, case_of(plans, "expected_output"), produced_of(output))
        main = Evaluation(
            name=KEY,
            value=float(result.passed),
            comment=comment(result),
            metadata={"codes": [m.code for m in result.mismatches], "plan": result.plan},
        )
        if not per_metric:
            return main
        extra = [Evaluation(name=key, value=float(v)) for key, v in metrics(result).items()]
        return [main, *extra]

    return tool_calls


def produced_of(output: Any) -> Any:
    """What the agent did, from a run's output (see the module's docstring)."""
    if not isinstance(output, Mapping):
        return output
    if shape_of(output) is not None:  # the response object the target returned, dumped
        return {key: value for key, value in output.items() if key != "id"}
    if any(output.get(key) is not None for key in PRODUCED_KEYS) or shape_of(
        output.get("response")
    ):
        return {key: output[key] for key in LINE_KEYS if key in output}
    if "output" in output:
        return produced_of(output["output"])
    keys = ", ".join(PRODUCED_KEYS)
    raise OutputError("<outputs>", f"the run's output holds no calls and no transcript ({keys})")


def case_of(reference: Any, where: str) -> Any:
    """The case from a reference: its `plans` (and `score_turns`), or the plans as such."""
    if reference is None:
        raise CaseError(f"<{where}>", "no plans: the example needs its expected calls")
    if isinstance(reference, Mapping):
        if "plans" not in reference:
            raise CaseError(
                f"<{where}>",
                "needs the case's plans (use [] when no call is expected)",
                field="plans",
            )
        return {key: reference[key] for key in CASE_KEYS if key in reference}
    return reference


def comment(result: CaseResult) -> str:
    """Why the case passed or failed, in the words of `toolscore score`."""
    if not result.passed:
        return failure_message(result)
    if result.kind == "abstention":
        return "no call, as the case expects"
    return f"every call matches plan {result.plan}"


def metrics(result: CaseResult) -> dict[str, float]:
    """The case's share in the metrics `score` reports: name accuracy for a case that expects
    calls, argument accuracy over its paired calls (when some were paired), abstention
    accuracy for one that expects none (docs/formats.md 7.2)."""
    if result.kind == "abstention":
        return {"abstention": float(result.passed)}
    found = {(m.plan_call, m.call) for m in result.mismatches}
    values = {"tool_names": float(result.name_ok)}
    if result.pairs:
        right = sum(pair not in found for pair in result.pairs)
        values["tool_arguments"] = right / len(result.pairs)
    return values
