"""The LangSmith- and Langfuse-style evaluator functions, called the way their runners call
them, on payloads shaped like theirs; LangSmith's own wrapper too where it is installed."""

from __future__ import annotations

import datetime
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from imported_modules import modules_after, optional_among
from toolscore import CaseError, OutputError, load_specs, read_cases, read_outputs, score
from toolscore.integrations.evaluators import (
    CASE_KEYS,
    Evaluation,
    langfuse_evaluator,
    tool_calls_evaluator,
)

ROOT = Path(__file__).parents[2]
TRANSCRIPTS = ROOT / "examples" / "transcripts"
SPECS = TRANSCRIPTS / "tools.yaml"

REFUND = {"name": "refund", "args": {"order_id": "order-77", "amount": 12.5, "unit": "EUR"}}
REFERENCE = {"plans": [[REFUND]], "answer": "Refunded 12.50 EUR."}


def chat_run(arguments: str) -> dict[str, Any]:
    """A LangSmith run's outputs: the agent's OpenAI messages beside its final answer."""
    return {
        "answer": "Done.",
        "messages": [
            {"role": "user", "content": "Refund the 12.50 EUR of order-77 please."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "refund", "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'},
            {"role": "assistant", "content": "Done."},
        ],
    }


def anthropic_output(amount: float) -> list[dict[str, Any]]:
    """A Langfuse task's output: the Anthropic messages of the conversation."""
    return [
        {"role": "user", "content": "Refund the 12.50 EUR of order-77 please."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Refunding."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "refund",
                    "input": {"order_id": "order-77", "amount": amount, "unit": "euro"},
                },
            ],
        },
    ]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_langsmith_passes_and_says_why() -> None:
    evaluate = tool_calls_evaluator(SPECS)
    good = evaluate(chat_run('{"order_id": "order-77", "amount": 12.501}'), REFERENCE)
    assert good == {"key": "tool_calls", "score": 1, "comment": "every call matches plan 0"}


def test_langsmith_fails_with_the_mismatches() -> None:
    evaluate = tool_calls_evaluator(SPECS)
    bad = evaluate(chat_run('{"order_id": "ORDER-77", "amount": "12.5"}'), REFERENCE)
    assert bad["key"] == "tool_calls"
    assert bad["score"] == 0
    assert bad["comment"].splitlines()[1:] == [
        "  value_mismatch call 0 /order_id [exact]: 'ORDER-77' does not equal 'order-77' exactly",
        "  type_mismatch call 0 /amount [number tol=0.005]: expected a number, got string '12.5'",
    ]


def test_langsmith_per_metric_results() -> None:
    evaluate = tool_calls_evaluator(SPECS, per_metric=True)
    bad = evaluate(chat_run('{"order_id": "order-77", "amount": 99}'), REFERENCE)
    assert [(r["key"], r["score"]) for r in bad["results"]] == [
        ("tool_calls", 0),
        ("tool_names", 1.0),
        ("tool_arguments", 0.0),
    ]
    none = evaluate({"messages": [{"role": "assistant", "content": "No."}]}, {"plans": []})
    assert [(r["key"], r["score"]) for r in none["results"]] == [
        ("tool_calls", 1),
        ("abstention", 1.0),
    ]
    missed = evaluate({"calls": []}, REFERENCE)
    assert [(r["key"], r["score"]) for r in missed["results"]] == [
        ("tool_calls", 0),
        ("tool_names", 0.0),
    ]  # nothing paired: no argument result


def test_langsmith_reads_a_wrapped_output_and_the_case_keys() -> None:
    evaluate = tool_calls_evaluator(SPECS)
    wrapped = {"output": [{"name": "refund", "args": REFUND["args"]}]}
    assert evaluate(wrapped, REFERENCE)["score"] == 1
    two_turns = {
        "messages": [
            {"role": "user", "content": "Refund order-77"},
            {"role": "assistant", "tool_calls": chat_run("{}")["messages"][1]["tool_calls"]},
            {"role": "user", "content": "thanks"},
        ]
    }
    assert evaluate(two_turns, {"plans": []})["score"] == 1  # the last turn made no call
    assert evaluate(two_turns, {"plans": [], "score_turns": "all"})["score"] == 0


@pytest.mark.parametrize(
    ("outputs", "reference", "error", "message"),
    [
        (chat_run("{}"), {"answer": "x"}, CaseError, "<reference_outputs>: plans: needs the"),
        (chat_run("{}"), {"plans": [[{"name": "nope"}]]}, CaseError, "<plans>: plans[0][0].name"),
        ({"answer": "x"}, REFERENCE, OutputError, "<outputs>: the run's output holds no calls"),
        ({"calls": "refund"}, REFERENCE, OutputError, "<produced>: calls: must be a list"),
    ],
)
def test_langsmith_refuses_what_it_cannot_score(
    outputs: dict[str, Any], reference: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        tool_calls_evaluator(SPECS)(outputs, reference)
    assert str(raised.value).startswith(message)


def test_langsmiths_own_wrapper_takes_the_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangSmith's `evaluate()` wraps a function with `run_evaluator`, passing arguments by
    name; its results become `EvaluationResult`s (offline: nothing is sent)."""
    evaluator_module = pytest.importorskip("langsmith.evaluation.evaluator")
    schemas = pytest.importorskip("langsmith.schemas")
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    now = datetime.datetime.now(datetime.UTC)
    run = schemas.Run(
        id=uuid.uuid4(), name="agent", start_time=now, run_type="chain", trace_id=uuid.uuid4(),
        inputs={"question": "Refund order-77"},
        outputs=chat_run('{"order_id": "order-77", "amount": "12.5"}'),
    )  # fmt: skip
    example = schemas.Example(
        id=uuid.uuid4(), dataset_id=uuid.uuid4(), created_at=now,
        inputs={"question": "Refund order-77"}, outputs=REFERENCE,
    )  # fmt: skip
    wrapped = evaluator_module.run_evaluator(tool_calls_evaluator(SPECS, per_metric=True))
    found = wrapped.evaluate_run(run, example)
    results = {r.key: r for r in found["results"]}
    assert {key: r.score for key, r in results.items()} == {
        "tool_calls": 0,
        "tool_names": 1.0,
        "tool_arguments": 0.0,
    }
    assert "type_mismatch call 0 /amount [number tol=0.005]" in results["tool_calls"].comment


def test_langfuse_evaluation_reads_as_dict_and_as_attributes() -> None:
    evaluate = langfuse_evaluator(SPECS)
    good = evaluate(
        input="Refund the 12.50 EUR of order-77 please.",
        output=anthropic_output(12.5),
        expected_output={"plans": [[REFUND]]},
        metadata={"source": "support-tickets"},
        trace_id="abc",  # runners may pass more keywords
    )
    assert isinstance(good, Evaluation)
    assert (good.name, good.value, good.comment) == ("tool_calls", 1.0, "every call matches plan 0")
    assert good["metadata"] == {"codes": [], "plan": 0}
    assert (good.data_type, good.config_id) == (None, None)


def test_langfuse_fails_with_the_mismatches_and_metrics() -> None:
    evaluate = langfuse_evaluator(SPECS, per_metric=True)
    found = evaluate(
        input="Refund the 12.50 EUR of order-77 please.",
        output=anthropic_output(21.5),
        expected_output=[REFUND],  # one plan as such
        metadata=None,
    )
    assert isinstance(found, list)
    assert [(e.name, e.value) for e in found] == [
        ("tool_calls", 0.0),
        ("tool_names", 1.0),
        ("tool_arguments", 0.0),
    ]
    assert found[0].metadata == {"codes": ["value_mismatch"], "plan": 0}
    assert "value_mismatch call 0 /amount [number tol=0.005]: 21.5 is not 12.5" in (
        found[0].comment or ""
    )


def test_langfuse_takes_the_plans_from_metadata_without_expected_output() -> None:
    evaluate = langfuse_evaluator(SPECS)
    found = evaluate(input="hi", output=[], expected_output=None, metadata={"plans": []})
    assert isinstance(found, Evaluation)
    assert found.value == 1.0
    assert found.comment == "no call, as the case expects"
    with pytest.raises(CaseError, match="<expected_output>: no plans"):
        evaluate(input="hi", output=[], expected_output=None, metadata={})


def test_per_case_metrics_average_to_the_summary_of_score() -> None:
    """Over the example cases, the per-case results average to the accuracy, name accuracy
    and abstention accuracy that `score` reports for the same files."""
    specs = load_specs(SPECS)
    cases = list(read_cases(TRANSCRIPTS / "cases.jsonl", specs))
    outputs = list(read_outputs(TRANSCRIPTS / "outputs-openai.jsonl"))
    summary = score(specs, cases, outputs).summary()
    evaluate = tool_calls_evaluator(specs, per_metric=True)
    raw_cases = {case["id"]: case for case in lines(TRANSCRIPTS / "cases.jsonl")}
    scores: dict[str, list[float]] = {}
    for line in lines(TRANSCRIPTS / "outputs-openai.jsonl"):
        reference = {k: v for k, v in raw_cases[line["id"]].items() if k in CASE_KEYS}
        for result in evaluate(line, reference)["results"]:
            scores.setdefault(result["key"], []).append(result["score"])

    def mean(key: str) -> float:
        return sum(scores[key]) / len(scores[key])

    assert mean("tool_calls") == summary.accuracy
    assert mean("tool_names") == summary.name.value
    assert mean("abstention") == summary.abstention.value


@pytest.mark.parametrize(
    "statement",
    [
        "from toolscore import check, assert_tool_calls",
        "import toolscore.integrations",
        "from toolscore.integrations.evaluators import tool_calls_evaluator, langfuse_evaluator",
    ],
)
def test_the_integrations_import_no_optional_library(statement: str) -> None:
    """Neither pytest nor any SDK: an evaluation harness imports these without them."""
    assert optional_among(modules_after(statement)) == []
